// Time and local rate limits (traffic.rateLimit.local) compiled as the data plane compiles them, on
// a clock the test moves: a window refills exactly at its boundary and not a millisecond before,
// by the rate and never past the capacity; retry-after and x-ratelimit-reset say how long is left;
// an overdrawn tokens limit refuses until its boundary; a configuration reload keeps the window.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { RateLimitsOrConditional } from '../../../src/api/types/traffic.ts';
import { compileRateLimit } from '../../../src/dataplane/policies/rate-limit/rate-limit.ts';
import { PolicyRuntime } from '../../../src/dataplane/policies/runtime.ts';
import { type CompiledPolicy, isProblem } from '../../../src/dataplane/policies/types.ts';
import { LlmRecord } from '../../../src/dataplane/telemetry/request-record.ts';
import { type FakeClock, fakeClock } from '../../helpers/fake-clock.ts';
import { compileContext } from '../../helpers/policy-context.ts';
import { runStep } from '../../helpers/policy-step.ts';

describe('local rate limits over time', () => {
  const runtimes: PolicyRuntime[] = [];
  afterEach(() => {
    for (const runtime of runtimes.splice(0)) runtime.close();
  });

  const runtimeOn = (clock: FakeClock) => {
    const runtime = new PolicyRuntime({ clock });
    runtimes.push(runtime);
    return runtime;
  };
  const compiled = (value: RateLimitsOrConditional, runtime: PolicyRuntime): CompiledPolicy => {
    const policy = compileRateLimit(value, compileContext({ runtime }));
    if (isProblem(policy)) assert.fail(`${policy.field}: ${policy.message}`);
    return policy;
  };
  /** Status of one request (200: admitted), with retry-after and x-ratelimit-reset of a 429. */
  const send = async (policy: CompiledPolicy) => {
    const { answer } = await runStep(policy, {});
    return {
      status: answer?.status ?? 200,
      retryAfter: answer?.headers?.['retry-after'],
      reset: answer?.headers?.['x-ratelimit-reset'],
    };
  };
  const statuses = async (policy: CompiledPolicy, count: number) => {
    const seen: number[] = [];
    for (let i = 0; i < count; i++) seen.push((await send(policy)).status);
    return seen;
  };

  it('refills a requests limit exactly at the end of its unit, by the rate, never past the capacity', async () => {
    const clock = fakeClock();
    const policy = compiled({ local: [{ requests: 3, unit: 'Minutes', burst: 1 }] }, runtimeOn(clock));
    assert.deepEqual(await statuses(policy, 5), [200, 200, 200, 200, 429], 'rate + burst, then refused');
    clock.advance(20_000);
    assert.deepEqual(await send(policy), { status: 429, retryAfter: '40', reset: '40' });
    clock.advance(39_999);
    assert.deepEqual(await send(policy), { status: 429, retryAfter: '1', reset: '1' }, '1 ms before the boundary');
    clock.advance(1);
    assert.deepEqual(await statuses(policy, 4), [200, 200, 200, 429], 'at the boundary: the rate, not the burst');
    clock.advance(10 * 60_000);
    assert.deepEqual(await statuses(policy, 5), [200, 200, 200, 200, 429], 'idle units fill it to the capacity only');
  });

  it('counts units from the start of the bucket, not from the requests', async () => {
    const clock = fakeClock();
    const policy = compiled({ local: [{ requests: 1, unit: 'Seconds' }] }, runtimeOn(clock));
    clock.advance(900);
    assert.equal((await send(policy)).status, 200);
    assert.deepEqual(await send(policy), { status: 429, retryAfter: '1', reset: '1' });
    clock.advance(99);
    assert.equal((await send(policy)).status, 429);
    clock.advance(1);
    assert.equal((await send(policy)).status, 200, '1 s after the bucket began, 100 ms after the request');
    // A request long after a boundary does not move the next one: it stays on the bucket's seconds.
    clock.advance(1500);
    assert.equal((await send(policy)).status, 200);
    clock.advance(499);
    assert.deepEqual(await send(policy), { status: 429, retryAfter: '1', reset: '1' });
    clock.advance(1);
    assert.equal((await send(policy)).status, 200, '3 s after the bucket began');
  });

  it('refuses after an overdrawn tokens limit until its boundary, then serves again with no debt', async () => {
    const clock = fakeClock();
    const policy = compiled({ local: [{ tokens: 100, unit: 'Seconds' }] }, runtimeOn(clock));
    const first = await runStep(policy, {});
    assert.equal(first.answer, undefined);
    first.record.llm = new LlmRecord();
    first.record.llm.usage = { inputTokens: 60, outputTokens: 90, totalTokens: 150 };
    clock.advance(300);
    first.exchange.finish();
    assert.deepEqual(await send(policy), { status: 429, retryAfter: '1', reset: '1' });
    clock.advance(699);
    assert.equal((await send(policy)).status, 429, '1 ms before the boundary');
    clock.advance(1);
    assert.equal((await send(policy)).status, 200, 'at the boundary: refilled, the 50 overdrawn forgotten');
  });

  it('keeps the window across a configuration reload', async () => {
    const clock = fakeClock();
    const runtime = runtimeOn(clock);
    const value: RateLimitsOrConditional = { local: [{ requests: 2, unit: 'Hours' }] };
    assert.deepEqual(await statuses(compiled(value, runtime), 3), [200, 200, 429]);
    clock.advance(3_600_000 - 1);
    const reloaded = compiled(value, runtime);
    assert.equal((await send(reloaded)).status, 429, 'a reload does not start a new window');
    clock.advance(1);
    assert.deepEqual(await statuses(reloaded, 3), [200, 200, 429]);
  });
});
