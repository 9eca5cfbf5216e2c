// An a2a route's traffic policies and its failures: an API key and a local rate limit apply as on
// any route (nothing reaches the agent without a key or over the limit); an agent that cannot be
// reached is answered 503 in the error shape of the call's binding (the SDK client reads gw's
// error as a JSON-RPC error); an agent answering garbage ends cleanly (a card that is not JSON, a
// stream cut off); a body gw cannot read the same way as the agent would is refused before it
// goes anywhere.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ClientFactory } from '@a2a-js/sdk/client';
import { freePort, gatewayYaml, refusedPort, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { trafficPolicyYaml } from '../../helpers/policy-yaml.ts';
import { objectYaml } from '../policies/auth-helpers.ts';
import { a2aRouteYaml, startRawAgent, startV1Agent, type TestAgent } from './agents.ts';

const KEY = 'sk-a2a-client-5d1c9e';

function sendMessage(id: number | string, text = 'hi', method = 'SendMessage'): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method,
    params: { message: { messageId: `m-${id}`, role: 'ROLE_USER', parts: [{ text }] } },
  });
}

async function post(url: string, body: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers },
    body,
  });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

describe('a2a backend: traffic policies and failures', () => {
  let agent: TestAgent;
  let garbage: TestAgent;
  let gw: TestGateway;
  let base: string;

  before(async () => {
    agent = await startV1Agent();
    garbage = await startRawAgent((req, res) => {
      if (req.url === '/big/.well-known/agent-card.json') {
        // A card over gw's bound (1 MiB): a valid JSON object, just too large.
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ url: 'http://agent/', description: 'x'.repeat(1_200_000) }));
      }
      if (req.url?.endsWith('/.well-known/agent-card.json')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        return void res.end('<html>not a card</html>');
      }
      // A stream that starts, then the agent hangs up mid-event.
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        'data: {"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_WORKING"}}}}\n\n',
      );
      setTimeout(() => {
        res.write('data: {"jsonrpc":"2.0","id":1,"res');
        res.destroy();
      }, 50);
    });
    const port = await freePort();
    const down = await refusedPort();
    gw = await startTestGateway({
      'gw.yaml': `${gatewayYaml(port)}${a2aRouteYaml('guarded', agent.port, { prefix: '/guarded' })}${a2aRouteYaml('open', agent.port, { prefix: '/open' })}${a2aRouteYaml('down', down, { prefix: '/down' })}${a2aRouteYaml('garbage', garbage.port, { prefix: '/garbage' })}${objectYaml('Secret', 'a2a-keys', { client: KEY })}${trafficPolicyYaml('guard', 'guarded', { apiKeyAuthentication: { secretRef: { name: 'a2a-keys' } }, rateLimit: { local: [{ requests: 2, unit: 'Minutes' }] } })}`,
    });
    base = `http://127.0.0.1:${port}`;
  });

  after(async () => {
    await gw?.stop();
    await agent?.close();
    await garbage?.close();
  });

  it('an API key and a rate limit on an a2a route: no key 401, two calls served, the third 429', async () => {
    const seen = agent.seen.length;
    const without = await post(`${base}/guarded/a2a/jsonrpc`, sendMessage(1));
    assert.equal(without.status, 401);
    const card = await fetch(`${base}/guarded/.well-known/agent-card.json`);
    assert.equal(card.status, 401, 'the card is behind the key too');
    await card.arrayBuffer();
    assert.equal(agent.seen.length, seen, 'nothing reached the agent');
    const auth = { authorization: `Bearer ${KEY}` };
    for (const id of [2, 3]) {
      const served = await post(`${base}/guarded/a2a/jsonrpc`, sendMessage(id), auth);
      assert.equal(served.status, 200, served.text);
      assert.equal((JSON.parse(served.text) as { id: number }).id, id);
    }
    const limited = await post(`${base}/guarded/a2a/jsonrpc`, sendMessage(4), auth);
    assert.equal(limited.status, 429);
    assert.equal(agent.seen.length, seen + 2, 'only the two calls within the limit reached the agent');
    // The route next to it has neither.
    assert.equal((await post(`${base}/open/a2a/jsonrpc`, sendMessage(5))).status, 200);
  });

  it('an agent that cannot be reached: 503 as a JSON-RPC error with the request id, which the SDK client reads', async () => {
    const answer = await post(`${base}/down/a2a/jsonrpc`, sendMessage('call-7'));
    assert.equal(answer.status, 503);
    assert.match(answer.type ?? '', /application\/json/);
    assert.deepEqual(JSON.parse(answer.text), {
      jsonrpc: '2.0',
      id: 'call-7',
      error: { code: -32603, message: 'upstream connect failure' },
    });
    const card = (await (await fetch(`${base}/open/.well-known/agent-card.json`)).json()) as Record<string, unknown>;
    const interfaces = card.supportedInterfaces as { url: string; protocolBinding: string }[];
    for (const entry of interfaces) entry.url = entry.url.replace('/open/', '/down/');
    const client = await new ClientFactory().createFromAgentCard(card as never);
    await assert.rejects(
      client.sendMessage({
        tenant: '',
        message: {
          messageId: 'm',
          contextId: '',
          taskId: '',
          role: 1,
          parts: [{ content: { $case: 'text', value: 'hi' }, metadata: undefined, filename: '', mediaType: '' }],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        },
        configuration: undefined,
        metadata: undefined,
      }),
      /upstream connect failure/,
    );
  });

  it('an agent that cannot be reached, over HTTP+JSON: v1.0 and v0.3 error bodies by A2A-Version', async () => {
    const body = JSON.stringify({ message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] } });
    const v1 = await post(`${base}/down/a2a/rest/message:send`, body);
    assert.equal(v1.status, 503);
    assert.deepEqual(JSON.parse(v1.text), {
      error: { code: 503, status: 'UNAVAILABLE', message: 'upstream connect failure', details: [] },
    });
    const v03 = await post(`${base}/down/rest/v1/message:send`, body, { 'a2a-version': '' });
    assert.equal(v03.status, 503);
    assert.deepEqual(JSON.parse(v03.text), { code: -32603, message: 'upstream connect failure' });
    const line = gw.accessLog.map((entry) => JSON.parse(entry) as Record<string, unknown>).at(-1)!;
    assert.equal(line['a2a.method'], 'SendMessage');
    assert.match(String(line.error), /upstream connect/);
  });

  it('a card that is not JSON, or over the bound: 502 saying so, and the SDK client fails cleanly', async () => {
    const response = await fetch(`${base}/garbage/.well-known/agent-card.json`);
    assert.equal(response.status, 502);
    assert.match(await response.text(), /the agent card is not JSON/);
    await assert.rejects(new ClientFactory().createFromUrl(`${base}/garbage/`), /502/);
    const big = await fetch(`${base}/garbage/big/.well-known/agent-card.json`);
    assert.equal(big.status, 502);
    assert.match(await big.text(), /the agent card exceeds 1048576 bytes/);
  });

  it('a stream the agent cuts off mid-event: the client sees it end, and gw serves on', async () => {
    const response = await fetch(`${base}/garbage/a2a/jsonrpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: sendMessage(1, 'hi', 'SendStreamingMessage'),
    });
    assert.equal(response.status, 200);
    const reader = response.body!.getReader();
    const first = await reader.read();
    assert.match(Buffer.from(first.value!).toString(), /TASK_STATE_WORKING/, 'the first event came before the cut');
    await assert.rejects(
      (async () => {
        for (;;) if ((await reader.read()).done) throw new Error('ended as if complete');
      })(),
      /terminated|ended as if complete|other side closed/,
    );
    assert.equal((await post(`${base}/open/a2a/jsonrpc`, sendMessage(9))).status, 200);
  });

  it('a body that is not JSON, or that parsers read differently, is refused before it reaches the agent', async () => {
    const seen = agent.seen.length;
    const broken = await post(`${base}/open/a2a/jsonrpc`, '{"jsonrpc": "2.0", "method": ');
    assert.equal(broken.status, 400);
    assert.deepEqual(JSON.parse(broken.text), {
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: 'the request body is not JSON' },
    });
    const twice = await post(
      `${base}/open/a2a/jsonrpc`,
      '{"jsonrpc":"2.0","id":1,"method":"GetTask","method":"CancelTask","params":{"id":"t"}}',
    );
    assert.equal(twice.status, 400);
    assert.match(twice.text, /-32700/);
    assert.equal(agent.seen.length, seen);
  });
});
