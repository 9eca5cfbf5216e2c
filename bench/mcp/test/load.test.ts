// The MCP load jobs against the benchmark's real SDK servers (in their own processes): a round
// trip opens a session and reads the whole list, the list handler's delay shows in the latency,
// and the closed loop of tools/call counts only answers that are results of its own requests.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runMcpLoad } from '../load.ts';
import { parseAnswer } from '../rpc.ts';
import { mcpUrl, startMcpServers } from '../servers.ts';

test('an answer is read from JSON and from an SSE stream', () => {
  const answer = { jsonrpc: '2.0', id: 3, result: { tools: [] } };
  assert.deepEqual(parseAnswer('application/json', JSON.stringify(answer)), answer);
  const stream = `id: 1\ndata: \n\nevent: message\ndata: ${JSON.stringify(answer)}\n\n`;
  assert.deepEqual(parseAnswer('text/event-stream', stream), answer);
});

test('tools/list round trips on a session of a slow list server', async (t) => {
  const servers = await startMcpServers({ role: 'list', count: 2, tools: 4, delayMs: 15 });
  t.after(() => servers.stop());
  assert.equal(servers.ports.length, 2);
  const result = await runMcpLoad({
    kind: 'round-trip',
    url: mcpUrl(servers.ports[1]!).href,
    method: 'tools/list',
    warmup: 2,
    requests: 10,
  });
  assert.equal(result.ok, 10);
  assert.equal(result.items, 4);
  assert.ok(result.p50Ms >= 15, `p50 ${result.p50Ms} ms includes the 15 ms delay`);
});

for (const stateless of [false, true]) {
  test(`a closed loop of tools/call on a ${stateless ? 'stateless, JSON' : 'stateful, SSE'} server`, async (t) => {
    const servers = await startMcpServers({ role: 'call', stateless, json: stateless });
    t.after(() => servers.stop());
    const result = await runMcpLoad({
      kind: 'calls',
      url: mcpUrl(servers.ports[0]!).href,
      connections: 4,
      warmupSeconds: 0.2,
      durationSeconds: 0.5,
    });
    assert.equal(result.failed, 0);
    assert.ok(result.ok > 10, `${result.ok} calls answered`);
    assert.ok(result.answered >= result.ok);
    assert.ok(Math.abs(result.requestsPerSecond - result.ok / 0.5) < 1e-6);
  });
}

test('a failing endpoint fails the job with the reason', async () => {
  const servers = await startMcpServers({ role: 'call', stateless: false, json: true });
  try {
    await assert.rejects(
      runMcpLoad({
        kind: 'round-trip',
        url: mcpUrl(servers.ports[0]!, '/nowhere').href,
        method: 'tools/list',
        warmup: 0,
        requests: 1,
      }),
      /initialize answered HTTP 404/,
    );
  } finally {
    await servers.stop();
  }
});
