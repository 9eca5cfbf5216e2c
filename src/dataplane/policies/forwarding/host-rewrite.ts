// Host/authority rewrite toward the backend (traffic.hostRewrite). Auto sends the backend's own
// hostname as Host (the :authority of HTTP/2); None keeps the client's. Without the policy the
// spec's default applies: Auto for hostname-based backends (a static backend named by DNS name,
// a Service of type ExternalName), None for the others (an IP address, a Unix socket), which
// have no name to send. A Host a URL rewrite or a policy has already set is never replaced.
import { isIP } from 'node:net';
import type { HostnameRewrite } from '../../../api/types/traffic.ts';
import type { ConnectionSettings } from '../../upstream/connection-settings.ts';
import type { PolicyCompiler } from '../types.ts';

export const compileHostRewrite: PolicyCompiler<HostnameRewrite> = (value) => ({
  forwarding: { hostRewrite: value.mode },
});

/** Authorities by connection settings; null: the backend has no hostname. Filled once per settings. */
const authorities = new WeakMap<ConnectionSettings, string | null>();

/**
 * The Host a hostname-based backend is reached by: its hostname, with the port when it is not the
 * scheme's default (RFC 9110 section 7.2). undefined for an IP address or a Unix socket.
 */
export function backendAuthority(settings: ConnectionSettings): string | undefined {
  let authority = authorities.get(settings);
  if (authority === undefined) {
    authority = authorityOf(settings);
    authorities.set(settings, authority);
  }
  return authority ?? undefined;
}

function authorityOf(settings: ConnectionSettings): string | null {
  if (settings.socket.socketPath !== undefined) return null;
  let url: URL;
  try {
    url = new URL(settings.origin);
  } catch {
    return null;
  }
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (hostname === '' || isIP(hostname) !== 0) return null;
  // URL drops the scheme's default port from host.
  return url.host;
}

/**
 * Sets `headers.host` to the backend's authority under Auto (explicit, or the default for a
 * hostname-based backend). The Host is left alone when the backend has no hostname, under None,
 * and when something before the forwarder changed it from the client's (`clientHost`): a URL
 * rewrite's hostname or a policy's header change says which Host the backend wants.
 */
export function rewriteHost(
  mode: 'Auto' | 'None' | undefined,
  settings: ConnectionSettings,
  headers: Record<string, string | string[]>,
  clientHost: string | undefined,
): void {
  if (mode === 'None') return;
  const authority = backendAuthority(settings);
  if (authority !== undefined && headers.host === clientHost) headers.host = authority;
}
