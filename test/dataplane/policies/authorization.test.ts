// traffic.authorization end to end: Allow (the default), Require and Deny rules over request
// attributes, expressions that fail or yield a non-boolean, and a rule whose CEL does not
// compile. The API key metadata case is in api-key.test.ts, basicAuth.username in basic-auth.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileAuthorization } from '../../../src/dataplane/policies/auth/authorization.ts';
import { isProblem } from '../../../src/dataplane/policies/types.ts';
import { compileContext } from '../../helpers/policy-context.ts';
import { trafficPolicyYaml } from '../../helpers/policy-yaml.ts';
import { startAuthGateway } from './auth-helpers.ts';

async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { headers });
  return { status: response.status, text: await response.text() };
}

/** Runs `check` against gw with one authorization rule on route web. */
async function withRule(
  authorization: unknown,
  check: (base: string, upstreamCount: () => number) => Promise<void>,
): Promise<void> {
  const { base, upstream, stop } = await startAuthGateway(trafficPolicyYaml('rule', 'web', { authorization }));
  try {
    await check(base, () => upstream.seen.length);
  } finally {
    await stop();
  }
}

describe('Allow rules (the default action)', () => {
  it('let a matching request through and answer 403 to any other', async () => {
    await withRule({ policy: { matchExpressions: ["request.headers['x-team'] == 'ml'"] } }, async (base, count) => {
      assert.equal((await get(`${base}/x`, { 'x-team': 'ml' })).status, 200);
      const denied = await get(`${base}/x`, { 'x-team': 'ops' });
      assert.equal(denied.status, 403);
      assert.equal(denied.text, 'the request is not allowed by the authorization policy\n');
      // No x-team header: the lookup fails, which is not a match, so the request is denied.
      assert.equal((await get(`${base}/x`)).status, 403);
      assert.equal(count(), 1, 'denied requests never reach the upstream');
    });
  });

  it('match only when every expression is true', async () => {
    await withRule(
      {
        action: 'Allow',
        policy: { matchExpressions: ["request.method == 'GET'", "request.path.startsWith('/public/')"] },
      },
      async (base) => {
        assert.equal((await get(`${base}/public/a`)).status, 200);
        assert.equal((await get(`${base}/private/a`)).status, 403);
        const post = await fetch(`${base}/public/a`, { method: 'POST', body: 'x' });
        await post.arrayBuffer();
        assert.equal(post.status, 403);
      },
    );
  });

  it('treat a value other than true as no match', async () => {
    await withRule({ policy: { matchExpressions: ['request.path'] } }, async (base) => {
      assert.equal((await get(`${base}/x`)).status, 403);
    });
  });
});

describe('Require rules', () => {
  it('deny a request unless every expression holds, failures included', async () => {
    await withRule(
      {
        action: 'Require',
        policy: { matchExpressions: ["request.headers['x-tenant'] != ''", 'size(request.path) < 10'] },
      },
      async (base) => {
        assert.equal((await get(`${base}/short`, { 'x-tenant': 'a' })).status, 200);
        assert.equal((await get(`${base}/a-much-longer-path`, { 'x-tenant': 'a' })).status, 403);
        assert.equal((await get(`${base}/short`)).status, 403, 'a failing expression does not satisfy Require');
      },
    );
  });
});

describe('Deny rules', () => {
  it('answer 403 to a matching request and let others through', async () => {
    await withRule(
      { action: 'Deny', policy: { matchExpressions: ["request.headers['x-blocked'] == 'yes'"] } },
      async (base) => {
        assert.equal((await get(`${base}/x`, { 'x-blocked': 'yes' })).status, 403);
        assert.equal((await get(`${base}/x`, { 'x-blocked': 'no' })).status, 200);
        // The spec: expression failures fail to deny. No header makes the lookup fail: not denied.
        assert.equal((await get(`${base}/x`)).status, 200);
      },
    );
  });

  it('deny only when every expression is true; a failure or a non-boolean fails to deny', async () => {
    await withRule(
      {
        action: 'Deny',
        policy: { matchExpressions: ["request.method == 'DELETE'", "request.headers['x-role'] != 'admin'"] },
      },
      async (base) => {
        const del = (headers: Record<string, string>) =>
          fetch(`${base}/x`, { method: 'DELETE', headers }).then(async (response) => {
            await response.arrayBuffer();
            return response.status;
          });
        assert.equal(await del({ 'x-role': 'user' }), 403);
        assert.equal(await del({ 'x-role': 'admin' }), 200);
        assert.equal(await del({}), 200, 'the failing lookup fails to deny');
        assert.equal((await get(`${base}/x`, { 'x-role': 'user' })).status, 200);
      },
    );
    await withRule({ action: 'Deny', policy: { matchExpressions: ['request.path'] } }, async (base) => {
      assert.equal((await get(`${base}/x`)).status, 200);
    });
  });
});

describe('compiling', () => {
  it('refuses a rule whose expression does not compile, naming the expression', () => {
    const result = compileAuthorization(
      { action: 'Allow', policy: { matchExpressions: ['true', 'request.path =='] } },
      compileContext(),
    );
    assert.ok(isProblem(result));
    assert.equal(result.field, 'traffic.authorization.policy.matchExpressions[1]');
    assert.match(result.message, /does not compile/);
  });
});
