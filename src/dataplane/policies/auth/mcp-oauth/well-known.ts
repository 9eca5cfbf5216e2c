// The well-known paths MCP OAuth answers (RFC 9728 protected-resource metadata, RFC 8414
// authorization server metadata) and the endpoints gw serves beneath the latter (client
// registration, and for some providers authorize and token), and the URL the client reached gw
// at, which every document names. docs/policies/mcp-oauth.md.
import type { IncomingHttpHeaders } from 'node:http';

export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';
export const AUTHORIZATION_SERVER_PATH = '/.well-known/oauth-authorization-server';
/** Beneath the authorization server metadata URL: where gw takes registrations. */
export const REGISTRATION_SUFFIX = '/client-registration';
/** Beneath the authorization server metadata URL: gw's token endpoint (a provider quirk or a client secret). */
export const TOKEN_SUFFIX = '/token';
/** Beneath the authorization server metadata URL: gw's authorization endpoint (a provider quirk). */
export const AUTHORIZE_SUFFIX = '/authorize';

/** The common start of both well-known paths: the one test a request pays before the exact parse. */
const COMMON_PREFIX = '/.well-known/oauth-';

/** Whether the path may be an MCP OAuth path (a cheap first test). */
export function mayBeMcpOAuthPath(path: string): boolean {
  return path.startsWith(COMMON_PREFIX);
}

export interface WellKnownPath {
  /** Which document: the protected resource's or the authorization server's. */
  document: 'protected-resource' | 'authorization-server';
  /** The path after the well-known prefix: the MCP URL's path ('' for the root form). */
  rest: string;
}

/** Splits an MCP OAuth path into its document and the path after the prefix, or undefined. */
export function parseWellKnownPath(path: string): WellKnownPath | undefined {
  for (const [prefix, document] of [
    [PROTECTED_RESOURCE_PATH, 'protected-resource'],
    [AUTHORIZATION_SERVER_PATH, 'authorization-server'],
  ] as const) {
    if (!path.startsWith(prefix)) continue;
    const rest = path.slice(prefix.length);
    // "/.well-known/oauth-protected-resource-evil" is no metadata path.
    if (rest === '' || rest.startsWith('/')) return { document, rest };
  }
  return undefined;
}

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
