// The verified cache of basic authentication, with the policy compiled on its own, a clock the
// test moves and the hashing pool's count of checks: a correct password is checked once and then
// served from the cache until it expires; a wrong one is checked every time and never accepted;
// the cache is bounded, keyed by a keyed hash, and a recompiled policy starts with an empty one.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, it } from 'node:test';
import bcrypt from 'bcryptjs';
import type { BasicAuthentication } from '../../../src/api/types/inbound-auth.ts';
import { basicAuthenticationCompiler } from '../../../src/dataplane/policies/auth/basic.ts';
import { hashingPool } from '../../../src/dataplane/policies/auth/hashing-pool.ts';
import { VerifiedCache } from '../../../src/dataplane/policies/auth/verified-cache.ts';
import { PolicyExchange } from '../../../src/dataplane/policies/exchange.ts';
import { type CompiledPolicy, isProblem, type PolicyCompileContext } from '../../../src/dataplane/policies/types.ts';
import { RequestRecord } from '../../../src/dataplane/telemetry/request-record.ts';
import { compileContext } from '../../helpers/policy-context.ts';

const TTL_MS = 60_000;
const PASSWORDS = { alice: 'alice-pw-1', bob: 'bob-pw-2', carol: 'carol-pw-3' };
// Cost 4 keeps the test fast; the cache does not depend on the cost.
const USERS = Object.entries(PASSWORDS).map(([user, password]) => `${user}:${bcrypt.hashSync(password, 4)}`);

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;

describe('the verified cache of basic authentication', () => {
  let clock: number;
  let context: PolicyCompileContext;
  const compile = (maxEntries = 16): CompiledPolicy => {
    const compiler = basicAuthenticationCompiler({ ttlMs: TTL_MS, maxEntries, now: () => clock });
    const value: BasicAuthentication = { users: USERS };
    const compiled = compiler(value, context);
    if (isProblem(compiled)) assert.fail(compiled.message);
    return compiled;
  };
  /** The status the policy gives (200 when it lets the request through). */
  const status = async (policy: CompiledPolicy, user: string, password: string): Promise<number> => {
    const exchange = new PolicyExchange({} as IncomingMessage, {} as ServerResponse, new RequestRecord(), {
      path: '/',
      query: '',
      headers: { authorization: basic(user, password) },
    });
    const answer = await policy.request!(exchange);
    return answer?.status ?? 200;
  };
  /** Password checks the hashing threads have made so far. */
  const checks = () => hashingPool(context.runtime).completed;

  beforeEach(() => {
    clock = 1_000_000;
    context = compileContext();
  });
  afterEach(() => context.runtime.close());

  it('checks a correct password once, then serves it from the cache until it expires', async () => {
    const policy = compile();
    assert.equal(await status(policy, 'alice', PASSWORDS.alice), 200);
    assert.equal(checks(), 1);
    for (let i = 0; i < 5; i++) assert.equal(await status(policy, 'alice', PASSWORDS.alice), 200);
    assert.equal(checks(), 1, 'served from the cache');
    clock += TTL_MS - 1;
    assert.equal(await status(policy, 'alice', PASSWORDS.alice), 200);
    assert.equal(checks(), 1, 'still cached a millisecond before it expires, used or not');
    clock += 1;
    assert.equal(await status(policy, 'alice', PASSWORDS.alice), 200);
    assert.equal(checks(), 2, 'expired: checked again');
    assert.equal(await status(policy, 'alice', PASSWORDS.alice), 200);
    assert.equal(checks(), 2, 'and cached again');
  });

  it('checks a wrong password every time and never accepts it, before or after the right one is cached', async () => {
    const policy = compile();
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

  it('holds at most maxEntries, dropping the least recently used', async () => {
    const policy = compile(2);
    assert.equal(await status(policy, 'alice', PASSWORDS.alice), 200);
    assert.equal(await status(policy, 'bob', PASSWORDS.bob), 200);
    assert.equal(await status(policy, 'alice', PASSWORDS.alice), 200); // alice is now the most recent
    assert.equal(checks(), 2);
    assert.equal(await status(policy, 'carol', PASSWORDS.carol), 200); // full: bob goes
    assert.equal(checks(), 3);
    assert.equal(await status(policy, 'alice', PASSWORDS.alice), 200);
    assert.equal(checks(), 3, 'alice stayed');
    assert.equal(await status(policy, 'bob', PASSWORDS.bob), 200);
    assert.equal(checks(), 4, 'bob was dropped and checked again');
  });

  it('starts empty in a recompiled policy (a reload)', async () => {
    const before = compile();
    assert.equal(await status(before, 'alice', PASSWORDS.alice), 200);
    assert.equal(await status(before, 'alice', PASSWORDS.alice), 200);
    assert.equal(checks(), 1);
    const reloaded = compile();
    assert.equal(await status(reloaded, 'alice', PASSWORDS.alice), 200);
    assert.equal(checks(), 2);
  });
});

describe('VerifiedCache keys', () => {
  it('are keyed hashes: not the plain digest, different in every cache, distinct for every split', () => {
    const password = Buffer.from('pw');
    const one = new VerifiedCache();
    const other = new VerifiedCache();
    const plain = createHash('sha256').update('5:alice').update(password).digest('base64');
    assert.notEqual(one.key('alice', password), plain);
    assert.notEqual(one.key('alice', password), other.key('alice', password));
    assert.equal(one.key('alice', password), one.key('alice', Buffer.from('pw')));
    assert.notEqual(one.key('a', Buffer.from('b:c')), one.key('a:b', Buffer.from('c')));
    assert.ok(!one.key('alice', password).includes('pw'));
  });
});
