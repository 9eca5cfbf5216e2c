// gw idp setup when Keycloak does not simply answer yes: a stale admin token is renewed and the
// call retried once (not twice), a token response that is not JSON is explained, objects made
// meanwhile (409) are adopted, and every other failure names the step, the call and the status,
// stops, and reports a half-made client scope.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { runGw } from '../helpers/cli.ts';
import { listen } from '../helpers/http-server.ts';
import { addUser, OIDC } from '../support/keycloak/model.ts';
import type { KeycloakStandIn } from '../support/keycloak/server.ts';
import { changes, REALM, reportLines, runSetup, setupArgs, startRealm, USER_PASSWORD } from './helpers.ts';

const MASTER_TOKEN = '/realms/master/protocol/openid-connect/token';

describe('gw idp setup: stale admin tokens', () => {
  let kc: KeycloakStandIn;
  beforeEach(async () => {
    kc = await startRealm();
  });
  afterEach(() => kc.close());

  /** Moves the stand-in's clock by `seconds` when the first group search arrives. */
  const expireAtGroupSearch = (seconds: number) => {
    let done = false;
    kc.onRequest(({ method, path }) => {
      if (!done && method === 'GET' && path.includes('/groups?search=')) {
        done = true;
        kc.advanceClock(seconds);
      }
    });
  };
  const groupSearches = () => kc.calls.filter((call) => call.method === 'GET' && call.path.includes('/groups?search='));
  const masterTokenCalls = () => kc.calls.filter((call) => call.path === MASTER_TOKEN);

  it('renews an expired token with its refresh token on a 401 and retries the call once', async () => {
    expireAtGroupSearch(120); // past the 60 s access token, within the 1800 s refresh token
    const run = await runSetup(kc);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(
      groupSearches().map((call) => call.status),
      [401, 200],
    );
    assert.deepEqual(
      masterTokenCalls().map((call) => call.status),
      [200, 200],
      'the password grant, then the refresh grant',
    );
    assert.match(
      run.stderr,
      /note: Keycloak answered 401 \(the admin token had expired\): renewed it with its refresh token/,
    );
    assert.ok(reportLines(run.stderr).includes('created group: mcp-users'));
  });

  it('signs in again when the refresh token has expired too', async () => {
    expireAtGroupSearch(4000);
    const run = await runSetup(kc);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(
      masterTokenCalls().map((call) => call.status),
      [200, 400, 200],
      'password grant; refresh refused (Token is not active); password grant again',
    );
    assert.match(run.stderr, /note: Keycloak answered 401 \(the admin token had expired\): obtained a new one/);
  });

  it('retries only once: a second 401 stops the procedure, naming step, call and status', async () => {
    // Every admin call finds its token expired.
    kc.onRequest(({ path }) => {
      if (path.startsWith('/admin/')) kc.advanceClock(120);
    });
    const run = await runSetup(kc);
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      new RegExp(
        `failed at step "client scope": GET ${kc.url}/admin/realms/mcp/client-scopes answered 401: HTTP 401 Unauthorized — refused with a new admin token too`,
      ),
    );
    assert.equal(kc.calls.filter((call) => call.path.endsWith('/client-scopes')).length, 2, 'one retry');
  });
});

describe('gw idp setup: failures', () => {
  let kc: KeycloakStandIn;
  beforeEach(async () => {
    kc = await startRealm();
  });
  afterEach(() => kc.close());

  for (const status of [200, 403]) {
    it(`explains a token response that is not JSON (${status} from a proxy's page)`, async () => {
      kc.failNext({
        method: 'POST',
        path: new RegExp(`^${MASTER_TOKEN}$`),
        status,
        contentType: 'text/html',
        body: '<html><body>Access to this site is blocked by your network policy.</body></html>',
      });
      const run = await runSetup(kc);
      assert.equal(run.code, 1);
      assert.match(
        run.stderr,
        new RegExp(
          `failed at step "admin token": POST ${kc.url}${MASTER_TOKEN} answered ${status}: the token response is not JSON \\(text/html\\): the request was probably blocked by network rules or a proxy — retry it on a network that allows it`,
        ),
      );
      assert.equal(kc.calls.length, 1, 'nothing after the token request');
    });
  }

  it('says the admin credentials may be wrong when the password grant is refused', async () => {
    const run = await runGw(setupArgs(kc, ['--admin-password', 'wrong-one']));
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      new RegExp(
        `step "admin token": POST ${kc.url}${MASTER_TOKEN} answered 401: invalid_grant: Invalid user credentials — the administrator username or password may be wrong`,
      ),
    );
  });

  it('names the step, the call and the status of a refused call, and stops there', async () => {
    kc.failNext({
      method: 'POST',
      path: /\/admin\/realms\/mcp\/groups$/,
      status: 403,
      body: '{"error":"HTTP 403 Forbidden"}',
    });
    const run = await runSetup(kc);
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      new RegExp(
        `gw idp setup: failed at step "group": POST ${kc.url}/admin/realms/mcp/groups answered 403: HTTP 403 Forbidden\n`,
      ),
    );
    assert.match(run.stderr, /stopped there; the steps listed above were done/);
    assert.ok(reportLines(run.stderr).includes('created default scope: realm default of new clients'));
    assert.equal(kc.realm(REALM).users.size, 0, 'no step after the failed one ran');
    assert.doesNotMatch(run.stderr, /half-made/, 'the scope was complete');
  });

  it('reports a scope left without being a default scope, and a second run completes it', async () => {
    kc.failNext({
      method: 'PUT',
      path: /\/default-default-client-scopes\//,
      status: 500,
      body: '{"error":"unknown_error"}',
    });
    const run = await runSetup(kc);
    assert.equal(run.code, 1);
    const [scope] = [...kc.realm(REALM).clientScopes.values()].filter((s) => s.name === 'mcp-gateway');
    assert.match(
      run.stderr,
      /failed at step "default scope": PUT .*\/default-default-client-scopes\/.* answered 500: unknown_error/,
    );
    assert.match(
      run.stderr,
      new RegExp(
        `client scope mcp-gateway \\(id ${scope!.id}\\) is half-made: it has its mappers but is not yet a default scope of every client.*Running gw idp setup again completes it`,
      ),
    );
    const again = await runSetup(kc);
    assert.equal(again.code, 0, again.stderr);
    assert.ok(changes(again.stderr).includes('created default scope: realm default of new clients'));
    assert.ok(reportLines(again.stderr).includes('unchanged client scope: mcp-gateway'));
  });

  it('reports a scope whose mapper could not be added', async () => {
    const realm = kc.realm(REALM);
    const id = randomUUID();
    realm.clientScopes.set(id, { id, name: 'mcp-gateway', protocol: OIDC, attributes: {}, protocolMappers: [] });
    kc.failNext({
      method: 'POST',
      path: /\/protocol-mappers\/models$/,
      status: 400,
      body: '{"errorMessage":"refused"}',
    });
    const run = await runSetup(kc);
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      /failed at step "client scope": POST .*\/client-scopes\/.*\/protocol-mappers\/models answered 400: refused/,
    );
    assert.match(
      run.stderr,
      /client scope mcp-gateway \(id .*\) is half-made: it lacks "audience mapper" and "group mapper"/,
    );
  });

  it('names the step and the call when no answer comes', async () => {
    const closed = createServer();
    const port = await listen(closed);
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const run = await runGw(setupArgs(kc, ['--idp-url', `http://127.0.0.1:${port}`]));
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      new RegExp(
        `failed at step "admin token": POST http://127.0.0.1:${port}${MASTER_TOKEN} got no answer: .*ECONNREFUSED`,
      ),
    );
  });

  it('gives up on a Keycloak that does not answer within the timeout', async () => {
    const silent: Server = createServer(() => undefined);
    const port = await listen(silent);
    try {
      const started = Date.now();
      const run = await runGw(setupArgs(kc, ['--idp-url', `http://127.0.0.1:${port}`, '--timeout', '0.3']));
      assert.equal(run.code, 1);
      assert.match(run.stderr, /step "admin token": POST .* got no answer: no complete answer within 0.3 s/);
      assert.ok(Date.now() - started < 5000);
    } finally {
      silent.close();
    }
  });
});

describe('gw idp setup: objects made meanwhile (409)', () => {
  let kc: KeycloakStandIn;
  beforeEach(async () => {
    kc = await startRealm();
  });
  afterEach(() => kc.close());

  /** Runs `make` just before the first request matching method and path reaches the stand-in. */
  const beforeFirst = (method: string, path: RegExp, make: () => void) => {
    let done = false;
    kc.onRequest((call) => {
      if (!done && call.method === method && path.test(call.path)) {
        done = true;
        make();
      }
    });
  };

  it('adopts a client scope created between its search and its POST', async () => {
    beforeFirst('POST', /\/client-scopes$/, () => {
      const id = randomUUID();
      kc.realm(REALM).clientScopes.set(id, {
        id,
        name: 'mcp-gateway',
        protocol: OIDC,
        attributes: {},
        protocolMappers: [],
      });
    });
    const run = await runSetup(kc);
    assert.equal(run.code, 0, run.stderr);
    assert.ok(
      kc.calls.some((call) => call.method === 'POST' && call.path.endsWith('/client-scopes') && call.status === 409),
    );
    const scopes = [...kc.realm(REALM).clientScopes.values()].filter((s) => s.name === 'mcp-gateway');
    assert.equal(scopes.length, 1);
    assert.equal(scopes[0]!.protocolMappers.length, 2, 'its mappers were added');
    assert.ok(
      changes(run.stderr).includes('created client scope: mapper "group mapper" (oidc-group-membership-mapper)'),
    );
  });

  it('adopts a group and a user created meanwhile', async () => {
    const made = new Set<string>();
    kc.onRequest((call) => {
      if (call.method !== 'POST') return;
      if (call.path.endsWith('/admin/realms/mcp/groups') && !made.has('group')) {
        made.add('group');
        const id = randomUUID();
        kc.realm(REALM).groups.set(id, { id, name: 'mcp-users' });
      }
      if (call.path.endsWith('/admin/realms/mcp/users') && !made.has('alice')) {
        made.add('alice');
        addUser(kc.realm(REALM), {
          username: 'alice',
          email: 'alice@example.com',
          firstName: 'Alice',
          lastName: 'Liddell',
          password: USER_PASSWORD,
        });
      }
    });
    const run = await runSetup(kc);
    assert.equal(run.code, 0, run.stderr);
    const lines = reportLines(run.stderr);
    assert.ok(lines.includes('unchanged group: mcp-users'), lines.join('\n'));
    assert.ok(lines.includes('unchanged users: password of alice (it signs in)'));
    assert.equal([...kc.realm(REALM).groups.values()].filter((g) => g.name === 'mcp-users').length, 1);
    assert.equal([...kc.realm(REALM).users.values()].filter((u) => u.username === 'alice').length, 1);
  });

  it('refuses a user whose email belongs to another user, naming that user', async () => {
    addUser(kc.realm(REALM), { username: 'alice2', email: 'alice@example.com' });
    const run = await runSetup(kc);
    assert.equal(run.code, 1);
    assert.match(
      run.stderr,
      new RegExp(
        `failed at step "users": POST ${kc.url}/admin/realms/mcp/users answered 409: email alice@example.com belongs to user alice2: give alice another email`,
      ),
    );
  });
});
