// The proxy of a backend policy's `tunnel` (BackendTunnel: exactly one of backendRef, url),
// compiled once with the configuration (decision 0039): its address, the TLS to it (an https url,
// or its GwBackend's policies.tls), its GwBackend's tcp settings, and the credential each CONNECT
// carries (its GwBackend's policies.auth: a key or secretRef, as Proxy-Authorization: Bearer
// unless auth.location names another header or prefix). A proxy is reached directly: a GwBackend
// proxy with a tunnel of its own, or with policies gw would not apply to it, is refused.
import { createHash } from 'node:crypto';
import type { BackendConnectionPolicy, BackendTunnel } from '../../api/types/backend-connection.ts';
import type { BackendFull } from '../../api/types/backend-policies.ts';
import { AuthConfigError } from '../auth/backend/errors.ts';
import { compileLocation, headerLocation } from '../auth/backend/location.ts';
import { secretValue } from '../auth/backend/secret-value.ts';
import type { TcpKeepalive } from '../transport/tcp-keepalive.ts';
import type { TunnelProxy } from './connect-tunnel.ts';
import type { DataLookup, Destination, SocketSettings } from './destination.ts';
import {
  type EndpointProblem,
  type EndpointScope,
  endpointBackendPolicy,
  resolveEndpoint,
} from './endpoint-reference.ts';

/** What a proxy's GwBackend may set: how to reach it and the credential it asks for. */
const PROXY_POLICIES = ['tcp', 'tls', 'auth'] as const;

/** Where a key goes on a CONNECT when auth.location names none (agentgateway's choice too: the key as a bearer token). */
const DEFAULT_PROXY_CREDENTIAL = headerLocation('proxy-authorization', 'Bearer ');

/**
 * The proxy `tunnel` names, resolved in `scope` (its GwBackend's Secrets and ConfigMaps in the
 * scope's namespace); `socketOf` is how connection settings open any destination (the proxy's
 * TCP and TLS come out the same way). The socket to the proxy keeps `backendKeepalive` unless
 * the proxy's GwBackend sets its own. A problem names the field under the backend policy.
 */
export function compileTunnelProxy(
  tunnel: BackendTunnel,
  scope: EndpointScope,
  data: DataLookup,
  backendKeepalive: TcpKeepalive | undefined,
  socketOf: (destination: Destination, policy: BackendConnectionPolicy | undefined) => SocketSettings,
): TunnelProxy | EndpointProblem {
  const endpoint = resolveEndpoint(tunnel, scope, 'tunnel', PROXY_POLICIES);
  if ('message' in endpoint) return endpoint;
  if (tunnel.url !== undefined && endpoint.basePath !== '')
    return { field: 'tunnel.url', message: 'a CONNECT proxy is named by scheme, host and port only: remove the path' };
  const policies = endpointBackendPolicy(tunnel, scope) as BackendFull | undefined;
  const problem = (field: string, message: string): EndpointProblem => ({
    field: 'tunnel.backendRef',
    message: `${endpoint.name} policies.${field}: ${message}`,
  });
  let socket: SocketSettings;
  try {
    socket = socketOf(
      {
        protocol: endpoint.tls || policies?.tls !== undefined ? 'https:' : 'http:',
        host: endpoint.host,
        port: endpoint.port,
        ...(endpoint.socketPath !== undefined ? { socketPath: endpoint.socketPath } : {}),
      },
      // Only what reaches the proxy: its http settings would be the backend's requests' business.
      policies === undefined ? undefined : { tcp: policies.tcp, tls: policies.tls },
    );
  } catch (error) {
    const field = (error as { field?: unknown }).field;
    if (typeof field === 'string') return problem(field, (error as Error).message);
    throw error;
  }
  const headers = policies?.auth === undefined ? [] : proxyCredential(policies.auth, data, scope.namespace);
  if (headers instanceof AuthConfigError) return problem(`auth.${headers.field}`, headers.message);
  return {
    name: endpoint.name,
    host: socket.host,
    port: socket.port,
    socketPath: socket.socketPath,
    tls: socket.tls,
    connectTimeoutMs: policies?.tcp?.connectTimeout !== undefined ? socket.connectTimeoutMs : undefined,
    keepalive: policies?.tcp?.keepalive !== undefined ? socket.keepalive : backendKeepalive,
    headers,
    key: JSON.stringify([
      endpoint.origin,
      endpoint.socketPath ?? '',
      policies?.tcp ?? null,
      policies?.tls ?? null,
      scope.namespace,
      headers.length > 0 ? digest(headers) : '',
    ]),
  };
}

/** The header lines a proxy's auth puts on each CONNECT: a key or secretRef, in a header. */
function proxyCredential(
  auth: NonNullable<BackendFull['auth']>,
  data: DataLookup,
  namespace: string,
): [string, string][] | AuthConfigError {
  const others = Object.keys(auth).filter((field) => !['key', 'secretRef', 'location'].includes(field));
  if (others.length > 0)
    return new AuthConfigError(
      others[0]!,
      'a CONNECT proxy takes a fixed credential only: set key or secretRef (with location for another header or prefix)',
    );
  if (auth.key === undefined && auth.secretRef === undefined)
    return new AuthConfigError('key', 'set key or secretRef: the credential each CONNECT carries');
  let location = DEFAULT_PROXY_CREDENTIAL;
  if (auth.location !== undefined) {
    if (auth.location.header === undefined)
      return new AuthConfigError(
        'location',
        'a CONNECT request carries its credential in a header: set location.header',
      );
    const compiled = compileLocation(auth.location, 'location');
    if (compiled instanceof AuthConfigError) return compiled;
    location = compiled;
  }
  const credential =
    auth.key !== undefined
      ? auth.key.trim()
      : secretValue(auth.secretRef!, data, namespace, 'secretRef', { stripBearer: auth.location === undefined });
  if (credential instanceof AuthConfigError) return credential;
  if (credential === '') return new AuthConfigError('key', 'must not be empty');
  const unwritable = location.problem(credential);
  if (unwritable !== undefined) return new AuthConfigError(auth.key !== undefined ? 'key' : 'secretRef', unwritable);
  const headers: Record<string, string | string[]> = {};
  location.write({ headers, query: new URLSearchParams() }, credential);
  return Object.entries(headers).map(([name, value]) => [name, String(value)]);
}

/** A digest of the credential for pool keys: pools differ by it without the key holding it. */
function digest(headers: readonly (readonly [string, string])[]): string {
  return createHash('sha256').update(JSON.stringify(headers)).digest('base64url').slice(0, 22);
}
