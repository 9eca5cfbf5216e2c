// Targets that fail: one that is down, one that hangs, one that answers garbage. FailClosed fails
// the session (or the request) with a clear error; FailOpen carries on without the failed target
// and errs only when every target failed; deadlines (the target's BackendHTTP.requestTimeout)
// bound every wait; gw keeps serving through all of it.
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { z } from 'zod';
import { refusedPort } from '../../helpers/gateway.ts';
import { until } from '../../helpers/until.ts';
import {
  echoTools,
  firstText,
  startStreamableServer,
  streamableClient,
  suiteGateways,
  type TestMcpServer,
} from './helpers.ts';

type BadMode = 'garbage' | 'junk-stream' | 'huge' | 'hang' | 'trickle' | 'junk-flood' | 'talkative';

/** What an endless stream of a bad server did: its requests whose connection closed, the bytes it wrote. */
interface Flow {
  closed: number;
  written: number;
}

/** Writes `opening`, then `repeated` for ever, as fast as the reader takes it, until the connection closes. */
function floodStream(res: ServerResponse, flow: Flow, opening: string, repeated: string): void {
  const block = repeated.repeat(Math.ceil(16384 / repeated.length));
  let open = true;
  res.once('close', () => {
    open = false;
    flow.closed++;
  });
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(opening);
  const pump = (): void => {
    while (open) {
      flow.written += block.length;
      if (!res.write(block)) return void res.once('drain', pump);
    }
  };
  pump();
}

/**
 * A Streamable HTTP "server" that initializes properly (JSON answers) and then misbehaves on every
 * other request as `mode` says: garbage JSON, an SSE stream of junk that ends, a message over
 * gw's size bound, no answer at all, an SSE stream that never stops sending comments and never
 * answers, one that sends junk events as fast as it can for ever, or one that answers and then
 * goes on sending notifications for ever.
 */
async function badServer(mode: BadMode): Promise<{ server: Server; port: number; flow: Flow }> {
  const flow: Flow = { closed: 0, written: 0 };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const message = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    if (req.method !== 'POST') return void res.writeHead(405).end();
    if (message?.method === 'initialize') {
      const result = {
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: mode, version: '1' },
      };
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'bad-session' });
      return void res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
    }
    if (message?.id === undefined) return void res.writeHead(202).end();
    switch (mode) {
      case 'garbage':
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end('{{{ not json');
      case 'junk-stream':
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: not json\n\n');
        res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id: 'someone-else', result: {} })}\n\n`);
        return void res.end();
      case 'huge':
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(
          JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { tools: [], pad: 'x'.repeat(5 * 1024 * 1024) } }),
        );
      case 'hang':
        return; // never answers
      case 'trickle': {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const timer = setInterval(() => res.write(': still working\n\n'), 50);
        res.once('close', () => clearInterval(timer));
        return;
      }
      case 'junk-flood':
        return floodStream(res, flow, '', 'data: not json\n\n');
      case 'talkative': {
        const answer = { jsonrpc: '2.0', id: message.id, result: { content: [{ type: 'text', text: 'answered' }] } };
        const note = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'more' } };
        return floodStream(res, flow, `data: ${JSON.stringify(answer)}\n\n`, `data: ${JSON.stringify(note)}\n\n`);
      }
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, flow };
}

/** The connection of `flow`'s stream closed, and nothing more was written after. */
async function assertAbandoned(flow: Flow, closedBefore: number): Promise<void> {
  assert.ok(await until(() => flow.closed > closedBefore, 3000), 'the target request was aborted');
  const written = flow.written;
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(flow.written, written, 'the target wrote nothing more');
}

describe('MCP target failures', () => {
  let alpha: TestMcpServer;
  const bad: Record<string, { server: Server; port: number; flow: Flow }> = {};
  let downPort: number;
  const { start, stopAll } = suiteGateways();

  before(async () => {
    alpha = await startStreamableServer((server) => {
      echoTools('alpha')(server);
      server.registerTool('stall', { description: 'takes 2 s', inputSchema: { ms: z.number() } }, async ({ ms }) => {
        await new Promise((resolve) => setTimeout(resolve, ms));
        return { content: [{ type: 'text', text: 'late' }] };
      });
    });
    for (const mode of ['garbage', 'junk-stream', 'huge', 'hang', 'trickle', 'junk-flood', 'talkative'] as const)
      bad[mode] = await badServer(mode);
    downPort = await refusedPort();
  });
  after(async () => {
    await stopAll();
    await alpha.close();
    for (const { server } of Object.values(bad)) {
      server.closeAllConnections();
      server.close();
    }
  });

  it('FailClosed: a target that is down fails the initialize, naming it', async () => {
    const gateway = await start([
      { name: 'alpha', port: alpha.port },
      { name: 'down', port: downPort },
    ]);
    await assert.rejects(streamableClient(gateway.url), /MCP target down failed: connect/);
  });

  it('FailOpen: the session goes on without the failed targets; all failed is an error', async () => {
    const gateway = await start(
      [
        { name: 'alpha', port: alpha.port },
        { name: 'down', port: downPort },
        { name: 'hang', port: bad.hang!.port, policies: '{http: {requestTimeout: 300ms}}' },
      ],
      { failureMode: 'FailOpen' },
    );
    const { client } = await streamableClient(gateway.url);
    try {
      const tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
      assert.deepEqual(tools, ['alpha_echo', 'alpha_only-alpha', 'alpha_stall']);
      await assert.rejects(client.callTool({ name: 'down_echo', arguments: { text: 'x' } }), /not found/);
    } finally {
      await client.close();
    }
    const none = await start([{ name: 'down', port: downPort }], { failureMode: 'FailOpen' });
    await assert.rejects(streamableClient(none.url), /MCP target down failed/);
  });

  it('lists: FailClosed fails on a target answering garbage, FailOpen leaves it out', async () => {
    const targets = [
      { name: 'alpha', port: alpha.port },
      { name: 'garbage', port: bad.garbage!.port },
      { name: 'junk', port: bad['junk-stream']!.port },
      { name: 'huge', port: bad.huge!.port },
    ];
    const closed = await start(targets);
    const first = await streamableClient(closed.url);
    try {
      await assert.rejects(first.client.listTools(), /MCP target (garbage|junk|huge) failed/);
      // The session still works for what does not touch the broken targets.
      assert.equal(
        firstText(await first.client.callTool({ name: 'alpha_echo', arguments: { text: 'ok' } })),
        'alpha: ok',
      );
    } finally {
      await first.client.close();
    }
    const open = await start(targets, { failureMode: 'FailOpen' });
    const second = await streamableClient(open.url);
    try {
      const tools = (await second.client.listTools()).tools.map((tool) => tool.name);
      assert.deepEqual(tools.sort(), ['alpha_echo', 'alpha_only-alpha', 'alpha_stall']);
      await assert.rejects(
        second.client.callTool({ name: 'garbage_x' }),
        /MCP target garbage failed: a body that is not JSON/,
      );
      await assert.rejects(
        second.client.callTool({ name: 'junk_x' }),
        /MCP target junk failed: the stream ended before the answer/,
      );
      await assert.rejects(second.client.callTool({ name: 'huge_x' }), /MCP target huge failed: a message over/);
    } finally {
      await second.client.close();
    }
  });

  it("bounds a call by the target's request timeout", async () => {
    const gateway = await start([{ name: 'alpha', port: alpha.port, policies: '{http: {requestTimeout: 300ms}}' }]);
    const { client } = await streamableClient(gateway.url);
    try {
      assert.equal(firstText(await client.callTool({ name: 'stall', arguments: { ms: 10 } })), 'late');
      const started = Date.now();
      await assert.rejects(
        client.callTool({ name: 'stall', arguments: { ms: 2000 } }),
        /MCP target alpha failed: timeout/,
      );
      assert.ok(Date.now() - started < 1500, `answered after ${Date.now() - started} ms`);
      // The session survives the timeout.
      assert.equal(firstText(await client.callTool({ name: 'echo', arguments: { text: 'after' } })), 'alpha: after');
    } finally {
      await client.close();
    }
  });

  it('bounds the whole exchange, not only the pauses: a stream that keeps talking without answering', async () => {
    const gateway = await start([
      { name: 'trickle', port: bad.trickle!.port, policies: '{http: {requestTimeout: 400ms}}' },
    ]);
    const { client } = await streamableClient(gateway.url);
    try {
      const started = Date.now();
      await assert.rejects(client.callTool({ name: 'anything' }), /MCP target trickle failed: timeout/);
      const took = Date.now() - started;
      assert.ok(took >= 350 && took < 1500, `answered after ${took} ms`);
    } finally {
      await client.close();
    }
  });

  it('gives up a stream of junk events at once: the call fails and the target request is aborted', async () => {
    const gateway = await start([{ name: 'flood', port: bad['junk-flood']!.port }]);
    const { client } = await streamableClient(gateway.url);
    const flow = bad['junk-flood']!.flow;
    const closedBefore = flow.closed;
    try {
      const started = Date.now();
      await assert.rejects(
        client.callTool({ name: 'anything' }, undefined, { timeout: 5000 }),
        /MCP target flood failed: more than 16 events that are not JSON-RPC messages/,
      );
      assert.ok(Date.now() - started < 1000, `answered after ${Date.now() - started} ms`);
      await assertAbandoned(flow, closedBefore);
    } finally {
      await client.close();
    }
  });

  it('answers at once and cuts off a target that streams on after its answer', async () => {
    const gateway = await start([{ name: 'talkative', port: bad.talkative!.port }]);
    const { client } = await streamableClient(gateway.url);
    const flow = bad.talkative!.flow;
    const closedBefore = flow.closed;
    try {
      const result = await client.callTool({ name: 'anything' }, undefined, { timeout: 5000 });
      assert.equal(firstText(result), 'answered');
      await assertAbandoned(flow, closedBefore);
      // The session goes on.
      assert.equal(firstText(await client.callTool({ name: 'again' }, undefined, { timeout: 5000 })), 'answered');
    } finally {
      await client.close();
    }
  });
});
