// What targets send the client travels back through gw: sampling, elicitation and roots requests
// (their ids tagged with the target, so two targets' id 0 never meet, and the client's answers go
// back to the right target), progress with the client's own token, logging, list changes and
// resource updates (URIs prefixed), and the client's cancellation reaching the target.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CreateMessageRequestSchema,
  CreateMessageResultSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  SubscribeRequestSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { eventually } from '../../helpers/until.ts';
import {
  firstText,
  type McpGateway,
  startMcpGateway,
  startSseServer,
  startStreamableServer,
  streamableClient,
  type TestMcpServer,
} from './helpers.ts';

/** Tools that turn to the client: sample, confirm (elicitation), roots, slow (progress, logging), wait (cancellation). */
function interactive(name: string, state: { cancelled: number }): (server: McpServer) => void {
  return (server) => {
    server.registerTool('sample', { description: 'asks the client to sample' }, async (extra) => {
      const result = await extra.sendRequest(
        {
          method: 'sampling/createMessage',
          params: { messages: [{ role: 'user', content: { type: 'text', text: `from ${name}` } }], maxTokens: 10 },
        },
        CreateMessageResultSchema,
      );
      return { content: [{ type: 'text', text: (result.content as { text: string }).text }] };
    });
    server.registerTool('confirm', { description: 'asks the user' }, async () => {
      const result = await server.server.elicitInput({
        message: `confirm for ${name}`,
        requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
      });
      return { content: [{ type: 'text', text: `${result.action} ${JSON.stringify(result.content)}` }] };
    });
    server.registerTool('roots', { description: 'lists the client roots' }, async () => {
      const result = await server.server.listRoots();
      return { content: [{ type: 'text', text: result.roots.map((root) => root.uri).join(',') }] };
    });
    server.registerTool('slow', { description: 'reports progress and logs' }, async (extra) => {
      const token = extra._meta?.progressToken;
      for (let step = 1; step <= 3; step++) {
        if (token !== undefined)
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: step, total: 3 },
          });
      }
      await extra.sendNotification({
        method: 'notifications/message',
        params: { level: 'info', logger: name, data: `${name} worked` },
      });
      return { content: [{ type: 'text', text: 'done' }] };
    });
    server.registerTool('wait', { description: 'waits until cancelled' }, async (extra) => {
      await new Promise<void>((resolve) => extra.signal.addEventListener('abort', () => resolve()));
      state.cancelled++;
      return { content: [{ type: 'text', text: 'cancelled' }] };
    });
    server.registerTool('grow', { description: 'adds a tool' }, async () => {
      server.registerTool(`grown-${Date.now()}`, { description: 'new' }, () => ({ content: [] }));
      return { content: [{ type: 'text', text: 'grown' }] };
    });
    server.registerResource('doc', `memo://${name}/doc`, { mimeType: 'text/plain' }, (uri) => ({
      contents: [{ uri: uri.href, text: 'doc' }],
    }));
    server.server.registerCapabilities({ resources: { subscribe: true } });
    server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
      setTimeout(() => void server.server.sendResourceUpdated({ uri: request.params.uri }), 20);
      return {};
    });
  };
}

describe('MCP messages from targets to clients', () => {
  let alpha: TestMcpServer;
  let beta: TestMcpServer;
  let gateway: McpGateway;
  const alphaState = { cancelled: 0 };
  const betaState = { cancelled: 0 };

  before(async () => {
    alpha = await startStreamableServer(interactive('alpha', alphaState));
    beta = await startSseServer(interactive('beta', betaState));
    gateway = await startMcpGateway([
      { name: 'alpha', port: alpha.port },
      { name: 'beta', port: beta.port, protocol: 'SSE' },
    ]);
  });
  after(async () => {
    await gateway.stop();
    await alpha.close();
    await beta.close();
  });

  it('relays sampling, elicitation and roots requests of both targets with their ids tagged and restored', async () => {
    const { client } = await streamableClient(gateway.url, { sampling: {}, elicitation: {}, roots: {} });
    const sampledIds: unknown[] = [];
    client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
      sampledIds.push(extra.requestId);
      const text = (request.params.messages[0]!.content as { text: string }).text;
      // The slower answer first, so that answers cross on the way back.
      if (text.includes('alpha')) await new Promise((resolve) => setTimeout(resolve, 30));
      return { role: 'assistant', content: { type: 'text', text: `sampled ${text}` }, model: 'test' };
    });
    client.setRequestHandler(ElicitRequestSchema, async (request) => ({
      action: 'accept',
      content: { ok: request.params.message.includes('beta') },
    }));
    client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }));
    try {
      const [a, b] = await Promise.all([
        client.callTool({ name: 'alpha_sample' }),
        client.callTool({ name: 'beta_sample' }),
      ]);
      assert.equal(firstText(a), 'sampled from alpha');
      assert.equal(firstText(b), 'sampled from beta');
      assert.equal(sampledIds.length, 2);
      for (const id of sampledIds) assert.match(String(id), /^gw_(alpha|beta)_n_\d+$/);
      assert.notEqual(sampledIds[0], sampledIds[1]);
      assert.equal(firstText(await client.callTool({ name: 'beta_confirm' })), 'accept {"ok":true}');
      assert.equal(firstText(await client.callTool({ name: 'alpha_confirm' })), 'accept {"ok":false}');
      assert.equal(firstText(await client.callTool({ name: 'alpha_roots' })), 'file:///work');
      assert.equal(firstText(await client.callTool({ name: 'beta_roots' })), 'file:///work');
    } finally {
      await client.close();
    }
  });

  it('delivers progress under the client token, logging, list changes and resource updates', async () => {
    const { client } = await streamableClient(gateway.url);
    const logs: string[] = [];
    const updated: string[] = [];
    let listChanged = 0;
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(String(n.params.data)));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void listChanged++);
    try {
      for (const target of ['alpha', 'beta']) {
        const progress: number[] = [];
        const result = await client.callTool({ name: `${target}_slow` }, undefined, {
          onprogress: (update) => progress.push(update.progress),
        });
        assert.equal(firstText(result), 'done');
        assert.deepEqual(progress, [1, 2, 3], `${target} progress`);
      }
      await eventually('both logs', async () => logs.length === 2);
      assert.deepEqual(logs.sort(), ['alpha worked', 'beta worked']);
      // The client's GET stream is open once gw opened alpha's.
      await eventually('the target stream', async () => alpha.seen.some((seen) => seen.httpMethod === 'GET'));
      await client.subscribeResource({ uri: 'alpha+memo://alpha/doc' });
      await client.subscribeResource({ uri: 'beta+memo://beta/doc' });
      await eventually('resource updates', async () => updated.length === 2);
      assert.deepEqual(updated.sort(), ['alpha+memo://alpha/doc', 'beta+memo://beta/doc']);
      await client.callTool({ name: 'alpha_grow' });
      await client.callTool({ name: 'beta_grow' });
      await eventually('list changes', async () => listChanged === 2);
    } finally {
      await client.close();
    }
  });

  it('passes the client cancellation to the target that runs the request', async () => {
    const { client } = await streamableClient(gateway.url);
    try {
      for (const [target, state] of [
        ['alpha', alphaState],
        ['beta', betaState],
      ] as const) {
        const controller = new AbortController();
        const call = client.callTool({ name: `${target}_wait` }, undefined, { signal: controller.signal });
        await new Promise((resolve) => setTimeout(resolve, 50));
        controller.abort();
        await assert.rejects(call);
        await eventually(`${target} saw the cancellation`, async () => state.cancelled === 1);
      }
    } finally {
      await client.close();
    }
  });
});
