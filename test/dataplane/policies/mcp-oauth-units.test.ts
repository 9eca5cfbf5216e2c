// MCP OAuth pieces on their own: settings from either configuration place, well-known paths and
// the request's URL, the 401 challenge, each identity provider's quirks, the rules of the token
// proxy's client secret, the configured-client registration, and the provider metadata cache.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it } from 'node:test';
import type { JWTAuthentication } from '../../../src/api/types/inbound-auth.ts';
import type { BackendObjectConfig } from '../../../src/contract/dataplane-config.ts';
import { compileMcpBackendAuthentication } from '../../../src/dataplane/policies/auth/mcp-oauth/backend-authentication.ts';
import { compileMcpOAuthEndpoint } from '../../../src/dataplane/policies/auth/mcp-oauth/endpoint.ts';
import { IdentityProviderClient, IdpUnavailable } from '../../../src/dataplane/policies/auth/mcp-oauth/idp-client.ts';
import { AuthorizationServerMetadataSource } from '../../../src/dataplane/policies/auth/mcp-oauth/metadata-source.ts';
import {
  compileChallenge,
  protectedResourceMetadata,
} from '../../../src/dataplane/policies/auth/mcp-oauth/protected-resource.ts';
import {
  entraEndpoints,
  providerQuirks,
  rfc8414MetadataUrl,
} from '../../../src/dataplane/policies/auth/mcp-oauth/providers.ts';
import { configuredClientRegistration } from '../../../src/dataplane/policies/auth/mcp-oauth/registration.ts';
import {
  backendMcpSettings,
  jwtMcpSettings,
  type McpOAuthSettings,
  snakeCase,
} from '../../../src/dataplane/policies/auth/mcp-oauth/settings.ts';
import { addsClientSecret, authorizeRedirect } from '../../../src/dataplane/policies/auth/mcp-oauth/token-proxy.ts';
import { parseWellKnownPath } from '../../../src/dataplane/policies/auth/mcp-oauth/well-known.ts';
import type { PolicyExchange } from '../../../src/dataplane/policies/exchange.ts';
import { isProblem } from '../../../src/dataplane/policies/types.ts';
import { escapePath, requestOrigin } from '../../../src/dataplane/proxy/request-origin.ts';
import { closeServer, listen } from '../../helpers/http-server.ts';
import { compileContext } from '../../helpers/policy-context.ts';

const ISSUER = 'https://idp.example/realms/gw';

function settings(overrides: Partial<McpOAuthSettings> = {}): McpOAuthSettings {
  return {
    issuer: ISSUER,
    audiences: ['https://gw.example/mcp'],
    provider: undefined,
    resourceMetadata: {},
    clientId: undefined,
    clientSecret: undefined,
    bearerMethods: ['header'],
    ...overrides,
  };
}

/** What the challenge reads of a request: record scheme, host and path, and the headers. */
function requestTo(path: string, host = 'gw.example', headers: Record<string, string> = {}) {
  const exchange = {
    record: { scheme: 'http', host, path },
    req: { headers: { host, ...headers } },
  };
  return exchange as unknown as Pick<PolicyExchange, 'record' | 'req'>;
}

describe('MCP OAuth settings', () => {
  const jwt = (more: Partial<JWTAuthentication>): JWTAuthentication => ({
    providers: [{ issuer: ISSUER, audiences: ['a'], jwks: { inline: '{"keys":[]}' } }],
    mcp: { resourceMetadata: { scopesSupported: ['mcp'], resource_name: 'x' }, provider: 'Idp02' },
    ...more,
  });

  it('come from the JWT policy’s one provider, resourceMetadata keys in snake_case', () => {
    const value = jwtMcpSettings(jwt({}), 'traffic.jwtAuthentication');
    assert.ok(value && !isProblem(value));
    assert.equal(value.issuer, ISSUER);
    assert.deepEqual(value.audiences, ['a']);
    assert.equal(value.provider, 'Idp02');
    assert.deepEqual(value.resourceMetadata, { scopes_supported: ['mcp'], resource_name: 'x' });
    assert.deepEqual(value.bearerMethods, ['header']);
    assert.equal(jwtMcpSettings(jwt({ mcp: undefined }), 'p'), undefined);
  });

  it('need exactly one JWT provider', () => {
    const two = jwt({
      providers: [
        { issuer: ISSUER, jwks: { inline: '{}' } },
        { issuer: 'https://other.example', jwks: { inline: '{}' } },
      ],
    });
    const problem = jwtMcpSettings(two, 'traffic.jwtAuthentication');
    assert.ok(isProblem(problem));
    assert.equal(problem.field, 'traffic.jwtAuthentication.mcp');
    assert.match(problem.message, /exactly one provider.*2/);
  });

  it('name the bearer method the token location amounts to', () => {
    const query = jwtMcpSettings(jwt({ location: { queryParameter: { name: 'access_token' } } }), 'p');
    assert.deepEqual(!isProblem(query) && query?.bearerMethods, ['query']);
    const cookie = jwtMcpSettings(jwt({ location: { cookie: { name: 'session' } } }), 'p');
    assert.equal(!isProblem(cookie) && cookie?.bearerMethods, undefined);
    assert.equal(
      'bearer_methods_supported' in
        protectedResourceMetadata(settings({ bearerMethods: undefined }), 'https://gw.example', '/mcp'),
      false,
    );
  });

  it('of the deprecated MCPAuthentication read the client secret and refuse what cannot work', () => {
    const data = (ref: string) => (ref === 'Secret tools/idp' ? { clientSecret: ' s3cret\n', other: 'o' } : undefined);
    const context = { data, namespace: 'tools' };
    const base = { issuer: ISSUER, jwks: { url: 'https://idp.example/certs' }, clientId: 'app' };
    const read = backendMcpSettings(
      { ...base, clientSecretRef: { name: 'idp' } },
      context,
      'backend.mcp.authentication',
    );
    assert.ok(!isProblem(read));
    assert.equal(read.clientSecret, 's3cret');
    const otherKey = backendMcpSettings({ ...base, clientSecretRef: { name: 'idp', key: 'other' } }, context, 'f');
    assert.equal(!isProblem(otherKey) && otherKey.clientSecret, 'o');
    const noIssuer = backendMcpSettings({ jwks: base.jwks }, context, 'backend.mcp.authentication');
    assert.deepEqual(noIssuer, {
      field: 'backend.mcp.authentication.issuer',
      message: 'is required: tokens are checked against it',
    });
    const noClient = backendMcpSettings(
      { ...base, clientId: undefined, clientSecretRef: { name: 'idp' } },
      context,
      'f',
    );
    assert.ok(isProblem(noClient) && noClient.field === 'f.clientSecretRef');
    const missing = backendMcpSettings({ ...base, clientSecretRef: { name: 'nope' } }, context, 'f');
    assert.ok(isProblem(missing));
    assert.equal(missing.field, 'f.clientSecretRef.name');
    assert.equal(missing.message, 'Secret tools/nope was not found');
  });

  it('make gw the authorization server when it has something to add: quirks, a client id, a client secret', () => {
    const servers = (overrides: Partial<McpOAuthSettings>) =>
      protectedResourceMetadata(settings(overrides), 'https://gw.example', '/mcp').authorization_servers;
    assert.deepEqual(servers({}), [ISSUER]);
    assert.deepEqual(servers({ provider: 'Idp02' }), ['https://gw.example/mcp']);
    assert.deepEqual(servers({ clientId: 'app' }), ['https://gw.example/mcp']);
    assert.deepEqual(servers({ clientId: 'app', clientSecret: 's' }), ['https://gw.example/mcp']);
    assert.deepEqual(
      protectedResourceMetadata(
        settings({ provider: 'Idp02', resourceMetadata: { authorization_servers: ['https://as.example'] } }),
        'https://gw.example',
        '/mcp',
      ).authorization_servers,
      ['https://as.example'],
      'resourceMetadata wins',
    );
  });

  it('write camelCase keys in snake_case', () => {
    assert.equal(snakeCase('scopesSupported'), 'scopes_supported');
    assert.equal(snakeCase('bearerMethodsSupported'), 'bearer_methods_supported');
    assert.equal(snakeCase('resource_documentation'), 'resource_documentation');
    assert.equal(snakeCase('resource'), 'resource');
    assert.equal(snakeCase('MCPProtocolVersion'), 'mcp_protocol_version');
  });
});

describe('MCP OAuth well-known paths and request URLs', () => {
  it('split a metadata path into its document and the MCP path', () => {
    assert.deepEqual(parseWellKnownPath('/.well-known/oauth-protected-resource/mcp'), {
      document: 'protected-resource',
      rest: '/mcp',
    });
    assert.deepEqual(parseWellKnownPath('/.well-known/oauth-authorization-server'), {
      document: 'authorization-server',
      rest: '',
    });
    assert.equal(parseWellKnownPath('/.well-known/oauth-protected-resource-evil'), undefined);
    assert.equal(parseWellKnownPath('/mcp/.well-known/oauth-protected-resource'), undefined);
  });

  it('take the scheme from X-Forwarded-Proto and refuse hosts that are no host', () => {
    assert.equal(requestOrigin('http', 'gw.example:8080', {}), 'http://gw.example:8080');
    assert.equal(requestOrigin('http', 'gw.example', { 'x-forwarded-proto': 'https' }), 'https://gw.example');
    assert.equal(requestOrigin('http', 'gw.example', { 'x-forwarded-proto': 'gopher' }), 'http://gw.example');
    assert.equal(requestOrigin('https', '[::1]:443', {}), 'https://[::1]:443');
    assert.equal(requestOrigin('http', 'evil"host', {}), undefined);
    assert.equal(requestOrigin('http', 'a/b', {}), undefined);
    assert.equal(requestOrigin('http', '', {}), undefined);
    assert.equal(escapePath('/mcp/"x" y'), '/mcp/%22x%22%20y');
  });
});

describe('the MCP 401 challenge', () => {
  it('names the metadata URL of the request path, and the configured scopes', () => {
    const challenge = compileChallenge(settings({ resourceMetadata: { scopes_supported: ['openid', 'mcp:read'] } }));
    assert.equal(
      challenge(requestTo('/mcp')),
      'Bearer resource_metadata="http://gw.example/.well-known/oauth-protected-resource/mcp", scope="openid mcp:read"',
    );
    assert.equal(
      challenge(requestTo('/mcp', 'gw.example', { 'x-forwarded-proto': 'https' })),
      'Bearer resource_metadata="https://gw.example/.well-known/oauth-protected-resource/mcp", scope="openid mcp:read"',
    );
  });

  it('uses the configured resource’s origin, leaves out scopes it cannot quote, and falls back to Bearer', () => {
    const challenge = compileChallenge(
      settings({ resourceMetadata: { resource: 'https://public.example/base/mcp?x=1', scopes_supported: ['a"b'] } }),
    );
    assert.equal(
      challenge(requestTo('/mcp')),
      'Bearer resource_metadata="https://public.example/.well-known/oauth-protected-resource/mcp"',
    );
    assert.equal(compileChallenge(settings())(requestTo('/mcp', 'bad host')), 'Bearer');
  });
});

describe('identity provider quirks', () => {
  it('find standard metadata by RFC 8414 first, then OpenID Connect Discovery', () => {
    assert.deepEqual(providerQuirks(undefined).metadataUrls('https://as.example/tenant1/'), [
      'https://as.example/.well-known/oauth-authorization-server/tenant1',
      'https://as.example/tenant1/.well-known/openid-configuration',
    ]);
    assert.equal(rfc8414MetadataUrl('https://as.example'), 'https://as.example/.well-known/oauth-authorization-server');
  });

  it('Auth0 and Okta: the first audience joins the authorization endpoint', () => {
    for (const provider of ['Idp01', 'Idp03'] as const) {
      const metadata: Record<string, unknown> = { authorization_endpoint: 'https://as.example/authorize?x=1' };
      const quirks = providerQuirks(provider);
      assert.equal(quirks.rewriteMetadata(metadata, settings({ audiences: ['urn:mcp', 'b'] }), ''), undefined);
      assert.equal(metadata.authorization_endpoint, 'https://as.example/authorize?x=1&audience=urn%3Amcp');
      assert.match(quirks.rewriteMetadata({}, settings(), '') ?? '', /no authorization_endpoint/);
    }
    assert.deepEqual(providerQuirks('Idp03').registration('https://org.okta.example/oauth2/default'), {
      url: 'https://org.okta.example/oauth2/v1/clients',
    });
    assert.deepEqual(providerQuirks('Idp01').registration(ISSUER), { advertised: true });
  });

  it('Keycloak: discovery document, its registration endpoint, registrations without scope or resource', () => {
    const quirks = providerQuirks('Idp02');
    assert.deepEqual(quirks.metadataUrls(`${ISSUER}/`), [`${ISSUER}/.well-known/openid-configuration`]);
    assert.deepEqual(quirks.registration(ISSUER), { url: `${ISSUER}/clients-registrations/openid-connect` });
    const request: Record<string, unknown> = {
      client_name: 'c',
      scope: 'openid mcp',
      resource: 'x',
      redirect_uris: [],
    };
    quirks.rewriteRegistration!(request);
    assert.deepEqual(request, { client_name: 'c', redirect_uris: [] });
  });

  it('Descope registers at the management URL of an agentic issuer', () => {
    const quirks = providerQuirks('Idp04');
    assert.deepEqual(quirks.registration('https://api.descope.com/v1/apps/agentic/P123/S456'), {
      url: 'https://api.descope.com/v1/mgmt/mcp/client/P123/S456/register',
    });
    assert.ok('unsupported' in quirks.registration('https://api.descope.com/P123'));
  });

  it('authentik and Entra take no registrations; Entra gets gw’s endpoints without the resource parameter', () => {
    assert.ok('unsupported' in providerQuirks('Idp05').registration(ISSUER));
    const entra = providerQuirks('Idp06');
    assert.ok('unsupported' in entra.registration(ISSUER));
    for (const issuer of ['https://sts.windows.net/tenant-1/', 'https://login.microsoftonline.com/tenant-1/v2.0']) {
      assert.deepEqual(entraEndpoints(issuer), {
        openidConfiguration: 'https://login.microsoftonline.com/tenant-1/v2.0/.well-known/openid-configuration',
        authorize: 'https://login.microsoftonline.com/tenant-1/oauth2/v2.0/authorize',
        token: 'https://login.microsoftonline.com/tenant-1/oauth2/v2.0/token',
      });
    }
    const metadata: Record<string, unknown> = {};
    entra.rewriteMetadata(metadata, settings(), '');
    assert.deepEqual(metadata.code_challenge_methods_supported, ['S256']);
    const form = new URLSearchParams({ grant_type: 'authorization_code', resource: 'https://gw/mcp', code: 'c' });
    entra.rewriteTokenForm!(form);
    assert.equal(form.toString(), 'grant_type=authorization_code&code=c');
    const redirect = authorizeRedirect(
      'https://login.example/authorize',
      'client_id=a&resource=https%3A%2F%2Fgw&state=s',
    );
    assert.deepEqual(redirect, {
      status: 302,
      headers: { location: 'https://login.example/authorize?client_id=a&state=s' },
    });
    const problem = compileMcpOAuthEndpoint(
      settings({ provider: 'Idp06', issuer: 'https://login.example' }),
      compileContext(),
      'f',
    );
    assert.ok(isProblem(problem) && /tenant/.test(problem.message));
  });
});

describe('the token proxy’s client secret', () => {
  const configured = settings({ clientId: 'app', clientSecret: 'secret' });
  const form = (fields: Record<string, string>) => new URLSearchParams(fields);

  it('is added to the user-delegated grants of the configured client only', () => {
    assert.equal(
      addsClientSecret(form({ grant_type: 'authorization_code', client_id: 'app' }), configured, false),
      true,
    );
    assert.equal(addsClientSecret(form({ grant_type: 'refresh_token', client_id: 'app' }), configured, false), true);
    assert.equal(
      addsClientSecret(form({ grant_type: 'client_credentials', client_id: 'app' }), configured, false),
      false,
    );
    assert.equal(
      addsClientSecret(form({ grant_type: 'authorization_code', client_id: 'x' }), configured, false),
      false,
    );
    assert.equal(
      addsClientSecret(form({ grant_type: 'authorization_code', client_id: 'app' }), configured, true),
      false,
    );
    assert.equal(
      addsClientSecret(
        form({ grant_type: 'authorization_code', client_id: 'app', client_secret: 'own' }),
        configured,
        false,
      ),
      false,
    );
    assert.equal(
      addsClientSecret(form({ grant_type: 'authorization_code', client_id: 'app' }), settings(), false),
      false,
    );
  });
});

describe('the configured client’s registration answer', () => {
  it('names the client, echoes the redirect URIs, and survives any body', () => {
    const answer = configuredClientRegistration(
      'app',
      Buffer.from(JSON.stringify({ client_id: 'mine', redirect_uris: ['http://127.0.0.1:1/cb', 3], client_name: 'n' })),
    );
    assert.equal(answer.status, 201);
    assert.deepEqual(JSON.parse(String(answer.body)), {
      client_id: 'app',
      client_id_issued_at: 0,
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      redirect_uris: ['http://127.0.0.1:1/cb'],
    });
    for (const body of ['not json {', '["a"]', '']) {
      const parsed = JSON.parse(String(configuredClientRegistration('app', Buffer.from(body)).body));
      assert.equal(parsed.client_id, 'app');
      assert.deepEqual(parsed.redirect_uris, []);
    }
  });
});

describe('the deprecated backend authentication of a rule', () => {
  const authentication = (issuer: string) => ({
    mcp: { authentication: { issuer, jwks: { url: 'https://idp.example/certs' } } },
  });
  const mcpBackend = { kind: 'GwBackend', spec: { mcp: { targets: [] } } } as BackendObjectConfig;

  it('applies to MCP backends only, and must be the same on all of a rule’s MCP backends', () => {
    const context = compileContext();
    try {
      assert.equal(
        compileMcpBackendAuthentication(
          [
            {
              key: 'GwBackend default/web',
              object: { kind: 'GwBackend', spec: { static: {} } },
              policy: authentication(ISSUER),
            },
          ],
          context,
        ),
        undefined,
      );
      const one = compileMcpBackendAuthentication(
        [{ key: 'GwBackend default/tools', object: mcpBackend, policy: authentication(ISSUER) }],
        context,
      );
      assert.ok(one && !isProblem(one) && typeof one.step === 'function');
      const two = compileMcpBackendAuthentication(
        [
          { key: 'GwBackend default/a', object: mcpBackend, policy: authentication(ISSUER) },
          { key: 'GwBackend default/b', object: mcpBackend, policy: authentication('https://other.example') },
        ],
        context,
      );
      assert.ok(isProblem(two));
      assert.match(
        two.message,
        /differs between the rule's MCP backends \(GwBackend default\/a, GwBackend default\/b\)/,
      );
    } finally {
      context.runtime.close();
    }
  });

  it('names MCPAuthentication’s own fields in its problems', () => {
    const context = compileContext();
    try {
      const problem = compileMcpBackendAuthentication(
        [
          {
            key: 'GwBackend tools/x',
            object: mcpBackend,
            policy: { mcp: { authentication: { issuer: ISSUER, jwks: { url: 'ftp://idp.example/certs' } } } },
          },
        ],
        context,
      );
      assert.ok(isProblem(problem));
      assert.equal(problem.field, 'backend.mcp.authentication.jwks.url');
      assert.match(problem.message, /^\(GwBackend tools\/x\) /);
    } finally {
      context.runtime.close();
    }
  });
});

describe('the provider metadata cache', () => {
  async function metadataServer() {
    const state = { fetches: 0, status: 200, paths: [] as string[] };
    const server = createServer((req, res) => {
      state.fetches += 1;
      state.paths.push(req.url ?? '');
      if (req.url === '/.well-known/oauth-authorization-server/realm') return void res.writeHead(404).end();
      if (state.status !== 200) return void res.writeHead(state.status).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer: 'x', n: state.fetches }));
    });
    const port = await listen(server);
    return { state, server, issuer: `http://127.0.0.1:${port}/realm` };
  }

  it('moves on from a 404, keeps the document, and fetches again only after its time', async () => {
    const { state, server, issuer } = await metadataServer();
    const client = new IdentityProviderClient();
    try {
      const source = new AuthorizationServerMetadataSource(providerQuirks(undefined).metadataUrls(issuer), client, {
        ttlMs: 100,
        retryAfterMs: 50,
      });
      const [a, b] = await Promise.all([source.document(), source.document()]);
      assert.equal(a, b, 'concurrent requests share one fetch');
      assert.deepEqual(state.paths, [
        '/.well-known/oauth-authorization-server/realm',
        '/realm/.well-known/openid-configuration',
      ]);
      assert.equal(await source.document(), a);
      await new Promise((resolve) => setTimeout(resolve, 120));
      state.status = 500;
      // Stale: served while a refresh is tried; the refresh fails and the old document stays.
      assert.equal(await source.document(), a);
      await new Promise((resolve) => setTimeout(resolve, 20));
      const fetches = state.fetches;
      assert.equal(await source.document(), a);
      assert.equal(state.fetches, fetches, 'no new fetch right after a failure');
    } finally {
      client.close();
      await closeServer(server);
    }
  });

  it('fails with the reason when no document can be had, and does not hammer the provider', async () => {
    const { state, server, issuer } = await metadataServer();
    state.status = 503;
    const client = new IdentityProviderClient();
    try {
      const source = new AuthorizationServerMetadataSource([`${issuer}/.well-known/openid-configuration`], client, {
        retryAfterMs: 60_000,
      });
      await assert.rejects(Promise.resolve(source.document()), (error: unknown) => {
        assert.ok(error instanceof IdpUnavailable);
        assert.match(error.message, /answered 503/);
        return true;
      });
      await assert.rejects(Promise.resolve(source.document()), IdpUnavailable);
      assert.equal(state.fetches, 1);
    } finally {
      client.close();
      await closeServer(server);
    }
  });

  it('refuses answers over the size limit and providers slower than the timeout', async () => {
    const server = createServer((req, res) => {
      if (req.url === '/slow') return; // never answers
      res.writeHead(200, { 'content-type': 'application/json' }).end(`"${'x'.repeat(2048)}"`);
    });
    const port = await listen(server);
    const client = new IdentityProviderClient({ maxBytes: 1024, timeoutMs: 200 });
    try {
      await assert.rejects(
        client.call(`http://127.0.0.1:${port}/big?secret=1`, { method: 'GET' }),
        (error: unknown) => {
          assert.ok(error instanceof IdpUnavailable);
          assert.equal(error.message, `http://127.0.0.1:${port}/big answered more than 1024 bytes`);
          return true;
        },
      );
      await assert.rejects(client.call(`http://127.0.0.1:${port}/slow`, { method: 'GET' }), IdpUnavailable);
    } finally {
      client.close();
      await closeServer(server);
    }
  });
});
