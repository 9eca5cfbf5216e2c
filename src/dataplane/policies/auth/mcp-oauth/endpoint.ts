// The MCP OAuth endpoints of one protected MCP URL: its protected resource metadata, the
// authorization server metadata gw serves in front of the identity provider (with the
// provider's quirks mended and gw's own registration — and, when needed, token and
// authorization — endpoints advertised), client registration, and the token proxy.
// Compiled once per configuration; the provider's metadata and the connections to it are
// PolicyRuntime state. docs/policies/mcp-oauth.md.
import type { IncomingMessage } from 'node:http';
import type { JWTAuthentication } from '../../../../api/types/inbound-auth.ts';
import { isProblem, type LocalResponse, type PolicyCompileContext, type PolicyProblem } from '../../types.ts';
import { type IdentityProviderClient, IdpUnavailable, identityProviderClient } from './idp-client.ts';
import { AuthorizationServerMetadataSource, type MetadataDocument } from './metadata-source.ts';
import { protectedResourceMetadata } from './protected-resource.ts';
import { type ProviderQuirks, providerQuirks } from './providers.ts';
import { register, takesRegistrations } from './registration.ts';
import { jsonResponse, textResponse } from './responses.ts';
import { jwtMcpSettings, type McpOAuthSettings, standsInAsAuthorizationServer } from './settings.ts';
import { authorizeRedirect, proxyTokenRequest } from './token-proxy.ts';
import { AUTHORIZATION_SERVER_PATH, AUTHORIZE_SUFFIX, REGISTRATION_SUFFIX, TOKEN_SUFFIX } from './well-known.ts';

/** Records why an endpoint failed (the access log's error); never given a secret. */
export type FailureNote = (reason: string) => void;

export class McpOAuthEndpoint {
  readonly settings: McpOAuthSettings;
  private readonly quirks: ProviderQuirks;
  private readonly source: AuthorizationServerMetadataSource;
  private readonly client: IdentityProviderClient;
  /** The provider's authorization and token endpoints gw stands in front of (Entra), if any. */
  private readonly own: { authorize: string; token: string } | undefined;

  constructor(
    settings: McpOAuthSettings,
    quirks: ProviderQuirks,
    source: AuthorizationServerMetadataSource,
    client: IdentityProviderClient,
    own: { authorize: string; token: string } | undefined,
  ) {
    this.settings = settings;
    this.quirks = quirks;
    this.source = source;
    this.client = client;
    this.own = own;
  }

  /** Whether gw serves a token endpoint beneath the metadata URL (a client secret to add, or a provider quirk). */
  get servesToken(): boolean {
    return this.own !== undefined || this.settings.clientSecret !== undefined;
  }

  /** Whether gw serves an authorization endpoint beneath the metadata URL (a provider quirk). */
  get servesAuthorize(): boolean {
    return this.own !== undefined;
  }

  /** RFC 9728 metadata of the MCP URL origin + resourcePath. */
  protectedResource(origin: string, resourcePath: string): LocalResponse {
    return jsonResponse(200, protectedResourceMetadata(this.settings, origin, resourcePath));
  }

  /**
   * The provider's authorization server metadata as gw serves it at
   * origin/.well-known/oauth-authorization-server + resourcePath: the provider's rewrites, then
   * gw's registration endpoint (when it takes registrations), its token and authorization
   * endpoints (when it serves them), and — when gw stands in as the authorization server, so
   * that the protected resource metadata names gw — gw's URL as the issuer (RFC 8414 §3.3: the
   * issuer is the URL the metadata was found from).
   */
  async authorizationServer(origin: string, resourcePath: string, fail: FailureNote): Promise<LocalResponse> {
    let upstream: MetadataDocument;
    try {
      upstream = await this.source.document();
    } catch (error) {
      if (!(error instanceof IdpUnavailable)) throw error;
      fail(`mcp oauth: authorization server metadata: ${error.message}`);
      return textResponse(502, "the identity provider's authorization server metadata is not available");
    }
    const metadata = structuredClone(upstream) as Record<string, unknown>;
    const asUrl = `${origin}${AUTHORIZATION_SERVER_PATH}${resourcePath.replace(/\/+$/, '')}`;
    const problem = this.quirks.rewriteMetadata(metadata, this.settings, asUrl);
    if (problem !== undefined) {
      fail(`mcp oauth: ${this.quirks.product} metadata: ${problem}`);
      return textResponse(502, `the identity provider's metadata cannot be used: ${problem}`);
    }
    if (takesRegistrations(this.quirks, this.settings, upstream))
      metadata.registration_endpoint = `${asUrl}${REGISTRATION_SUFFIX}`;
    else delete metadata.registration_endpoint;
    if (this.own) metadata.authorization_endpoint = `${asUrl}${AUTHORIZE_SUFFIX}`;
    if (this.servesToken) metadata.token_endpoint = `${asUrl}${TOKEN_SUFFIX}`;
    if (standsInAsAuthorizationServer(this.settings)) metadata.issuer = `${origin}${resourcePath}`;
    return jsonResponse(200, metadata);
  }

  /** A Dynamic Client Registration request (POST). */
  register(req: IncomingMessage, fail: FailureNote): Promise<LocalResponse> {
    return register(req, this.settings, this.quirks, () => this.source.document(), this.client, fail);
  }

  /** A token request (POST) to gw's token endpoint. */
  token(req: IncomingMessage, fail: FailureNote): Promise<LocalResponse> {
    const tokenUrl = async () => {
      if (this.own) return this.own.token;
      const endpoint = (await this.source.document()).token_endpoint;
      return typeof endpoint === 'string' ? endpoint : undefined;
    };
    return proxyTokenRequest(req, this.settings, this.quirks, tokenUrl, this.client, fail);
  }

  /** An authorization request to gw's authorization endpoint: redirected to the provider's. */
  authorize(query: string): LocalResponse {
    return authorizeRedirect(this.own!.authorize, query);
  }
}

/** The endpoints of `settings`; a problem when the provider's endpoints cannot be derived from the issuer. */
export function compileMcpOAuthEndpoint(
  settings: McpOAuthSettings,
  context: Pick<PolicyCompileContext, 'runtime'>,
  field: string,
): McpOAuthEndpoint | PolicyProblem {
  const quirks = providerQuirks(settings.provider);
  const own = quirks.ownEndpoints?.(settings.issuer);
  if (typeof own === 'string') return { field, message: `${quirks.product}: ${own}` };
  const urls = quirks.metadataUrls(settings.issuer);
  if (urls.length === 0) return { field, message: `${quirks.product}: no metadata URL can be derived from the issuer` };
  const client = identityProviderClient(context.runtime);
  // One document per URL list: every MCP URL of the same identity provider shares it.
  const source = context.runtime.use(
    `mcp-oauth metadata ${urls.join(' ')}`,
    () => new AuthorizationServerMetadataSource(urls, client, { now: context.runtime.clock.monotonicMs }),
  );
  return new McpOAuthEndpoint(settings, quirks, source, client, own);
}

/**
 * The endpoints of traffic.jwtAuthentication.mcp in an effective traffic section, or undefined
 * when it has none (or the JWT policy itself cannot be used: that policy reports why).
 */
export function compileTrafficMcpEndpoint(
  traffic: Readonly<Record<string, unknown>>,
  context: Pick<PolicyCompileContext, 'runtime' | 'path'>,
): McpOAuthEndpoint | PolicyProblem | undefined {
  const jwt = traffic.jwtAuthentication as JWTAuthentication | undefined;
  if (jwt?.mcp === undefined) return undefined;
  const path = `${context.path}.jwtAuthentication`;
  const settings = jwtMcpSettings(jwt, path);
  if (settings === undefined || isProblem(settings)) return undefined;
  return compileMcpOAuthEndpoint(settings, context, `${path}.mcp`);
}
