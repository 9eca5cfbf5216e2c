// Endpoint references (spec document 2, "Endpoint reference"): exactly one of a backendRef (a
// Service, or a GwBackend with a static host) or a url, resolved to a host and port once when the
// configuration is compiled; what cannot be reached is a problem naming the field. A leaf of the
// upstream layer: connection settings resolve a tunnel's proxy with it, policies their services.

import type { BackendConnectionPolicy } from '../../api/types/backend-connection.ts';
import type { DataPlaneConfig } from '../../contract/dataplane-config.ts';
import { serviceDestination, staticDestination } from './destinations.ts';
import { MESH_ROUTE_BACKENDS_ONLY } from './mesh-refusals.ts';

/** A field path and why its value cannot be used. */
export interface EndpointProblem {
  field: string;
  message: string;
}

export interface EndpointReference {
  backendRef?: { group?: string; kind?: string; name: string; namespace?: string; port?: number };
  url?: string;
}

/** What an endpoint reference resolves in: the configuration's backends and the referrer's namespace. */
export interface EndpointScope {
  backends: DataPlaneConfig['backends'];
  namespace: string;
}

export interface ResolvedEndpoint {
  host: string;
  port: number;
  tls: boolean;
  /** The url's path ('' when none or for a backendRef), for HTTP services that take a base path. */
  basePath: string;
  /** A Unix domain socket instead of host:port (a GwBackend static unixPath). */
  socketPath?: string;
  /** The HTTP version a Service port's appProtocol asks for (BackendHTTP.version's inference). */
  inferredVersion?: 'HTTP1' | 'HTTP2';
  /** "Service ns/name:port", "GwBackend ns/name" or the url's origin, for logs and state keys. */
  name: string;
  /** scheme://host:port */
  origin: string;
}

/**
 * Resolves an endpoint reference. A GwBackend named by backendRef may carry `spec.policies`; the
 * caller says which of its fields it applies to the connection (`applies`: ext_authz over HTTP
 * applies tcp, tls and http). A GwBackend that sets others is refused rather than reached without
 * them — a `tls` dropped would mean plain text to a server that was meant to be reached over TLS.
 */
export function resolveEndpoint(
  reference: EndpointReference,
  context: EndpointScope,
  field: string,
  applies: readonly string[] = [],
): ResolvedEndpoint | EndpointProblem {
  if (reference.url !== undefined) {
    let url: URL;
    try {
      url = new URL(reference.url);
    } catch {
      return { field: `${field}.url`, message: `"${reference.url}" is not a URL` };
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return { field: `${field}.url`, message: 'use an http:// or https:// URL' };
    const tls = url.protocol === 'https:';
    const port = url.port === '' ? (tls ? 443 : 80) : Number(url.port);
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const basePath = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
    return { host, port, tls, basePath, name: url.origin, origin: url.origin };
  }
  const ref = reference.backendRef;
  if (!ref) return { field, message: 'set backendRef or url' };
  const namespace = ref.namespace ?? context.namespace;
  const kind = ref.kind ?? 'Service';
  const key = `${kind} ${namespace}/${ref.name}`;
  const backend = context.backends[key];
  if (!backend)
    return {
      field: `${field}.backendRef`,
      message: `${key} is not available (it does not exist, or is in another namespace)`,
    };
  if (backend.kind === 'Service') {
    if (backend.mesh) return { field: `${field}.backendRef`, message: `${key} ${MESH_ROUTE_BACKENDS_ONLY}` };
    const destination = serviceDestination(backend.spec, ref.port, false);
    if (typeof destination === 'string') return { field: `${field}.backendRef`, message: `${key}: ${destination}` };
    const resolved = endpointOf(destination.host, destination.port, false, `${key}:${ref.port}`);
    if (destination.inferredVersion) resolved.inferredVersion = destination.inferredVersion;
    return resolved;
  }
  if (backend.kind !== 'GwBackend' || !backend.spec.static)
    return {
      field: `${field}.backendRef`,
      message: `${key} must be a static GwBackend (host and port) to be an endpoint`,
    };
  const unapplied = Object.keys(backend.spec.policies ?? {}).filter((name) => !applies.includes(name));
  if (unapplied.length > 0)
    return {
      field: `${field}.backendRef`,
      message: `${key} sets ${unapplied.map((name) => `policies.${name}`).join(', ')}, which gw does not apply to this endpoint (it would connect without them); remove them from the GwBackend, or name the endpoint by url (https:// for TLS)`,
    };
  const destination = staticDestination(backend.spec.static, false);
  const resolved = endpointOf(destination.host, destination.port, false, key);
  if (destination.socketPath) resolved.socketPath = destination.socketPath;
  return resolved;
}

function endpointOf(host: string, port: number, tls: boolean, name: string): ResolvedEndpoint {
  const scheme = tls ? 'https' : 'http';
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return { host, port, tls, basePath: '', name, origin: `${scheme}://${hostPart}:${port}` };
}

/** The spec.policies of the GwBackend an endpoint reference names, if it names one. */
export function endpointBackendPolicy(
  reference: EndpointReference,
  context: EndpointScope,
): BackendConnectionPolicy | undefined {
  const ref = reference.backendRef;
  if (!ref || (ref.kind ?? 'Service') !== 'GwBackend') return undefined;
  const backend = context.backends[`GwBackend ${ref.namespace ?? context.namespace}/${ref.name}`];
  return backend?.kind === 'GwBackend' ? backend.spec.policies : undefined;
}
