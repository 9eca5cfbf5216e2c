// Time and JWT authentication, on a clock the test moves: the verified-token cache serves a token
// only until its exp (plus the 60 s leeway) and the check refuses it from then on; a repeated
// token costs one verification, counted; nbf is read on the same clock.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { JWTAuthentication } from '../../../src/api/types/inbound-auth.ts';
import { PolicyRuntime } from '../../../src/dataplane/policies/runtime.ts';
import type { CompiledPolicy } from '../../../src/dataplane/policies/types.ts';
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

/** Seconds of leeway gw gives exp and nbf. */
const LEEWAY_S = 60;

let key: SigningKey;
let jwks: JwksServer;
before(async () => {
  key = await signingKey('k1');
  jwks = await startJwksServer([key.publicJwk]);
});
after(async () => {
  await jwks.close();
});

/** The JWT policy on a remote key set, on a runtime reading `clock`, counting its verifications. */
async function jwtPolicyOn(clock: FakeClock) {
  const runtime = new PolicyRuntime({ clock });
  const value: JWTAuthentication = { providers: [{ issuer: ISSUER, jwks: { remote: { url: jwks.url } } }] };
  return { runtime, ...(await compileRemoteJwt(value, runtime)) };
}

/** Epoch seconds on `clock`. */
const seconds = (clock: FakeClock) => Math.floor(clock.epochMs() / 1000);

const send = (policy: CompiledPolicy, jwt: string) => runStep(policy, { authorization: `Bearer ${jwt}` });

describe('JWT authentication over time', () => {
  const runtimes: PolicyRuntime[] = [];
  afterEach(() => {
    for (const runtime of runtimes.splice(0)) runtime.close();
  });

  it('verifies a repeated token once: the second and later requests are served from the cache', async () => {
    const clock = fakeClock();
    const { policy, runtime, verifications } = await jwtPolicyOn(clock);
    runtimes.push(runtime);
    const jwt = await token(key, { iat: seconds(clock), exp: seconds(clock) + 300 });
    for (let i = 0; i < 5; i++) {
      const { answer, record } = await send(policy, jwt);
      assert.equal(answer, undefined, `request ${i + 1} passes`);
      assert.equal(record.jwtClaims?.sub, 'user-1', 'claims come from the cache as from the check');
    }
    assert.equal(verifications(), 1);
  });

  it('refuses a cached token once exp + 60 s has come, and not a millisecond before', async () => {
    const clock = fakeClock();
    const { policy, runtime, verifications } = await jwtPolicyOn(clock);
    runtimes.push(runtime);
    const exp = seconds(clock) + 300;
    const jwt = await token(key, { iat: seconds(clock), exp });
    assert.equal((await send(policy, jwt)).answer, undefined);
    assert.equal(verifications(), 1);

    const lastValidMs = (exp + LEEWAY_S) * 1000 - 1;
    clock.advance(lastValidMs - clock.epochMs());
    assert.equal((await send(policy, jwt)).answer, undefined, 'within the leeway the cached token passes');
    assert.equal(verifications(), 1, 'still served from the cache');

    clock.advance(1);
    const expired = await send(policy, jwt);
    assert.equal(expired.answer?.status, 401, 'the cached token is refused once it has expired');
    assert.equal(
      expired.answer?.headers?.['www-authenticate'],
      'Bearer error="invalid_token", error_description="token expired"',
    );
    assert.equal(expired.record.error, 'jwt: token expired');
    assert.equal(verifications(), 2, 'the expired entry was not used: the token was checked again');
    assert.equal((await send(policy, jwt)).answer?.status, 401, 'and stays refused');
  });

  it('reads nbf on the same clock: a token is refused until nbf - 60 s, then accepted', async () => {
    const clock = fakeClock();
    const { policy, runtime } = await jwtPolicyOn(clock);
    runtimes.push(runtime);
    const nbf = seconds(clock) + 600;
    const jwt = await token(key, { iat: seconds(clock), nbf, exp: nbf + 300 });
    clock.advance((nbf - LEEWAY_S) * 1000 - 1 - clock.epochMs());
    const early = await send(policy, jwt);
    assert.equal(early.answer?.status, 401);
    assert.equal(early.record.error, 'jwt: token not yet valid');
    clock.advance(1);
    assert.equal((await send(policy, jwt)).answer, undefined);
  });
});
