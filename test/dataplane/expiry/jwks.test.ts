// Time and remote JWT key sets, on a clock the test moves (its timers mocked with it): a set is
// fetched again exactly every cacheDuration, so a key the identity provider withdrew stops
// verifying tokens then and not before; a failing endpoint is retried after 1, 2, 4... s, never
// sooner; a token naming an unknown key fetches the set again only once the interval has passed.
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it, mock } from 'node:test';
import type { JWTAuthentication } from '../../../src/api/types/inbound-auth.ts';
import { RemoteJwks, UNKNOWN_KEY_REFETCH_INTERVAL_MS } from '../../../src/dataplane/policies/auth/jwks.ts';
import { PolicyRuntime } from '../../../src/dataplane/policies/runtime.ts';
import { type FakeClock, fakeClock } from '../../helpers/fake-clock.ts';
import { runStep } from '../../helpers/policy-step.ts';
import {
  compileRemoteJwt,
  ISSUER,
  type JwksServer,
  type SigningKey,
  signingKey,
  startJwksServer,
  token,
} from '../policies/jwt-fixtures.ts';

const MINUTE = 60_000;

let k1: SigningKey;
let k2: SigningKey;
let server: JwksServer;
before(async () => {
  k1 = await signingKey('k1');
  k2 = await signingKey('k2');
  server = await startJwksServer([k1.publicJwk]);
});
after(async () => {
  await server.close();
});

describe('remote key sets over time', () => {
  let clock: FakeClock;
  const closing: { close(): void }[] = [];

  beforeEach(() => {
    server.keys = [k1.publicJwk];
    clock = fakeClock();
    // The refresh and retry timers run on the same clock.
    mock.timers.enable({ apis: ['setTimeout'] });
  });
  afterEach(() => {
    for (const item of closing.splice(0)) item.close();
    mock.timers.reset();
  });

  /** Moves the clock and fires the timers due by then. */
  const pass = (ms: number) => {
    clock.advance(ms);
    mock.timers.tick(ms);
  };

  /**
   * A cache on the clock whose unknown-key interval is forever: after its first fetch only its
   * timers fetch, and afterUnknownKey only joins a fetch in flight (fetchesBy).
   */
  const timerOnly = (refreshMs: number) => {
    const jwks = new RemoteJwks({
      url: server.url,
      refreshMs,
      now: clock.monotonicMs,
      unknownKeyIntervalMs: Number.POSITIVE_INFINITY,
    });
    closing.push(jwks);
    return jwks;
  };

  /** The fetches made so far, one a timer just started included (joined until it ends). */
  const fetchesBy = async (jwks: RemoteJwks) => {
    await jwks.afterUnknownKey();
    return server.fetches;
  };

  /** Resolves once `condition` holds, polling without timers (they are mocked); fails after 5 s. */
  const eventually = async (what: string, condition: () => boolean) => {
    const deadline = Date.now() + 5000;
    while (!condition()) {
      assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
      await new Promise((resolve) => setImmediate(resolve));
    }
  };

  it('stops accepting a withdrawn key exactly when cacheDuration has passed', async () => {
    const runtime = new PolicyRuntime({ clock });
    closing.push(runtime);
    const value: JWTAuthentication = {
      providers: [{ issuer: ISSUER, jwks: { remote: { url: server.url, cacheDuration: '5m' } } }],
    };
    const { policy, jwks } = await compileRemoteJwt(value, runtime);
    const seconds = Math.floor(clock.epochMs() / 1000);
    const jwt = await token(k1, { iat: seconds, exp: seconds + 3600 });
    const send = () => runStep(policy, { authorization: `Bearer ${jwt}` });
    assert.equal((await send()).answer, undefined);
    const fetches = server.fetches;
    // The provider withdraws k1.
    server.keys = [k2.publicJwk];
    pass(5 * MINUTE - 1);
    assert.equal(server.fetches, fetches, 'no fetch before cacheDuration');
    assert.equal((await send()).answer, undefined, 'the set fetched 5 minutes ago still holds k1');
    pass(1);
    await eventually('the fetch at cacheDuration', () => {
      const keySet = jwks.keySet();
      return !(keySet instanceof Promise) && keySet?.keyIds.has('k2') === true;
    });
    assert.equal(server.fetches, fetches + 1, 'fetched again at cacheDuration');
    const refused = await send();
    assert.equal(refused.answer?.status, 401, 'a token signed with the withdrawn key is refused');
    assert.equal(refused.record.error, 'jwt: signing key not found');
  });

  it('fetches again every cacheDuration, counted from the last fetch', async () => {
    const jwks = timerOnly(5 * MINUTE);
    await jwks.keySet();
    const fetches = server.fetches;
    for (let round = 1; round <= 3; round++) {
      pass(5 * MINUTE - 1);
      assert.equal(await fetchesBy(jwks), fetches + round - 1, `round ${round}: not before cacheDuration`);
      pass(1);
      assert.equal(await fetchesBy(jwks), fetches + round, `round ${round}: at cacheDuration`);
    }
  });

  it('retries a failing endpoint after 1, 2, 4... s up to 60 s, keeping the last good set', async () => {
    const jwks = timerOnly(5 * MINUTE);
    const good = await jwks.keySet();
    server.keys = undefined;
    pass(5 * MINUTE);
    let fetches = await fetchesBy(jwks);
    assert.match(jwks.lastError, /answered 503/);
    for (const delay of [1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000]) {
      pass(delay - 1);
      assert.equal(await fetchesBy(jwks), fetches, `no retry before ${delay} ms`);
      pass(1);
      fetches += 1;
      assert.equal(await fetchesBy(jwks), fetches, `a retry after ${delay} ms`);
      assert.equal(jwks.keySet(), good, 'the last good set stays in use');
    }
    server.keys = [k2.publicJwk];
    pass(60_000);
    fetches += 1;
    assert.equal(await fetchesBy(jwks), fetches);
    assert.equal(jwks.lastError, '');
    const recovered = jwks.keySet();
    assert.ok(!(recovered instanceof Promise) && recovered?.keyIds.has('k2'));
    pass(5 * MINUTE - 1);
    assert.equal(await fetchesBy(jwks), fetches, 'back to the refresh period: nothing before it');
    pass(1);
    assert.equal(await fetchesBy(jwks), fetches + 1, 'and a fetch at it');
  });

  it('fetches for an unknown key only once the interval since the last fetch has passed', async () => {
    const jwks = new RemoteJwks({ url: server.url, refreshMs: 60 * MINUTE, now: clock.monotonicMs });
    closing.push(jwks);
    const first = await jwks.keySet();
    server.keys = [k1.publicJwk, k2.publicJwk];
    const fetches = server.fetches;
    pass(UNKNOWN_KEY_REFETCH_INTERVAL_MS - 1);
    assert.equal(await jwks.afterUnknownKey(), first, 'too soon after the last fetch');
    assert.equal(server.fetches, fetches);
    pass(1);
    const rotated = await jwks.afterUnknownKey();
    assert.equal(server.fetches, fetches + 1);
    assert.deepEqual([...(rotated?.keyIds ?? [])], ['k1', 'k2']);
    assert.equal(await jwks.afterUnknownKey(), rotated, 'the interval starts again from that fetch');
    assert.equal(server.fetches, fetches + 1);
  });
});
