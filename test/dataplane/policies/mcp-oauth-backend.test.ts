// The deprecated backend.mcp.authentication (MCPAuthentication) on an MCP GwBackend: the same
// 401 and metadata as jwtAuthentication.mcp, served for the rule that sends to the MCP backend,
// and the client secret of clientSecretRef added by gw to the token requests it proxies — an
// authorization code flow of the MCP SDK's client code against a real OpenID provider, the user
// played at the provider's login and consent pages. The root forms of the well-known paths
// belong to the listener's only MCP URL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  exchangeAuthorization,
  registerClient,
  startAuthorization,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type { AuthorizationServerMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import { gatewayYaml } from '../../helpers/gateway.ts';
import type { RecordingUpstream } from '../../helpers/recording-upstream.ts';
import { startUpstreamGateway, type UpstreamGateway } from '../../helpers/upstream-gateway.ts';
import {
  authorizeAsUser,
  CONFIDENTIAL_CLIENT,
  type IdentityProvider,
  REDIRECT_URI,
  startIdentityProvider,
} from './mcp-oauth-idp.ts';

function resources(idp: IdentityProvider, port: number, upstreamPort: number): string {
  const origin = `http://127.0.0.1:${port}`;
  return `${gatewayYaml(port)}apiVersion: v1
kind: Secret
metadata: {name: mcp-client}
stringData: {clientSecret: ${CONFIDENTIAL_CLIENT.secret}}
---
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: tools}
spec:
  mcp:
    targets: [{name: recorder, static: {host: 127.0.0.1, port: ${upstreamPort}, path: /mcp, protocol: StreamableHTTP}}]
  policies:
    mcp:
      authentication:
        issuer: ${idp.issuer}
        audiences: [${origin}/mcp]
        jwks: {url: ${idp.jwksUri}}
        provider: Idp02
        clientId: ${CONFIDENTIAL_CLIENT.id}
        clientSecretRef: {name: mcp-client}
        resourceMetadata: {scopesSupported: [openid, mcp]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: mcp}
spec:
  parentRefs: [{name: ai}]
  rules: [{matches: [{path: {type: PathPrefix, value: /mcp}}], backendRefs: [{group: gw.dev, kind: GwBackend, name: tools}]}]
---
`;
}

describe('MCP OAuth with the deprecated backend.mcp.authentication', () => {
  let idp: IdentityProvider;
  let g: UpstreamGateway;
  let upstream: RecordingUpstream;
  let base: string;
  let mcpUrl: string;
  let metadata: AuthorizationServerMetadata;

  before(async () => {
    idp = await startIdentityProvider();
    g = await startUpstreamGateway(({ port, upstreamPort }) => ({ 'gw.yaml': resources(idp, port, upstreamPort) }));
    ({ upstream, base } = g);
    mcpUrl = `${base}/mcp`;
  });

  after(async () => {
    await g?.stop();
    await idp?.close();
  });

  const callMcp = (token?: string) =>
    fetch(mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });

  it('answers a request to the MCP backend without a token 401 with the metadata URL', async () => {
    const response = await callMcp();
    assert.equal(response.status, 401);
    await response.body?.cancel();
    assert.equal(
      response.headers.get('www-authenticate'),
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="openid mcp"`,
    );
    assert.equal(upstream.seen.length, 0);
  });

  it('serves the metadata at the MCP path and, as the only MCP URL of the listener, at the root', async () => {
    const atPath = await discoverOAuthProtectedResourceMetadata(mcpUrl);
    assert.equal(atPath.resource, mcpUrl);
    assert.deepEqual(atPath.authorization_servers, [mcpUrl]);
    assert.deepEqual(atPath.scopes_supported, ['openid', 'mcp']);
    const atRoot = (await (await fetch(`${base}/.well-known/oauth-protected-resource`)).json()) as Record<
      string,
      unknown
    >;
    // RFC 9728 §3.3: the resource is the URL the metadata URL was formed from.
    assert.equal(atRoot.resource, base);
    assert.deepEqual(atRoot.authorization_servers, [base]);
    const rootServer = (await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json()) as Record<
      string,
      unknown
    >;
    assert.equal(rootServer.issuer, base);
    assert.equal(
      rootServer.registration_endpoint,
      `${base}/.well-known/oauth-authorization-server/client-registration`,
    );
  });

  it('advertises gw’s token endpoint, because gw adds the client secret', async () => {
    const discovered = await discoverAuthorizationServerMetadata(mcpUrl);
    assert.ok(discovered);
    metadata = discovered;
    assert.equal(metadata.token_endpoint, `${base}/.well-known/oauth-authorization-server/mcp/token`);
    assert.equal(metadata.authorization_endpoint, `${idp.issuer}/protocol/openid-connect/auth`);
  });

  it('completes an authorization code flow whose token request gets the client secret from gw', async () => {
    // clientId is set: the registration names the configured client, as a public one.
    const registered = await registerClient(mcpUrl, {
      metadata,
      clientMetadata: { client_name: 'desktop client', redirect_uris: [REDIRECT_URI] },
    });
    assert.equal(registered.client_id, CONFIDENTIAL_CLIENT.id);
    assert.equal(registered.client_secret, undefined, 'the secret never leaves gw');
    assert.equal(idp.registrations.length, 0);

    const { authorizationUrl, codeVerifier } = await startAuthorization(mcpUrl, {
      metadata,
      clientInformation: registered,
      redirectUrl: REDIRECT_URI,
      scope: 'openid mcp',
      resource: new URL(mcpUrl),
    });
    const code = await authorizeAsUser(authorizationUrl, 'alice');
    const tokens = await exchangeAuthorization(mcpUrl, {
      metadata,
      clientInformation: registered,
      authorizationCode: code,
      codeVerifier,
      redirectUri: REDIRECT_URI,
      resource: new URL(mcpUrl),
    });
    const received = idp.tokenRequests.at(-1)!;
    assert.equal(received.grant_type, 'authorization_code');
    assert.equal(received.client_id, CONFIDENTIAL_CLIENT.id);
    assert.equal(received.client_secret, CONFIDENTIAL_CLIENT.secret, 'gw added the secret');
    const claims = JSON.parse(Buffer.from(tokens.access_token.split('.')[1]!, 'base64url').toString('utf8')) as {
      aud: string;
      sub: string;
    };
    assert.equal(claims.aud, mcpUrl);
    assert.equal(claims.sub, 'alice');

    // The token passes gw's check: the request goes on to the MCP backend, which answers it.
    const response = await callMcp(tokens.access_token);
    const text = await response.text();
    assert.ok(response.status !== 401 && response.status !== 403, `${response.status} ${text}`);
  });

  it('adds the secret to no other grant and no other client', async () => {
    const token = `${base}/.well-known/oauth-authorization-server/mcp/token`;
    const post = (form: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(token, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(form),
      });
    const cases: [Record<string, string>, Record<string, string>][] = [
      // Anyone can reach this endpoint: client_credentials with gw's secret would mint tokens for them.
      [{ grant_type: 'client_credentials', client_id: CONFIDENTIAL_CLIENT.id, resource: mcpUrl }, {}],
      [{ grant_type: 'authorization_code', client_id: 'someone-else', code: 'x', redirect_uri: REDIRECT_URI }, {}],
      // The client brings its own credentials.
      [
        { grant_type: 'authorization_code', client_id: CONFIDENTIAL_CLIENT.id, code: 'x', redirect_uri: REDIRECT_URI },
        { authorization: `Basic ${Buffer.from(`${CONFIDENTIAL_CLIENT.id}:wrong`).toString('base64')}` },
      ],
    ];
    for (const [form, headers] of cases) {
      const before = idp.tokenRequests.length;
      const response = await post(form, headers);
      assert.ok(response.status >= 400 && response.status < 500, `${form.grant_type}: ${response.status}`);
      await response.body?.cancel();
      assert.equal(idp.tokenRequests.length, before + 1, 'the request reached the provider');
      assert.equal(idp.tokenRequests.at(-1)!.client_secret, undefined, JSON.stringify(form));
    }
  });

  it('refuses a token request with a parameter twice (gw and the provider could read different grants)', async () => {
    const before = idp.tokenRequests.length;
    // gw would read the first grant_type (delegated: the secret added), a provider taking the last one client_credentials.
    const response = await fetch(`${base}/.well-known/oauth-authorization-server/mcp/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=authorization_code&client_id=${CONFIDENTIAL_CLIENT.id}&code=x&grant_type=client_credentials`,
    });
    assert.equal(response.status, 400);
    assert.deepEqual(await response.json(), {
      error: 'invalid_request',
      error_description: 'the parameter "grant_type" is sent more than once',
    });
    assert.equal(idp.tokenRequests.length, before, 'nothing reached the provider');
  });
});
