// A real OpenID provider (oidc-provider) standing in for Keycloak (McpIDP Idp02) in the MCP OAuth
// tests: its issuer is a realm URL (/realms/gw) and its endpoints sit at Keycloak's paths
// (protocol/openid-connect/..., clients-registrations/openid-connect). It takes anonymous
// Dynamic Client Registration, issues JWT access tokens for the resource a client names (RFC
// 8707), with a groups claim unless the client is called "outsider" (a client called "auditor"
// is in a second group too), and records the registrations and token requests it receives.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type CryptoKey, exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { type Dispatcher, request } from 'undici';
import { closeServer, listen } from '../../helpers/http-server.ts';

// oidc-provider ships no type declarations: the little used here is typed here.
interface OidcProvider {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  on(event: string, listener: (ctx: { oidc: { body?: Record<string, unknown> } }) => void): void;
}
type OidcProviderClass = new (issuer: string, configuration: Record<string, unknown>) => OidcProvider;
interface TokenContext {
  oidc: { client?: { clientName?: string } };
}

/** The group members of which the MCP routes admit (the groups claim of doc 3's group mapper). */
export const MCP_GROUP = 'mcp-users';
/** A client whose tokens carry no groups claim. */
export const OUTSIDER = 'outsider';
/** A client whose tokens carry AUDIT_GROUP besides MCP_GROUP. */
export const AUDITOR = 'auditor';
export const AUDIT_GROUP = 'mcp-auditors';
/** A confidential client registered in advance: authorization code flow, its secret at the token endpoint as a form field. */
export const CONFIDENTIAL_CLIENT = { id: 'gw-mcp', secret: 'confidential-secret-for-tests' };
/** A client registered in advance for client_credentials, the secret sent with basic authentication. */
export const SERVICE_CLIENT = { id: 'gw-service', secret: 'service-secret-for-tests' };
/** Where the authorization code flow says it will receive codes (never called: the test reads the redirect). */
export const REDIRECT_URI = 'http://127.0.0.1:9/callback';
const REALM_PATH = '/realms/gw';

/** oidc-provider's storage, in memory. */
class MemoryAdapter {
  static readonly entries = new Map<string, Record<string, unknown>>();
  private readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
  private key(id: string): string {
    return `${this.name}:${id}`;
  }
  async upsert(id: string, payload: Record<string, unknown>): Promise<void> {
    MemoryAdapter.entries.set(this.key(id), payload);
  }
  async find(id: string): Promise<Record<string, unknown> | undefined> {
    return MemoryAdapter.entries.get(this.key(id));
  }
  async findByUid(uid: string): Promise<Record<string, unknown> | undefined> {
    for (const [key, payload] of MemoryAdapter.entries)
      if (key.startsWith(`${this.name}:`) && payload.uid === uid) return payload;
    return undefined;
  }
  async findByUserCode(): Promise<undefined> {
    return undefined;
  }
  async consume(id: string): Promise<void> {
    const payload = MemoryAdapter.entries.get(this.key(id));
    if (payload) payload.consumed = Math.floor(Date.now() / 1000);
  }
  async destroy(id: string): Promise<void> {
    MemoryAdapter.entries.delete(this.key(id));
  }
  async revokeByGrantId(): Promise<void> {}
}

export interface IdentityProvider {
  /** http://127.0.0.1:<port>/realms/gw */
  issuer: string;
  jwksUri: string;
  tokenEndpoint: string;
  /** Registration requests received (their JSON), oldest first. */
  registrations: Record<string, unknown>[];
  /** Token requests received (their form), oldest first. */
  tokenRequests: Record<string, unknown>[];
  /** Requests for the OpenID configuration document. */
  discoveryFetches: number;
  /** Signs a token with the provider's own key (for tokens the provider would not issue: expired ones). */
  sign(claims: JWTPayload): Promise<string>;
  close(): Promise<void>;
}

export async function startIdentityProvider(): Promise<IdentityProvider> {
  const moduleName = 'oidc-provider';
  const { default: Provider } = (await import(moduleName)) as { default: OidcProviderClass };
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = 'realm-key-1';
  const signing = { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' };
  const server = createServer();
  const port = await listen(server);
  const issuer = `http://127.0.0.1:${port}${REALM_PATH}`;
  const provider = new Provider(issuer, {
    adapter: MemoryAdapter,
    jwks: { keys: [signing] },
    cookies: { keys: ['cookie-signing-key-for-tests'] },
    clients: [
      {
        client_id: CONFIDENTIAL_CLIENT.id,
        client_secret: CONFIDENTIAL_CLIENT.secret,
        client_name: 'gw MCP client',
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: 'client_secret_post',
      },
      {
        client_id: SERVICE_CLIENT.id,
        client_secret: SERVICE_CLIENT.secret,
        client_name: 'gw service',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
      },
    ],
    routes: {
      authorization: '/protocol/openid-connect/auth',
      token: '/protocol/openid-connect/token',
      jwks: '/protocol/openid-connect/certs',
      userinfo: '/protocol/openid-connect/userinfo',
      end_session: '/protocol/openid-connect/logout',
      registration: '/clients-registrations/openid-connect',
    },
    findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id }) }),
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      // A resource indicator makes the provider issue its access token as a JWT for that audience.
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => ({
          scope: 'mcp',
          audience: resource,
          accessTokenFormat: 'jwt',
        }),
      },
    },
    ttl: { ClientCredentials: 600, AccessToken: 600, Interaction: 600, Session: 600, Grant: 600, IdToken: 600 },
    // Doc 3's group mapper: members of the group get it in a groups claim.
    extraTokenClaims: (ctx: TokenContext) => {
      const name = ctx.oidc.client?.clientName;
      if (name === OUTSIDER) return {};
      return { groups: name === AUDITOR ? [MCP_GROUP, AUDIT_GROUP] : [MCP_GROUP] };
    },
  });
  const handle = provider.callback();
  const record = (list: Record<string, unknown>[]) => (ctx: { oidc: { body?: Record<string, unknown> } }) =>
    list.push({ ...ctx.oidc.body });
  const idp: IdentityProvider = {
    issuer,
    jwksUri: `${issuer}/protocol/openid-connect/certs`,
    tokenEndpoint: `${issuer}/protocol/openid-connect/token`,
    registrations: [],
    tokenRequests: [],
    discoveryFetches: 0,
    sign: (claims) =>
      new SignJWT({ iss: issuer, ...claims }).setProtectedHeader({ alg: 'RS256', kid }).sign(privateKey as CryptoKey),
    close: () => closeServer(server),
  };
  provider.on('registration_create.success', record(idp.registrations));
  provider.on('registration_create.error', record(idp.registrations));
  provider.on('grant.success', record(idp.tokenRequests));
  provider.on('grant.error', record(idp.tokenRequests));
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/';
    if (!url.startsWith(REALM_PATH)) {
      res.writeHead(404).end();
      return;
    }
    // Mounted under the realm path, as Keycloak serves a realm.
    (req as IncomingMessage & { originalUrl: string }).originalUrl = url;
    req.url = url.slice(REALM_PATH.length) || '/';
    if (req.url.startsWith('/.well-known/openid-configuration')) idp.discoveryFetches += 1;
    handle(req, res);
  });
  return idp;
}

/** A JWT access token for `resource` with client_credentials of a client (basic authentication). */
export async function clientCredentialsToken(
  idp: IdentityProvider,
  client: { id: string; secret: string },
  resource: string,
): Promise<string> {
  const response = await request(idp.tokenEndpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${encodeURIComponent(client.id)}:${encodeURIComponent(client.secret)}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'mcp', resource }).toString(),
  });
  const text = await response.body.text();
  assert.equal(response.statusCode, 200, text);
  const token = (JSON.parse(text) as { access_token: string }).access_token;
  assert.equal(token.split('.').length, 3, 'the provider issues a JWT access token');
  return token;
}

/**
 * Plays the user at the provider's login and consent pages (oidc-provider's development
 * interactions) for an authorization URL, keeping its cookies; resolves the code the provider
 * redirects to REDIRECT_URI with.
 */
export async function authorizeAsUser(authorizationUrl: URL, user: string): Promise<string> {
  const cookies = new Map<string, string>();
  let url = authorizationUrl;
  let method: 'GET' | 'POST' = 'GET';
  let form: string | undefined;
  for (let step = 0; step < 12; step++) {
    const response: Dispatcher.ResponseData = await request(url, {
      method,
      headers: {
        cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; '),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: form,
    });
    const setCookie = response.headers['set-cookie'];
    for (const line of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
      const [pair] = line.split(';');
      const equals = pair!.indexOf('=');
      cookies.set(pair!.slice(0, equals), pair!.slice(equals + 1));
    }
    const body = await response.body.text();
    const location = response.headers.location;
    if (typeof location === 'string') {
      const next = new URL(location, url);
      if (next.href.startsWith(REDIRECT_URI)) {
        const code = next.searchParams.get('code');
        assert.ok(code, `the provider redirected without a code: ${next.search}`);
        return code;
      }
      url = next;
      method = 'GET';
      form = undefined;
      continue;
    }
    assert.equal(response.statusCode, 200, body);
    // A login or consent page: submit its prompt.
    const prompt = /name="prompt" value="(\w+)"/.exec(body)?.[1];
    assert.ok(prompt, 'the provider showed neither a login nor a consent page');
    method = 'POST';
    form = new URLSearchParams({ prompt, login: user, password: 'any' }).toString();
  }
  assert.fail('the authorization did not finish');
}
