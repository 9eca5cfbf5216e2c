// Dynamic Client Registration (RFC 7591) through gw: a registration request is passed on to the
// identity provider's registration endpoint (with the provider's quirks mended) and its answer
// passed back — unless clientId is configured: then nothing is proxied and gw answers with that
// client id itself (the shape agentgateway answers with; docs/policies/mcp-oauth.md).
import type { IncomingMessage } from 'node:http';
import type { LocalResponse } from '../../types.ts';
import { type IdentityProviderClient, IdpUnavailable } from './idp-client.ts';
import type { MetadataDocument } from './metadata-source.ts';
import type { ProviderQuirks } from './providers.ts';
import { CORS_HEADERS, jsonResponse, requestBody, textResponse } from './responses.ts';
import type { McpOAuthSettings } from './settings.ts';

/** Largest registration request read (client metadata is a few hundred bytes). */
export const MAX_REGISTRATION_BYTES = 64 * 1024;

/**
 * The registration gw answers itself when clientId is set: the configured client id, public
 * (token_endpoint_auth_method none: a client secret, when configured, is added by gw's token
 * endpoint), for the authorization code grant, with the redirect URIs the client asked for
 * (strict clients check them). client_id_issued_at is 0: nothing was issued now.
 */
export function configuredClientRegistration(clientId: string, request: Buffer): LocalResponse {
  let redirectUris: string[] = [];
  try {
    const parsed = JSON.parse(request.toString('utf8')) as { redirect_uris?: unknown };
    if (Array.isArray(parsed?.redirect_uris))
      redirectUris = parsed.redirect_uris.filter((uri): uri is string => typeof uri === 'string');
  } catch {
    // not JSON: the registration still names the configured client
  }
  return jsonResponse(201, {
    client_id: clientId,
    client_id_issued_at: 0,
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code'],
    response_types: ['code'],
    redirect_uris: redirectUris,
  });
}

/** Where registrations go, or why there is nowhere (undefined: gw takes none). */
export function registrationUrl(
  quirks: ProviderQuirks,
  settings: McpOAuthSettings,
  metadata: MetadataDocument,
): string | undefined {
  const target = quirks.registration(settings.issuer);
  if ('url' in target) return target.url;
  if ('advertised' in target && typeof metadata.registration_endpoint === 'string')
    return metadata.registration_endpoint;
  return undefined;
}

/** Whether gw advertises a registration endpoint: it answers registrations itself or has somewhere to send them. */
export function takesRegistrations(quirks: ProviderQuirks, settings: McpOAuthSettings, metadata: MetadataDocument) {
  return settings.clientId !== undefined || registrationUrl(quirks, settings, metadata) !== undefined;
}

/** Answers one registration request (POST). */
export async function register(
  req: IncomingMessage,
  settings: McpOAuthSettings,
  quirks: ProviderQuirks,
  metadata: () => MetadataDocument | Promise<MetadataDocument>,
  client: IdentityProviderClient,
  fail: (reason: string) => void,
): Promise<LocalResponse> {
  const body = await requestBody(req, MAX_REGISTRATION_BYTES);
  if (!Buffer.isBuffer(body)) return body;
  if (settings.clientId !== undefined) return configuredClientRegistration(settings.clientId, body);
  const target = quirks.registration(settings.issuer);
  let url: string | undefined;
  if ('unsupported' in target) url = undefined;
  else if ('url' in target) url = target.url;
  else {
    try {
      url = registrationUrl(quirks, settings, await metadata());
    } catch (error) {
      fail(`mcp oauth: ${(error as Error).message}`);
      return textResponse(502, "the identity provider's metadata is not available");
    }
  }
  if (url === undefined) {
    const reason = 'unsupported' in target ? target.unsupported : 'the identity provider takes no registrations';
    fail(`mcp oauth: registration refused: ${reason}`);
    return textResponse(501, `Dynamic Client Registration is not available: ${reason}`);
  }
  let forwarded: Buffer = body;
  if (quirks.rewriteRegistration) {
    let request: unknown;
    try {
      request = JSON.parse(body.toString('utf8'));
    } catch {
      request = undefined;
    }
    if (request === null || typeof request !== 'object' || Array.isArray(request))
      return jsonResponse(400, {
        error: 'invalid_client_metadata',
        error_description: 'the registration request must be a JSON object',
      });
    quirks.rewriteRegistration(request as Record<string, unknown>);
    forwarded = Buffer.from(JSON.stringify(request));
  }
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  // An initial access token (RFC 7591 §3), when the provider wants one.
  const authorization = req.headers.authorization;
  if (typeof authorization === 'string') headers.authorization = authorization;
  try {
    const answer = await client.call(url, { method: 'POST', headers, body: forwarded });
    return {
      status: answer.status,
      headers: { 'content-type': answer.contentType ?? 'application/json', ...answer.cacheHeaders, ...CORS_HEADERS },
      body: answer.body,
    };
  } catch (error) {
    if (!(error instanceof IdpUnavailable)) throw error;
    fail(`mcp oauth: registration: ${error.message}`);
    return textResponse(502, 'the identity provider could not take the registration');
  }
}
