// gw's own token and authorization endpoints, advertised in the authorization server metadata
// when a request must change on its way to the identity provider: the client secret of the
// deprecated MCPAuthentication.clientSecretRef is added to token requests of its client, and
// Microsoft Entra ID's endpoints get requests without the RFC 8707 resource parameter.
//
// The token endpoint is reachable without authentication, so the secret is added only to the
// user-delegated grants (authorization_code, refresh_token) of the configured clientId, and only
// when the client sent no credentials of its own: a client_credentials request with the secret
// added would let anyone mint tokens as that client (agentgateway's rule).
import type { IncomingMessage } from 'node:http';
import type { LocalResponse } from '../../types.ts';
import { type IdentityProviderClient, IdpUnavailable } from './idp-client.ts';
import type { ProviderQuirks } from './providers.ts';
import { CORS_HEADERS, jsonResponse, requestBody, textResponse } from './responses.ts';
import type { McpOAuthSettings } from './settings.ts';

/** Largest token request read (a form of a few parameters). */
export const MAX_TOKEN_REQUEST_BYTES = 64 * 1024;

/** Grants the client secret may be added to: those a user authorised. */
const DELEGATED_GRANTS = new Set(['authorization_code', 'refresh_token']);

/** Whether gw adds its client secret to this token request. */
export function addsClientSecret(form: URLSearchParams, settings: McpOAuthSettings, clientAuthenticated: boolean) {
  return (
    settings.clientSecret !== undefined &&
    settings.clientId !== undefined &&
    !clientAuthenticated &&
    !form.has('client_secret') &&
    !form.has('client_assertion') &&
    form.get('client_id') === settings.clientId &&
    DELEGATED_GRANTS.has(form.get('grant_type') ?? '')
  );
}

/** Passes one token request (POST) on to `tokenUrl`, the secret added when allowed; the answer back as it is. */
export async function proxyTokenRequest(
  req: IncomingMessage,
  settings: McpOAuthSettings,
  quirks: ProviderQuirks,
  tokenUrl: () => Promise<string | undefined>,
  client: IdentityProviderClient,
  fail: (reason: string) => void,
): Promise<LocalResponse> {
  const body = await requestBody(req, MAX_TOKEN_REQUEST_BYTES);
  if (!Buffer.isBuffer(body)) return body;
  let url: string | undefined;
  try {
    url = await tokenUrl();
  } catch (error) {
    fail(`mcp oauth: ${(error as Error).message}`);
    return textResponse(502, "the identity provider's metadata is not available");
  }
  if (url === undefined) {
    fail('mcp oauth: the identity provider advertises no token_endpoint');
    return textResponse(502, 'the identity provider has no token endpoint');
  }
  const form = new URLSearchParams(body.toString('utf8'));
  // gw decides on the first of a repeated parameter; a provider might take another (RFC 6749 §3.2:
  // none may be sent twice).
  const repeated = repeatedParameter(form);
  if (repeated !== undefined)
    return jsonResponse(400, {
      error: 'invalid_request',
      error_description: `the parameter ${JSON.stringify(repeated.slice(0, 64))} is sent more than once`,
    });
  quirks.rewriteTokenForm?.(form);
  const authorization = req.headers.authorization;
  if (addsClientSecret(form, settings, typeof authorization === 'string'))
    form.append('client_secret', settings.clientSecret!);
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  // client_secret_basic credentials of the client itself, and a DPoP proof (RFC 9449) it binds the token to.
  if (typeof authorization === 'string') headers.authorization = authorization;
  const dpop = req.headers.dpop;
  if (typeof dpop === 'string') headers.dpop = dpop;
  try {
    const answer = await client.call(url, { method: 'POST', headers, body: form.toString() });
    return {
      status: answer.status,
      headers: { 'content-type': answer.contentType ?? 'application/json', ...answer.cacheHeaders, ...CORS_HEADERS },
      body: answer.body,
    };
  } catch (error) {
    if (!(error instanceof IdpUnavailable)) throw error;
    fail(`mcp oauth: token request: ${error.message}`);
    return textResponse(502, 'the identity provider could not answer the token request');
  }
}

/** The first parameter name a form has more than once. */
function repeatedParameter(form: URLSearchParams): string | undefined {
  const seen = new Set<string>();
  for (const name of form.keys()) {
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}

/** The authorization request sent on to the provider's endpoint (a redirect), without `resource`. */
export function authorizeRedirect(authorizeUrl: string, query: string): LocalResponse {
  const params = new URLSearchParams(query);
  params.delete('resource');
  const search = params.toString();
  return { status: 302, headers: { location: search === '' ? authorizeUrl : `${authorizeUrl}?${search}` } };
}
