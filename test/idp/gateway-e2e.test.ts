// End to end on the gateway side: gw idp setup prepares the stand-in's realm; then a real OpenID
// provider (oidc-provider) serves that realm's OpenID Connect endpoints, issuing tokens the way
// the procedure left Keycloak — the audience and the groups claim read from the realm's default
// client scope mappers, the groups from the users' memberships, anonymous registration refused
// while the Trusted Hosts policy exists. gw runs the printed GwPolicy unchanged: an MCP client
// discovers, registers through gw and signs in as a user; members of the group get through,
// others are refused.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import {
  discoverAuthorizationServerMetadata,
  exchangeAuthorization,
  registerClient,
  startAuthorization,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type { AuthorizationServerMetadata, OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { exportJWK } from 'jose';
import { authorizeAsUser, REDIRECT_URI } from '../dataplane/policies/mcp-oauth-idp.ts';
import { runGw } from '../helpers/cli.ts';
import { freePort, gatewayYaml, startTestGateway, type TestGateway } from '../helpers/gateway.ts';
import { prefixRouteYaml, staticBackendYaml } from '../helpers/policy-yaml.ts';
import { type Answer, type RecordingUpstream, startRecordingUpstream } from '../helpers/recording-upstream.ts';
import type { Realm } from '../support/keycloak/model.ts';
import type { KeycloakStandIn } from '../support/keycloak/server.ts';
import { REALM, setupArgs, startRealm, USER_PASSWORD } from './helpers.ts';

// oidc-provider ships no type declarations: the little used here is typed here.
interface OidcProvider {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
}
type OidcProviderClass = new (issuer: string, configuration: Record<string, unknown>) => OidcProvider;

const TOOLS_LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
const answerTools: Answer = (_req, res) => {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { tools: [] } });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

/** What Keycloak puts in an access token, read from the realm as the procedure left it. */
interface TokenProfile {
  audience: string;
  groupsClaim: string;
  groupsOf(username: string): string[];
}

function tokenProfile(realm: Realm): TokenProfile {
  // Realm default scopes are what a newly registered client gets; their mappers shape its tokens.
  const mappers = [...realm.realmDefaults]
    .filter(([, isDefault]) => isDefault)
    .flatMap(([scopeId]) => realm.clientScopes.get(scopeId)?.protocolMappers ?? [])
    .filter((mapper) => mapper.config['access.token.claim'] === 'true');
  const audience = mappers.find((mapper) => mapper.protocolMapper === 'oidc-audience-mapper');
  const groups = mappers.find((mapper) => mapper.protocolMapper === 'oidc-group-membership-mapper');
  assert.ok(audience && groups, 'the realm default scopes have an audience and a group mapper');
  assert.equal(groups.config['full.path'], 'false');
  return {
    audience: audience.config['included.custom.audience']!,
    groupsClaim: groups.config['claim.name']!,
    groupsOf: (username) => {
      const user = [...realm.users.values()].find((candidate) => candidate.username === username);
      return [...(user?.groups ?? [])].map((id) => realm.groups.get(id)!.name);
    },
  };
}

/** oidc-provider serving the realm at its Keycloak paths, tokens shaped by `profile`. */
async function realmProvider(kc: KeycloakStandIn, realm: Realm, profile: TokenProfile) {
  const moduleName = 'oidc-provider';
  const { default: Provider } = (await import(moduleName)) as { default: OidcProviderClass };
  const signing = { ...(await exportJWK(realm.key.privateKey)), kid: realm.key.kid, alg: 'RS256', use: 'sig' };
  const users = () => new Set([...realm.users.values()].map((user) => user.username));
  const provider = new Provider(`${kc.url}/realms/${REALM}`, {
    jwks: { keys: [signing] },
    cookies: { keys: ['cookie-signing-key-for-tests'] },
    routes: {
      authorization: '/protocol/openid-connect/auth',
      token: '/protocol/openid-connect/token',
      jwks: '/protocol/openid-connect/certs',
      userinfo: '/protocol/openid-connect/userinfo',
      end_session: '/protocol/openid-connect/logout',
      registration: '/clients-registrations/openid-connect',
    },
    findAccount: (_ctx: unknown, id: string) =>
      users().has(id) ? { accountId: id, claims: () => ({ sub: id }) } : undefined,
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => profile.audience,
        useGrantedResource: () => true,
        // Keycloak ignores the resource parameter: the audience is its audience mapper's.
        getResourceServerInfo: () => ({ scope: 'mcp', audience: profile.audience, accessTokenFormat: 'jwt' }),
      },
    },
    ttl: { AccessToken: 300, AuthorizationCode: 60, Interaction: 600, Session: 600, Grant: 600, IdToken: 300 },
    extraTokenClaims: (_ctx: unknown, token: { accountId?: string }) => {
      const groups = token.accountId ? profile.groupsOf(token.accountId) : [];
      return groups.length > 0 ? { [profile.groupsClaim]: groups } : {};
    },
  });
  return provider.callback();
}

describe('the GwPolicy of gw idp setup, applied to gw, with a real OpenID provider', () => {
  let kc: KeycloakStandIn;
  let upstream: RecordingUpstream;
  let gw: TestGateway;
  let base: string;
  let mcpUrl: string;
  let metadata: AuthorizationServerMetadata;
  let provider: (req: IncomingMessage, res: ServerResponse) => void;

  const setup = (extra: string[] = []) =>
    runGw([...setupArgs(kc, extra), '--mcp-resource-url', mcpUrl]).then((run) => {
      assert.equal(run.code, 0, run.stderr);
      return run;
    });
  const callMcp = (token?: string) =>
    fetch(mcpUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: TOOLS_LIST,
    });
  const register = () =>
    registerClient(mcpUrl, {
      metadata,
      clientMetadata: {
        client_name: 'e2e MCP client',
        redirect_uris: [REDIRECT_URI],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
    });
  async function tokenFor(client: OAuthClientInformationFull, user: string): Promise<string> {
    const resource = new URL(mcpUrl);
    const { authorizationUrl, codeVerifier } = await startAuthorization(mcpUrl, {
      metadata,
      clientInformation: client,
      redirectUrl: REDIRECT_URI,
      scope: 'openid mcp',
      resource,
    });
    const code = await authorizeAsUser(authorizationUrl, user);
    const tokens = await exchangeAuthorization(mcpUrl, {
      metadata,
      clientInformation: client,
      authorizationCode: code,
      codeVerifier,
      redirectUri: REDIRECT_URI,
      resource,
    });
    return tokens.access_token;
  }
  const claims = (token: string) =>
    JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;

  before(async () => {
    kc = await startRealm();
    // A user of the realm the procedure does not add to the group.
    kc.addUser(REALM, {
      username: 'carol',
      email: 'carol@example.com',
      firstName: 'Carol',
      lastName: 'Outsider',
      password: USER_PASSWORD,
    });
    upstream = await startRecordingUpstream(answerTools);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    mcpUrl = `${base}/mcp`;
    const run = await setup();
    const realm = kc.realm(REALM);
    provider = await realmProvider(kc, realm, tokenProfile(realm));
    kc.mountProvider(REALM, provider);
    gw = await startTestGateway({
      'gw.yaml': `${gatewayYaml(port)}${staticBackendYaml('web', upstream.port)}${prefixRouteYaml('mcp')}`,
      'policy.yaml': run.stdout,
    });
  });

  after(async () => {
    await gw?.stop();
    await upstream?.close();
    await kc?.close();
  });

  it('answers an MCP request without a token 401, pointing at the protected resource metadata', async () => {
    const response = await callMcp();
    assert.equal(response.status, 401, gw.logs.join('\n'));
    await response.body?.cancel();
    assert.equal(
      response.headers.get('www-authenticate'),
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
    );
    const discovered = await discoverAuthorizationServerMetadata(mcpUrl);
    assert.ok(discovered);
    metadata = discovered;
    assert.equal(metadata.authorization_endpoint, `${kc.url}/realms/${REALM}/protocol/openid-connect/auth`);
  });

  it('passes on the realm’s refusal of anonymous registration while its restrictions stay', async () => {
    await assert.rejects(register(), /Policy 'Trusted Hosts' rejected request to client-registration service/);
  });

  it('after --allow-anonymous-dcr, lets a group member register, sign in and call the MCP URL', async () => {
    // The procedure checks passwords with the realm's admin-cli client, which the OpenID provider
    // does not have: the stand-in serves the realm while the procedure runs.
    kc.mountProvider(REALM, undefined);
    const run = await setup(['--allow-anonymous-dcr']);
    kc.mountProvider(REALM, provider);
    assert.match(run.stderr, /removed +anonymous DCR: policy "Trusted Hosts"/);
    const client = await register();
    const token = await tokenFor(client, 'alice');
    const payload = claims(token);
    assert.equal(payload.aud, mcpUrl);
    assert.deepEqual(payload.groups, ['mcp-users']);
    const before = upstream.seen.length;
    const response = await callMcp(token);
    assert.equal(response.status, 200, await response.clone().text());
    assert.deepEqual(await response.json(), { jsonrpc: '2.0', id: 1, result: { tools: [] } });
    assert.equal(upstream.seen.length, before + 1);
    assert.equal(upstream.last().headers.authorization, undefined, 'the checked token stays at gw');
  });

  it('refuses a user of the realm who is not in the group (403), and a token of another audience (401)', async () => {
    const client = await register();
    const token = await tokenFor(client, 'carol');
    assert.equal(claims(token).aud, mcpUrl);
    assert.equal(claims(token).groups, undefined);
    const before = upstream.seen.length;
    const forbidden = await callMcp(token);
    assert.equal(forbidden.status, 403);
    await forbidden.body?.cancel();

    // The realm's key, another audience: what a token for some other service of the realm looks like.
    const realm = kc.realm(REALM);
    const { SignJWT } = await import('jose');
    const now = Math.floor(Date.now() / 1000);
    const other = await new SignJWT({ groups: ['mcp-users'] })
      .setProtectedHeader({ alg: 'RS256', kid: realm.key.kid })
      .setIssuer(`${kc.url}/realms/${REALM}`)
      .setAudience('https://other.example.com/api')
      .setSubject('alice')
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(realm.key.privateKey);
    const wrongAudience = await callMcp(other);
    assert.equal(wrongAudience.status, 401);
    await wrongAudience.body?.cancel();
    assert.match(wrongAudience.headers.get('www-authenticate') ?? '', /error_description="audience not accepted"/);
    assert.equal(upstream.seen.length, before, 'neither reached the MCP server');
  });
});
