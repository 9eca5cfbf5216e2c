// Destinations for plain HTTP backends: a GwBackend `static` (host and port, or a Unix socket) and
// a Kubernetes Service. In file mode there are no Endpoints, so a Service is reached through its
// own fields (docs/dataplane.md): spec.externalName (type ExternalName), else spec.clusterIP,
// else the first of spec.externalIPs, at the port the backendRef names.
import type { ServiceSpec } from '../../api/kinds/core/service.ts';
import type { StaticBackend } from '../../api/types/backends.ts';
import type { Destination } from './destination.ts';

/** appProtocol values that mean HTTP/2 (Kubernetes' h2c and WebSocket-free gRPC conventions). */
const HTTP2_APP_PROTOCOLS = new Set(['kubernetes.io/h2c', 'h2c', 'http2', 'grpc', 'kubernetes.io/grpc']);

/**
 * Where a Service is reached, or why it cannot be. `meshName` is the name of a Service in the
 * ambient mesh, whose pods are reached over HBONE: its address, if any, is then only the origin
 * of its requests, and a Service without one (headless) goes by that name.
 */
export function serviceDestination(
  spec: ServiceSpec,
  port: number | undefined,
  tls: boolean,
  meshName?: string,
): Destination | string {
  if (port === undefined) return 'a backendRef to a Service must set port';
  const servicePort = (spec.ports ?? []).find((p) => p.port === port);
  if (!servicePort) return `the Service has no port ${port}`;
  const host =
    (spec.type === 'ExternalName' ? spec.externalName : undefined) ??
    (spec.clusterIP && spec.clusterIP !== 'None' ? spec.clusterIP : undefined) ??
    spec.externalIPs?.[0] ??
    meshName;
  if (!host)
    return 'the Service has no address gw can use outside a cluster (set externalName, clusterIP or externalIPs)';
  const appProtocol = servicePort.appProtocol?.toLowerCase();
  const inferredVersion = appProtocol !== undefined && HTTP2_APP_PROTOCOLS.has(appProtocol) ? 'HTTP2' : 'HTTP1';
  return { protocol: tls ? 'https:' : 'http:', host, port, inferredVersion };
}

/** A static backend's destination (admission guarantees unixPath, or host and port). */
export function staticDestination(spec: StaticBackend, tls: boolean): Destination {
  if (spec.unixPath) return { protocol: 'http:', host: 'localhost', port: 80, socketPath: spec.unixPath };
  return { protocol: tls ? 'https:' : 'http:', host: spec.host!, port: spec.port! };
}
