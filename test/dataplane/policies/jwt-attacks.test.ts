// JWT authentication through gw against forged, stale and malformed tokens, a flood of made-up
// key IDs, and the three modes. Keys are generated with jose; the key set is served by a small
// JWKS server that counts how often gw fetches it.
import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { type CryptoKey, exportSPKI, importJWK } from 'jose';
import { request } from 'undici';
import type { TestGateway } from '../../helpers/gateway.ts';
import type { RecordingUpstream } from '../../helpers/recording-upstream.ts';
import { until } from '../../helpers/until.ts';
import type { UpstreamGateway } from '../../helpers/upstream-gateway.ts';
import {
  AUDIENCE,
  ISSUER,
  type JwksServer,
  jwtPolicyYaml,
  type SigningKey,
  signingKey,
  startJwksServer,
  startJwtGateway,
  token,
} from './jwt-fixtures.ts';

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

/** A token with the given header and payload, "signed" with HMAC-SHA256 under `secret`. */
function hmacToken(header: object, payload: object, secret: string): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

const validClaims = () => ({ iss: ISSUER, aud: AUDIENCE, sub: 'user-1', exp: now() + 300 });

describe('JWT authentication against attacks', () => {
  let rsa: SigningKey;
  let ec: SigningKey;
  let attacker: SigningKey;
  let jwks: JwksServer;
  let g: UpstreamGateway;
  let upstream: RecordingUpstream;
  let gw: TestGateway;
  let base: string;
  const tokens: string[] = [];

  before(async () => {
    rsa = await signingKey('rsa-1', 'RS256');
    ec = await signingKey('ec-1', 'ES256');
    // Same kid as the real RSA key, but a key pair of the attacker's.
    attacker = await signingKey('rsa-1', 'RS256');
    jwks = await startJwksServer([rsa.publicJwk, ec.publicJwk]);
    const provider = `{issuer: '${ISSUER}', audiences: ['${AUDIENCE}', 'https://other.example'], jwks: {remote: {url: '${jwks.url}'}}}`;
    const inline = JSON.stringify(JSON.stringify({ keys: [rsa.publicJwk] }));
    g = await startJwtGateway(
      ['strict', 'optional', 'permissive', 'query'],
      jwtPolicyYaml('strict', 'strict', `{providers: [${provider}]}`) +
        jwtPolicyYaml(
          'optional',
          'optional',
          `{mode: Optional, providers: [{issuer: '${ISSUER}', jwks: {inline: ${inline}}}]}`,
        ) +
        jwtPolicyYaml('permissive', 'permissive', `{mode: Permissive, providers: [${provider}]}`) +
        jwtPolicyYaml('query', 'query', `{location: {queryParameter: {name: access_token}}, providers: [${provider}]}`),
    );
    ({ gw, upstream, base } = g);
  });

  after(async () => {
    await g?.stop();
    await jwks?.close();
  });

  /** GET `path` with `token` as a Bearer credential; the status, challenge, body and what reached the upstream. */
  async function send(path: string, bearer?: string) {
    if (bearer !== undefined) tokens.push(bearer);
    const before = upstream.seen.length;
    const response = await request(`${base}${path}`, {
      headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` },
    });
    const body = await response.body.text();
    if (response.statusCode === 500) assert.fail(`${body} ${gw.logs.join('\n')}`);
    return {
      status: response.statusCode,
      challenge: response.headers['www-authenticate'],
      body,
      upstream: upstream.seen.slice(before),
    };
  }

  /** The access log entry of the request to `path` (a unique path per request). */
  async function logOf(path: string): Promise<Record<string, unknown>> {
    assert.ok(await until(() => gw.accessLog.some((line) => line.includes(`"${path}"`)), 2000));
    return JSON.parse(gw.accessLog.find((line) => line.includes(`"${path}"`))!) as Record<string, unknown>;
  }

  async function assertRejected(bearer: string, reason: string) {
    const path = `/strict/${randomUUID()}`;
    const result = await send(path, bearer);
    assert.equal(result.status, 401, result.body);
    assert.equal(result.challenge, `Bearer error="invalid_token", error_description="${reason}"`);
    assert.equal(result.body, `invalid JWT: ${reason}\n`);
    assert.equal(result.upstream.length, 0, 'nothing reaches the upstream');
    const entry = await logOf(path);
    assert.equal(entry['http.response.status_code'], 401);
    assert.equal(entry['jwt.sub'], undefined);
    assert.match(String(entry.error), /^jwt: /);
  }

  it('accepts RSA- and EC-signed tokens from the key set, claims logged, token not forwarded', async () => {
    for (const key of [rsa, ec]) {
      const path = `/strict/${randomUUID()}`;
      const result = await send(path, await token(key, { sub: `user-${key.kid}` }));
      assert.equal(result.status, 200, result.body);
      assert.equal(result.upstream[0]!.headers.authorization, undefined);
      assert.equal((await logOf(path))['jwt.sub'], `user-${key.kid}`);
    }
    // Any one of the audiences is enough, in a list of audiences too.
    const listed = await send(
      '/strict/a',
      await token(rsa, { aud: ['https://unrelated.example', 'https://other.example'] }),
    );
    assert.equal(listed.status, 200);
  });

  it('answers a missing token with a bare Bearer challenge', async () => {
    const result = await send('/strict/none');
    assert.equal(result.status, 401);
    assert.equal(result.challenge, 'Bearer');
    assert.equal(result.upstream.length, 0);
    const basic = await request(`${base}/strict/basic`, { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    assert.equal(basic.statusCode, 401);
    assert.equal(basic.headers['www-authenticate'], 'Bearer');
    await basic.body.text();
  });

  it('rejects alg none, with or without a signature', async () => {
    const header = { alg: 'none', kid: rsa.kid };
    await assertRejected(`${b64(header)}.${b64(validClaims())}.`, 'malformed token');
    await assertRejected(`${b64(header)}.${b64(validClaims())}.c2lnbmF0dXJl`, 'algorithm not accepted');
    await assertRejected(`${b64({ alg: 'NONE' })}.${b64(validClaims())}.c2ln`, 'algorithm not accepted');
  });

  it('rejects HS256 tokens keyed with the RSA public key (algorithm confusion)', async () => {
    const publicKey = await importJWK(rsa.publicJwk, 'RS256', { extractable: true });
    const pem = await exportSPKI(publicKey as CryptoKey);
    for (const secret of [pem, pem.trim(), JSON.stringify(rsa.publicJwk), String(rsa.publicJwk.n)]) {
      await assertRejected(hmacToken({ alg: 'HS256', kid: rsa.kid }, validClaims(), secret), 'algorithm not accepted');
      await assertRejected(hmacToken({ alg: 'HS256' }, validClaims(), secret), 'algorithm not accepted');
    }
  });

  it('rejects a token signed by another key under a known kid', async () => {
    await assertRejected(await token(attacker), 'invalid signature');
    // A valid token's signature on other claims.
    const [header, , signature] = (await token(rsa)).split('.');
    await assertRejected(`${header}.${b64({ ...validClaims(), sub: 'admin' })}.${signature}`, 'invalid signature');
  });

  it('rejects wrong issuers and audiences', async () => {
    await assertRejected(await token(rsa, { iss: 'https://evil.example' }), 'issuer not accepted');
    await assertRejected(await token(rsa, { iss: undefined }), 'issuer not accepted');
    await assertRejected(await token(rsa, { iss: `${ISSUER}/` }), 'issuer not accepted');
    await assertRejected(await token(rsa, { aud: 'https://evil.example' }), 'audience not accepted');
    await assertRejected(await token(rsa, { aud: ['https://evil.example'] }), 'audience not accepted');
    await assertRejected(await token(rsa, { aud: undefined }), 'audience not accepted');
  });

  it('rejects expired, not yet valid and exp-less tokens, with 60 s of clock skew', async () => {
    await assertRejected(await token(rsa, { exp: now() - 3600 }), 'token expired');
    await assertRejected(await token(rsa, { exp: now() - 120 }), 'token expired');
    await assertRejected(await token(rsa, { nbf: now() + 3600 }), 'token not yet valid');
    await assertRejected(await token(rsa, { exp: undefined }), 'claim exp missing');
    assert.equal((await send('/strict/skew', await token(rsa, { exp: now() - 20, nbf: now() + 20 }))).status, 200);
  });

  it('rejects unknown key IDs, and a flood of them fetches the key set a bounded number of times', async () => {
    const fetchesBefore = jwks.fetches;
    assert.equal(fetchesBefore, 1, 'fetched once when the policy was compiled');
    await assertRejected(await token(attacker, {}, 'no-such-key'), 'signing key not found');
    const flood = await Promise.all(
      Array.from({ length: 300 }, async () => send('/strict/flood', await token(attacker, {}, randomUUID()))),
    );
    for (const result of flood) {
      assert.equal(result.status, 401);
      assert.equal(result.upstream.length, 0);
    }
    assert.ok(jwks.fetches - fetchesBefore <= 1, `${jwks.fetches - fetchesBefore} fetches for 301 unknown kids`);
    // A kid-less token is checked against the keys that fit its algorithm.
    assert.equal((await send('/strict/no-kid', await token(rsa, {}, null))).status, 200);
  });

  it('rejects malformed tokens', async () => {
    const valid = await token(rsa);
    const [header, payload, signature] = valid.split('.');
    const malformed = [
      'not-a-jwt',
      'a.b',
      'a.b.c',
      `${header}.${payload}`,
      `${header}.${payload}.${signature}.extra`,
      `${header}.${payload}.${signature}.a.b`,
      `${header}..${signature}`,
      `.${payload}.${signature}`,
      `${b64('not an object')}.${payload}.${signature}`,
      `${header}.${b64([1, 2])}.${signature}`,
      `${header}.${Buffer.from('{"iss":').toString('base64url')}.${signature}`,
      `${header}.${payload}.${signature}=`,
      `${header}.${payload}.sig+nature/`,
      `${header} .${payload}.${signature}`,
    ];
    for (const bad of malformed) {
      const path = `/strict/${randomUUID()}`;
      const result = await send(path, bad);
      assert.equal(result.status, 401, bad);
      assert.match(String(result.challenge), /^Bearer error="invalid_token"/);
      assert.equal(result.upstream.length, 0);
    }
  });

  it('accepts a large token below the 16 KiB limit', async () => {
    const result = await send('/strict/large', await token(rsa, { groups: 'g'.repeat(10 * 1024) }));
    assert.equal(result.status, 200);
  });

  it('Optional: no token passes, a bad one is refused, a good one sets the claims', async () => {
    const none = await send('/optional/none');
    assert.equal(none.status, 200);
    const bad = await send('/optional/bad', await token(rsa, { exp: now() - 3600 }));
    assert.equal(bad.status, 401);
    assert.equal(bad.challenge, 'Bearer error="invalid_token", error_description="token expired"');
    const path = `/optional/${randomUUID()}`;
    const good = await send(path, await token(rsa));
    assert.equal(good.status, 200);
    assert.equal(good.upstream[0]!.headers.authorization, undefined);
    assert.equal((await logOf(path))['jwt.sub'], 'user-1');
  });

  it('Permissive: never refuses; claims only from a valid token, which alone is removed', async () => {
    const none = await send('/permissive/none');
    assert.equal(none.status, 200);
    const badPath = `/permissive/${randomUUID()}`;
    const badToken = await token(attacker);
    const bad = await send(badPath, badToken);
    assert.equal(bad.status, 200);
    assert.equal(bad.upstream[0]!.headers.authorization, `Bearer ${badToken}`, 'an unverified token is left as sent');
    assert.equal((await logOf(badPath))['jwt.sub'], undefined);
    const goodPath = `/permissive/${randomUUID()}`;
    const good = await send(goodPath, await token(rsa, { sub: 'permitted' }));
    assert.equal(good.status, 200);
    assert.equal(good.upstream[0]!.headers.authorization, undefined);
    assert.equal((await logOf(goodPath))['jwt.sub'], 'permitted');
  });

  it('reads the token from the configured query parameter and removes it upstream', async () => {
    const valid = await token(rsa);
    tokens.push(valid);
    const response = await request(`${base}/query/x?a=1&access_token=${valid}&b=2`);
    assert.equal(response.statusCode, 200);
    await response.body.text();
    assert.equal(upstream.seen.at(-1)!.url, '/query/x?a=1&b=2');
    const header = await send('/query/header', valid);
    assert.equal(header.status, 401, 'the Authorization header is not where this policy looks');
    assert.equal(header.challenge, 'Bearer');
  });

  it('never writes a token to the access log or the gateway log', () => {
    assert.ok(tokens.length > 300);
    const lines = [...gw.accessLog, ...gw.logs];
    for (const sent of tokens) {
      const signature = sent.split('.')[2];
      if (!signature || signature.length < 16) continue;
      for (const line of lines) assert.ok(!line.includes(signature), line);
    }
  });
});
