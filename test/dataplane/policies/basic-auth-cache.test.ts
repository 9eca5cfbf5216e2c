// The verified cache of basic authentication: the policy compiled on its own, on a policy
// runtime whose clock the test moves, with the checks the hashing threads make counted. A correct
// password is checked once and served from the cache until its entry expires, 5 minutes after it
// verified, and not a millisecond before; a wrong one is checked every time and never accepted; a
// recompiled policy starts empty. The cache itself: bounded (least recently used dropped first),
// keyed by a keyed hash.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { afterEach, describe, it } from 'node:test';
import bcrypt from 'bcryptjs';
import { compileBasicAuthentication } from '../../../src/dataplane/policies/auth/basic.ts';
import { hashingPool } from '../../../src/dataplane/policies/auth/hashing-pool.ts';
import { VerifiedCache } from '../../../src/dataplane/policies/auth/verified-cache.ts';
import { PolicyRuntime } from '../../../src/dataplane/policies/runtime.ts';
import { type CompiledPolicy, isProblem } from '../../../src/dataplane/policies/types.ts';
import { type FakeClock, fakeClock } from '../../helpers/fake-clock.ts';
import { compileContext } from '../../helpers/policy-context.ts';
import { runStep } from '../../helpers/policy-step.ts';

/** How long a verified password is served from the cache. */
const TTL_MS = 5 * 60_000;
const PASSWORDS = { alice: 'alice-pw-1', bob: 'bob-pw-2' };
// Cost 4 keeps the test fast; the cache does not depend on the cost.
const USERS = Object.entries(PASSWORDS).map(([user, password]) => `${user}:${bcrypt.hashSync(password, 4)}`);

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;

describe('the verified cache of basic authentication', () => {
  const runtimes: PolicyRuntime[] = [];
  afterEach(async () => {
    for (const runtime of runtimes.splice(0)) await runtime.close();
  });

  /** The policy of USERS on a runtime reading `clock`, and the count of checks its threads made. */
  function policyOn(clock: FakeClock, runtime = new PolicyRuntime({ clock })) {
    runtimes.push(runtime);
    const compiled = compileBasicAuthentication({ users: USERS }, compileContext({ runtime }));
    if (isProblem(compiled)) assert.fail(compiled.message);
    return { policy: compiled, runtime, checks: () => hashingPool(runtime).completed };
  }
  /** The status the policy answers (200 when it lets the request through). */
  const status = async (policy: CompiledPolicy, user: string, password: string) =>
    (await runStep(policy, { authorization: basic(user, password) })).answer?.status ?? 200;

  it('checks a correct password once, then serves it from the cache until 5 minutes after it verified', async () => {
    const clock = fakeClock();
    const { policy, checks } = policyOn(clock);
    assert.equal(await status(policy, 'alice', PASSWORDS.alice), 200);
    assert.equal(checks(), 1);
    for (let i = 0; i < 5; i++) assert.equal(await status(policy, 'alice', PASSWORDS.alice), 200);
    assert.equal(checks(), 1, 'served from the cache');
    clock.advance(TTL_MS - 1);
    assert.equal(await status(policy, 'alice', PASSWORDS.alice), 200);
    assert.equal(checks(), 1, 'still cached a millisecond before it expires, however often it was used');
    clock.advance(1);
    assert.equal(await status(policy, 'alice', PASSWORDS.alice), 200);
    assert.equal(checks(), 2, 'expired: checked again');
    assert.equal(await status(policy, 'alice', PASSWORDS.alice), 200);
    assert.equal(checks(), 2, 'and cached again');
  });

  it('checks a wrong password every time and never accepts it, before or after the right one is cached', async () => {
    const { policy, checks } = policyOn(fakeClock());
    for (let i = 1; i <= 3; i++) {
      assert.equal(await status(policy, 'alice', 'alice-pw-0'), 401);
      assert.equal(checks(), i, 'each wrong password is checked');
    }
    assert.equal(await status(policy, 'alice', PASSWORDS.alice), 200);
    assert.equal(checks(), 4);
    for (const [user, password] of [
      ['alice', 'alice-pw-0'],
      ['alice', `${PASSWORDS.alice}x`],
      ['alice', PASSWORDS.alice.slice(0, -1)],
      ['bob', PASSWORDS.alice], // another user with the cached password
      ['mallory', PASSWORDS.alice], // an unknown user: alice's hash is a decoy, its match ignored
    ] as const)
      assert.equal(await status(policy, user, password), 401, `${user}:${password}`);
    assert.equal(checks(), 9, 'each of them was checked');
    // Over 1024 bytes a password is refused unhashed (SHA-crypt's cost grows with its square).
    assert.equal(await status(policy, 'alice', 'a'.repeat(1025)), 401);
    assert.equal(checks(), 9);
    assert.equal(await status(policy, 'alice', 'a'.repeat(1024)), 401);
    assert.equal(checks(), 10);
  });

  it('starts empty in a recompiled policy (a reload)', async () => {
    const clock = fakeClock();
    const before = policyOn(clock);
    assert.equal(await status(before.policy, 'alice', PASSWORDS.alice), 200);
    assert.equal(await status(before.policy, 'alice', PASSWORDS.alice), 200);
    assert.equal(before.checks(), 1);
    const reloaded = policyOn(clock, before.runtime);
    assert.equal(await status(reloaded.policy, 'alice', PASSWORDS.alice), 200);
    assert.equal(reloaded.checks(), 2);
  });
});

describe('VerifiedCache', () => {
  const password = Buffer.from('pw');

  it('holds at most maxEntries, dropping the least recently used', () => {
    const clock = fakeClock();
    const cache = new VerifiedCache(clock.monotonicMs, { ttlMs: TTL_MS, maxEntries: 2 });
    const [alice, bob, carol] = ['alice', 'bob', 'carol'].map((user) => cache.key(user, password)) as [
      string,
      string,
      string,
    ];
    cache.add(alice);
    cache.add(bob);
    assert.equal(cache.has(alice), true); // alice is now the most recently used
    cache.add(carol); // full: bob goes
    assert.equal(cache.size, 2);
    assert.equal(cache.has(bob), false);
    assert.equal(cache.has(alice), true);
    assert.equal(cache.has(carol), true);
  });

  it('forgets an entry at its expiry, and adding it again starts a new one', () => {
    const clock = fakeClock();
    const cache = new VerifiedCache(clock.monotonicMs);
    const key = cache.key('alice', password);
    cache.add(key);
    clock.advance(TTL_MS - 1);
    assert.equal(cache.has(key), true);
    clock.advance(1);
    assert.equal(cache.has(key), false);
    assert.equal(cache.size, 0, 'an expired entry found is dropped');
    cache.add(key);
    clock.advance(TTL_MS - 1);
    assert.equal(cache.has(key), true);
  });

  it('keys with a keyed hash: not the plain digest, different in every cache, distinct for every split', () => {
    const one = new VerifiedCache(fakeClock().monotonicMs);
    const other = new VerifiedCache(fakeClock().monotonicMs);
    const plain = createHash('sha256').update('5:alice').update(password).digest('base64');
    assert.notEqual(one.key('alice', password), plain);
    assert.notEqual(one.key('alice', password), other.key('alice', password));
    assert.equal(one.key('alice', password), one.key('alice', Buffer.from('pw')));
    assert.notEqual(one.key('a', Buffer.from('b:c')), one.key('a:b', Buffer.from('c')));
  });
});
