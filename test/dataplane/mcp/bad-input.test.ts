// What clients may send gw's MCP endpoint that they should not: malformed JSON-RPC, wrong media
// types, batches that are empty, too long or of a protocol version without batches, bodies past
// the limit, unknown or missing session ids, unknown protocol versions, unknown methods and bad
// params — each refused with a clear status and JSON-RPC error. A client that goes away in the
// middle of a stream resumes it with Last-Event-ID; and one session never sees another's messages.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { request } from 'undici';
import { type BodyRewrite, replacedOnce, rewritingFetch, withBytesAfter } from '../../helpers/rewriting-fetch.ts';
import { eventually } from '../../helpers/until.ts';
import {
  echoTools,
  firstText,
  type McpGateway,
  type RawAnswer,
  rawPost,
  startMcpGateway,
  startStreamableServer,
  streamableClient,
  type TestMcpServer,
} from './helpers.ts';

const ACCEPT = 'application/json, text/event-stream';

const post = rawPost;

interface JsonRpcErrorAnswer {
  jsonrpc: string;
  id: null;
  error: { code: number; message: string };
}

function rpcError(answer: RawAnswer): { code: number; message: string } {
  return (JSON.parse(answer.text) as { error: { code: number; message: string } }).error;
}

/** A raw session: initialize at `version`, then notifications/initialized; its id. */
async function rawSession(url: URL, version = '2025-11-25'): Promise<string> {
  const answer = await post(
    url,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  );
  assert.equal(answer.status, 200, answer.text);
  const id = answer.headers['mcp-session-id'] as string;
  const initialized = await post(url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }), {
    'mcp-session-id': id,
  });
  assert.equal(initialized.status, 202);
  return id;
}

describe('MCP bad input', () => {
  let alpha: TestMcpServer;
  let beta: TestMcpServer;
  let gateway: McpGateway;
  let release: () => void = () => undefined;

  before(async () => {
    const setup = (name: string) => (server: Parameters<ReturnType<typeof echoTools>>[0]) => {
      echoTools(name)(server);
      server.registerTool('two-step', { description: 'progress, then waits for the test' }, async (extra) => {
        const token = extra._meta?.progressToken;
        if (token !== undefined)
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken: token, progress: 1 },
          });
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        return { content: [{ type: 'text', text: 'second step' }] };
      });
    };
    alpha = await startStreamableServer(setup('alpha'));
    beta = await startStreamableServer(setup('beta'));
    gateway = await startMcpGateway([
      { name: 'alpha', port: alpha.port },
      { name: 'beta', port: beta.port },
    ]);
  });
  after(async () => {
    release();
    await gateway.stop();
    await alpha.close();
    await beta.close();
  });

  it('refuses what is not one JSON-RPC message', async () => {
    const session = await rawSession(gateway.url);
    const withSession = { 'mcp-session-id': session };
    const notJson = await post(gateway.url, '{"jsonrpc": ', withSession);
    assert.equal(notJson.status, 400);
    assert.equal(rpcError(notJson).code, -32700);
    for (const body of [
      '42',
      '"x"',
      'null',
      '{"jsonrpc":"1.0","id":1,"method":"ping"}',
      '{"jsonrpc":"2.0","id":{},"method":"ping"}',
      '{"jsonrpc":"2.0","id":1,"method":"ping","params":[1]}',
      '{"jsonrpc":"2.0","id":1}',
    ]) {
      const answer = await post(gateway.url, body, withSession);
      assert.equal(answer.status, 400, body);
      assert.equal(rpcError(answer).code, -32600, body);
    }
    const wrongType = await post(gateway.url, '{}', { 'content-type': 'text/plain', ...withSession });
    assert.equal(wrongType.status, 415);
    const wrongAccept = await post(gateway.url, '{"jsonrpc":"2.0","id":1,"method":"ping"}', {
      accept: 'application/json',
      ...withSession,
    });
    assert.equal(wrongAccept.status, 406);
    const large = await post(
      gateway.url,
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(3 * 1024 * 1024) } }),
      withSession,
    );
    assert.equal(large.status, 413);
  });

  it('refuses a message parsers would read differently (MCP SDK): a key twice, bytes that are not UTF-8, a lone surrogate', async () => {
    let rewrite: BodyRewrite = () => undefined;
    const client = new Client({ name: 'rewriting', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(gateway.url, { fetch: rewritingFetch((text) => rewrite(text)) }),
    );
    const calls = () => [...alpha.seen, ...beta.seen].filter((seen) => seen.rpcMethod === 'tools/call').length;
    try {
      const cases: [BodyRewrite, string][] = [
        // gw would call what the last name says; a target reading the first would run another tool.
        [
          (text) => replacedOnce(text, '"name":"alpha_echo"', '"name":"beta_echo","name":"alpha_echo"'),
          'the body has the key "name" twice in one object',
        ],
        [
          (text) => replacedOnce(text, '"method":"tools/call"', '"method":"tools/call","meth\\u006fd":"ping"'),
          'the body has the key "method" twice in one object',
        ],
        [(text) => withBytesAfter(text, '"text":"', [0xff, 0xfe]), 'the body is not valid UTF-8'],
        [
          (text) => replacedOnce(text, '"text":"', '"text":"\\udfff'),
          'the body has an escaped surrogate without its pair (\\udfff)',
        ],
      ];
      const before = calls();
      for (const [change, message] of cases) {
        rewrite = (text) => (text.includes('"tools/call"') ? change(text) : undefined);
        await assert.rejects(client.callTool({ name: 'alpha_echo', arguments: { text: 'x' } }), (error: Error) => {
          // The SDK's transport error: the HTTP status, and gw's JSON-RPC answer.
          assert.equal((error as { code?: number }).code, 400, error.message);
          const answer = JSON.parse(error.message.slice(error.message.indexOf('{'))) as JsonRpcErrorAnswer;
          assert.deepEqual(answer, {
            jsonrpc: '2.0',
            id: null,
            error: { code: -32700, message: `Parse error: ${message}` },
          });
          return true;
        });
      }
      assert.equal(calls(), before, 'no call reached a target');
      // The session goes on; a surrogate pair is no problem.
      rewrite = () => undefined;
      const echo = await client.callTool({ name: 'alpha_echo', arguments: { text: 'ok \ud83d\ude00' } });
      assert.equal(firstText(echo), 'alpha: ok \ud83d\ude00');
    } finally {
      await client.close();
    }
  });

  it('refuses batch abuse: empty, too long, initialize inside, or a protocol version without batches', async () => {
    const modern = await rawSession(gateway.url, '2025-06-18');
    const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });
    const empty = await post(gateway.url, '[]', { 'mcp-session-id': modern });
    assert.equal(empty.status, 400);
    const long = await post(gateway.url, JSON.stringify(Array.from({ length: 33 }, (_, i) => ping(i))), {
      'mcp-session-id': modern,
    });
    assert.equal(long.status, 400);
    assert.match(rpcError(long).message, /more than 32/);
    const notAllowed = await post(gateway.url, JSON.stringify([ping(1)]), { 'mcp-session-id': modern });
    assert.equal(notAllowed.status, 400);
    assert.match(rpcError(notAllowed).message, /batches/);
    const old = await rawSession(gateway.url, '2025-03-26');
    const withInit = await post(
      gateway.url,
      JSON.stringify([ping(1), { jsonrpc: '2.0', id: 2, method: 'initialize', params: {} }]),
      { 'mcp-session-id': old },
    );
    assert.equal(withInit.status, 400);
    const batch = await post(
      gateway.url,
      JSON.stringify([
        ping(1),
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'alpha_echo', arguments: { text: 'b' } } },
        { nonsense: true },
        { jsonrpc: '2.0', method: 'notifications/roots/list_changed' },
      ]),
      { 'mcp-session-id': old },
    );
    assert.equal(batch.status, 200);
    const answers = JSON.parse(batch.text) as {
      id: unknown;
      result?: { content?: { text: string }[] };
      error?: { code: number };
    }[];
    assert.equal(answers.length, 3);
    assert.deepEqual(answers[0], { jsonrpc: '2.0', id: 1, result: {} });
    assert.equal(answers[1]!.result!.content![0]!.text, 'alpha: b');
    assert.equal(answers[2]!.error!.code, -32600);
  });

  it('answers 404 to unknown session ids, 400 to missing ones and to unknown protocol versions', async () => {
    const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.equal((await post(gateway.url, list, { 'mcp-session-id': 'no-such-session' })).status, 404);
    assert.equal((await post(gateway.url, list)).status, 400);
    const get = await request(gateway.url, {
      method: 'GET',
      headers: { accept: 'text/event-stream', 'mcp-session-id': 'nope' },
    });
    assert.equal(get.statusCode, 404);
    await get.body.dump();
    const session = await rawSession(gateway.url);
    const version = await post(gateway.url, list, { 'mcp-session-id': session, 'mcp-protocol-version': '1999-01-01' });
    assert.equal(version.status, 400);
    assert.match(rpcError(version).message, /unsupported protocol version/);
    const put = await request(gateway.url, { method: 'PUT', body: '{}' });
    assert.equal(put.statusCode, 405);
    assert.equal(put.headers.allow, 'GET, POST, DELETE');
    await put.body.dump();
  });

  it('answers unknown methods and bad params with JSON-RPC errors', async () => {
    const session = { 'mcp-session-id': await rawSession(gateway.url) };
    const call = async (method: string, params: unknown) =>
      JSON.parse(
        (await post(gateway.url, JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }), session)).text,
      ) as {
        id: number;
        error: { code: number; message: string };
      };
    const unknown = await call('tasks/list', {});
    assert.deepEqual([unknown.id, unknown.error.code], [7, -32601]);
    assert.equal((await call('tools/call', { arguments: {} })).error.code, -32602);
    assert.equal((await call('tools/list', { cursor: 'not-ours' })).error.code, -32602);
    assert.equal((await call('resources/read', { uri: 'memo://alpha/readme' })).error.code, -32002);
    assert.equal((await call('completion/complete', { ref: { type: 'ref/unknown' } })).error.code, -32602);
  });

  it('keeps a stream for a client that went away, replaying it after Last-Event-ID', async () => {
    const session = await rawSession(gateway.url);
    const response = await request(gateway.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT, 'mcp-session-id': session },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'alpha_two-step', _meta: { progressToken: 'p1' } },
      }),
    });
    assert.equal(response.headers['content-type'], 'text/event-stream');
    let text = '';
    for await (const chunk of response.body) {
      text += chunk.toString();
      if (text.includes('notifications/progress')) break;
    }
    response.body.destroy(); // the client goes away mid-stream
    const ids = [...text.matchAll(/^id: (.+)$/gm)].map((match) => match[1]!);
    assert.equal(ids.length, 2, text); // the priming event, then the progress
    assert.match(text, /"progressToken":"p1"/);
    release();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const resumed = await request(gateway.url, {
      method: 'GET',
      headers: { accept: 'text/event-stream', 'mcp-session-id': session, 'last-event-id': ids[1]! },
    });
    assert.equal(resumed.statusCode, 200);
    const replay = await resumed.body.text(); // ends: the stream is complete
    assert.doesNotMatch(replay, /notifications\/progress/);
    const data = replay.split('\n').find((line) => line.startsWith('data: {'))!;
    assert.deepEqual(JSON.parse(data.slice(6)), {
      jsonrpc: '2.0',
      id: 9,
      result: { content: [{ type: 'text', text: 'second step' }] },
    });
    // gw serves on.
    const after = await post(gateway.url, JSON.stringify({ jsonrpc: '2.0', id: 10, method: 'ping' }), {
      'mcp-session-id': session,
    });
    assert.deepEqual(JSON.parse(after.text), { jsonrpc: '2.0', id: 10, result: {} });
  });

  it("never lets one session's messages reach another", async () => {
    const first = await streamableClient(gateway.url, { sampling: {} });
    const second = await streamableClient(gateway.url, { sampling: {} });
    const seenBySecond: string[] = [];
    second.client.fallbackNotificationHandler = async (notification) => void seenBySecond.push(notification.method);
    second.client.setRequestHandler(CreateMessageRequestSchema, async () => {
      seenBySecond.push('sampling');
      return { role: 'assistant', content: { type: 'text', text: 'wrong session' }, model: 'm' };
    });
    try {
      await eventually(
        'both listening',
        async () => alpha.seen.filter((seen) => seen.httpMethod === 'GET').length >= 2,
      );
      const progress: number[] = [];
      const call = first.client.callTool({ name: 'alpha_two-step' }, undefined, {
        onprogress: (p) => progress.push(p.progress),
      });
      await eventually('progress', async () => progress.length === 1);
      release();
      assert.equal(firstText(await call), 'second step');
      // A forged answer to a request gw never sent on the second session goes nowhere.
      const forged = await post(
        gateway.url,
        JSON.stringify({
          jsonrpc: '2.0',
          id: 'gw_alpha_n_0',
          result: { role: 'assistant', content: { type: 'text', text: 'x' }, model: 'm' },
        }),
        { 'mcp-session-id': second.transport.sessionId! },
      );
      assert.equal(forged.status, 202);
      assert.deepEqual(seenBySecond, []);
    } finally {
      await first.client.close();
      await second.client.close();
    }
  });
});
