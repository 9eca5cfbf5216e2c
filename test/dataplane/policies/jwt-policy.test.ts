// The JWT authentication policy compiled on its own: configuration problems, the token size
// limit, remote key sets named by a backendRef, and key set caches shared through the runtime.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { JWTAuthentication } from '../../../src/api/types/inbound-auth.ts';
import { compileJwtAuthentication, MAX_TOKEN_LENGTH } from '../../../src/dataplane/policies/auth/jwt.ts';
import { PolicyRuntime } from '../../../src/dataplane/policies/runtime.ts';
import { type CompiledPolicy, isProblem, type PolicyProblem } from '../../../src/dataplane/policies/types.ts';
import { compileContext } from '../../helpers/policy-context.ts';
import { runStep } from '../../helpers/policy-step.ts';
import {
  AUDIENCE,
  compileRemoteJwt,
  ISSUER,
  type JwksServer,
  type SigningKey,
  signingKey,
  startJwksServer,
  token,
} from './jwt-fixtures.ts';

function compiled(value: JWTAuthentication, ctx = compileContext()): CompiledPolicy {
  const result = compileJwtAuthentication(value, ctx);
  if (isProblem(result)) assert.fail(`${result.field}: ${result.message}`);
  return result;
}

function problem(value: JWTAuthentication, ctx = compileContext()): PolicyProblem {
  const result = compileJwtAuthentication(value, ctx);
  assert.ok(isProblem(result), 'a problem is reported');
  return result;
}

describe('compileJwtAuthentication', () => {
  let key: SigningKey;
  let jwks: JwksServer;
  const inline = () => JSON.stringify({ keys: [key.publicJwk] });

  before(async () => {
    key = await signingKey('k1');
    jwks = await startJwksServer([]);
    jwks.keys = [key.publicJwk];
  });
  after(async () => {
    await jwks.close();
  });

  it('names the field of an inline key set that cannot be used, without echoing key material', () => {
    const notJson = problem({ providers: [{ issuer: ISSUER, jwks: { inline: '{"keys": [' } }] });
    assert.equal(notJson.field, 'traffic.jwtAuthentication.providers[0].jwks.inline');
    assert.equal(notJson.message, 'the key set is not JSON');
    const secret = 'c2VjcmV0LXByaXZhdGUtcGFydA';
    const leaked = problem({
      providers: [
        { issuer: ISSUER, jwks: { inline: inline() } },
        { issuer: 'https://b.example', jwks: { inline: JSON.stringify({ keys: [{ ...key.publicJwk, d: secret }] }) } },
      ],
    });
    assert.equal(leaked.field, 'traffic.jwtAuthentication.providers[1].jwks.inline');
    assert.match(leaked.message, /private key/);
    assert.ok(!leaked.message.includes(secret));
    const symmetric = problem({
      providers: [{ issuer: ISSUER, jwks: { inline: JSON.stringify({ keys: [{ kty: 'oct', k: secret }] }) } }],
    });
    assert.match(symmetric.message, /symmetric key/);
  });

  it('names an unusable remote endpoint or location', () => {
    const missing = problem({
      providers: [{ issuer: ISSUER, jwks: { remote: { backendRef: { name: 'idp', port: 80 }, jwksPath: '/jwks' } } }],
    });
    assert.equal(missing.field, 'traffic.jwtAuthentication.providers[0].jwks.remote.backendRef');
    assert.match(missing.message, /Service default\/idp is not available/);
    const badUrl = problem({ providers: [{ issuer: ISSUER, jwks: { remote: { url: 'ftp://idp.example/jwks' } } }] });
    assert.equal(badUrl.field, 'traffic.jwtAuthentication.providers[0].jwks.remote.url');
    const badExpression = problem({
      location: { expression: 'request.headers[' },
      providers: [{ issuer: ISSUER, jwks: { inline: inline() } }],
    });
    assert.equal(badExpression.field, 'traffic.jwtAuthentication.location.expression');
  });

  it('refuses tokens over the length limit before decoding them', async () => {
    const policy = compiled({ providers: [{ issuer: ISSUER, jwks: { inline: inline() } }] });
    // A validly signed token padded to about `target` characters.
    const padded = async (target: number) => {
      let filler = 0;
      let candidate = await token(key);
      for (let round = 0; round < 5 && Math.abs(candidate.length - target) > 8; round++) {
        filler += Math.floor(((target - candidate.length) * 3) / 4);
        candidate = await token(key, { pad: 'x'.repeat(filler) });
      }
      return candidate;
    };
    const under = await padded(MAX_TOKEN_LENGTH - 40);
    assert.ok(under.length <= MAX_TOKEN_LENGTH);
    assert.equal((await runStep(policy, { authorization: `Bearer ${under}` })).answer, undefined);
    const over = await padded(MAX_TOKEN_LENGTH + 40);
    assert.ok(over.length > MAX_TOKEN_LENGTH);
    const { answer, record } = await runStep(policy, { authorization: `Bearer ${over}` });
    assert.equal(answer?.status, 401);
    assert.equal(answer?.body, 'invalid JWT: token too large');
    assert.equal(record.jwtClaims, undefined);
    const huge = `${'A'.repeat(4 * 1024 * 1024)}.${'B'.repeat(16)}.${'C'.repeat(16)}`;
    assert.equal(
      (await runStep(policy, { authorization: `Bearer ${huge}` })).answer?.body,
      'invalid JWT: token too large',
    );
  });

  it('verifies against every provider of an issuer, the first that accepts wins', async () => {
    const other = await signingKey('other');
    const policy = compiled({
      providers: [
        { issuer: ISSUER, audiences: ['https://first.example'], jwks: { inline: inline() } },
        { issuer: ISSUER, audiences: [AUDIENCE], jwks: { inline: JSON.stringify({ keys: [other.publicJwk] }) } },
      ],
    });
    const viaSecond = await runStep(policy, { authorization: `Bearer ${await token(other)}` });
    assert.equal(viaSecond.answer, undefined);
    assert.equal(viaSecond.record.jwtClaims?.aud, AUDIENCE);
    assert.equal(viaSecond.forwarded.authorization, undefined);
    const rejected = await runStep(policy, { authorization: `Bearer ${await token(key)}` });
    assert.equal(rejected.answer?.status, 401, 'the key fits the first provider, the audience only the second');
  });

  it('needs a kid when several keys of the set fit the token', async () => {
    const second = await signingKey('k2');
    const policy = compiled({
      providers: [{ issuer: ISSUER, jwks: { inline: JSON.stringify({ keys: [key.publicJwk, second.publicJwk] }) } }],
    });
    const kidless = await runStep(policy, { authorization: `Bearer ${await token(second, {}, null)}` });
    assert.equal(kidless.answer?.body, 'invalid JWT: key id required');
    assert.equal((await runStep(policy, { authorization: `Bearer ${await token(second)}` })).answer, undefined);
  });

  it('fetches a key set named by a backendRef at its jwksPath, one cache per URL in the runtime', async () => {
    const port = Number(new URL(jwks.url).port);
    const runtime = new PolicyRuntime();
    const backends = {
      'GwBackend default/idp': { kind: 'GwBackend' as const, spec: { static: { host: '127.0.0.1', port } } },
    };
    const value: JWTAuthentication = {
      providers: [
        { issuer: ISSUER, jwks: { remote: { backendRef: { kind: 'GwBackend', name: 'idp' }, jwksPath: 'jwks' } } },
      ],
    };
    const before = jwks.fetches;
    runtime.beginCompile();
    const first = compiled(value, compileContext({ runtime, backends }));
    const second = compiled(value, compileContext({ runtime, backends }));
    const used = runtime.endCompile();
    assert.deepEqual([...used], [`jwks http://127.0.0.1:${port}/jwks every 300000ms`]);
    for (const policy of [first, second]) {
      const { answer, record } = await runStep(policy, { authorization: `Bearer ${await token(key)}` });
      assert.equal(answer, undefined);
      assert.equal(record.jwtClaims?.sub, 'user-1');
    }
    assert.equal(jwks.fetches - before, 1, 'both policies share one cache');
    runtime.retainOnly(new Set());
    runtime.beginCompile();
    compiled(value, compileContext({ runtime, backends }));
    runtime.endCompile();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(jwks.fetches - before, 2, 'a dropped cache is fetched anew');
    runtime.close();
  });
});

describe('verified tokens are remembered', () => {
  it('checks a repeated token once, and again after the key set was refreshed', async () => {
    const first = await signingKey('first');
    const second = await signingKey('second');
    const jwks = await startJwksServer([first.publicJwk]);
    const runtime = new PolicyRuntime();
    try {
      const { policy, verifications } = await compileRemoteJwt(
        { providers: [{ issuer: ISSUER, jwks: { remote: { url: jwks.url, cacheDuration: '1s' } } }] },
        runtime,
      );
      const old = await token(first, { sub: 'a' });
      assert.equal((await runStep(policy, { authorization: `Bearer ${old}` })).answer, undefined);
      const again = await runStep(policy, { authorization: `Bearer ${old}` });
      assert.equal(again.answer, undefined, 'a remembered token passes');
      assert.equal(again.record.jwtClaims?.sub, 'a');
      assert.equal(verifications(), 1, 'the second request was not verified again');
      // The provider rotates: only the second key is published; the set is refreshed after 1 s.
      jwks.keys = [second.publicJwk];
      const fetched = jwks.fetches;
      const deadline = Date.now() + 5000;
      while (jwks.fetches === fetched && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 100));
      const stale = await runStep(policy, { authorization: `Bearer ${old}` });
      assert.equal(stale.answer?.status, 401, 'the remembered token is checked again against the new set');
      const fresh = await token(second, { sub: 'b' });
      assert.equal((await runStep(policy, { authorization: `Bearer ${fresh}` })).answer, undefined);
    } finally {
      runtime.close();
      await jwks.close();
    }
  });
});
