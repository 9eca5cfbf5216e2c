// MCP OAuth end to end with traffic.jwtAuthentication.mcp, provider Idp02 (Keycloak), against a
// real OpenID provider standing in for Keycloak, and the MCP SDK's own client auth code: an MCP
// client is refused with a 401 naming the protected resource metadata, discovers it and the
// authorization server metadata through gw, registers through gw, gets a token for the MCP
// resource and calls the MCP URL (a recording upstream stands in for the MCP server).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  auth,
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
  registerClient,
} from '@modelcontextprotocol/sdk/client/auth.js';
import { gatewayYaml } from '../../helpers/gateway.ts';
import { prefixRouteYaml, staticBackendYaml, trafficPolicyYaml } from '../../helpers/policy-yaml.ts';
import type { Answer, RecordingUpstream } from '../../helpers/recording-upstream.ts';
import { startUpstreamGateway, type UpstreamGateway } from '../../helpers/upstream-gateway.ts';
import { jwtClaims, ServiceClient } from './mcp-oauth-client.ts';
import {
  clientCredentialsToken,
  type IdentityProvider,
  MCP_GROUP,
  OUTSIDER,
  SERVICE_CLIENT,
  startIdentityProvider,
} from './mcp-oauth-idp.ts';

const TOOLS_LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });

/** The MCP server stand-in: answers every request with an empty tools/list result. */
const answerTools: Answer = (_req, res) => {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { tools: [] } });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

/** The traffic policy of an MCP route: JWT with mcp (Keycloak), and members of MCP_GROUP only. */
function mcpPolicy(idp: IdentityProvider, audience: string, mcp: Record<string, unknown>): object {
  return {
    jwtAuthentication: {
      providers: [{ issuer: idp.issuer, audiences: [audience], jwks: { remote: { url: idp.jwksUri } } }],
      mcp: { provider: 'Idp02', ...mcp },
    },
    authorization: { policy: { matchExpressions: [`"${MCP_GROUP}" in jwt.groups`] } },
  };
}

describe('MCP OAuth with a Keycloak provider (jwtAuthentication.mcp)', () => {
  let idp: IdentityProvider;
  let g: UpstreamGateway;
  let upstream: RecordingUpstream;
  let base: string;
  let mcpUrl: string;
  let fixedUrl: string;

  before(async () => {
    idp = await startIdentityProvider();
    g = await startUpstreamGateway(({ port, upstreamPort }) => {
      const origin = `http://127.0.0.1:${port}`;
      return {
        'gw.yaml': [
          gatewayYaml(port),
          staticBackendYaml('web', upstreamPort),
          prefixRouteYaml('mcp'),
          prefixRouteYaml('fixed'),
          trafficPolicyYaml(
            'mcp',
            'mcp',
            mcpPolicy(idp, `${origin}/mcp`, {
              resourceMetadata: { scopesSupported: ['mcp'], resourceDocumentation: `${origin}/docs` },
            }),
          ),
          trafficPolicyYaml('fixed', 'fixed', mcpPolicy(idp, `${origin}/fixed`, { clientId: SERVICE_CLIENT.id })),
        ].join(''),
      };
    }, answerTools);
    ({ upstream, base } = g);
    mcpUrl = `${base}/mcp`;
    fixedUrl = `${base}/fixed`;
  });

  after(async () => {
    await g?.stop();
    await idp?.close();
  });

  const callMcp = (url: string, token?: string) =>
    fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: TOOLS_LIST,
    });

  it('answers an MCP request without a token 401, pointing at the protected resource metadata', async () => {
    const before = upstream.seen.length;
    const response = await callMcp(mcpUrl);
    assert.equal(response.status, 401);
    await response.body?.cancel();
    assert.equal(
      response.headers.get('www-authenticate'),
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="mcp"`,
    );
    const challenge = extractWWWAuthenticateParams(response);
    assert.equal(challenge.resourceMetadataUrl?.href, `${base}/.well-known/oauth-protected-resource/mcp`);
    assert.equal(challenge.scope, 'mcp');
    assert.equal(upstream.seen.length, before, 'nothing reached the MCP server');
  });

  it('serves the protected resource metadata of the MCP URL, resourceMetadata merged in', async () => {
    const metadata = await discoverOAuthProtectedResourceMetadata(mcpUrl);
    assert.deepEqual(metadata, {
      resource: mcpUrl,
      // With a provider, gw stands in as the authorization server (it serves the mended metadata).
      authorization_servers: [mcpUrl],
      bearer_methods_supported: ['header'],
      mcp_protocol_version: '2025-06-18',
      resource_type: 'mcp-server',
      scopes_supported: ['mcp'],
      resource_documentation: `${base}/docs`,
    });
  });

  it('serves Keycloak’s metadata through gw: gw is the issuer and takes the registrations', async () => {
    const fetchesBefore = idp.discoveryFetches;
    const metadata = await discoverAuthorizationServerMetadata(mcpUrl);
    assert.ok(metadata);
    assert.equal(metadata.issuer, mcpUrl);
    assert.equal(
      metadata.registration_endpoint,
      `${base}/.well-known/oauth-authorization-server/mcp/client-registration`,
    );
    // The endpoints clients use directly stay Keycloak's.
    assert.equal(metadata.token_endpoint, idp.tokenEndpoint);
    assert.equal(metadata.authorization_endpoint, `${idp.issuer}/protocol/openid-connect/auth`);
    await discoverAuthorizationServerMetadata(mcpUrl);
    assert.ok(idp.discoveryFetches - fetchesBefore <= 1, 'the provider’s document is fetched once and kept');
  });

  it('lets an MCP client discover from the 401, register through gw, get a token and call the MCP URL', async () => {
    const seen: { url: string; body: string | undefined }[] = [];
    const recordingFetch: typeof fetch = (input, init) => {
      seen.push({ url: String(input), body: typeof init?.body === 'string' ? init.body : undefined });
      return fetch(input, init);
    };
    const challenge = extractWWWAuthenticateParams(await callMcp(mcpUrl));
    const client = new ServiceClient('mcp client');
    const registrationsBefore = idp.registrations.length;
    const result = await auth(client, {
      serverUrl: mcpUrl,
      resourceMetadataUrl: challenge.resourceMetadataUrl,
      scope: challenge.scope,
      fetchFn: recordingFetch,
    });
    assert.equal(result, 'AUTHORIZED');
    // Registered through gw, which passed the registration on to Keycloak without its scope.
    const registration = seen.find((request) => request.url.endsWith('/mcp/client-registration'));
    assert.ok(registration?.body, 'the client registered at gw');
    assert.equal((JSON.parse(registration.body) as { scope?: string }).scope, 'mcp');
    assert.equal(idp.registrations.length, registrationsBefore + 1);
    assert.equal(idp.registrations.at(-1)!.scope, undefined, 'the scope member is dropped for Keycloak');
    assert.equal(idp.registrations.at(-1)!.client_name, 'mcp client');
    const registered = client.clientInformation()!;
    assert.ok(registered.client_id && registered.client_id !== SERVICE_CLIENT.id, 'a client of its own');
    // The token is for the MCP resource, and the call goes through.
    const token = client.tokens()!.access_token;
    assert.equal(jwtClaims(token).aud, mcpUrl);
    const response = await callMcp(mcpUrl, token);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { jsonrpc: '2.0', id: 1, result: { tools: [] } });
    assert.equal(upstream.last().url, '/mcp');
    assert.equal(upstream.last().headers.authorization, undefined, 'the checked token stays at gw');
  });

  it('refuses a token for another audience, one without the group, and an expired one', async () => {
    const otherAudience = await clientCredentialsToken(idp, SERVICE_CLIENT, 'https://other.example/mcp');
    const wrong = await callMcp(mcpUrl, otherAudience);
    assert.equal(wrong.status, 401);
    await wrong.body?.cancel();
    assert.equal(
      wrong.headers.get('www-authenticate'),
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="mcp", error="invalid_token", error_description="audience not accepted"`,
    );

    // Registered through gw like any client, but not in the group: authenticated, not authorized.
    const metadata = await discoverAuthorizationServerMetadata(mcpUrl);
    const outsider = await registerClient(mcpUrl, {
      metadata,
      clientMetadata: {
        client_name: OUTSIDER,
        redirect_uris: [],
        grant_types: ['client_credentials'],
        response_types: [],
      },
    });
    const groupless = await clientCredentialsToken(
      idp,
      { id: outsider.client_id, secret: outsider.client_secret! },
      mcpUrl,
    );
    const forbidden = await callMcp(mcpUrl, groupless);
    assert.equal(forbidden.status, 403);
    await forbidden.body?.cancel();

    const now = Math.floor(Date.now() / 1000);
    const expired = await idp.sign({
      aud: mcpUrl,
      sub: 'alice',
      groups: [MCP_GROUP],
      iat: now - 7200,
      exp: now - 3600,
    });
    const late = await callMcp(mcpUrl, expired);
    assert.equal(late.status, 401);
    await late.body?.cancel();
    assert.match(late.headers.get('www-authenticate') ?? '', /resource_metadata=.*error_description="token expired"/);
  });

  it('with clientId set answers registrations itself and proxies none of them', async () => {
    const registrationsBefore = idp.registrations.length;
    const metadata = await discoverAuthorizationServerMetadata(fixedUrl);
    assert.equal(
      metadata?.registration_endpoint,
      `${base}/.well-known/oauth-authorization-server/fixed/client-registration`,
    );
    const registered = await registerClient(fixedUrl, {
      metadata,
      clientMetadata: { client_name: 'desktop client', redirect_uris: ['http://127.0.0.1:33418/callback'] },
    });
    assert.deepEqual(registered, {
      client_id: SERVICE_CLIENT.id,
      client_id_issued_at: 0,
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code'],
      response_types: ['code'],
      redirect_uris: ['http://127.0.0.1:33418/callback'],
    });
    assert.equal(idp.registrations.length, registrationsBefore, 'nothing was registered at the provider');
    // The pre-registered client's token opens that MCP URL.
    const token = await clientCredentialsToken(idp, SERVICE_CLIENT, fixedUrl);
    const response = await callMcp(fixedUrl, token);
    assert.equal(response.status, 200);
    await response.body?.cancel();
  });

  it('answers CORS preflights of the discovery and registration endpoints for any origin', async () => {
    for (const [path, methods] of [
      ['/.well-known/oauth-protected-resource/mcp', 'GET, HEAD, OPTIONS'],
      ['/.well-known/oauth-authorization-server/mcp', 'GET, HEAD, OPTIONS'],
      ['/.well-known/oauth-authorization-server/mcp/client-registration', 'POST, OPTIONS'],
    ]) {
      const response = await fetch(`${base}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin: 'http://inspector.example',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'mcp-protocol-version, content-type',
        },
      });
      assert.equal(response.status, 204, path);
      assert.equal(response.headers.get('access-control-allow-origin'), '*');
      assert.equal(response.headers.get('access-control-allow-methods'), methods);
      assert.equal(response.headers.get('access-control-allow-headers'), 'mcp-protocol-version, content-type');
    }
  });

  it('refuses oversized registrations and wrong methods, and leaves other well-known paths to routing', async () => {
    const registration = `${base}/.well-known/oauth-authorization-server/mcp/client-registration`;
    const large = await fetch(registration, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'x'.repeat(70 * 1024) }),
    });
    assert.equal(large.status, 413);
    await large.body?.cancel();
    const get = await fetch(registration);
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'POST, OPTIONS');
    await get.body?.cancel();
    // No MCP URL at /other: routing answers as for any path no route serves.
    const other = await fetch(`${base}/.well-known/oauth-protected-resource/other`);
    assert.equal(other.status, 404);
    assert.equal(await other.text(), 'no route matches this request\n');
  });
});
