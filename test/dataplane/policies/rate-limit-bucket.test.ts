// The local rate limit's token bucket on a clock the test moves, the bucket settings a
// LocalRateLimit gives, and the configuration problems traffic.rateLimit reports.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LocalRateLimit } from '../../../src/api/types/traffic.ts';
import { bucketSettings, compileLocalLimits } from '../../../src/dataplane/policies/rate-limit/local.ts';
import { compileRateLimit } from '../../../src/dataplane/policies/rate-limit/rate-limit.ts';
import { TokenBucket } from '../../../src/dataplane/policies/rate-limit/token-bucket.ts';
import { PolicyRuntime } from '../../../src/dataplane/policies/runtime.ts';
import { isProblem } from '../../../src/dataplane/policies/types.ts';
import { fakeClock } from '../../helpers/fake-clock.ts';
import { compileContext } from '../../helpers/policy-context.ts';

describe('token bucket', () => {
  it('starts full at rate + burst and refills the rate once per interval, up to the capacity', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket(bucketSettings({ requests: 3, unit: 'Minutes', burst: 2 }), clock.monotonicMs);
    assert.equal(bucket.capacity, 5);
    for (let i = 0; i < 5; i++) assert.equal(bucket.take(1), true, `request ${i + 1}`);
    assert.equal(bucket.take(1), false);
    assert.equal(bucket.msUntilRefill(), 60_000);
    clock.advance(59_999);
    assert.equal(bucket.take(1), false, 'no refill before the interval ends');
    clock.advance(1);
    assert.equal(bucket.remaining(), 3, 'one interval adds the rate, not the burst');
    assert.equal(bucket.msUntilRefill(), 60_000);
    clock.advance(10 * 60_000);
    assert.equal(bucket.remaining(), 5, 'idle intervals fill it up to the capacity only');
  });

  it('counts intervals from its creation, not from the last use', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket({ capacity: 1, refillAmount: 1, intervalMs: 1000 }, clock.monotonicMs);
    clock.advance(900);
    assert.equal(bucket.take(1), true);
    assert.equal(bucket.msUntilRefill(), 100);
    clock.advance(100);
    assert.equal(bucket.take(1), true);
  });

  it('take is all or nothing; charge takes what there is and never goes below empty', () => {
    const clock = fakeClock();
    const bucket = new TokenBucket({ capacity: 10, refillAmount: 10, intervalMs: 1000 }, clock.monotonicMs);
    assert.equal(bucket.take(11), false);
    assert.equal(bucket.remaining(), 10);
    bucket.charge(7);
    assert.equal(bucket.remaining(), 3);
    bucket.charge(50);
    assert.equal(bucket.remaining(), 0);
    clock.advance(1000);
    assert.equal(bucket.remaining(), 10, 'an overdrawn bucket is not in debt after the refill');
  });
});

describe('local limits across reloads', () => {
  /** The runtime keys (what a reload keeps) the limits use. */
  function keysOf(limits: LocalRateLimit[], scope?: string): string[] {
    const runtime = new PolicyRuntime();
    runtime.beginCompile();
    compileLocalLimits(limits, compileContext(scope ? { runtime, scope } : { runtime }), 'inline');
    return [...runtime.endCompile()];
  }

  it('keeps a bucket while its scope, place and settings stay, and starts a new one otherwise', () => {
    const limit: LocalRateLimit = { requests: 2, unit: 'Minutes' };
    const [first] = keysOf([limit]);
    assert.deepEqual(keysOf([limit]), [first]);
    assert.notEqual(keysOf([{ ...limit, burst: 1 }])[0], first);
    assert.notEqual(keysOf([{ tokens: 2, unit: 'Minutes' }])[0], first);
    assert.notEqual(keysOf([limit], 'Gateway default/ai listener http route default/web rule 1')[0], first);
    assert.equal(new Set(keysOf([limit, limit])).size, 2, 'two equal limits in one list are two buckets');
  });
});

describe('rateLimit configuration problems', () => {
  it('names the field of an expression that does not compile', () => {
    const cases: [unknown, string][] = [
      [
        { conditional: [{ condition: 'request.headers[', policy: { local: [{ requests: 1, unit: 'Seconds' }] } }] },
        'traffic.rateLimit.conditional[0].condition',
      ],
      [
        {
          global: {
            url: 'http://127.0.0.1:1',
            domain: 'd',
            descriptors: [
              {
                entries: [
                  { name: 'a', expression: '"x"' },
                  { name: 'b', expression: '1 +' },
                ],
              },
            ],
          },
        },
        'traffic.rateLimit.global.descriptors[0].entries[1].expression',
      ],
      [
        {
          global: {
            url: 'http://127.0.0.1:1',
            domain: 'd',
            descriptors: [{ entries: [{ name: 'a', expression: '"x"' }], unit: 'Tokens', cost: 'llm.' }],
          },
        },
        'traffic.rateLimit.global.descriptors[0].cost',
      ],
      [
        {
          global: {
            url: 'http://127.0.0.1:1',
            domain: 'd',
            descriptors: [{ entries: [{ name: 'a', expression: '"x"' }], limitOverride: '{' }],
          },
        },
        'traffic.rateLimit.global.descriptors[0].limitOverride',
      ],
    ];
    for (const [value, field] of cases) {
      const runtime = new PolicyRuntime();
      const compiled = compileRateLimit(value as never, compileContext({ runtime }));
      assert.ok(isProblem(compiled), field);
      assert.equal(compiled.field, field);
      assert.match(compiled.message, /not valid CEL/);
      runtime.close();
    }
  });

  it('refuses a global limit whose service is not in the configuration', () => {
    const compiled = compileRateLimit(
      {
        global: {
          backendRef: { name: 'rls', port: 8081 },
          domain: 'd',
          failureMode: 'FailClosed',
          descriptors: [{ entries: [{ name: 'a', expression: '"x"' }], unit: 'Requests' }],
        },
      },
      compileContext(),
    );
    assert.ok(isProblem(compiled));
    assert.equal(compiled.field, 'traffic.rateLimit.global.backendRef');
  });
});
