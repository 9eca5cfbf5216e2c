// What MCP OAuth needs to know about one protected MCP URL, from either place it is configured:
// traffic.jwtAuthentication.mcp (its one JWT provider gives issuer and audiences) or the
// deprecated backend.mcp.authentication (MCPAuthentication carries them itself, plus a client
// secret). Compiled once per configuration; docs/policies/mcp-oauth.md.
import type { AuthorizationExtractionLocation } from '../../../../api/types/credential-locations.ts';
import type { JWTAuthentication, MCPAuthentication, McpIDP } from '../../../../api/types/inbound-auth.ts';
import { secretValue } from '../../../auth/backend/secret-value.ts';
import type { PolicyCompileContext, PolicyProblem } from '../../types.ts';

export interface McpOAuthSettings {
  /** The identity provider's issuer (the JWT provider's iss). */
  readonly issuer: string;
  /** Accepted audiences; the first one is what Auth0 and Okta are asked for. */
  readonly audiences: readonly string[];
  /** Identity provider product, for its quirks; undefined: a standards-following server. */
  readonly provider: McpIDP | undefined;
  /** resourceMetadata with its keys in snake_case: merged over the computed metadata (it wins). */
  readonly resourceMetadata: Readonly<Record<string, unknown>>;
  /** When set, registration requests are answered with this client id and never proxied. */
  readonly clientId: string | undefined;
  /** Injected into proxied token requests of clientId (deprecated MCPAuthentication only). */
  readonly clientSecret: string | undefined;
  /** bearer_methods_supported as the token location allows (RFC 6750 names), or undefined. */
  readonly bearerMethods: readonly string[] | undefined;
}

/**
 * Whether gw stands in as the authorization server of the MCP URL (the protected resource
 * metadata names gw, whose authorization server metadata names gw's endpoints): when a provider
 * has quirks to mend, or gw answers registrations itself (clientId) or adds a client secret to
 * token requests — without which clients would go to the provider directly and never see them.
 */
export function standsInAsAuthorizationServer(settings: McpOAuthSettings): boolean {
  return settings.provider !== undefined || settings.clientId !== undefined || settings.clientSecret !== undefined;
}

/** Where the client secret is read from when clientSecretRef names no key. */
export const DEFAULT_CLIENT_SECRET_KEY = 'clientSecret';

/** Settings of traffic.jwtAuthentication.mcp; one JWT provider is required (as agentgateway does). */
export function jwtMcpSettings(value: JWTAuthentication, path: string): McpOAuthSettings | PolicyProblem | undefined {
  const mcp = value.mcp;
  if (mcp === undefined) return undefined;
  if (value.providers.length !== 1)
    return {
      field: `${path}.mcp`,
      message: `needs exactly one provider (the authorization server MCP clients are sent to); there are ${value.providers.length}`,
    };
  const provider = value.providers[0]!;
  return {
    issuer: provider.issuer,
    audiences: provider.audiences ?? [],
    provider: mcp.provider,
    resourceMetadata: snakeCaseKeys(mcp.resourceMetadata),
    clientId: mcp.clientId,
    clientSecret: undefined,
    bearerMethods: bearerMethods(value.location),
  };
}

/** Settings of the deprecated backend.mcp.authentication; the client secret is read from its Secret. */
export function backendMcpSettings(
  value: MCPAuthentication,
  context: Pick<PolicyCompileContext, 'data' | 'namespace'>,
  path: string,
): McpOAuthSettings | PolicyProblem {
  if (value.issuer === undefined || value.issuer === '')
    return { field: `${path}.issuer`, message: 'is required: tokens are checked against it' };
  let clientSecret: string | undefined;
  if (value.clientSecretRef) {
    if (value.clientId === undefined)
      return {
        field: `${path}.clientSecretRef`,
        message: 'needs clientId: the secret is only ever sent for the client it belongs to',
      };
    const ref = { ...value.clientSecretRef, key: value.clientSecretRef.key ?? DEFAULT_CLIENT_SECRET_KEY };
    const secret = secretValue(ref, context.data, context.namespace, `${path}.clientSecretRef`, {
      stripBearer: false,
    });
    if (typeof secret !== 'string')
      return { field: secret.field, message: secret.message.slice(secret.field.length + 2) };
    clientSecret = secret;
  }
  return {
    issuer: value.issuer,
    audiences: value.audiences ?? [],
    provider: value.provider,
    resourceMetadata: snakeCaseKeys(value.resourceMetadata),
    clientId: value.clientId,
    clientSecret,
    bearerMethods: ['header'],
  };
}

/**
 * RFC 6750 methods the token location amounts to: the Authorization header with the Bearer
 * scheme is "header", an access_token query parameter is "query"; other places have no name.
 */
function bearerMethods(location: AuthorizationExtractionLocation | undefined): string[] | undefined {
  if (!location) return ['header'];
  if (location.header?.name.toLowerCase() === 'authorization' && location.header.prefix?.toLowerCase() === 'bearer ')
    return ['header'];
  if (location.queryParameter?.name === 'access_token') return ['query'];
  return undefined;
}

/**
 * The map with camelCase keys written in snake_case (scopesSupported → scopes_supported), as
 * agentgateway serves resourceMetadata: the metadata's own names are snake_case (RFC 9728).
 */
export function snakeCaseKeys(map: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(map ?? {})) out[snakeCase(key)] = value;
  return out;
}

export function snakeCase(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase();
}
