// traffic.rateLimit.local end to end: gw in-process in front of a local upstream (requests
// limits) and the OpenAI mock (tokens limits, with the official SDK).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { gatewayYaml, type TestGateway, webRouteYaml } from '../../helpers/gateway.ts';
import { type LlmGateway, startLlmGateway } from '../../helpers/llm-gateway.ts';
import { GATEWAY_AI, prefixRouteYaml, staticBackendYaml, trafficPolicyYaml } from '../../helpers/policy-yaml.ts';
import type { RecordingUpstream } from '../../helpers/recording-upstream.ts';
import { until } from '../../helpers/until.ts';
import { startUpstreamGateway, type UpstreamGateway } from '../../helpers/upstream-gateway.ts';

describe('local requests limits', () => {
  let g: UpstreamGateway;
  let upstream: RecordingUpstream;
  let gw: TestGateway;
  const get = (path = '/', headers: Record<string, string> = {}) => fetch(`${g.base}${path}`, { headers });

  before(async () => {
    g = await startUpstreamGateway(({ port, upstreamPort }) => ({
      'gateway.yaml': `${gatewayYaml(port)}${webRouteYaml(upstreamPort)}`,
      'policy.yaml': trafficPolicyYaml('limit', 'web', 'rateLimit: {local: [{requests: 3, unit: Minutes, burst: 2}]}'),
    }));
    ({ gw, upstream } = g);
  });

  after(() => g?.stop());

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
    assert.equal(upstream.seen.length, 5);
  });

  it('keeps the bucket across a configuration reload, and starts a new one when the limit changes', async () => {
    // An unrelated change: the gateway reloads, the limit stays spent.
    gw.write('extra.yaml', prefixRouteYaml('extra'));
    assert.ok(await pollStatus(() => get('/extra'), 200), 'the new route is served');
    const stillRefused = await get();
    assert.equal(stillRefused.status, 429);
    await stillRefused.text();

    gw.write('policy.yaml', trafficPolicyYaml('limit', 'web', 'rateLimit: {local: [{requests: 4, unit: Minutes}]}'));
    assert.ok(await pollStatus(() => get(), 200), 'a changed limit starts full');
  });
});

/** Polls until `send` answers `status` (the gateway reloads within ~100 ms), false after 3 s. */
function pollStatus(send: () => Promise<Response>, status: number): Promise<boolean> {
  const answers = async () => {
    const response = await send();
    await response.arrayBuffer();
    return response.status === status;
  };
  return until(answers, 3000, 20);
}

describe('local limits: refill, several limits, conditional', () => {
  let g: UpstreamGateway;
  let gw: TestGateway;
  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${g.base}${path}`, { headers });

  before(async () => {
    g = await startUpstreamGateway(({ port, upstreamPort }) => ({
      'gateway.yaml': `${gatewayYaml(port)}${staticBackendYaml('web', upstreamPort)}${['refill', 'several', 'tiers'].map((name) => prefixRouteYaml(name)).join('')}`,
      'policies.yaml':
        trafficPolicyYaml('refill', 'refill', 'rateLimit: {local: [{requests: 1, unit: Seconds}]}') +
        trafficPolicyYaml(
          'several',
          'several',
          'rateLimit: {local: [{requests: 100, unit: Minutes}, {requests: 2, unit: Hours}]}',
        ) +
        trafficPolicyYaml(
          'tiers',
          'tiers',
          `rateLimit:
  conditional:
    - condition: 'request.headers["x-tier"] == "gold"'
      policy: {local: [{requests: 3, unit: Minutes}]}
    - policy: {local: [{requests: 1, unit: Minutes}]}`,
        ),
    }));
    gw = g.gw;
  });

  after(() => g?.stop());

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
  let llm: LlmGateway;

  before(async () => {
    llm = await startLlmGateway(trafficPolicyYaml('tokens', 'llm', 'rateLimit: {local: [{tokens: 7, unit: Minutes}]}'));
  });

  after(async () => {
    await llm?.stop();
  });

  const ask = () =>
    llm.client.chat.completions
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
    assert.equal(llm.provider.requests.length, 2, 'the refused request never reached the provider');
  });
});

describe('a Gateway-wide local limit', () => {
  it('is one set of buckets shared by every route of the Gateway', async () => {
    const { gw, base, stop } = await startUpstreamGateway(({ port, upstreamPort }) => ({
      'gateway.yaml': `${gatewayYaml(port)}${webRouteYaml(upstreamPort)}---\n${prefixRouteYaml('other')}`,
      'policy.yaml': trafficPolicyYaml(
        'gateway-limit',
        GATEWAY_AI,
        'rateLimit: {local: [{requests: 2, unit: Minutes}]}',
      ),
    }));
    try {
      const statuses: number[] = [];
      for (const path of ['/', '/other', '/', '/other']) {
        const response = await fetch(`${base}${path}`);
        statuses.push(response.status);
        await response.text();
      }
      assert.deepEqual(statuses, [200, 200, 429, 429], gw.logs.join('\n'));
    } finally {
      await stop();
    }
  });
});
