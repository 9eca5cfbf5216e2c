// OAuth 2.0 Protected Resource Metadata (RFC 9728) of an MCP URL, and the 401 challenge that
// points MCP clients at it (RFC 9728 §5.1, MCP authorization "Protected Resource Metadata
// Discovery"). Field choices follow agentgateway: docs/policies/mcp-oauth.md.
import { escapePath, requestOrigin } from '../../../proxy/request-origin.ts';
import type { PolicyExchange } from '../../exchange.ts';
import { type McpOAuthSettings, standsInAsAuthorizationServer } from './settings.ts';
import { PROTECTED_RESOURCE_PATH } from './well-known.ts';

/** The MCP protocol revision the metadata names (agentgateway's mcp_protocol_version). */
export const MCP_PROTOCOL_VERSION = '2025-06-18';

/**
 * The metadata of the MCP URL origin + resourcePath. authorization_servers names gw itself (the
 * same URL, whose authorization server metadata gw serves with the provider's quirks mended and
 * its own endpoints) when gw stands in as the authorization server, else the identity
 * provider's issuer, which clients then use directly. resourceMetadata is merged last: its
 * fields win.
 */
export function protectedResourceMetadata(
  settings: McpOAuthSettings,
  origin: string,
  resourcePath: string,
): Record<string, unknown> {
  const resource = `${origin}${resourcePath}`;
  const document: Record<string, unknown> = {
    resource,
    authorization_servers: [standsInAsAuthorizationServer(settings) ? resource : settings.issuer],
  };
  if (settings.bearerMethods) document.bearer_methods_supported = [...settings.bearerMethods];
  document.mcp_protocol_version = MCP_PROTOCOL_VERSION;
  document.resource_type = 'mcp-server';
  Object.assign(document, settings.resourceMetadata);
  return document;
}

/** What the challenge reads of a request: the record (scheme, host, path as sent) and the headers. */
export type ChallengedRequest = Pick<PolicyExchange, 'record' | 'req'>;

/**
 * Builds the WWW-Authenticate value of a 401 on an MCP URL: Bearer with resource_metadata (the
 * metadata URL of the request's path, at the configured resource's origin when resourceMetadata
 * sets one) and scope (the configured scopes_supported, for the MCP client's scope selection).
 * Without a usable host the challenge is a plain "Bearer".
 */
export function compileChallenge(settings: McpOAuthSettings): (request: ChallengedRequest) => string {
  const configuredOrigin = originOf(settings.resourceMetadata.resource);
  const scopes = scopeParameter(settings.resourceMetadata.scopes_supported);
  const scope = scopes === undefined ? '' : `, scope="${scopes}"`;
  return ({ record, req }) => {
    const origin = configuredOrigin ?? requestOrigin(record.scheme, record.host, req.headers);
    if (origin === undefined) return 'Bearer';
    return `Bearer resource_metadata="${origin}${PROTECTED_RESOURCE_PATH}${escapePath(record.path)}"${scope}`;
  };
}

/** The origin of a configured resource URL (http or https), or undefined. */
function originOf(resource: unknown): string | undefined {
  if (typeof resource !== 'string') return undefined;
  try {
    const url = new URL(resource);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

// RFC 6749 scope-token: printable ASCII but space, '"' and '\'.
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

/** scopes_supported as a challenge's scope value, when it is a list of valid scope tokens. */
function scopeParameter(scopes: unknown): string | undefined {
  if (!Array.isArray(scopes) || scopes.length === 0) return undefined;
  if (!scopes.every((scope) => typeof scope === 'string' && SCOPE_TOKEN.test(scope))) return undefined;
  return scopes.join(' ');
}
