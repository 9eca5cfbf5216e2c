// Key sets for JWT authentication: parsing, and the remote set's cache — single flight, the
// unknown-key interval, periodic refresh, retries with backoff, bounded bodies and timeouts —
// and, through gw, a key set endpoint that is down when the gateway starts.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { after, afterEach, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import {
  type KeySet,
  parseKeySet,
  RemoteJwks,
  type RemoteJwksOptions,
} from '../../../src/dataplane/policies/auth/jwks.ts';
import { closeServer, listen } from '../../helpers/http-server.ts';
import { until } from '../../helpers/until.ts';
import {
  ISSUER,
  type JwksServer,
  jwtPolicyYaml,
  type SigningKey,
  signingKey,
  startJwksServer,
  startJwtGateway,
  token,
} from './jwt-fixtures.ts';

let k1: SigningKey;
let k2: SigningKey;
before(async () => {
  k1 = await signingKey('k1', 'RS256');
  k2 = await signingKey('k2', 'ES256');
});

/** The set a cache holds now (undefined while none is loaded). */
function loaded(jwks: RemoteJwks): KeySet | undefined {
  const value = jwks.keySet();
  return value instanceof Promise ? undefined : value;
}

describe('parseKeySet', () => {
  it('keeps public signing keys and their IDs', () => {
    const parsed = parseKeySet(JSON.stringify({ keys: [k1.publicJwk, k2.publicJwk] }));
    assert.ok(typeof parsed !== 'string', String(parsed));
    assert.deepEqual([...parsed.keyIds], ['k1', 'k2']);
  });

  it('skips encryption keys and key types it does not verify with', () => {
    const encryption = { ...k1.publicJwk, kid: 'enc', use: 'enc' };
    const other = { kty: 'AKP', kid: 'pq', alg: 'ML-DSA-44', pub: 'AAAA' };
    const parsed = parseKeySet(JSON.stringify({ keys: [encryption, other, k2.publicJwk] }));
    assert.ok(typeof parsed !== 'string', String(parsed));
    assert.deepEqual([...parsed.keyIds], ['k2']);
  });

  it('refuses documents that are not key sets, symmetric keys and private keys', () => {
    assert.equal(parseKeySet('{'), 'is not JSON');
    assert.match(String(parseKeySet('{"keys": {}}')), /"keys" array/);
    assert.match(String(parseKeySet('null')), /"keys" array/);
    assert.match(String(parseKeySet('{"keys": [1]}')), /key 0 is not an object/);
    assert.match(String(parseKeySet('{"keys": []}')), /no public RSA, EC or OKP signing key/);
    assert.match(String(parseKeySet('{"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}')), /symmetric key/);
    const privateJwk = { ...k1.publicJwk, d: 'AAAA' };
    assert.match(String(parseKeySet(JSON.stringify({ keys: [privateJwk] }))), /key 0 is a private key/);
  });
});

describe('RemoteJwks', () => {
  let server: JwksServer;
  const caches: RemoteJwks[] = [];

  const cache = (options: Partial<RemoteJwksOptions> = {}) => {
    const created = new RemoteJwks({ url: server.url, refreshMs: 60_000, ...options });
    caches.push(created);
    return created;
  };

  before(async () => {
    server = await startJwksServer([k1.publicJwk]);
  });
  afterEach(() => {
    for (const created of caches) created.close();
    caches.length = 0;
  });
  after(async () => {
    await server.close();
  });

  it('fetches on start; the first callers wait for that one fetch', async () => {
    server.keys = [k1.publicJwk];
    const before = server.fetches;
    const jwks = cache();
    jwks.start();
    jwks.start();
    const waiting = await Promise.all([jwks.keySet(), jwks.keySet(), jwks.keySet()]);
    assert.deepEqual([...waiting[0]!.keyIds], ['k1']);
    assert.equal(waiting[1], waiting[0]);
    assert.equal(jwks.keySet(), waiting[0], 'once loaded, the set is returned at once');
    assert.equal(server.fetches - before, 1);
  });

  it('fetches again for an unknown key only once the interval has passed, and picks up rotated keys', async () => {
    server.keys = [k1.publicJwk];
    const before = server.fetches;
    const jwks = cache({ unknownKeyIntervalMs: 200 });
    const first = await jwks.keySet();
    server.keys = [k1.publicJwk, k2.publicJwk];
    assert.equal(await jwks.afterUnknownKey(), first, 'too soon after the last fetch');
    assert.equal(server.fetches - before, 1);
    await sleep(220);
    const rotated = await jwks.afterUnknownKey();
    assert.deepEqual([...rotated!.keyIds], ['k1', 'k2']);
    assert.equal(server.fetches - before, 2);
  });

  it('joins one fetch for a flood of unknown keys', async () => {
    server.keys = [k1.publicJwk];
    const jwks = cache({ unknownKeyIntervalMs: 100 });
    await jwks.keySet();
    await sleep(120);
    const before = server.fetches;
    const results = await Promise.all(Array.from({ length: 500 }, () => jwks.afterUnknownKey()));
    assert.equal(server.fetches - before, 1);
    assert.ok(results.every((result) => result === results[0]));
    await Promise.all(Array.from({ length: 500 }, () => jwks.afterUnknownKey()));
    assert.equal(server.fetches - before, 1, 'inside the interval nothing is fetched');
  });

  it('refreshes every refresh period', async () => {
    server.keys = [k1.publicJwk];
    const jwks = cache({ refreshMs: 100 });
    await jwks.keySet();
    const before = server.fetches;
    server.keys = [k2.publicJwk];
    assert.ok(await until(() => loaded(jwks)?.keyIds.has('k2') === true, 1000));
    await sleep(350);
    const refreshes = server.fetches - before;
    assert.ok(refreshes >= 3 && refreshes <= 6, `${refreshes} refreshes in about 450 ms`);
  });

  it('keeps the last good set while refreshes fail, and retries with backoff', async () => {
    server.keys = [k1.publicJwk];
    const jwks = cache({ refreshMs: 200, retryBaseMs: 40, retryMaxMs: 160 });
    const good = await jwks.keySet();
    server.keys = undefined;
    const before = server.fetches;
    await sleep(800);
    // The refresh at 200 ms, then retries after 40, 80, 160, 160... ms: about six fetches, no storm.
    const attempts = server.fetches - before;
    assert.ok(attempts >= 3 && attempts <= 8, `${attempts} attempts in 800 ms`);
    assert.equal(jwks.keySet(), good);
    assert.match(jwks.lastError, /answered 503/);
    assert.equal(await jwks.afterUnknownKey(), good, 'unknown keys do not add fetches while the endpoint fails');
    server.keys = [k2.publicJwk];
    assert.ok(await until(() => jwks.lastError === '', 1000));
    assert.deepEqual([...loaded(jwks)!.keyIds], ['k2']);
  });

  it('has no set while the endpoint fails from the start, without fetching per caller', async () => {
    server.keys = undefined;
    const before = server.fetches;
    const jwks = cache({ retryBaseMs: 10_000 });
    assert.equal(await jwks.keySet(), undefined);
    assert.equal(jwks.keySet(), undefined, 'no fetch in flight: answered at once');
    assert.equal(await jwks.afterUnknownKey(), undefined);
    assert.equal(server.fetches - before, 1);
    server.keys = [k1.publicJwk];
  });

  it('refuses large documents, slow endpoints and documents that are not key sets', async () => {
    let answer: (res: import('node:http').ServerResponse) => void = () => undefined;
    const odd = createServer((_req, res) => answer(res));
    const port = await listen(odd);
    const url = `http://127.0.0.1:${port}/jwks`;
    try {
      const big = JSON.stringify({ keys: [k1.publicJwk], padding: 'x'.repeat(5000) });
      for (const declared of [true, false]) {
        answer = (res) => {
          if (declared) res.setHeader('content-length', Buffer.byteLength(big));
          res.end(big);
        };
        const jwks = cache({ url, maxBytes: 4096, retryBaseMs: 10_000 });
        assert.equal(await jwks.keySet(), undefined);
        assert.match(jwks.lastError, /larger than 4096 bytes/);
      }
      answer = () => undefined;
      const slow = cache({ url, timeoutMs: 100, retryBaseMs: 10_000 });
      const started = Date.now();
      assert.equal(await slow.keySet(), undefined);
      assert.ok(Date.now() - started < 2000);
      assert.match(slow.lastError, /abort|timeout/i);
      answer = (res) => res.end(JSON.stringify({ keys: [{ ...k1.publicJwk, d: 'AAAA' }] }));
      const leaky = cache({ url, retryBaseMs: 10_000 });
      assert.equal(await leaky.keySet(), undefined);
      assert.match(leaky.lastError, /private key/);
    } finally {
      await closeServer(odd);
    }
  });

  it('stops fetching once closed', async () => {
    server.keys = [k1.publicJwk];
    const jwks = cache({ refreshMs: 30 });
    await jwks.keySet();
    jwks.close();
    const before = server.fetches;
    await sleep(120);
    assert.equal(server.fetches, before);
  });
});

it('gw fails closed while the key set endpoint is down, and recovers when it comes up', async () => {
  const jwks = await startJwksServer(undefined);
  const { gw, base, stop } = await startJwtGateway(
    ['api'],
    jwtPolicyYaml('jwt', 'api', `{providers: [{issuer: '${ISSUER}', jwks: {remote: {url: '${jwks.url}'}}}]}`),
  );
  try {
    const valid = await token(k1);
    const send = async (path: string) => {
      const response = await request(`${base}${path}`, {
        headers: { authorization: `Bearer ${valid}` },
      });
      return {
        status: response.statusCode,
        challenge: response.headers['www-authenticate'],
        body: await response.body.text(),
      };
    };
    const path = `/api/${randomUUID()}`;
    const down = await send(path);
    assert.equal(down.status, 401, down.body);
    assert.equal(down.challenge, 'Bearer error="invalid_token", error_description="signing keys unavailable"');
    assert.ok(await until(() => gw.accessLog.some((line) => line.includes(path)), 2000));
    const entry = JSON.parse(gw.accessLog.find((line) => line.includes(path))!) as { error: string };
    assert.match(entry.error, /^jwt: the key set at http:\/\/127\.0\.0\.1:\d+\/jwks is not available: answered 503$/);
    const results = await Promise.all(Array.from({ length: 50 }, () => send('/api/burst')));
    assert.ok(results.every((result) => result.status === 401));
    assert.ok(jwks.fetches <= 2, `${jwks.fetches} fetches: requests do not fetch while the endpoint fails`);
    jwks.keys = [k1.publicJwk];
    // Retries back off from 1 s: the set is there within a few seconds.
    let recovered = false;
    const deadline = Date.now() + 5000;
    while (!recovered && Date.now() < deadline) {
      recovered = (await send('/api/again')).status === 200;
      if (!recovered) await sleep(100);
    }
    assert.ok(recovered, gw.logs.join('\n'));
    assert.ok(jwks.fetches <= 4, `${jwks.fetches} fetches`);
  } finally {
    await stop();
    await jwks.close();
  }
});
