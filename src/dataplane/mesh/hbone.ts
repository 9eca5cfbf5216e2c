// HBONE, the tunnel of Istio's ambient mesh (decision 0035): mutual TLS to the destination pod's
// port 15008 with the proxy's workload certificate (ALPN h2, no SNI, TLS 1.3 as ztunnel speaks
// it), the pod's certificate verified up to the mesh roots and its SPIFFE ID checked, then an
// HTTP/2 CONNECT whose :authority is the pod address and port the traffic is for. The CONNECT
// stream carries the bytes of the connection to the destination.
import { X509Certificate } from 'node:crypto';
import { type ClientHttp2Session, type ClientHttp2Stream, connect as http2Connect } from 'node:http2';
import { isIPv6 } from 'node:net';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';
import { peerIdentityProblem } from './spiffe.ts';
import type { WorkloadCertificate } from './workload-certificate.ts';

/** The port ztunnel (and a waypoint) accepts HBONE on. */
export const HBONE_PORT = 15008;

export interface HboneTarget {
  /** The destination pod's IP address. */
  address: string;
  /** The port of the destination the traffic is for (the pod's target port). */
  port: number;
  /** The port HBONE is accepted on (15008 unless the workload says otherwise). */
  hbonePort?: number;
  /** The SPIFFE IDs the destination may show; empty accepts any workload of a trusted trust domain. */
  identities: readonly string[];
}

export interface HboneOptions {
  /** trustDomain, then additionalTrustDomains. */
  trustDomains: readonly string[];
  connectTimeoutMs: number;
}

/** A failure to open the tunnel, naming the destination and why: a connection that could not be made. */
export class HboneError extends Error {
  readonly code = 'ERR_HBONE';
}

const authority = (address: string, port: number) => (isIPv6(address) ? `[${address}]:${port}` : `${address}:${port}`);

function mutualTls(certificate: WorkloadCertificate, target: HboneTarget, options: HboneOptions): Promise<TLSSocket> {
  const port = target.hbonePort ?? HBONE_PORT;
  return new Promise((resolve, reject) => {
    let identityProblem: string | undefined;
    const socket = tlsConnect({
      host: target.address,
      port,
      // No SNI: ztunnel picks its certificate by the destination address.
      servername: '',
      key: certificate.privateKey.export({ type: 'pkcs8', format: 'pem' }),
      cert: certificate.chain.join(''),
      ca: certificate.roots,
      ALPNProtocols: ['h2'],
      minVersion: 'TLSv1.3',
      rejectUnauthorized: true,
      checkServerIdentity: (_host, peer) => {
        identityProblem = peerIdentityProblem(new X509Certificate(peer.raw), target.identities, options.trustDomains);
        return identityProblem === undefined ? undefined : new Error(identityProblem);
      },
    });
    const deadline = setTimeout(
      () => socket.destroy(new Error(`no TLS handshake within ${options.connectTimeoutMs} ms`)),
      options.connectTimeoutMs,
    );
    socket.once('secureConnect', () => {
      clearTimeout(deadline);
      if (socket.alpnProtocol !== 'h2') {
        socket.destroy();
        reject(new HboneError(`HBONE to ${authority(target.address, port)}: the peer did not agree to h2`));
        return;
      }
      resolve(socket);
    });
    socket.once('error', (error) => {
      clearTimeout(deadline);
      reject(new HboneError(`HBONE to ${authority(target.address, port)}: ${identityProblem ?? error.message}`));
    });
  });
}

/**
 * Opens an HBONE tunnel to `target`: the stream of the CONNECT (a Duplex of the destination's
 * bytes). Closing the stream closes the tunnel's HTTP/2 session.
 */
export async function openHbone(
  certificate: WorkloadCertificate,
  target: HboneTarget,
  options: HboneOptions,
): Promise<ClientHttp2Stream> {
  const port = target.hbonePort ?? HBONE_PORT;
  const where = authority(target.address, port);
  const socket = await mutualTls(certificate, target, options);
  const session: ClientHttp2Session = http2Connect(`https://${where}`, { createConnection: () => socket });
  session.on('error', () => {});
  const stream = session.request(
    { ':method': 'CONNECT', ':authority': authority(target.address, target.port) },
    { endStream: false },
  );
  return new Promise((resolve, reject) => {
    const deadline = setTimeout(
      () => fail(`no CONNECT answer within ${options.connectTimeoutMs} ms`),
      options.connectTimeoutMs,
    );
    const fail = (message: string) => {
      clearTimeout(deadline);
      stream.destroy();
      session.destroy();
      reject(new HboneError(`HBONE to ${where} for ${authority(target.address, target.port)}: ${message}`));
    };
    stream.once('response', (headers) => {
      const status = Number(headers[':status']);
      if (status !== 200) return fail(`CONNECT answered ${status}`);
      clearTimeout(deadline);
      stream.once('close', () => session.close());
      resolve(stream);
    });
    stream.once('error', (error) => fail(error.message));
  });
}
