// Header handling shared by every kind of upstream request: hop-by-hop fields are the
// connection's own (RFC 9110 section 7.6.1) and never forwarded in either direction.
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
]);

/**
 * A request's headers as sent upstream: hop-by-hop fields, and those the Connection header names,
 * dropped; and Expect, which gw's listener has met already (node answers 100 Continue, or 417 to
 * an expectation it does not know), as Envoy does by default — undici refuses to send it at all.
 */
export function forwardedRequestHeaders(incoming: IncomingHttpHeaders): Record<string, string | string[]> {
  const named = connectionTokens(incoming.connection);
  const out: Record<string, string | string[]> = {};
  for (const name in incoming) {
    if (HOP_BY_HOP.has(name) || name === 'expect' || named?.has(name)) continue;
    const value = incoming[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/**
 * An upstream response's headers as sent to the client, hop-by-hop fields dropped, and those in
 * `omit` (built without them rather than deleted after: a delete turns the object into a slow
 * dictionary).
 */
export function forwardedResponseHeaders(
  upstream: Record<string, string | string[] | undefined>,
  omit?: ReadonlySet<string>,
): OutgoingHttpHeaders {
  const named = connectionTokens(upstream.connection);
  const out: OutgoingHttpHeaders = {};
  for (const name in upstream) {
    if (HOP_BY_HOP.has(name) || named?.has(name) || omit?.has(name)) continue;
    const value = upstream[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

function connectionTokens(value: string | string[] | undefined): Set<string> | undefined {
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(',') : value;
  if (text === 'keep-alive' || text === 'close') return undefined;
  return new Set(text.split(',').map((token) => token.trim().toLowerCase()));
}

/** Appends the client address to X-Forwarded-For and sets X-Forwarded-Proto. */
export function addForwardedFor(
  headers: Record<string, string | string[]>,
  clientAddress: string | undefined,
  scheme: string,
): void {
  if (clientAddress) {
    const existing = headers['x-forwarded-for'];
    headers['x-forwarded-for'] = existing
      ? `${Array.isArray(existing) ? existing.join(', ') : existing}, ${clientAddress}`
      : clientAddress;
  }
  headers['x-forwarded-proto'] = scheme;
}

/**
 * Frontend.http.http1HeaderCase Preserve: the upstream request's headers under the names the
 * client spelled (HTTP/1 `rawHeaders`), for backends that care about case. gw works on lower-case
 * names until this last step; headers gw added itself keep gw's spelling.
 */
export function withClientHeaderCase(
  headers: Record<string, string | string[]>,
  rawHeaders: readonly string[],
): Record<string, string | string[]> {
  const spelled = new Map<string, string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    const lower = name.toLowerCase();
    if (name !== lower && !spelled.has(lower)) spelled.set(lower, name);
  }
  if (spelled.size === 0) return headers;
  const out: Record<string, string | string[]> = {};
  for (const name of Object.keys(headers)) out[spelled.get(name) ?? name] = headers[name]!;
  return out;
}
