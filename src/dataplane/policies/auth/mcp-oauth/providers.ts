// What each identity provider product (McpIDP) needs mended so that MCP clients can use it, as
// agentgateway mends it: where its metadata is, what in that metadata gw rewrites, where client
// registrations go, and what it cannot do. The spec names the products Idp01..Idp06, in
// agentgateway's order: Auth0, Keycloak, Okta, Descope, authentik, Microsoft Entra ID. Each
// quirk is described in docs/policies/mcp-oauth.md.
import type { McpIDP } from '../../../../api/types/inbound-auth.ts';
import type { McpOAuthSettings } from './settings.ts';

/** Where registrations are proxied: a URL, the metadata's own registration_endpoint, or nowhere. */
export type RegistrationTarget = { url: string } | { advertised: true } | { unsupported: string };

export interface ProviderQuirks {
  /** The product's name, for messages and the log. */
  readonly product: string;
  /** URLs of the provider's metadata, tried in order (a 4xx answer moves on to the next). */
  metadataUrls(issuer: string): string[];
  /**
   * Rewrites the metadata gw serves, given the URL gw serves it at (`asUrl`); a string says why
   * the provider's metadata cannot be used.
   */
  rewriteMetadata(metadata: Record<string, unknown>, settings: McpOAuthSettings, asUrl: string): string | undefined;
  registration(issuer: string): RegistrationTarget;
  /** Changes a registration request (a JSON object) before it is proxied. */
  rewriteRegistration?(request: Record<string, unknown>): void;
  /**
   * gw serves the authorization and token endpoints itself and passes requests on to these URLs
   * (undefined: the provider's own endpoints are used as they are).
   */
  ownEndpoints?(issuer: string): { authorize: string; token: string } | string;
  /** Changes a token request form before it is proxied. */
  rewriteTokenForm?(form: URLSearchParams): void;
}

/** RFC 8414 §3: the well-known segment inserted before the issuer's path. */
export function rfc8414MetadataUrl(issuer: string): string {
  try {
    const url = new URL(issuer);
    const path = url.pathname.replace(/\/+$/, '');
    return `${url.origin}/.well-known/oauth-authorization-server${path}`;
  } catch {
    return `${issuer.replace(/\/+$/, '')}/.well-known/oauth-authorization-server`;
  }
}

/** OpenID Connect Discovery: the well-known segment appended to the issuer. */
export function openidConfigurationUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

/** Providers without a quirk list: RFC 8414 first, then OpenID Connect Discovery. */
const STANDARD: ProviderQuirks = {
  product: 'a standards-following authorization server',
  metadataUrls: (issuer) => [rfc8414MetadataUrl(issuer), openidConfigurationUrl(issuer)],
  rewriteMetadata: () => undefined,
  registration: () => ({ advertised: true }),
};

/**
 * Auth0 and Okta ignore the RFC 8707 resource parameter, so the token would not name the MCP
 * server: the authorization endpoint gets their own `audience` parameter, the first configured
 * audience.
 */
function addAudience(metadata: Record<string, unknown>, settings: McpOAuthSettings): string | undefined {
  const endpoint = metadata.authorization_endpoint;
  if (typeof endpoint !== 'string') return 'its metadata has no authorization_endpoint';
  const audience = settings.audiences[0];
  if (audience === undefined) return undefined;
  try {
    const url = new URL(endpoint);
    url.searchParams.set('audience', audience);
    metadata.authorization_endpoint = url.href;
    return undefined;
  } catch {
    return 'its authorization_endpoint is not a URL';
  }
}

const AUTH0: ProviderQuirks = {
  product: 'Auth0',
  metadataUrls: STANDARD.metadataUrls,
  rewriteMetadata: addAudience,
  registration: () => ({ advertised: true }),
};

const KEYCLOAK: ProviderQuirks = {
  product: 'Keycloak',
  // No RFC 8414 document at the path-inserted URL; OpenID Connect Discovery only.
  metadataUrls: (issuer) => [openidConfigurationUrl(issuer)],
  // No RFC 8707 either: the audience comes from an audience mapper in a default client scope
  // (spec document 3), which is why registrations are rewritten below.
  rewriteMetadata: () => undefined,
  // Keycloak's registration endpoint sends no CORS headers, so browser clients register through gw.
  registration: (issuer) => ({ url: `${issuer.replace(/\/+$/, '')}/clients-registrations/openid-connect` }),
  rewriteRegistration: (request) => {
    // A `scope` member makes Keycloak give the new client only those scopes instead of the realm's
    // default client scopes — dropping the audience and groups mappers tokens need — and its
    // Allowed Client Scopes policy refuses names that are not realm client scopes ("openid").
    delete request.scope;
    // Not client metadata (RFC 7591); Keycloak refuses unrecognised members with 400.
    delete request.resource;
  },
};

const OKTA: ProviderQuirks = {
  product: 'Okta',
  metadataUrls: (issuer) => [openidConfigurationUrl(issuer)],
  rewriteMetadata: addAudience,
  // The registration endpoint belongs to the organisation, not the authorization server.
  registration: (issuer) => {
    const origin = originOf(issuer);
    return origin ? { url: `${origin}/oauth2/v1/clients` } : { unsupported: 'the issuer is not a URL' };
  },
};

const DESCOPE: ProviderQuirks = {
  product: 'Descope',
  metadataUrls: (issuer) => [openidConfigurationUrl(issuer)],
  rewriteMetadata: () => undefined,
  // https://api.descope.com/v1/apps/agentic/<project>/<server> registers at
  // https://api.descope.com/v1/mgmt/mcp/client/<project>/<server>/register (it needs a
  // management key: a pre-registered clientId is the usual choice).
  registration: (issuer) => {
    try {
      const url = new URL(issuer);
      const segments = url.pathname.split('/').filter((segment) => segment !== '');
      if (segments.length >= 5 && segments[0] === 'v1' && segments[1] === 'apps' && segments[2] === 'agentic')
        return { url: `${url.origin}/v1/mgmt/mcp/client/${segments[3]}/${segments[4]}/register` };
    } catch {
      // not a URL: no registration
    }
    return { unsupported: 'registration needs an agentic issuer (/v1/apps/agentic/<project>/<server>)' };
  },
};

const AUTHENTIK: ProviderQuirks = {
  product: 'authentik',
  metadataUrls: (issuer) => [openidConfigurationUrl(issuer)],
  rewriteMetadata: () => undefined,
  registration: () => ({ unsupported: 'authentik has no Dynamic Client Registration; set clientId' }),
};

/** Microsoft Entra ID's endpoints, from the tenant in either issuer form (v1 sts.windows.net or v2.0). */
export function entraEndpoints(
  issuer: string,
): { openidConfiguration: string; authorize: string; token: string } | string {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return 'the issuer is not a URL';
  }
  const tenant = url.pathname.split('/').find((segment) => segment !== '');
  if (tenant === undefined) return 'the issuer names no tenant (https://login.microsoftonline.com/<tenant>/v2.0)';
  // v1 tokens come from sts.windows.net; the interactive endpoints are on the login host.
  const host = url.hostname.toLowerCase() === 'sts.windows.net' ? 'login.microsoftonline.com' : url.host;
  const authority = `https://${host}/${tenant}`;
  return {
    openidConfiguration: `${authority}/v2.0/.well-known/openid-configuration`,
    authorize: `${authority}/oauth2/v2.0/authorize`,
    token: `${authority}/oauth2/v2.0/token`,
  };
}

const ENTRA: ProviderQuirks = {
  product: 'Microsoft Entra ID',
  // The v2.0 document, whatever issuer form validates tokens: its endpoints take scopes and PKCE.
  metadataUrls: (issuer) => {
    const endpoints = entraEndpoints(issuer);
    return typeof endpoints === 'string' ? [] : [endpoints.openidConfiguration];
  },
  rewriteMetadata: (metadata) => {
    // Entra supports PKCE with S256 but does not say so; MCP clients require it to be advertised.
    metadata.code_challenge_methods_supported ??= ['S256'];
    return undefined;
  },
  registration: () => ({ unsupported: 'Microsoft Entra ID has no Dynamic Client Registration; set clientId' }),
  // Entra refuses the RFC 8707 resource parameter (AADSTS9010010) that MCP clients must send:
  // gw advertises its own authorize and token endpoints, which drop it on the way.
  ownEndpoints: (issuer) => {
    const endpoints = entraEndpoints(issuer);
    return typeof endpoints === 'string' ? endpoints : { authorize: endpoints.authorize, token: endpoints.token };
  },
  rewriteTokenForm: (form) => form.delete('resource'),
};

const BY_PROVIDER: Record<McpIDP, ProviderQuirks> = {
  Idp01: AUTH0,
  Idp02: KEYCLOAK,
  Idp03: OKTA,
  Idp04: DESCOPE,
  Idp05: AUTHENTIK,
  Idp06: ENTRA,
};

export function providerQuirks(provider: McpIDP | undefined): ProviderQuirks {
  return provider === undefined ? STANDARD : BY_PROVIDER[provider];
}

function originOf(issuer: string): string | undefined {
  try {
    return new URL(issuer).origin;
  } catch {
    return undefined;
  }
}
