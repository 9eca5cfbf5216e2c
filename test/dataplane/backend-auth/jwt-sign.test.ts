// Backend authentication jwtSign at the compile seam: every algorithm of the spec signs a token
// that jose verifies with the public key (alg, kid, claims, iat/nbf/exp from the clock), the key
// is parsed once, and a missing Secret, an unparsable or unsuitable key, or a signer's claim is an
// AuthConfigError naming the field without quoting the key.
import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { test } from 'node:test';
import { inspect } from 'node:util';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import type { BackendAuth, JwtSigningAlg } from '../../../src/api/types/backend-auth.ts';
import { AuthConfigError, compileBackendAuth } from '../../../src/dataplane/auth/backend/index.ts';
import { FAKE_EPOCH_START_MS, fakeClock } from '../../helpers/fake-clock.ts';
import { applied } from './helpers.ts';

function pair(kind: 'rsa' | 'ec', option: number | string): { pem: string; publicKey: KeyObject } {
  const { privateKey, publicKey } =
    kind === 'rsa'
      ? generateKeyPairSync('rsa', { modulusLength: option as number })
      : generateKeyPairSync('ec', { namedCurve: option as string });
  return { pem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), publicKey };
}

const rsa = pair('rsa', 2048);
const p256 = pair('ec', 'P-256');
const p384 = pair('ec', 'P-384');
const shortRsa = pair('rsa', 1024);
// The traditional PEM forms (PKCS#1, SEC1) are accepted too.
const rsaPkcs1 = generateKeyPairSync('rsa', { modulusLength: 2048 });

const SECRETS: Record<string, Record<string, string>> = {
  'Secret llm/rsa': { signingKey: `${rsa.pem}\n` },
  'Secret llm/p256': { signingKey: p256.pem },
  'Secret llm/p384': { signingKey: p384.pem },
  'Secret llm/short': { signingKey: shortRsa.pem },
  'Secret llm/pkcs1': { signingKey: rsaPkcs1.privateKey.export({ format: 'pem', type: 'pkcs1' }).toString() },
  'Secret llm/garbage': { signingKey: '-----BEGIN PRIVATE KEY-----\nc2VjcmV0LW1hdGVyaWFs\n-----END PRIVATE KEY-----' },
  'Secret llm/wrong-key': { Authorization: rsa.pem },
};
const data = (ref: string) => SECRETS[ref];

function compile(auth: BackendAuth, clock = fakeClock()) {
  return compileBackendAuth(auth, data, 'llm', { clock });
}

function token(auth: BackendAuth, clock = fakeClock()): string {
  const compiled = compile(auth, clock);
  if (compiled instanceof AuthConfigError) assert.fail(compiled.message);
  assert.equal(compiled.mode, 'jwtSign');
  const header = applied(compiled, { authorization: 'Bearer client-token' }).headers.authorization;
  assert.equal(typeof header, 'string');
  assert.match(header as string, /^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
  return (header as string).slice('Bearer '.length);
}

const NOW_S = FAKE_EPOCH_START_MS / 1000;

test('every algorithm of the spec signs a token jose verifies with the public key', async () => {
  const cases: [JwtSigningAlg, string, KeyObject][] = [
    ['RS256', 'rsa', rsa.publicKey],
    ['RS384', 'rsa', rsa.publicKey],
    ['RS512', 'rsa', rsa.publicKey],
    ['PS256', 'rsa', rsa.publicKey],
    ['ES256', 'p256', p256.publicKey],
    ['ES384', 'p384', p384.publicKey],
  ];
  for (const [alg, secret, publicKey] of cases) {
    const jwt = token({ jwtSign: { signingKeyRef: { name: secret }, alg, kid: `key-${alg}` } });
    const { payload, protectedHeader } = await jwtVerify(jwt, publicKey, {
      algorithms: [alg],
      currentDate: new Date(FAKE_EPOCH_START_MS),
    });
    assert.deepEqual(protectedHeader, { alg, typ: 'JWT', kid: `key-${alg}` }, alg);
    assert.deepEqual(payload, { iat: NOW_S, nbf: NOW_S, exp: NOW_S + 300 }, alg);
  }
});

test('alg defaults to RS256, kid is left out when unset, and a PKCS#1 key is accepted', async () => {
  const jwt = token({ jwtSign: { signingKeyRef: { name: 'rsa' } } });
  assert.deepEqual(decodeProtectedHeader(jwt), { alg: 'RS256', typ: 'JWT' });
  const pkcs1 = token({ jwtSign: { signingKeyRef: { name: 'pkcs1' } } });
  await jwtVerify(pkcs1, rsaPkcs1.publicKey, { algorithms: ['RS256'], currentDate: new Date(FAKE_EPOCH_START_MS) });
});

test('claims are added to the payload, and iat, nbf and exp follow the clock with exp = iat + ttl', async () => {
  const clock = fakeClock();
  const compiled = compile(
    {
      jwtSign: {
        signingKeyRef: { name: 'p256' },
        alg: 'ES256',
        ttl: '1m30s',
        claims: { iss: 'gw', sub: 'team-a', aud: ['svc'], tier: 3, nested: { on: true } },
      },
    },
    clock,
  );
  if (compiled instanceof AuthConfigError) assert.fail(compiled.message);
  const verify = async (at: number) => {
    const jwt = (applied(compiled).headers.authorization as string).slice('Bearer '.length);
    return (await jwtVerify(jwt, p256.publicKey, { currentDate: new Date(at), issuer: 'gw', audience: 'svc' })).payload;
  };
  assert.deepEqual(await verify(FAKE_EPOCH_START_MS), {
    iss: 'gw',
    sub: 'team-a',
    aud: ['svc'],
    tier: 3,
    nested: { on: true },
    iat: NOW_S,
    nbf: NOW_S,
    exp: NOW_S + 90,
  });
  // A token signed later carries the later time: signed per request, not once.
  clock.advance(10_500);
  const later = await verify(FAKE_EPOCH_START_MS + 10_500);
  assert.equal(later.iat, NOW_S + 10);
  assert.equal(later.exp, NOW_S + 100);
  // And it expires at its bound.
  const jwt = (applied(compiled).headers.authorization as string).slice('Bearer '.length);
  await assert.rejects(
    jwtVerify(jwt, p256.publicKey, { currentDate: new Date(FAKE_EPOCH_START_MS + 10_500 + 90_000) }),
    /"exp" claim timestamp check failed/,
  );
});

test("the token replaces the client's credentials and goes where location says", () => {
  const jwtSign = { signingKeyRef: { name: 'rsa' } };
  const viaAuth = compile({ jwtSign, location: { header: { name: 'X-Service-Token' } } });
  if (viaAuth instanceof AuthConfigError) assert.fail(viaAuth.message);
  const headers = applied(viaAuth, { authorization: 'Bearer client', 'x-api-key': 'client' }).headers;
  assert.equal(headers.authorization, undefined);
  assert.equal(headers['x-api-key'], undefined);
  assert.match(headers['x-service-token'] as string, /^[\w-]+\.[\w-]+\.[\w-]+$/);
  const viaOwn = compile({ jwtSign: { ...jwtSign, location: { queryParameter: { name: 'token' } } } });
  if (viaOwn instanceof AuthConfigError) assert.fail(viaOwn.message);
  assert.equal(viaOwn.writesQuery, true);
  assert.match(applied(viaOwn).query.get('token') ?? '', /^[\w-]+\.[\w-]+\.[\w-]+$/);
  const both = compile({
    jwtSign: { ...jwtSign, location: { header: { name: 'a' } } },
    location: { header: { name: 'b' } },
  });
  assert.ok(both instanceof AuthConfigError);
  assert.equal(both.field, 'jwtSign.location');
});

test('configurations that cannot sign are refused, naming the field and never quoting the key', () => {
  const refusals: [BackendAuth, string, RegExp][] = [
    [
      { jwtSign: { signingKeyRef: { name: 'absent' } } },
      'jwtSign.signingKeyRef.name',
      /Secret llm\/absent was not found/,
    ],
    [{ jwtSign: { signingKeyRef: { name: 'wrong-key' } } }, 'jwtSign.signingKeyRef.key', /has no key "signingKey"/],
    [
      { jwtSign: { signingKeyRef: { name: 'garbage' } } },
      'jwtSign.signingKeyRef',
      /is not an unencrypted PEM RSA or EC/,
    ],
    [
      { jwtSign: { signingKeyRef: { name: 'rsa' }, alg: 'ES256' } },
      'jwtSign.signingKeyRef',
      /rsa key; ES256 needs an EC key/,
    ],
    [
      { jwtSign: { signingKeyRef: { name: 'p256' }, alg: 'ES384' } },
      'jwtSign.signingKeyRef',
      /curve prime256v1; ES384/,
    ],
    [{ jwtSign: { signingKeyRef: { name: 'p256' } } }, 'jwtSign.signingKeyRef', /ec key; RS256 needs an RSA key/],
    [
      { jwtSign: { signingKeyRef: { name: 'short' } } },
      'jwtSign.signingKeyRef',
      /1024-bit RSA key; RS256 needs at least 2048/,
    ],
    [
      { jwtSign: { signingKeyRef: { name: 'rsa' }, claims: { sub: 'a', exp: 1 } } },
      'jwtSign.claims.exp',
      /set by the signer/,
    ],
    [{ jwtSign: { signingKeyRef: { name: 'rsa' }, ttl: '0s' } }, 'jwtSign.ttl', /at least 1s/],
    [{ jwtSign: { signingKeyRef: { name: 'rsa' } }, key: 'sk' }, 'jwtSign', /at most one of/],
  ];
  for (const [auth, field, message] of refusals) {
    const error = compile(auth);
    assert.ok(error instanceof AuthConfigError, `${field}: expected an AuthConfigError`);
    assert.equal(error.field, field);
    assert.match(error.message, message);
    assert.doesNotMatch(error.message, /BEGIN|c2VjcmV0|MII/);
  }
});

test('a compiled jwtSign shows no key when logged or serialised', () => {
  const compiled = compile({ jwtSign: { signingKeyRef: { name: 'rsa' } } });
  for (const shown of [inspect(compiled, { depth: 10, showHidden: true }), JSON.stringify(compiled)]) {
    assert.doesNotMatch(shown, /BEGIN|PRIVATE|MII/);
  }
});
