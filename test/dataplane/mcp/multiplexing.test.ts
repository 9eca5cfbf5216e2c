// Several MCP servers behind one gw endpoint, reached by the SDK's own client: lists merge across
// targets (names prefixed as prefixMode says, resource URIs always carrying their target), and
// calls, gets and reads reach the server that owns the name — over either upstream transport.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { McpGateway, TestMcpServer } from './helpers.ts';
import {
  echoTools,
  firstText,
  rawPost,
  startMcpGateway,
  startSseServer,
  startStreamableServer,
  streamableClient,
} from './helpers.ts';

describe('MCP multiplexing', () => {
  let alpha: TestMcpServer;
  let beta: TestMcpServer;
  const gateways: McpGateway[] = [];

  before(async () => {
    alpha = await startStreamableServer(echoTools('alpha'), { name: 'alpha' });
    beta = await startSseServer(echoTools('beta'), { name: 'beta' });
  });
  after(async () => {
    for (const gateway of gateways) await gateway.stop();
    await alpha.close();
    await beta.close();
  });

  const gatewayWith = async (prefixMode?: 'Conditional' | 'Always' | 'Never', single = false) => {
    const targets = [
      { name: 'alpha', port: alpha.port },
      ...(single ? [] : [{ name: 'beta', port: beta.port, protocol: 'SSE' as const }]),
    ];
    const gateway = await startMcpGateway(targets, prefixMode ? { prefixMode } : {});
    gateways.push(gateway);
    return gateway;
  };

  it('merges tools, prompts and resources of two targets and routes calls by prefix (Conditional)', async () => {
    const gateway = await gatewayWith();
    const { client } = await streamableClient(gateway.url);
    try {
      const tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
      assert.deepEqual(tools, ['alpha_echo', 'alpha_only-alpha', 'beta_echo', 'beta_only-beta']);
      assert.equal(firstText(await client.callTool({ name: 'alpha_echo', arguments: { text: 'hi' } })), 'alpha: hi');
      assert.equal(firstText(await client.callTool({ name: 'beta_echo', arguments: { text: 'hi' } })), 'beta: hi');
      const prompts = (await client.listPrompts()).prompts.map((prompt) => prompt.name).sort();
      assert.deepEqual(prompts, ['alpha_greet', 'beta_greet']);
      const prompt = await client.getPrompt({ name: 'beta_greet', arguments: { who: 'you' } });
      assert.deepEqual(prompt.messages[0]!.content, { type: 'text', text: 'beta greets you' });
      const resources = (await client.listResources()).resources.map((resource) => resource.uri).sort();
      assert.deepEqual(resources, ['alpha+memo://alpha/readme', 'beta+memo://beta/readme']);
      const read = await client.readResource({ uri: 'beta+memo://beta/readme' });
      assert.deepEqual(read.contents, [{ uri: 'beta+memo://beta/readme', text: 'readme of beta' }]);
      assert.equal(client.getServerVersion()?.name, 'gw');
      await assert.rejects(client.callTool({ name: 'gamma_echo', arguments: { text: 'x' } }), /not found/);
      await assert.rejects(client.callTool({ name: 'echo', arguments: { text: 'x' } }), /not found/);
    } finally {
      await client.close();
    }
  });

  it('answers a merged list with the targets’ items in target order, exactly as JSON (string ids too)', async () => {
    const gateway = await gatewayWith();
    const { client, transport } = await streamableClient(gateway.url);
    try {
      const headers = { 'mcp-session-id': transport.sessionId!, 'mcp-protocol-version': '2025-06-18' };
      // What the targets list, as they list it, to compare with gw's text.
      const direct = await streamableClient(new URL(`http://127.0.0.1:${alpha.port}/mcp`));
      const alphaTools = (await direct.client.listTools()).tools;
      const alphaResources = (await direct.client.listResources()).resources;
      await direct.client.close();
      for (const [id, method, field, key] of [
        ['list "1"', 'tools/list', 'tools', 'name'],
        [7, 'resources/list', 'resources', 'uri'],
      ] as const) {
        const answer = await rawPost(gateway.url, JSON.stringify({ jsonrpc: '2.0', id, method }), headers);
        assert.equal(answer.status, 200);
        const body = JSON.parse(answer.text) as { jsonrpc: string; id: unknown; result: Record<string, unknown[]> };
        assert.equal(answer.text, JSON.stringify(body), 'canonical JSON, keys as JSON.stringify orders them');
        assert.deepEqual(Object.keys(body), ['jsonrpc', 'id', 'result']);
        assert.equal(body.id, id);
        const items = body.result[field] as Record<string, string>[];
        assert.deepEqual(Object.keys(body.result), [field]);
        const own = (field === 'tools' ? alphaTools : alphaResources) as Record<string, unknown>[];
        // alpha's items first, renamed and otherwise as alpha has them; then beta's.
        assert.deepEqual(
          items.slice(0, own.length),
          own.map((item) => ({
            ...item,
            [key]: key === 'name' ? `alpha_${item.name}` : `alpha+${item.uri as string}`,
          })),
        );
        assert.ok(items.slice(own.length).every((item) => item[key]!.startsWith(key === 'name' ? 'beta_' : 'beta+')));
        assert.equal(items.length, own.length * 2);
      }
    } finally {
      await client.close();
    }
  });

  it('passes one target through unchanged with Conditional, and prefixes it with Always', async () => {
    const single = await gatewayWith('Conditional', true);
    const { client } = await streamableClient(single.url);
    try {
      assert.deepEqual((await client.listTools()).tools.map((tool) => tool.name).sort(), ['echo', 'only-alpha']);
      assert.equal(firstText(await client.callTool({ name: 'echo', arguments: { text: 'a' } })), 'alpha: a');
      assert.deepEqual(
        (await client.listResources()).resources.map((r) => r.uri),
        ['memo://alpha/readme'],
      );
      assert.equal(client.getServerVersion()?.name, 'alpha');
    } finally {
      await client.close();
    }
    const always = await gatewayWith('Always', true);
    const second = await streamableClient(always.url);
    try {
      assert.deepEqual((await second.client.listTools()).tools.map((tool) => tool.name).sort(), [
        'alpha_echo',
        'alpha_only-alpha',
      ]);
      assert.deepEqual(
        (await second.client.listResources()).resources.map((r) => r.uri),
        ['alpha+memo://alpha/readme'],
      );
    } finally {
      await second.client.close();
    }
  });

  it('keeps names as they are with Never: names two targets share are left out, the rest route by owner', async () => {
    const gateway = await gatewayWith('Never');
    const { client } = await streamableClient(gateway.url);
    try {
      const tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
      assert.deepEqual(tools, ['only-alpha', 'only-beta']);
      assert.equal(firstText(await client.callTool({ name: 'only-beta' })), 'only beta');
      await assert.rejects(client.callTool({ name: 'echo', arguments: { text: 'x' } }), /several targets/);
      // URIs keep their target whatever the prefix mode.
      const resources = (await client.listResources()).resources.map((resource) => resource.uri).sort();
      assert.deepEqual(resources, ['alpha+memo://alpha/readme', 'beta+memo://beta/readme']);
    } finally {
      await client.close();
    }
    // A fresh session that calls before listing: the owner is found by asking the targets.
    const fresh = await streamableClient(gateway.url);
    try {
      assert.equal(firstText(await fresh.client.callTool({ name: 'only-alpha' })), 'only alpha');
    } finally {
      await fresh.client.close();
    }
  });
});
