// The token cache every fetched backend credential goes through (src/dataplane/auth/backend/
// token-cache.ts), with a clock the test moves: a valid token costs no fetch and no wait,
// concurrent requests share one fetch, a token is refreshed before it expires while requests
// keep using it, a failed fetch fails its waiters and is retried by the next request, and the
// cache's bounds hold.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BackendCredentialError } from '../../../src/dataplane/auth/backend/credential-error.ts';
import { credentialLog, credentialMetrics } from '../../../src/dataplane/auth/backend/credential-metrics.ts';
import {
  type FetchedToken,
  REFRESH_FAILURE_LOG_MS,
  REFRESH_MARGIN_MS,
  REFRESH_RETRY_MS,
  secretKey,
  TokenCache,
} from '../../../src/dataplane/auth/backend/token-cache.ts';
import { fakeClock } from '../../helpers/fake-clock.ts';

const HOUR = 3_600_000;

/** A token endpoint the test answers by hand: each fetch waits until resolved or failed. */
function endpoint() {
  const calls: { resolve: (token: FetchedToken) => void; reject: (error: unknown) => void }[] = [];
  const fetch = () =>
    new Promise<FetchedToken>((resolve, reject) => {
      calls.push({ resolve, reject });
    });
  return { calls, fetch };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('TokenCache', () => {
  it('shares one fetch among concurrent requests, then answers from the cache without waiting', async () => {
    const clock = fakeClock();
    const cache = new TokenCache({ kind: 'test_single_flight', clock });
    const { calls, fetch } = endpoint();
    const first = cache.get('', fetch);
    const second = cache.get('', fetch);
    assert.ok(first instanceof Promise && second instanceof Promise);
    assert.equal(calls.length, 1, 'one fetch for both requests');
    calls[0]!.resolve({ value: 'token-1', expiresAtMs: clock.epochMs() + HOUR });
    assert.deepEqual(await Promise.all([first, second]), ['token-1', 'token-1']);
    assert.equal(cache.get('', fetch), 'token-1', 'a cached token is a value, not a promise');
    assert.equal(calls.length, 1);
    assert.equal(credentialMetrics.get('test_single_flight', 'success'), 1);
  });

  it('refreshes in the background from the refresh point on, still answering with the cached token', async () => {
    const clock = fakeClock();
    const cache = new TokenCache({ kind: 'test_refresh', clock });
    const { calls, fetch } = endpoint();
    const pending = cache.get('', fetch);
    calls[0]!.resolve({ value: 'old', expiresAtMs: clock.epochMs() + HOUR });
    await pending;
    clock.advance(HOUR - REFRESH_MARGIN_MS - 1);
    assert.equal(cache.get('', fetch), 'old');
    assert.equal(calls.length, 1, 'no refresh before the margin');
    clock.advance(1);
    assert.equal(cache.get('', fetch), 'old', 'the cached token still serves while the refresh runs');
    assert.equal(cache.get('', fetch), 'old');
    assert.equal(calls.length, 2, 'one refresh, however many requests');
    calls[1]!.resolve({ value: 'new', expiresAtMs: clock.epochMs() + HOUR });
    await tick();
    assert.equal(cache.get('', fetch), 'new');
  });

  it('refreshes a short-lived token at half its life', async () => {
    const clock = fakeClock();
    const cache = new TokenCache({ kind: 'test_short', clock });
    const { calls, fetch } = endpoint();
    const pending = cache.get('', fetch);
    calls[0]!.resolve({ value: 'short', expiresAtMs: clock.epochMs() + 60_000 });
    await pending;
    clock.advance(29_999);
    cache.get('', fetch);
    assert.equal(calls.length, 1);
    clock.advance(1);
    cache.get('', fetch);
    assert.equal(calls.length, 2);
  });

  it('fails the waiting requests when a fetch fails, remembers nothing, and lets the next request retry', async () => {
    const clock = fakeClock();
    const cache = new TokenCache({ kind: 'test_failure', clock });
    const { calls, fetch } = endpoint();
    const first = cache.get('', fetch) as Promise<string>;
    const second = cache.get('', fetch) as Promise<string>;
    calls[0]!.reject(new Error('connect ECONNREFUSED 127.0.0.1:1 (client_secret=hunter2)'));
    for (const waiting of [first, second]) {
      const error = await waiting.then(
        () => assert.fail('the fetch failed'),
        (reason: unknown) => reason,
      );
      assert.ok(error instanceof BackendCredentialError);
      assert.equal(error.status, 502);
      assert.doesNotMatch(error.message, /hunter2|ECONNREFUSED/, 'the client-facing message says nothing of the cause');
    }
    assert.equal(credentialMetrics.get('test_failure', 'failure'), 1);
    const retry = cache.get('', fetch);
    assert.equal(calls.length, 2, 'the next request fetches again');
    calls[1]!.resolve({ value: 'recovered', expiresAtMs: clock.epochMs() + HOUR });
    assert.equal(await retry, 'recovered');
  });

  it('waits for a new token once the cached one has expired, and keeps using it when a background refresh fails', async () => {
    const clock = fakeClock();
    const failures: BackendCredentialError[] = [];
    const cache = new TokenCache({ kind: 'test_expiry', clock, onBackgroundFailure: (e) => failures.push(e) });
    const { calls, fetch } = endpoint();
    const pending = cache.get('', fetch);
    calls[0]!.resolve({ value: 'only', expiresAtMs: clock.epochMs() + HOUR });
    await pending;
    clock.advance(HOUR - 60_000);
    assert.equal(cache.get('', fetch), 'only');
    calls[1]!.reject(new Error('token endpoint down'));
    await tick();
    assert.equal(failures.length, 1);
    assert.equal(cache.get('', fetch), 'only', 'still valid: served');
    assert.equal(calls.length, 2, 'no new try before the retry delay');
    clock.advance(REFRESH_RETRY_MS);
    assert.equal(cache.get('', fetch), 'only');
    assert.equal(calls.length, 3, 'retried after the delay');
    calls[2]!.reject(new Error('still down'));
    await tick();
    clock.advance(60_000);
    const waiting = cache.get('', fetch);
    assert.ok(waiting instanceof Promise, 'an expired token is never used');
    calls[3]!.resolve({ value: 'fresh', expiresAtMs: clock.epochMs() + HOUR });
    assert.equal(await waiting, 'fresh');
  });

  it('logs failed background refreshes, at most once a minute, without the cause reaching a request', async () => {
    const clock = fakeClock();
    const lines: string[] = [];
    const saved = credentialLog.warn;
    credentialLog.warn = (line) => lines.push(line);
    try {
      const cache = new TokenCache({ kind: 'test_log', clock });
      let fail = false;
      const fetch = async () => {
        if (fail) throw new Error('token endpoint answered 503');
        return { value: 'kept', expiresAtMs: clock.epochMs() + HOUR };
      };
      await cache.get('', fetch);
      fail = true;
      clock.advance(HOUR - REFRESH_MARGIN_MS);
      for (let i = 0; i < 5; i++) {
        assert.equal(cache.get('', fetch), 'kept');
        await tick();
        clock.advance(REFRESH_RETRY_MS);
      }
      assert.equal(lines.length, 1, 'one line for the first minute');
      assert.match(lines[0]!, /backend credentials \(test_log\): a refresh before expiry failed; .*503/);
      clock.advance(REFRESH_FAILURE_LOG_MS);
      cache.get('', fetch);
      await tick();
      assert.equal(lines.length, 2);
      assert.match(lines[1]!, /\(and 4 more since the last line\)$/);
    } finally {
      credentialLog.warn = saved;
    }
  });

  it('keeps at most maxEntries tokens, dropping the least recently used, and none with maxEntries 0', async () => {
    const clock = fakeClock();
    const cache = new TokenCache({ kind: 'test_bounds', clock, maxEntries: 2 });
    let fetches = 0;
    const fetch = async () => ({ value: `t${++fetches}`, expiresAtMs: clock.epochMs() + HOUR });
    await cache.get('a', fetch);
    await cache.get('b', fetch);
    assert.equal(cache.get('a', fetch), 't1', 'a is used again: b is now the oldest');
    await cache.get('c', fetch);
    assert.equal(cache.size, 2);
    assert.equal(cache.get('a', fetch), 't1');
    assert.ok(cache.get('b', fetch) instanceof Promise, 'b was dropped');

    const none = new TokenCache({ kind: 'test_bounds', clock, maxEntries: 0 });
    await none.get('a', fetch);
    assert.ok(none.get('a', fetch) instanceof Promise, 'maxEntries 0: every request fetches');
    assert.equal(none.size, 0);
  });

  it('keys client secrets by a digest of bounded size that keeps them apart', () => {
    const long = 'x'.repeat(100_000);
    assert.equal(secretKey(long).length, 43);
    assert.ok(!secretKey('subject').includes('subject'));
    assert.notEqual(secretKey('ab', 'c'), secretKey('a', 'bc'));
    assert.notEqual(secretKey('a\0b'), secretKey('a', 'b'));
    assert.notEqual(secretKey('1:a'), secretKey('a'));
  });
});
