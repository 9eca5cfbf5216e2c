// The well-known paths MCP OAuth answers (RFC 9728 protected-resource metadata, RFC 8414
// authorization server metadata) and the endpoints gw serves beneath the latter (client
// registration, and for some providers authorize and token). Every document names the URL the
// client reached gw at (proxy/request-origin.ts). docs/policies/mcp-oauth.md.
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
