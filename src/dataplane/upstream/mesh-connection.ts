// Connections to a Service in Istio's ambient mesh (decision 0035 part 3): instead of the
// Service's address, each new connection of the backend's pool is an HBONE tunnel to one of its
// ready pods in the mesh (taken in turn), the pod's SPIFFE ID checked. Whatever the backend policy
// asks of the connection rides inside the tunnel: TLS to the application, HTTP/1.1 or HTTP/2.
// With no ready pod there is no connection (503), never plaintext the mesh would refuse.
import type { ClientHttp2Stream } from 'node:http2';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect } from 'node:tls';
import type { buildConnector } from 'undici';
import type { ServiceMeshConfig } from '../../contract/dataplane-config.ts';
import { HboneError, type HboneTarget } from '../mesh/hbone.ts';
import type { MeshTransport } from '../mesh/transport.ts';
import type { ConnectionSettings } from './connection-settings.ts';

/**
 * The tunnel with a socket's ref() and unref(), which undici's HTTP/2 client calls on its
 * connection (to let the process exit while it is idle): they act on the tunnel's HTTP/2 session.
 */
function withSocketRefs(tunnel: ClientHttp2Stream): ClientHttp2Stream {
  const session = tunnel.session;
  return Object.assign(tunnel, {
    ref: () => session?.ref(),
    unref: () => session?.unref(),
  });
}

/** The HBONE targets of a Service port: each ready pod with its port for it and its identity. */
function meshTargets(mesh: ServiceMeshConfig, servicePort: number, transport: MeshTransport): HboneTarget[] {
  return mesh.endpoints
    .filter((endpoint) => endpoint.ports[String(servicePort)] !== undefined)
    .map((endpoint) => ({
      address: endpoint.address,
      port: endpoint.ports[String(servicePort)]!,
      identities: [transport.identityOf(endpoint.namespace, endpoint.serviceAccount)],
    }));
}

/**
 * `settings` (made for the Service's own address) with every connection opened through HBONE to
 * `targets` in turn; `service` names the destination in errors ("Service ns/name port 80").
 */
export function throughMesh(
  settings: ConnectionSettings,
  mesh: ServiceMeshConfig,
  servicePort: number,
  transport: MeshTransport,
  service: string,
): ConnectionSettings & { dial(): Promise<Duplex> } {
  const targets = meshTargets(mesh, servicePort, transport);
  let next = 0;
  const { tls, connectTimeoutMs } = settings.socket;
  const h2c = settings.http1 === undefined && tls === undefined;
  const dial = async (): Promise<Duplex> => {
    if (mesh.waypoint !== undefined)
      throw new HboneError(
        `${service} is in the ambient mesh behind the waypoint ${mesh.waypoint} (istio.io/use-waypoint): gw does not send through waypoints yet, and going to its pods directly would skip the waypoint's policies`,
      );
    if (targets.length === 0)
      throw new HboneError(`${service} is in the ambient mesh and has no ready pod in it (on this network) to send to`);
    const target = targets[next++ % targets.length]!;
    const tunnel = withSocketRefs(await transport.open(target, connectTimeoutMs));
    if (tls === undefined) {
      // undici speaks HTTP/2 on a connection whose alpnProtocol says so (prior knowledge, as h2c).
      if (h2c) Object.assign(tunnel, { alpnProtocol: 'h2' });
      return tunnel;
    }
    return new Promise((resolve, reject) => {
      const secured = tlsConnect({ ...tls, socket: tunnel }, () => resolve(secured));
      secured.once('error', reject);
    });
  };
  const connect: buildConnector.connector = (_options, callback) => {
    dial().then(
      (socket) => callback(null, socket as Parameters<typeof callback>[1] & object),
      (error: Error) => callback(error, null),
    );
  };
  return {
    ...settings,
    key: JSON.stringify([settings.key, 'hbone', targets, transport.trustDomains]),
    options: { ...settings.options, connect },
    // Provider requests take undici's pool too: gw's own HTTP/1.1 pool opens TCP itself.
    http1: undefined,
    dial,
  };
}
