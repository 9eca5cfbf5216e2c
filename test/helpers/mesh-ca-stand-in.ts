// A stand-in for Istio's certificate authority (istiod's IstioCertificateService), for tests of
// gw's mesh workload certificate (src/dataplane/mesh/): gRPC over TLS on 127.0.0.1, its serving
// certificate issued by the mesh root (as istiod's is), callers authenticated by a bearer token
// and a clusterid header, the CSR checked and signed by the openssl command — never by gw's code.
// The messages are decoded and encoded here byte by byte from Istio's definitions
// (istio.v1.auth.IstioCertificateRequest: csr = 1 string, validity_duration = 3 int64,
// metadata = 4 Struct; IstioCertificateResponse: cert_chain = 1 repeated string), so a wrong
// field number in gw's .proto fails the tests instead of agreeing with itself.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { type MeshSettings, meshSettingsFromEnv } from '../../src/dataplane/mesh/settings.ts';
import { skipWithoutTool } from './missing-tool.ts';

export const CREATE_CERTIFICATE_PATH = '/istio.v1.auth.IstioCertificateService/CreateCertificate';

/** One field of a protobuf message as it was on the wire. */
export interface WireField {
  field: number;
  wireType: number;
  /** A varint's value, or a length-delimited field's bytes. */
  value: bigint | Buffer;
}

function readVarint(bytes: Buffer, at: number): [bigint, number] {
  let value = 0n;
  let shift = 0n;
  for (let i = at; i < bytes.length && i < at + 10; i++) {
    value |= BigInt(bytes[i]! & 0x7f) << shift;
    if ((bytes[i]! & 0x80) === 0) return [value, i + 1];
    shift += 7n;
  }
  throw new Error('truncated varint');
}

/** The fields of a protobuf message, in wire order (varints and length-delimited fields only). */
export function decodeMessage(bytes: Buffer): WireField[] {
  const fields: WireField[] = [];
  let at = 0;
  while (at < bytes.length) {
    const [key, afterKey] = readVarint(bytes, at);
    const field = Number(key >> 3n);
    const wireType = Number(key & 7n);
    if (wireType === 0) {
      const [value, next] = readVarint(bytes, afterKey);
      fields.push({ field, wireType, value });
      at = next;
    } else if (wireType === 2) {
      const [length, start] = readVarint(bytes, afterKey);
      const end = start + Number(length);
      if (end > bytes.length) throw new Error('truncated field');
      fields.push({ field, wireType, value: bytes.subarray(start, end) });
      at = end;
    } else throw new Error(`unexpected wire type ${wireType} of field ${field}`);
  }
  return fields;
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

/** IstioCertificateResponse: cert_chain (field 1, length-delimited) once per certificate. */
export function encodeResponse(chain: readonly string[]): Buffer {
  return Buffer.concat(
    chain.flatMap((pem) => {
      const text = Buffer.from(pem, 'utf8');
      return [Buffer.of(0x0a), varint(text.length), text];
    }),
  );
}

/** openssl req's arguments for a new P-256 key, unencrypted. */
const NEW_P256_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

const opensslVersion = spawnSync('openssl', ['version'], { encoding: 'utf8' });
/** The skip option of tests that need the stand-in (it signs with the openssl command). */
export const skipWithoutOpenssl = skipWithoutTool(
  'openssl',
  opensslVersion.error || opensslVersion.status !== 0
    ? 'the stand-in mesh CA signs with the openssl command'
    : undefined,
);

function openssl(args: string[], cwd: string): string {
  return execFileSync('openssl', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A CA made with openssl in `dir`: its key and self-signed certificate (PEM). */
export function makeRoot(dir: string, name: string): { cert: string; keyPath: string; certPath: string } {
  const keyPath = join(dir, `${name}.key`);
  const certPath = join(dir, `${name}.crt`);
  openssl(
    [
      'req',
      '-x509',
      ...NEW_P256_KEY,
      '-keyout',
      keyPath,
      '-out',
      certPath,
      '-days',
      '3650',
      '-subj',
      `/O=${name}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  return { cert: readFileSync(certPath, 'utf8'), keyPath, certPath };
}

export interface ReceivedRequest {
  /** The request message's bytes as they arrived. */
  raw: Buffer;
  fields: WireField[];
  csr: string;
  validitySeconds: number;
  authorization: string | undefined;
  clusterId: string | undefined;
}

export interface MeshCaOptions {
  /** The token a caller must present (Authorization: Bearer). */
  token: string;
  clusterId: string;
  /** The SPIFFE ID the token stands for: what the certificate names (the CA ignores the CSR's names). */
  identity: string;
  /** The root the chain ends with (default: this CA's own root). */
  answerRoot?: string;
}

export interface MeshCaStandIn {
  port: number;
  /** The mesh root, PEM (what the pod's root-cert.pem holds). */
  root: string;
  requests: ReceivedRequest[];
  /** Changes the answers: the identity named, the token accepted, an outage. */
  options: MeshCaOptions & { unavailable?: boolean };
  close(): Promise<void>;
}

/** Starts the stand-in on 127.0.0.1 (serving certificate for localhost and 127.0.0.1). */
export async function startMeshCa(options: MeshCaOptions): Promise<MeshCaStandIn> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-mesh-ca-'));
  const root = makeRoot(dir, 'mesh-root');
  let serial = 1;
  const sign = (csrPath: string, extensions: string, days: number): string => {
    const extPath = join(dir, `ext-${serial}.cnf`);
    writeFileSync(extPath, extensions);
    const certPath = join(dir, `cert-${serial}.pem`);
    openssl(
      [
        'x509',
        '-req',
        '-in',
        csrPath,
        '-CA',
        root.certPath,
        '-CAkey',
        root.keyPath,
        '-set_serial',
        String(serial++),
        '-days',
        String(days),
        '-extfile',
        extPath,
        '-out',
        certPath,
      ],
      dir,
    );
    return readFileSync(certPath, 'utf8');
  };
  // istiod's own serving certificate, issued by the mesh root.
  const servingKey = join(dir, 'serving.key');
  const servingCsr = join(dir, 'serving.csr');
  openssl(['req', '-new', ...NEW_P256_KEY, '-keyout', servingKey, '-out', servingCsr, '-subj', '/O=istiod'], dir);
  const servingCert = sign(servingCsr, 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n', 30);

  const requests: ReceivedRequest[] = [];
  const state: MeshCaStandIn['options'] = { ...options };
  const identity = (value: Buffer) => value;
  const service: grpc.ServiceDefinition = {
    CreateCertificate: {
      path: CREATE_CERTIFICATE_PATH,
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    },
  };
  const server = new grpc.Server();
  server.addService(service, {
    CreateCertificate: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
      const raw = Buffer.from(call.request);
      const fields = decodeMessage(raw);
      const csrField = fields.find((field) => field.field === 1);
      const validityField = fields.find((field) => field.field === 3);
      const received: ReceivedRequest = {
        raw,
        fields,
        csr: Buffer.isBuffer(csrField?.value) ? csrField.value.toString('utf8') : '',
        validitySeconds: typeof validityField?.value === 'bigint' ? Number(validityField.value) : 0,
        authorization: call.metadata.get('authorization')[0]?.toString(),
        clusterId: call.metadata.get('clusterid')[0]?.toString(),
      };
      requests.push(received);
      if (state.unavailable) return callback({ code: grpc.status.UNAVAILABLE, details: 'istiod is restarting' });
      if (received.authorization !== `Bearer ${state.token}` || received.clusterId !== state.clusterId)
        return callback({ code: grpc.status.UNAUTHENTICATED, details: 'authenticate failure' });
      const csrPath = join(dir, `request-${requests.length}.csr`);
      writeFileSync(csrPath, received.csr);
      try {
        openssl(['req', '-in', csrPath, '-verify', '-noout'], dir);
      } catch {
        return callback({ code: grpc.status.INVALID_ARGUMENT, details: 'the CSR does not verify' });
      }
      const days = Math.max(1, Math.ceil(received.validitySeconds / 86_400));
      const leaf = sign(
        csrPath,
        `subjectAltName=critical,URI:${state.identity}\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\n`,
        days,
      );
      callback(null, encodeResponse([leaf, state.answerRoot ?? root.cert]));
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      '127.0.0.1:0',
      grpc.ServerCredentials.createSsl(null, [
        { private_key: readFileSync(servingKey), cert_chain: Buffer.from(servingCert) },
      ]),
      (error, bound) => (error ? reject(error) : resolve(bound)),
    ),
  );
  return {
    port,
    root: root.cert,
    requests,
    options: state,
    close: () =>
      new Promise<void>((resolve) => {
        server.tryShutdown(() => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
        setTimeout(() => server.forceShutdown(), 500).unref();
      }),
  };
}

/**
 * The mesh settings of a pod in namespace team-a with ServiceAccount ai, trust domain
 * corp.example and cluster east, whose CA is `ca`: the token `token` and the CA's root written to
 * `dir` as the kubelet mounts them.
 */
export function podSettings(ca: MeshCaStandIn, dir: string, token: string): MeshSettings {
  writeFileSync(join(dir, 'istio-token'), `${token}\n`);
  writeFileSync(join(dir, 'root-cert.pem'), ca.root);
  const settings = meshSettingsFromEnv({
    CA_ADDRESS: `https://localhost:${ca.port}`,
    TRUST_DOMAIN: 'corp.example',
    CLUSTER_ID: 'east',
    POD_NAMESPACE: 'team-a',
    SERVICE_ACCOUNT: 'ai',
    CA_TOKEN_PATH: join(dir, 'istio-token'),
    CA_ROOT_CERT_PATH: join(dir, 'root-cert.pem'),
  });
  if (settings === undefined || typeof settings === 'string') throw new Error(`mesh settings: ${settings}`);
  return settings;
}
