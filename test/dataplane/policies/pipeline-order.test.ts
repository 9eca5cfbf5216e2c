// The pipeline's order end to end (docs/policies.md "Order"): one route carrying CORS, JWT, API
// key, authorization, a local rate limit and a direct response, and a PreRouting policy on the
// Gateway. Each request is built to fail at exactly one step; the answer shows which step ran
// first, and the upstream and the rate limit show that later steps did not run.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { GATEWAY_AI, trafficPolicyYaml } from '../../helpers/policy-yaml.ts';
import type { UpstreamGateway } from '../../helpers/upstream-gateway.ts';
import { objectYaml, startAuthGateway } from './auth-helpers.ts';
import { ISSUER, type SigningKey, signingKey, token } from './jwt-fixtures.ts';

const API_KEY = 'order-test-key-5b1d0c7e';

describe('the traffic policy pipeline runs in its documented order', () => {
  let gw: UpstreamGateway;
  let key: SigningKey;
  let valid: string;
  let denied: string;

  before(async () => {
    key = await signingKey('order');
    valid = await token(key, { sub: 'alice', role: 'admin' });
    denied = await token(key, { sub: 'mallory', role: 'guest' });
    gw = await startAuthGateway(
      objectYaml('Secret', 'keys', { client: JSON.stringify({ key: API_KEY, metadata: { plan: 'pro' } }) }) +
        trafficPolicyYaml('route-chain', 'web', {
          cors: { allowOrigins: ['https://app.example'], allowMethods: ['GET', 'POST'] },
          jwtAuthentication: {
            providers: [{ issuer: ISSUER, jwks: { inline: JSON.stringify({ keys: [key.publicJwk] }) } }],
          },
          apiKeyAuthentication: { secretRef: { name: 'keys' }, location: { header: { name: 'x-api-key' } } },
          authorization: { policy: { matchExpressions: ['jwt.role == "admin"', 'apiKey.plan == "pro"'] } },
          rateLimit: { local: [{ requests: 3, unit: 'Hours' }] },
          directResponse: {
            conditional: [{ condition: 'request.path == "/direct"', policy: { status: 202, body: 'answered by gw' } }],
          },
        }) +
        trafficPolicyYaml('before-routing', GATEWAY_AI, {
          phase: 'PreRouting',
          authorization: { action: 'Deny', policy: { matchExpressions: ['request.headers["x-block"] == "yes"'] } },
        }),
    );
  });
  after(async () => {
    await gw?.stop();
  });

  const send = (path: string, headers: Record<string, string>) => fetch(`${gw.base}${path}`, { headers });
  const full = (jwt = valid) => ({ authorization: `Bearer ${jwt}`, 'x-api-key': API_KEY });

  it('PreRouting runs before everything the route carries', async () => {
    const response = await send('/', { 'x-block': 'yes' });
    assert.equal(response.status, 403);
    await response.text();
  });

  it('CORS answers a preflight before authentication', async () => {
    const response = await fetch(`${gw.base}/`, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('access-control-allow-origin'), 'https://app.example');
    await response.text();
  });

  it('JWT before the API key, the API key before authorization', async () => {
    const noJwt = await send('/', { 'x-api-key': 'wrong' });
    assert.equal(noJwt.status, 401);
    assert.equal(noJwt.headers.get('www-authenticate'), 'Bearer', 'the JWT step answered');
    await noJwt.text();
    const badKey = await send('/', { authorization: `Bearer ${denied}`, 'x-api-key': 'wrong' });
    assert.equal(badKey.status, 401, 'the API key step answered before authorization could deny');
    assert.match(await badKey.text(), /API key/i);
  });

  it('authorization before the rate limit: a denied request spends nothing', async () => {
    for (let i = 0; i < 5; i++) {
      const response = await send('/', full(denied));
      assert.equal(response.status, 403);
      await response.text();
    }
    const seen = gw.upstream.seen.length;
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const response = await send('/direct', full());
      statuses.push(response.status);
      await response.text();
    }
    // 3 per hour: the 403s above were not counted, so 3 requests pass before the limit.
    assert.deepEqual(statuses, [202, 202, 202, 429]);
    assert.equal(gw.upstream.seen.length, seen, 'the direct response answered; nothing reached the upstream');
  });

  it('the direct response comes after the rate limit and authentication', async () => {
    const response = await send('/direct', {});
    assert.equal(response.status, 401, 'no credentials: the direct response is not reached');
    await response.text();
  });
});
