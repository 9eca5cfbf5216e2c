// BackendMCP.authorization end to end: gw in front of two SDK MCP servers, a JWT policy with an
// inline key set on the route, and the SDK client with tokens of two users. Lists drop what a user
// may not see; calling, getting or reading it is answered exactly as a name gw cannot route, and
// never reaches the target. The traffic `authorization` policy stays at the HTTP level.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { trafficPolicyYaml } from '../../helpers/policy-yaml.ts';
import { eventually } from '../../helpers/until.ts';
import { AUDIENCE, ISSUER, type SigningKey, signingKey, token } from '../policies/jwt-fixtures.ts';
import { echoTools, rawPost, startStreamableServer, type TestMcpServer } from './helpers.ts';
import { clientWith, type PolicyGateway, rpcError, startPolicyGateway } from './policies-helpers.ts';

// Tools named only-* need group admin; beta's prompts and resources need it too.
const AUTHORIZATION = {
  authorization: {
    action: 'Allow',
    policy: {
      matchExpressions: [
        '!has(mcp.tool) || !mcp.tool.name.startsWith("only-") || "admin" in jwt.groups',
        '!has(mcp.prompt) || mcp.prompt.target != "beta" || "admin" in jwt.groups',
        '!has(mcp.resource) || mcp.resource.target != "beta" || "admin" in jwt.groups',
      ],
    },
  },
};

function jwtYaml(key: SigningKey): string {
  const inline = JSON.stringify({ keys: [key.publicJwk] });
  return trafficPolicyYaml('jwt', 'mcp', {
    jwtAuthentication: { providers: [{ issuer: ISSUER, audiences: [AUDIENCE], jwks: { inline } }] },
  });
}

describe('MCP backend authorization', () => {
  let alpha: TestMcpServer;
  let beta: TestMcpServer;
  let key: SigningKey;
  let g: PolicyGateway;
  let admin: Record<string, string>;
  let dev: Record<string, string>;

  before(async () => {
    alpha = await startStreamableServer(echoTools('alpha'));
    beta = await startStreamableServer(echoTools('beta'));
    key = await signingKey('k1');
    g = await startPolicyGateway(
      [
        { name: 'alpha', port: alpha.port },
        { name: 'beta', port: beta.port },
      ],
      { mcp: AUTHORIZATION },
      jwtYaml(key),
    );
    admin = { authorization: `Bearer ${await token(key, { sub: 'ada', groups: ['admin', 'dev'] })}` };
    dev = { authorization: `Bearer ${await token(key, { sub: 'dan', groups: ['dev'] })}` };
  });
  after(async () => {
    await g.stop();
    await alpha.close();
    await beta.close();
  });

  it('lists only what the token may see', async () => {
    const asAdmin = await clientWith(g.url, admin);
    const asDev = await clientWith(g.url, dev);
    try {
      const names = async (client: typeof asAdmin) => ({
        tools: (await client.listTools()).tools.map((tool) => tool.name).sort(),
        prompts: (await client.listPrompts()).prompts.map((prompt) => prompt.name).sort(),
        resources: (await client.listResources()).resources.map((resource) => resource.uri).sort(),
      });
      assert.deepEqual(await names(asAdmin), {
        tools: ['alpha_echo', 'alpha_only-alpha', 'beta_echo', 'beta_only-beta'],
        prompts: ['alpha_greet', 'beta_greet'],
        resources: ['alpha+memo://alpha/readme', 'beta+memo://beta/readme'],
      });
      assert.deepEqual(await names(asDev), {
        tools: ['alpha_echo', 'beta_echo'],
        prompts: ['alpha_greet'],
        resources: ['alpha+memo://alpha/readme'],
      });
    } finally {
      await asAdmin.close();
      await asDev.close();
    }
  });

  it('answers a call, get or read of a hidden item exactly as one of a name it cannot route', async () => {
    const asDev = await clientWith(g.url, dev);
    const asAdmin = await clientWith(g.url, admin);
    try {
      const calls = () => alpha.seen.filter((seen) => seen.rpcMethod === 'tools/call').length;
      const before = calls();
      const hidden = await rpcError(asDev.callTool({ name: 'alpha_only-alpha' }));
      const unknown = await rpcError(asDev.callTool({ name: 'gamma_only-alpha' }));
      assert.deepEqual(hidden, { ...unknown, message: unknown.message.replace('gamma_', 'alpha_') });
      assert.deepEqual(hidden, { code: -32602, message: 'MCP error -32602: Tool alpha_only-alpha not found' });
      assert.equal(calls(), before, 'the refused call never reached the target');

      const hiddenPrompt = await rpcError(asDev.getPrompt({ name: 'beta_greet', arguments: { who: 'x' } }));
      const unknownPrompt = await rpcError(asDev.getPrompt({ name: 'gamma_greet', arguments: { who: 'x' } }));
      assert.deepEqual(hiddenPrompt, { ...unknownPrompt, message: unknownPrompt.message.replace('gamma_', 'beta_') });

      const hiddenResource = await rpcError(asDev.readResource({ uri: 'beta+memo://beta/readme' }));
      const unknownResource = await rpcError(asDev.readResource({ uri: 'gamma+memo://beta/readme' }));
      assert.deepEqual(hiddenResource, {
        ...unknownResource,
        message: unknownResource.message.replace('gamma+', 'beta+'),
      });
      assert.equal(hiddenResource.code, -32002);

      // Completions name prompts too: refused the same way.
      const hiddenCompletion = await rpcError(
        asDev.complete({ ref: { type: 'ref/prompt', name: 'beta_greet' }, argument: { name: 'who', value: 'a' } }),
      );
      assert.deepEqual(hiddenCompletion, hiddenPrompt);

      // What the token may use works, for either user.
      const echoed = (await asDev.callTool({ name: 'alpha_echo', arguments: { text: 'hi' } })) as {
        content: { text: string }[];
      };
      assert.equal(echoed.content[0]!.text, 'alpha: hi');
      const adminOnly = (await asAdmin.callTool({ name: 'beta_only-beta' })) as { content: { text: string }[] };
      assert.equal(adminOnly.content[0]!.text, 'only beta');
      const readme = await asAdmin.readResource({ uri: 'beta+memo://beta/readme' });
      assert.equal((readme.contents[0] as { text: string }).text, 'readme of beta');
    } finally {
      await asDev.close();
      await asAdmin.close();
    }
  });

  it('refuses every item of a rule that cannot be evaluated (a token without groups)', async () => {
    const none = { authorization: `Bearer ${await token(key, { sub: 'nobody' })}` };
    const client = await clientWith(g.url, none);
    try {
      // "admin" in jwt.groups fails without the claim: the rule does not match, so the item is refused.
      assert.deepEqual((await client.listTools()).tools.map((tool) => tool.name).sort(), ['alpha_echo', 'beta_echo']);
      assert.deepEqual(
        (await client.listPrompts()).prompts.map((prompt) => prompt.name),
        ['alpha_greet'],
      );
    } finally {
      await client.close();
    }
  });

  it('logs the MCP method, the item, its target and the error the client got', async () => {
    const client = await clientWith(g.url, dev);
    await client.callTool({ name: 'beta_echo', arguments: { text: 'logged' } });
    await rpcError(client.callTool({ name: 'alpha_only-alpha' }));
    await client.readResource({ uri: 'alpha+memo://alpha/readme' });
    await client.close();
    const entries = () => g.gw.accessLog.map((line) => JSON.parse(line) as Record<string, unknown>);
    await eventually('the log lines', async () =>
      entries().some((entry) => entry['mcp.resource.uri'] === 'memo://alpha/readme'),
    );
    const called = entries().find((entry) => entry['gen_ai.tool.name'] === 'echo' && entry['mcp.target'] === 'beta')!;
    assert.equal(called.protocol, 'mcp');
    assert.equal(called['mcp.method.name'], 'tools/call');
    assert.equal(called['mcp.resource.type'], 'tool');
    assert.equal(typeof called['mcp.session.id'], 'string');
    assert.equal(called['mcp.error.code'], undefined);
    const refusedCall = entries().find((entry) => entry['gen_ai.tool.name'] === 'only-alpha')!;
    assert.equal(refusedCall['mcp.target'], 'alpha');
    assert.equal(refusedCall['mcp.error.code'], -32602);
    assert.equal(refusedCall['mcp.error.message'], 'Tool alpha_only-alpha not found');
    const read = entries().find((entry) => entry['mcp.resource.uri'] === 'memo://alpha/readme')!;
    assert.deepEqual([read['mcp.method.name'], read['mcp.resource.type']], ['resources/read', 'resource']);
    assert.ok(entries().some((entry) => entry['mcp.method.name'] === 'initialize'));
  });

  it('refuses a rule that cannot compile: the backend answers 500, the log says which field', async () => {
    const broken = await startPolicyGateway([{ name: 'alpha', port: alpha.port }], {
      mcp: { authorization: { policy: { matchExpressions: ['mcp.tool.name =='] } } },
    });
    try {
      const answer = await rawPost(broken.url, '{}');
      assert.equal(answer.status, 500);
      await eventually('the reason in the log', async () =>
        broken.gw.logs.some((line) => line.includes('backend.mcp.authorization.policy.matchExpressions[0]')),
      );
    } finally {
      await broken.stop();
    }
  });

  it('leaves traffic.authorization at the HTTP level: 403 for the whole request, no mcp variable', async () => {
    const initialize = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    const denyDan = trafficPolicyYaml('http-authz', 'mcp', {
      authorization: { action: 'Deny', policy: { matchExpressions: ['jwt.sub == "dan"'] } },
    });
    const http = await startPolicyGateway([{ name: 'alpha', port: alpha.port }], {}, jwtYaml(key) + denyDan);
    try {
      const refused = await rawPost(http.url, initialize, dev);
      assert.equal(refused.status, 403);
      assert.equal(refused.text, 'the request is not allowed by the authorization policy\n');
      assert.equal((await rawPost(http.url, initialize, admin)).status, 200);
    } finally {
      await http.stop();
    }
    // A traffic rule naming `mcp` cannot see it (it runs before the MCP body is read): the
    // expression fails, so a Deny rule does not deny and the tool call goes through.
    const denyEcho = trafficPolicyYaml('mcp-in-traffic', 'mcp', {
      authorization: { action: 'Deny', policy: { matchExpressions: ['mcp.tool.name == "echo"'] } },
    });
    const blind = await startPolicyGateway([{ name: 'alpha', port: alpha.port }], {}, denyEcho);
    const client = await clientWith(blind.url);
    try {
      const echoed = (await client.callTool({ name: 'echo', arguments: { text: 'x' } })) as {
        content: { text: string }[];
      };
      assert.equal(echoed.content[0]!.text, 'alpha: x');
    } finally {
      await client.close();
      await blind.stop();
    }
  });
});
