// MCP sessions through gw: a session id that any gw given the same SESSION_KEY can resume (and
// that one without it cannot), Stateless routing with no session at all, targets' expired sessions
// re-initialized without the client noticing, DELETE ending the session everywhere it reaches,
// and the legacy SSE client transport.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import {
  echoTools,
  firstText,
  rawPost,
  sseClient,
  startSseServer,
  startStreamableServer,
  streamableClient,
  suiteGateways,
  type TestMcpServer,
} from './helpers.ts';

/** Runs `body` with SESSION_KEY set to `key` (unset when undefined), restoring it after. */
async function withSessionKey<T>(key: string | undefined, body: () => Promise<T>): Promise<T> {
  const previous = process.env.SESSION_KEY;
  if (key === undefined) delete process.env.SESSION_KEY;
  else process.env.SESSION_KEY = key;
  try {
    return await body();
  } finally {
    if (previous === undefined) delete process.env.SESSION_KEY;
    else process.env.SESSION_KEY = previous;
  }
}

const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

const initializes = (server: TestMcpServer) => server.seen.filter((seen) => seen.rpcMethod === 'initialize').length;

describe('MCP sessions', () => {
  let alpha: TestMcpServer;
  let beta: TestMcpServer;
  const { start, stopAll } = suiteGateways();

  before(async () => {
    alpha = await startStreamableServer(echoTools('alpha'));
    beta = await startSseServer(echoTools('beta'));
  });
  after(async () => {
    await stopAll();
    await alpha.close();
    await beta.close();
  });

  const targets = () => [
    { name: 'alpha', port: alpha.port },
    { name: 'beta', port: beta.port, protocol: 'SSE' as const },
  ];

  it('resumes a session on a second gw with the same SESSION_KEY, keeping the upstream session', async () => {
    const key = randomBytes(32).toString('hex');
    const [first, second] = await withSessionKey(key, async () => [await start(targets()), await start(targets())]);
    const { client, transport } = await streamableClient(first.url);
    const sessionId = transport.sessionId!;
    assert.ok(sessionId.length > 20);
    assert.equal(firstText(await client.callTool({ name: 'alpha_echo', arguments: { text: '1' } })), 'alpha: 1');
    const upstreamSession = alpha.seen.at(-1)!.headers['mcp-session-id'];
    const before = initializes(alpha);
    const resumed = await streamableClient(second.url, {}, { sessionId });
    try {
      assert.equal(
        firstText(await resumed.client.callTool({ name: 'alpha_echo', arguments: { text: '2' } })),
        'alpha: 2',
      );
      assert.equal(alpha.seen.at(-1)!.headers['mcp-session-id'], upstreamSession, 'the same upstream session');
      assert.equal(initializes(alpha), before, 'no new initialize at the Streamable HTTP target');
      // The SSE target's session is its connection, which lives in the first gw: the second opens its own.
      assert.equal(
        firstText(await resumed.client.callTool({ name: 'beta_echo', arguments: { text: '3' } })),
        'beta: 3',
      );
    } finally {
      await resumed.client.close();
      await client.close();
    }
  });

  it('answers 404 to a session id sealed with another key, or forged', async () => {
    const [first, second] = await withSessionKey(undefined, async () => [
      await start(targets()),
      await start(targets()),
    ]);
    const { client, transport } = await streamableClient(first.url);
    try {
      const other = await streamableClient(second.url, {}, { sessionId: transport.sessionId });
      await assert.rejects(other.client.listTools(), /404|Session not found/);
      await other.client.close();
      const forged = `${transport.sessionId!.slice(0, -4)}AAAA`;
      assert.equal((await rawPost(first.url, LIST, { 'mcp-session-id': forged })).status, 404);
    } finally {
      await client.close();
    }
  });

  it('keeps no session with Stateless: each request initializes the targets it needs and ends their sessions', async () => {
    const gateway = await start(targets(), { sessionRouting: 'Stateless' });
    const { client, transport } = await streamableClient(gateway.url);
    try {
      assert.equal(transport.sessionId, undefined);
      const alphaBefore = initializes(alpha);
      const deletesBefore = alpha.seen.filter((seen) => seen.httpMethod === 'DELETE').length;
      assert.equal(firstText(await client.callTool({ name: 'alpha_echo', arguments: { text: 's' } })), 'alpha: s');
      assert.equal(initializes(alpha), alphaBefore + 1);
      assert.equal(firstText(await client.callTool({ name: 'alpha_echo', arguments: { text: 't' } })), 'alpha: t');
      assert.equal(initializes(alpha), alphaBefore + 2);
      const tools = (await client.listTools()).tools.map((tool) => tool.name);
      assert.ok(tools.includes('beta_echo') && tools.includes('alpha_echo'));
      const get = await request(gateway.url, { method: 'GET', headers: { accept: 'text/event-stream' } });
      assert.equal(get.statusCode, 405);
      await get.body.dump();
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(alpha.seen.filter((seen) => seen.httpMethod === 'DELETE').length >= deletesBefore + 2);
    } finally {
      await client.close();
    }
  });

  it("re-initializes a target's expired session and carries on", async () => {
    const gateway = await start(targets());
    const { client } = await streamableClient(gateway.url);
    try {
      assert.equal(firstText(await client.callTool({ name: 'alpha_echo', arguments: { text: 'a' } })), 'alpha: a');
      assert.equal(firstText(await client.callTool({ name: 'beta_echo', arguments: { text: 'b' } })), 'beta: b');
      const alphaBefore = initializes(alpha);
      const betaBefore = initializes(beta);
      alpha.expireSessions();
      beta.expireSessions();
      assert.equal(firstText(await client.callTool({ name: 'alpha_echo', arguments: { text: 'c' } })), 'alpha: c');
      assert.equal(firstText(await client.callTool({ name: 'beta_echo', arguments: { text: 'd' } })), 'beta: d');
      assert.equal(initializes(alpha), alphaBefore + 1);
      assert.equal(initializes(beta), betaBefore + 1);
    } finally {
      await client.close();
    }
  });

  it('ends the session with DELETE: targets told, the id refused afterwards', async () => {
    const gateway = await start(targets());
    const { client, transport } = await streamableClient(gateway.url);
    const sessionId = transport.sessionId!;
    await client.listTools();
    const upstream = alpha.seen.at(-1)!.headers['mcp-session-id'];
    await transport.terminateSession();
    await client.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(alpha.seen.some((seen) => seen.httpMethod === 'DELETE' && seen.headers['mcp-session-id'] === upstream));
    assert.equal((await rawPost(gateway.url, LIST, { 'mcp-session-id': sessionId })).status, 404);
  });

  it('serves legacy SSE clients', async () => {
    const gateway = await start(targets());
    const client = await sseClient(gateway.sseUrl);
    try {
      const tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
      assert.deepEqual(tools, ['alpha_echo', 'alpha_only-alpha', 'beta_echo', 'beta_only-beta']);
      assert.equal(firstText(await client.callTool({ name: 'beta_echo', arguments: { text: 'x' } })), 'beta: x');
      assert.equal(firstText(await client.callTool({ name: 'alpha_echo', arguments: { text: 'y' } })), 'alpha: y');
    } finally {
      await client.close();
    }
  });
});
