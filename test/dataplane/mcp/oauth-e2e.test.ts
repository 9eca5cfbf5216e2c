// MCP OAuth end to end through the MCP backend: a real OpenID provider (oidc-provider standing in
// for Keycloak, Idp02), gw with traffic.jwtAuthentication.mcp and an authorization rule on the
// groups claim in front of an `mcp` GwBackend whose target is an SDK McpServer, and the SDK's
// Client over Streamable HTTP with an OAuth provider: it is refused with a 401, discovers the
// metadata from it, registers through gw, gets a token for the MCP resource, connects and calls a
// tool. Tokens for another audience, without the group, or expired are refused before the target
// is reached; backend.mcp.authorization hides a tool from clients without a second group.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freePort, gatewayYaml, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { trafficPolicyYaml } from '../../helpers/policy-yaml.ts';
import { jwtClaims, ServiceClient } from '../policies/mcp-oauth-client.ts';
import {
  AUDIT_GROUP,
  AUDITOR,
  type IdentityProvider,
  MCP_GROUP,
  OUTSIDER,
  startIdentityProvider,
} from '../policies/mcp-oauth-idp.ts';
import { firstText, rawPost, startStreamableServer, type TestMcpServer } from './helpers.ts';
import { mcpPolicyYaml, rpcError } from './policies-helpers.ts';

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

/**
 * The MCP server behind gw: `whoami` says which client initialized the session and whether a
 * bearer token reached the server; `audit` is for auditors only (backend.mcp.authorization).
 */
function identityTools(server: import('@modelcontextprotocol/sdk/server/mcp.js').McpServer): void {
  // (a tool without an input schema gets only the request's context)
  server.registerTool('whoami', { description: 'who is calling' }, (extra) => ({
    content: [
      {
        type: 'text',
        text: JSON.stringify({
          client: server.server.getClientVersion()?.name ?? null,
          bearer: extra.requestInfo?.headers.authorization === undefined ? 'none' : 'present',
        }),
      },
    ],
  }));
  server.registerTool('audit', { description: 'the audit trail' }, () => ({
    content: [{ type: 'text', text: 'audit trail: empty' }],
  }));
}

/** An SDK client for gw's MCP URL: with an OAuth provider (the whole flow), or with fixed headers. */
function mcpClient(
  url: URL,
  options: { authProvider?: ServiceClient; headers?: Record<string, string>; fetch?: typeof fetch },
): { client: Client; transport: StreamableHTTPClientTransport } {
  const client = new Client({ name: 'oauth-e2e', version: '1.0.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(url, {
    authProvider: options.authProvider,
    requestInit: options.headers ? { headers: options.headers } : undefined,
    fetch: options.fetch,
  });
  return { client, transport };
}

/** The HTTP status a client's connect failed with (the SDK's StreamableHTTPError code). */
async function refusedStatus(connecting: Promise<void>): Promise<number> {
  try {
    await connecting;
  } catch (error) {
    assert.ok(error instanceof StreamableHTTPError, `not an HTTP refusal: ${String(error)}`);
    return error.code ?? 0;
  }
  assert.fail('the client connected');
}

/** A client that asks its token for another resource than the one gw protects. */
class OtherAudienceClient extends ServiceClient {
  validateResourceURL(): Promise<URL> {
    return Promise.resolve(new URL('https://other.example/mcp'));
  }
}

describe('MCP OAuth end to end through the MCP backend', () => {
  let idp: IdentityProvider;
  let target: TestMcpServer;
  let gw: TestGateway;
  let base: string;
  let mcpUrl: URL;
  const clients: Client[] = [];

  before(async () => {
    idp = await startIdentityProvider();
    target = await startStreamableServer(identityTools, { name: 'identity' });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    mcpUrl = new URL(`${base}/mcp`);
    const backendPolicy = {
      mcp: {
        authorization: {
          policy: {
            matchExpressions: [`!has(mcp.tool) || mcp.tool.name != "audit" || "${AUDIT_GROUP}" in jwt.groups`],
          },
        },
      },
    };
    const trafficPolicy = {
      jwtAuthentication: {
        providers: [{ issuer: idp.issuer, audiences: [mcpUrl.href], jwks: { remote: { url: idp.jwksUri } } }],
        mcp: { provider: 'Idp02', resourceMetadata: { scopesSupported: ['mcp'] } },
      },
      authorization: { policy: { matchExpressions: [`"${MCP_GROUP}" in jwt.groups`] } },
    };
    gw = await startTestGateway({
      'gw.yaml': [
        gatewayYaml(port),
        mcpPolicyYaml([{ name: 'identity', port: target.port }], backendPolicy),
        '---\n',
        trafficPolicyYaml('mcp-oauth', 'mcp', trafficPolicy),
      ].join(''),
    });
  });

  after(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    await gw?.stop();
    await target?.close();
    await idp?.close();
  });

  /** Connects an SDK client that gets its token through the whole OAuth flow. */
  async function connectWithOAuth(
    name: string,
    fetchFn?: typeof fetch,
  ): Promise<{ client: Client; oauth: ServiceClient }> {
    const oauth = new ServiceClient(name);
    const { client, transport } = mcpClient(mcpUrl, { authProvider: oauth, fetch: fetchFn });
    await client.connect(transport);
    clients.push(client);
    return { client, oauth };
  }

  const toolCalls = () => target.seen.filter((seen) => seen.rpcMethod === 'tools/call').length;

  it('discovers from the 401, registers through gw, gets a token for the MCP resource and calls a tool', async () => {
    const exchanges: { request: string; status: number }[] = [];
    const recording: typeof fetch = async (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      const response = await fetch(input, init);
      exchanges.push({ request: `${init?.method ?? 'GET'} ${url.replace(base, '')}`, status: response.status });
      return response;
    };
    const registrationsBefore = idp.registrations.length;
    const { client, oauth } = await connectWithOAuth('e2e client', recording);

    // The flow, in order: refused, discovery at gw, registration through gw, the token, the MCP session.
    const at = (request: string, status: number) =>
      exchanges.findIndex((exchange) => exchange.request === request && exchange.status === status);
    const steps = [
      at('POST /mcp', 401),
      at('GET /.well-known/oauth-protected-resource/mcp', 200),
      at('GET /.well-known/oauth-authorization-server/mcp', 200),
      at('POST /.well-known/oauth-authorization-server/mcp/client-registration', 201),
      at(`POST ${idp.tokenEndpoint}`, 200),
      at('POST /mcp', 200),
    ];
    assert.ok(
      steps.every((step, index) => step !== -1 && (index === 0 || step > steps[index - 1]!)),
      `the exchanges were ${JSON.stringify(exchanges)}`,
    );
    assert.equal(idp.registrations.length, registrationsBefore + 1, 'registered at the provider through gw');
    assert.equal(idp.registrations.at(-1)!.client_name, 'e2e client');

    const claims = jwtClaims(oauth.tokens()!.access_token);
    assert.equal(claims.aud, mcpUrl.href, 'the token is for the MCP resource');
    assert.deepEqual(claims.groups, [MCP_GROUP]);

    // Through the MCP backend to the SDK server: the session is the client's, the token stayed at gw.
    assert.deepEqual(
      (await client.listTools()).tools.map((tool) => tool.name),
      ['whoami'],
    );
    const whoami = await client.callTool({ name: 'whoami' });
    assert.deepEqual(JSON.parse(firstText(whoami)), { client: 'oauth-e2e', bearer: 'none' });
  });

  it('shows a tool only to tokens whose groups claim the backend policy asks for', async () => {
    const { client: auditor } = await connectWithOAuth(AUDITOR);
    const { client: member } = await connectWithOAuth('member');
    assert.deepEqual((await auditor.listTools()).tools.map((tool) => tool.name).sort(), ['audit', 'whoami']);
    assert.equal(firstText(await auditor.callTool({ name: 'audit' })), 'audit trail: empty');

    assert.deepEqual(
      (await member.listTools()).tools.map((tool) => tool.name),
      ['whoami'],
    );
    const before = toolCalls();
    assert.deepEqual(await rpcError(member.callTool({ name: 'audit' })), {
      code: -32602,
      message: 'MCP error -32602: Tool audit not found',
    });
    assert.equal(toolCalls(), before, 'the hidden tool was never called');
  });

  it('refuses a token without the groups claim: 403, the target never asked', async () => {
    const seenBefore = target.seen.length;
    const oauth = new ServiceClient(OUTSIDER);
    const { client, transport } = mcpClient(mcpUrl, { authProvider: oauth });
    assert.equal(await refusedStatus(client.connect(transport)), 403);
    // It went through the whole flow: registered, and got a token for the MCP resource without groups.
    const claims = jwtClaims(oauth.tokens()!.access_token);
    assert.equal(claims.aud, mcpUrl.href);
    assert.equal(claims.groups, undefined);
    assert.equal(target.seen.length, seenBefore);
  });

  it('refuses a token for another audience: 401 naming the problem, the target never asked', async () => {
    const seenBefore = target.seen.length;
    const oauth = new OtherAudienceClient('elsewhere');
    const { client, transport } = mcpClient(mcpUrl, { authProvider: oauth });
    assert.equal(await refusedStatus(client.connect(transport)), 401);
    const token = oauth.tokens()!.access_token;
    assert.equal(jwtClaims(token).aud, 'https://other.example/mcp');
    const raw = await rawPost(mcpUrl, INITIALIZE, { authorization: `Bearer ${token}` });
    assert.equal(raw.status, 401);
    assert.equal(
      raw.headers['www-authenticate'],
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp", scope="mcp", error="invalid_token", error_description="audience not accepted"`,
    );
    assert.equal(target.seen.length, seenBefore);
  });

  it('refuses an expired token: 401 naming the problem, the target never asked', async () => {
    const seenBefore = target.seen.length;
    const now = Math.floor(Date.now() / 1000);
    const expired = await idp.sign({
      aud: mcpUrl.href,
      sub: 'alice',
      groups: [MCP_GROUP, AUDIT_GROUP],
      iat: now - 7200,
      exp: now - 3600,
    });
    const { client, transport } = mcpClient(mcpUrl, { headers: { authorization: `Bearer ${expired}` } });
    assert.equal(await refusedStatus(client.connect(transport)), 401);
    const raw = await rawPost(mcpUrl, INITIALIZE, { authorization: `Bearer ${expired}` });
    assert.equal(raw.status, 401);
    assert.match(String(raw.headers['www-authenticate']), /resource_metadata=.*error_description="token expired"/);
    assert.equal(target.seen.length, seenBefore);
  });
});
