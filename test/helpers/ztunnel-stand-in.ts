// A stand-in of ztunnel, the node proxy of Istio's ambient mesh, as a destination pod's HBONE
// endpoint: mutual TLS with a workload certificate of the stand-in CA (ALPN h2, TLS 1.3), every
// client's SPIFFE ID and the CONNECT's :authority recorded, the CONNECT's bytes carried to the
// address and port it names. And the workload certificates the tests need, from the stand-in CA.
import assert from 'node:assert/strict';
import { constants, createSecureServer, type Http2SecureServer, type ServerHttp2Stream } from 'node:http2';
import { type AddressInfo, connect as tcpConnect } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { createCertificate } from '../../src/dataplane/mesh/ca-client.ts';
import { signingRequest } from '../../src/dataplane/mesh/csr.ts';
import { uriNames } from '../../src/dataplane/mesh/spiffe.ts';
import { acceptCertificate, type WorkloadCertificate } from '../../src/dataplane/mesh/workload-certificate.ts';
import { type MeshCaStandIn, podSettings } from './mesh-ca-stand-in.ts';

/** A workload certificate for `identity`, signed by `ca` (whose token is `token`). */
export async function issue(
  ca: MeshCaStandIn,
  dir: string,
  identity: string,
  token: string,
): Promise<WorkloadCertificate> {
  const settings = podSettings(ca, dir, token);
  ca.options.identity = identity;
  const request = signingRequest(identity);
  const accepted = acceptCertificate(
    await createCertificate(settings, request.pem, 3600),
    request.privateKey,
    identity,
    Date.now(),
  );
  assert.ok(typeof accepted !== 'string', accepted as string);
  return accepted;
}

export interface Seen {
  clientIdentities: string[];
  servername: string | false | null;
  authority: string | undefined;
}

/** A stand-in of the destination's ztunnel: HBONE in, the CONNECT's bytes to its :authority. */
export async function startZtunnel(
  certificate: WorkloadCertificate,
  seen: Seen[],
  options: { answer?: number; host?: string; port?: number } = {},
): Promise<{ server: Http2SecureServer; port: number }> {
  const answer = options.answer ?? 200;
  const server = createSecureServer({
    key: certificate.privateKey.export({ type: 'pkcs8', format: 'pem' }),
    cert: certificate.chain.join(''),
    ca: certificate.roots,
    requestCert: true,
    rejectUnauthorized: true,
    ALPNProtocols: ['h2'],
    minVersion: 'TLSv1.3',
  });
  server.on('stream', (stream: ServerHttp2Stream, headers) => {
    const socket = stream.session!.socket as TLSSocket;
    const peer = socket.getPeerX509Certificate();
    seen.push({
      clientIdentities: peer ? uriNames(peer) : [],
      servername: socket.servername,
      authority: headers[':authority'],
    });
    if (headers[':method'] !== 'CONNECT' || answer !== 200) {
      stream.respond({ ':status': answer === 200 ? 405 : answer });
      stream.end();
      return;
    }
    const [host, port] = [headers[':authority']!.replace(/:\d+$/, ''), Number(headers[':authority']!.split(':').pop())];
    const upstream = tcpConnect({ host, port }, () => {
      stream.respond({ ':status': 200 });
      upstream.pipe(stream);
      stream.pipe(upstream);
    });
    upstream.on('error', () => stream.close(constants.NGHTTP2_CONNECT_ERROR));
    stream.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}
