// The address a client reached gw at, for documents gw writes it into (MCP OAuth metadata, an
// A2A agent card served through gw): the scheme (X-Forwarded-Proto when a proxy in front says so,
// else the connection's) and the Host the client sent, checked to be one; and a request path made
// safe to put into such a document.
import type { IncomingHttpHeaders } from 'node:http';

/**
 * scheme://host the client reached gw at: X-Forwarded-Proto (http or https) when a proxy in
 * front says so, else the connection's scheme; the Host header as sent. undefined when the host
 * is missing or holds characters no host has (it is written into documents and headers).
 */
export function requestOrigin(
  scheme: string,
  host: string,
  headers: IncomingHttpHeaders | Readonly<Record<string, unknown>>,
): string | undefined {
  if (host === '' || !HOST.test(host)) return undefined;
  return `${forwardedScheme(headers) ?? scheme}://${host}`;
}

// reg-name, IPv4 or an IP literal in brackets, and an optional port: RFC 3986 characters only.
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~%!$&'()*+,;=]+)(?::[0-9]{1,5})?$/;

function forwardedScheme(headers: Readonly<Record<string, unknown>>): 'http' | 'https' | undefined {
  const value = headers['x-forwarded-proto'];
  const first = (Array.isArray(value) ? value[0] : value) as string | undefined;
  if (typeof first !== 'string') return undefined;
  const scheme = first.split(',')[0]!.trim().toLowerCase();
  return scheme === 'http' || scheme === 'https' ? scheme : undefined;
}

/** A request path safe inside a quoted header parameter and a JSON URL: anything but RFC 3986 pchar and "/" escaped. */
export function escapePath(path: string): string {
  return path.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@/%]/g, (c) => encodeURIComponent(c));
}
