// The call to the mesh CA (decision 0035): Istio's istio.v1.auth.IstioCertificateService/
// CreateCertificate over gRPC with TLS, the CA trusted through the mesh root file, the caller
// authenticated by its Kubernetes token (audience istio-ca) and naming its cluster. The token and
// the root are read at every call: the kubelet replaces both files while the pod runs. One
// channel per call, closed after it: a workload asks a few times a day.
import { readFile } from 'node:fs/promises';
import type * as grpc from '@grpc/grpc-js';
import { serviceConstructor } from '../policies/grpc/client.ts';
import { grpcJs } from '../policies/grpc/grpc-js.ts';
import type { MeshSettings } from './settings.ts';

export const CA_PROTO = 'istio/v1/auth/ca.proto';
export const CA_SERVICE = 'istio.v1.auth.IstioCertificateService';

/** How long a CreateCertificate call may take, connection included. */
const CALL_DEADLINE_MS = 10_000;
/** Bounds on what is read or received: a token is about a kilobyte, a chain a few. */
const MAX_TOKEN_BYTES = 64 * 1024;
const MAX_ROOT_BYTES = 1024 * 1024;
const MAX_RESPONSE_BYTES = 1024 * 1024;

/** A failure to get a certificate from the CA, with what to check. */
export class CaRequestError extends Error {}

async function readBounded(path: string, limit: number, what: string): Promise<Buffer> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw new CaRequestError(`cannot read the ${what} ${path}: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
  if (bytes.length === 0) throw new CaRequestError(`the ${what} ${path} is empty`);
  if (bytes.length > limit) throw new CaRequestError(`the ${what} ${path} is larger than ${limit} bytes`);
  return bytes;
}

interface CreateCertificateClient extends grpc.Client {
  CreateCertificate(
    request: { csr: string; validity_duration: number },
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: (error: grpc.ServiceError | null, response?: { cert_chain?: string[] }) => void,
  ): grpc.ClientUnaryCall;
}

/** The certificate chain the CA signs for `csrPem` (PEM strings: the workload's first, roots last). */
export async function createCertificate(
  settings: MeshSettings,
  csrPem: string,
  validitySeconds: number,
): Promise<string[]> {
  const token = (await readBounded(settings.tokenPath, MAX_TOKEN_BYTES, 'CA token')).toString('utf8').trim();
  const root = await readBounded(settings.rootCertPath, MAX_ROOT_BYTES, 'mesh root certificate');
  const { credentials, Metadata } = grpcJs();
  const Service = serviceConstructor(CA_PROTO, CA_SERVICE);
  const target = `${settings.caAddress.hostname}:${settings.caAddress.port}`;
  const client = new Service(target, credentials.createSsl(root), {
    'grpc.max_receive_message_length': MAX_RESPONSE_BYTES,
  }) as unknown as CreateCertificateClient;
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${token}`);
  metadata.set('clusterid', settings.clusterId);
  try {
    const response = await new Promise<{ cert_chain?: string[] }>((resolve, reject) => {
      client.CreateCertificate(
        { csr: csrPem, validity_duration: validitySeconds },
        metadata,
        { deadline: Date.now() + CALL_DEADLINE_MS },
        (error, answer) => (error ? reject(error) : resolve(answer ?? {})),
      );
    });
    return response.cert_chain ?? [];
  } catch (error) {
    const status = error as Partial<grpc.ServiceError>;
    throw new CaRequestError(
      `the mesh CA at ${settings.caAddress.origin} refused or failed CreateCertificate: ${status.details ?? status.message ?? String(error)}`,
    );
  } finally {
    client.close();
  }
}
