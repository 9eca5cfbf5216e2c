// The response path of MCP traffic (issue 16, item 5): external processing of the response applies
// to what an `mcp` GwBackend answers — a tools/call answer (JSON), the GET stream of
// server-initiated messages and the legacy SSE stream, event by event in FullDuplexStreamed mode
// while the streams stay open — and a Buffered processor changes a whole answer. The MCP SDK's
// client and servers, a real ext_proc processor.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ResourceUpdatedNotificationSchema, SubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { freePort, gatewayYaml, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { prefixRouteYaml, trafficPolicyYaml } from '../../helpers/policy-yaml.ts';
import { eventually, until } from '../../helpers/until.ts';
import {
  firstText,
  mcpYaml,
  rawPost,
  sseClient,
  startStreamableServer,
  streamableClient,
  type TestMcpServer,
} from '../mcp/helpers.ts';
import {
  type Conversation,
  headerOf,
  type Processor,
  type Sent,
  startProcessor,
  streamEventsBack,
} from './ext-proc-processor.ts';

const text = (bytes: Buffer | Uint8Array | undefined) => Buffer.from(bytes ?? []).toString('utf8');

/** Buffered: the whole answer with "alpha says" replaced by "buffered". */
async function replaceWhole(c: Conversation): Promise<void> {
  await c.expect('response_headers');
  c.send({ response_headers: {} });
  const message = await c.next();
  if (!message) return;
  c.send({
    response_body: {
      response: {
        body_mutation: { body: Buffer.from(text(message.response_body.body).replaceAll('alpha says', 'buffered')) },
      },
    },
  });
}

/** Tool `say` (answers "alpha says <text>") and resource memo://alpha/doc, whose subscribers get an update. */
function target(server: McpServer): void {
  server.registerTool('say', { description: 'says it', inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: 'text', text: `alpha says ${text}` }],
  }));
  server.registerResource('doc', 'memo://alpha/doc', { mimeType: 'text/plain' }, (uri) => ({
    contents: [{ uri: uri.href, text: 'alpha says doc' }],
  }));
  server.server.registerCapabilities({ resources: { subscribe: true } });
  server.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    setTimeout(() => void server.server.sendResourceUpdated({ uri: request.params.uri }), 20);
    return {};
  });
}

describe('the response path of mcp backends', () => {
  let alpha: TestMcpServer;
  let processor: Processor;
  let gw: TestGateway;
  let base: string;
  /** The conversations about responses to `method` requests (GET, POST). */
  const conversationsFor = (contentType: string) =>
    processor.conversations.filter((conversation) =>
      (
        headerOf(conversation.messages[0]?.response_headers?.headers ?? { headers: [] }, 'content-type') ?? ''
      ).startsWith(contentType),
    );

  before(async () => {
    alpha = await startStreamableServer(target);
    processor = await startProcessor(async (conversation) => {
      const first = await conversation.peek();
      await (first?.protocol_config?.response_body_mode === 'BUFFERED'
        ? replaceWhole(conversation)
        : streamEventsBack(conversation, (text) => text.replaceAll('alpha says', 'processed')));
    });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const extProc = (mode: string) => `extProc:
  url: http://127.0.0.1:${processor.port}
  processingOptions: {requestHeaderMode: Skip, requestBodyMode: None, responseBodyMode: ${mode}}`;
    gw = await startTestGateway({
      'gw.yaml': `${gatewayYaml(port)}${mcpYaml([{ name: 'alpha', port: alpha.port }], { sessionRouting: 'Stateless' })}---
${prefixRouteYaml('mcp-buffered', { prefix: '/buffered', backend: 'tools' })}apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: stateful}
spec:
  mcp:
    targets: [{name: alpha, static: {host: 127.0.0.1, port: ${alpha.port}}}]
---
${prefixRouteYaml('mcp-stateful', { prefix: '/stateful', backend: 'stateful' })}${trafficPolicyYaml('mcp', 'mcp', extProc('FullDuplexStreamed'))}${trafficPolicyYaml('mcp-stateful', 'mcp-stateful', extProc('FullDuplexStreamed'))}${trafficPolicyYaml('mcp-buffered', 'mcp-buffered', extProc('Buffered'))}`,
    });
    assert.deepEqual(gw.logs, [], 'the configuration is served as written');
  });

  after(async () => {
    await gw.stop();
    await processor.close();
    await alpha.close();
  });

  it('extProc changes a tools/call answer (MCP SDK, Streamable HTTP)', async () => {
    const { client } = await streamableClient(new URL(`${base}/mcp`));
    try {
      const result = await client.callTool({ name: 'say', arguments: { text: 'hello' } });
      assert.equal(firstText(result), 'processed hello');
    } finally {
      await client.close();
    }
    assert.ok(conversationsFor('application/json').length > 0, 'JSON answers went to the processor');
  });

  it('extProc (Buffered) changes a whole tools/call answer, with its length', async () => {
    const initialize = await rawPost(
      new URL(`${base}/buffered/mcp`),
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'say', arguments: { text: 'x' } },
      }),
      { 'mcp-protocol-version': '2025-06-18' },
    );
    assert.equal(initialize.status, 200, initialize.text);
    const answer = JSON.parse(initialize.text) as { result: { content: { text: string }[] } };
    assert.equal(answer.result.content[0]!.text, 'buffered x');
    assert.equal(initialize.headers['content-length'], String(Buffer.byteLength(initialize.text)));
  });

  it('streams the GET stream of server-initiated messages through the processor event by event, kept open', async () => {
    const { client } = await streamableClient(new URL(`${base}/stateful/mcp`));
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    try {
      await eventually('the GET stream through the processor', async () =>
        conversationsFor('text/event-stream').some((c) => !c.halfClosed),
      );
      const stream = conversationsFor('text/event-stream').find((c) => !c.halfClosed)!;
      await client.subscribeResource({ uri: 'memo://alpha/doc' });
      await eventually('the first update', async () => updated.length === 1);
      // The stream is still the same one, open, and carries the next message too.
      await client.subscribeResource({ uri: 'memo://alpha/doc' });
      await eventually('the second update', async () => updated.length === 2);
      assert.equal(stream.halfClosed, false, 'the GET stream stays open');
      const bodies = stream.messages.filter((m: Sent) => m.request === 'response_body');
      assert.ok(bodies.length >= 2, 'each event went to the processor as it came');
      assert.ok(
        bodies.every((m: Sent) => m.response_body.end_of_stream === false),
        'the stream has not ended',
      );
      const result = await client.readResource({ uri: 'memo://alpha/doc' });
      assert.equal((result.contents[0] as { text: string }).text, 'processed doc');
    } finally {
      await client.close();
    }
  });

  it('streams the legacy SSE stream through the processor: answers arrive on it, changed', async () => {
    const before = conversationsFor('text/event-stream').length;
    const client = await sseClient(new URL(`${base}/stateful/sse`));
    try {
      const result = await client.callTool({ name: 'say', arguments: { text: 'over sse' } });
      assert.equal(firstText(result), 'processed over sse');
      const stream = conversationsFor('text/event-stream')[before];
      assert.ok(stream, 'the SSE stream went to the processor');
      assert.equal(stream.halfClosed, false, 'and is still open');
    } finally {
      await client.close();
    }
    // The client leaving ends the processor's stream.
    const stream = conversationsFor('text/event-stream')[before]!;
    assert.ok(await until(() => stream.halfClosed, 2000), 'the processor stream ended with the client');
  });
});
