// traffic.rateLimit.local end to end: gw in-process in front of a local upstream (requests
// limits) and the OpenAI mock (tokens limits, with the official SDK).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  startTestGateway,
  type TestGateway,
  webRouteYaml,
} from '../../helpers/gateway.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';

async function startUpstream(): Promise<{ server: Server; port: number; hits: () => number }> {
  let hits = 0;
  const server = createServer((_req, res) => {
    hits++;
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : 0, hits: () => hits };
}

function closeServer(server: Server | undefined): Promise<void> {
  if (!server) return Promise.resolve();
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

function policyYaml(name: string, route: string, rateLimit: string): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: ${name}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: ${route}}]
  traffic:
    rateLimit:
${rateLimit}`;
}

describe('local requests limits', () => {
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let gw: TestGateway;
  let port: number;
  const get = (path = '/', headers: Record<string, string> = {}) =>
    fetch(`http://127.0.0.1:${port}${path}`, { headers });

  before(async () => {
    upstream = await startUpstream();
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}${webRouteYaml(upstream.port)}`,
      'policy.yaml': policyYaml('limit', 'web', '      local: [{requests: 3, unit: Minutes, burst: 2}]\n'),
    });
  });

  after(async () => {
    await gw?.stop();
    await closeServer(upstream?.server);
  });

  it('allows rate + burst requests, then answers 429 without calling the upstream', async () => {
    for (let i = 1; i <= 5; i++) {
      const response = await get();
      assert.equal(response.status, 200, `request ${i}: ${gw.logs.join('\n')}`);
      assert.equal(response.headers.get('x-ratelimit-limit'), '5');
      assert.equal(response.headers.get('x-ratelimit-remaining'), String(5 - i));
      const reset = Number(response.headers.get('x-ratelimit-reset'));
      assert.ok(reset >= 1 && reset <= 60, `reset ${reset}`);
      await response.text();
    }
    const refused = await get();
    assert.equal(refused.status, 429);
    assert.equal(await refused.text(), 'rate limit exceeded\n');
    assert.equal(refused.headers.get('x-ratelimit-limit'), '5');
    assert.equal(refused.headers.get('x-ratelimit-remaining'), '0');
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `retry-after ${retryAfter}`);
    assert.equal(refused.headers.get('x-ratelimit-reset'), String(retryAfter));
    assert.equal(upstream.hits(), 5);
  });

  it('keeps the bucket across a configuration reload, and starts a new one when the limit changes', async () => {
    // An unrelated change: the gateway reloads, the limit stays spent.
    gw.write(
      'extra.yaml',
      `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: extra}
spec:
  parentRefs: [{name: ai}]
  rules: [{matches: [{path: {type: PathPrefix, value: /extra}}], backendRefs: [{group: gw.dev, kind: GwBackend, name: web}]}]
`,
    );
    assert.ok(await pollStatus(() => get('/extra'), 200), 'the new route is served');
    const stillRefused = await get();
    assert.equal(stillRefused.status, 429);
    await stillRefused.text();

    gw.write('policy.yaml', policyYaml('limit', 'web', '      local: [{requests: 4, unit: Minutes}]\n'));
    assert.ok(await pollStatus(() => get(), 200), 'a changed limit starts full');
  });
});

/** Polls until `send` answers `status` (the gateway reloads within ~100 ms), false after 3 s. */
async function pollStatus(send: () => Promise<Response>, status: number): Promise<boolean> {
  const deadline = Date.now() + 3000;
  while (Date.now() < deadline) {
    const response = await send();
    await response.arrayBuffer();
    if (response.status === status) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

describe('local limits: refill, several limits, conditional', () => {
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let gw: TestGateway;
  let port: number;
  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`http://127.0.0.1:${port}${path}`, { headers });

  before(async () => {
    upstream = await startUpstream();
    port = await freePort();
    const route = (name: string, path: string) => `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}}
spec:
  parentRefs: [{name: ai}]
  rules: [{matches: [{path: {type: PathPrefix, value: ${path}}}], backendRefs: [{group: gw.dev, kind: GwBackend, name: web}]}]
---
`;
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: web}
spec: {static: {host: 127.0.0.1, port: ${upstream.port}}}
---
${route('refill', '/refill')}${route('several', '/several')}${route('tiers', '/tiers')}`,
      'policies.yaml': `${policyYaml('refill', 'refill', '      local: [{requests: 1, unit: Seconds}]\n')}---
${policyYaml('several', 'several', '      local: [{requests: 100, unit: Minutes}, {requests: 2, unit: Hours}]\n')}---
${policyYaml(
  'tiers',
  'tiers',
  `      conditional:
        - condition: 'request.headers["x-tier"] == "gold"'
          policy: {local: [{requests: 3, unit: Minutes}]}
        - policy: {local: [{requests: 1, unit: Minutes}]}
`,
)}`,
    });
  });

  after(async () => {
    await gw?.stop();
    await closeServer(upstream?.server);
  });

  it('refills after the unit: a refused client may retry after retry-after seconds', async () => {
    let refused: Response | undefined;
    for (let i = 0; i < 5 && !refused; i++) {
      const response = await get('/refill');
      assert.notEqual(response.status, 500, gw.logs.join('\n'));
      await response.text();
      if (response.status === 429) refused = response;
    }
    assert.ok(refused, 'the bucket of one request per second runs dry');
    assert.equal(refused.headers.get('retry-after'), '1');
    await new Promise((resolve) => setTimeout(resolve, 1050));
    const retried = await get('/refill');
    assert.equal(retried.status, 200);
    await retried.text();
  });

  it('applies every local limit and reports the most constrained one', async () => {
    for (let i = 1; i <= 2; i++) {
      const response = await get('/several');
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('x-ratelimit-limit'), '2');
      assert.equal(response.headers.get('x-ratelimit-remaining'), String(2 - i));
      const reset = Number(response.headers.get('x-ratelimit-reset'));
      assert.ok(reset > 3000 && reset <= 3600, `the hourly limit resets within the hour: ${reset}`);
      await response.text();
    }
    const refused = await get('/several');
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('x-ratelimit-limit'), '2');
    await refused.text();
  });

  it('uses the first conditional entry whose condition holds, each with its own bucket', async () => {
    const gold = () => get('/tiers', { 'x-tier': 'gold' });
    const statuses = async (send: () => Promise<Response>, count: number) => {
      const seen: number[] = [];
      for (let i = 0; i < count; i++) {
        const response = await send();
        await response.text();
        seen.push(response.status);
      }
      return seen;
    };
    assert.deepEqual(await statuses(() => get('/tiers'), 2), [200, 429]);
    assert.deepEqual(await statuses(gold, 4), [200, 200, 200, 429]);
  });
});

describe('local tokens limits on an LLM route', () => {
  let provider: Awaited<ReturnType<typeof startOpenAiMock>>;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    provider = await startOpenAiMock({ apiKey: 'sk-upstream' });
    const port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}${aiBackendYaml(
        'openai',
        provider.port,
        'alpha: {}',
        'sk-upstream',
        '{/v1/chat/completions: Completions}',
      )}apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: llm}
spec:
  parentRefs: [{name: ai}]
  rules: [{matches: [{path: {type: PathPrefix, value: /v1}}], backendRefs: [{group: gw.dev, kind: GwBackend, name: openai}]}]
---
${policyYaml('tokens', 'llm', '      local: [{tokens: 7, unit: Minutes}]\n')}`,
    });
    client = new OpenAI({ apiKey: 'client-key', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
  });

  after(async () => {
    await gw?.stop();
    await provider?.close();
  });

  const ask = () =>
    client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }] })
      .withResponse();

  it('serves while tokens are left, charges input + output after completion, then answers 429', async () => {
    const first = await ask();
    // The mock counts words: 2 input tokens, 3 output ("echo: hello there").
    assert.equal(first.data.usage?.total_tokens, 5);
    assert.equal(first.response.headers.get('x-ratelimit-limit'), '7');
    assert.equal(first.response.headers.get('x-ratelimit-remaining'), '7', 'checked before, charged after');
    // 2 tokens are left: not enough for the answer, but the size of an answer is known only after it.
    const second = await ask();
    assert.equal(second.response.headers.get('x-ratelimit-remaining'), '2');
    await assert.rejects(ask(), (error: unknown) => {
      assert.ok(error instanceof OpenAI.RateLimitError, String(error));
      assert.equal(error.status, 429);
      assert.equal(error.headers?.get('x-ratelimit-remaining'), '0');
      assert.ok(Number(error.headers?.get('retry-after')) >= 1);
      return true;
    });
    assert.equal(provider.requests.length, 2, 'the refused request never reached the provider');
  });
});

describe('a Gateway-wide local limit', () => {
  it('is one set of buckets shared by every route of the Gateway', async () => {
    const upstream = await startUpstream();
    const port = await freePort();
    const second = `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: other}
spec:
  parentRefs: [{name: ai}]
  rules: [{matches: [{path: {type: PathPrefix, value: /other}}], backendRefs: [{group: gw.dev, kind: GwBackend, name: web}]}]
`;
    const gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}${webRouteYaml(upstream.port)}${second}`,
      'policy.yaml': `apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: gateway-limit}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai}]
  traffic: {rateLimit: {local: [{requests: 2, unit: Minutes}]}}
`,
    });
    try {
      const statuses: number[] = [];
      for (const path of ['/', '/other', '/', '/other']) {
        const response = await fetch(`http://127.0.0.1:${port}${path}`);
        statuses.push(response.status);
        await response.text();
      }
      assert.deepEqual(statuses, [200, 200, 429, 429], gw.logs.join('\n'));
    } finally {
      await gw.stop();
      await closeServer(upstream.server);
    }
  });
});
