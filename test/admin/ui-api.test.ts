// The web UI's HTTP surface, without a browser: GET / to /ui/, the shell and its assets with the
// CSP, the admin token off loopback (login, cookie, bearer), the Host check on loopback, the
// cross-site checks on changes, bounded bodies, no Secret value in any answer, read-only with files,
// and the API's data being gw status's and gw explain's.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { parseRunArgs } from '../../src/cli/run.ts';
import { explain } from '../../src/controller/policies/explanation.ts';
import { snapshotFromStore } from '../../src/controller/snapshot.ts';
import { EXAMPLE_SECRET_VALUE, everyGetAnswer, startUiGateway, type UiGateway } from '../helpers/admin-ui.ts';

const TOKEN = 'a-test-admin-token-0123456789';

/** A GET as node:http sends it (fetch would not send another Host header). */
function get(url: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: Headers; text: string }>((resolve, reject) => {
    const outgoing = request(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const answerHeaders = new Headers();
        for (const [name, value] of Object.entries(response.headers))
          if (typeof value === 'string') answerHeaders.set(name, value);
        resolve({ status: response.statusCode ?? 0, headers: answerHeaders, text: Buffer.concat(chunks).toString() });
      });
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

async function send(url: string, method: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return {
    status: response.status,
    headers: response.headers,
    json: (await response.json()) as Record<string, unknown>,
  };
}

describe('web UI on a loopback admin listener, objects from files', () => {
  let gw: UiGateway;
  before(async () => {
    gw = await startUiGateway();
  });
  after(() => gw.stop());

  it('sends / to /ui/ and answers the shell with its CSP, which allows the import map by its hash', async () => {
    const root = await get(`${gw.url}/`);
    assert.equal(root.status, 302);
    assert.equal(root.headers.get('location'), '/ui/');
    for (const path of ['/ui/', '/ui/routes', '/ui/objects']) {
      const shell = await get(`${gw.url}${path}`);
      assert.equal(shell.status, 200, path);
      assert.match(shell.text, /<script type="importmap">/);
      const csp = shell.headers.get('content-security-policy') ?? '';
      assert.match(csp, /default-src 'none'/);
      assert.match(csp, /script-src 'self' 'sha256-[A-Za-z0-9+/=]+'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.equal(shell.headers.get('x-content-type-options'), 'nosniff');
    }
    for (const path of ['/ui/vendor/preact.mjs', '/ui/vendor/hooks.mjs', '/ui/vendor/htm.mjs', '/ui/assets/app.js']) {
      const asset = await get(`${gw.url}${path}`);
      assert.equal(asset.status, 200, path);
      assert.match(asset.headers.get('content-type') ?? '', /^text\/javascript/);
    }
    assert.equal((await get(`${gw.url}/ui/assets/missing.js`)).status, 404);
    // The admin endpoints stay as they were.
    assert.equal((await get(`${gw.url}/healthz/live`)).status, 200);
  });

  it('answers loopback names only when no token is set (a rebound DNS name cannot read it)', async () => {
    assert.equal((await get(`${gw.url}/ui/api/overview`, { host: 'localhost' })).status, 200);
    const foreign = await get(`${gw.url}/ui/api/overview`, { host: 'attacker.example' });
    assert.equal(foreign.status, 403);
    assert.match(foreign.text, /loopback names only/);
  });

  it('refuses changes from other sites and without the UI header', async () => {
    const object = `${gw.url}/ui/api/object`;
    const body = { yaml: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n' };
    const noHeader = await send(object, 'POST', body);
    assert.equal(noHeader.status, 403);
    assert.match(String(noHeader.json.error), /x-gw-ui/);
    const crossSite = await send(object, 'POST', body, { 'x-gw-ui': '1', 'sec-fetch-site': 'cross-site' });
    assert.equal(crossSite.status, 403);
    assert.match(String(crossSite.json.error), /Sec-Fetch-Site/);
    const otherOrigin = await send(object, 'POST', body, { 'x-gw-ui': '1', origin: 'http://evil.example' });
    assert.equal(otherOrigin.status, 403);
    assert.match(String(otherOrigin.json.error), /Origin/);
  });

  it('is read-only with files as the source: the API refuses writes and says why', async () => {
    const session = await get(`${gw.url}/ui/api/session`);
    assert.deepEqual(JSON.parse(session.text).editable, false);
    const headers = { 'x-gw-ui': '1' };
    const yaml = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: default}\n';
    for (const [method, body] of [
      ['POST', { yaml }],
      ['PUT', { yaml }],
    ] as const) {
      const answer = await send(`${gw.url}/ui/api/object`, method, body, headers);
      assert.equal(answer.status, 403, method);
      assert.match(String(answer.json.error), /read-only: the objects come from the files/);
    }
    const removed = await send(
      `${gw.url}/ui/api/object?kind=gw.dev/GwPolicy&namespace=default&name=api-keys`,
      'DELETE',
      undefined,
      headers,
    );
    assert.equal(removed.status, 403);
  });

  it('bounds request bodies', async () => {
    const large = await send(
      `${gw.url}/ui/api/object`,
      'POST',
      { yaml: 'x'.repeat(1024 * 1024 + 10) },
      { 'x-gw-ui': '1' },
    );
    assert.equal(large.status, 413);
  });

  it('never sends a Secret value: the Secret is shown by its keys, and no answer holds the value', async () => {
    const secret = await get(`${gw.url}/ui/api/object?kind=/Secret&namespace=default&name=client-keys`);
    assert.equal(secret.status, 200);
    const view = JSON.parse(secret.text) as { object: { data: Record<string, string> }; yaml: string };
    assert.deepEqual(Object.keys(view.object.data), ['team-a']);
    assert.doesNotMatch(secret.text, new RegExp(EXAMPLE_SECRET_VALUE));
    assert.doesNotMatch(secret.text, new RegExp(Buffer.from(EXAMPLE_SECRET_VALUE).toString('base64')));
    const bodies = await everyGetAnswer(gw.url);
    assert.ok(bodies.length > 10);
    for (const body of bodies) {
      assert.ok(!body.text.includes(EXAMPLE_SECRET_VALUE), body.path);
      assert.ok(!body.text.includes(Buffer.from(EXAMPLE_SECRET_VALUE).toString('base64')), body.path);
    }
  });

  it("explains a route with gw explain's computation and lists the example's objects", async () => {
    const answer = JSON.parse((await get(`${gw.url}/ui/api/explain?what=route&namespace=default&name=llm`)).text);
    const store = gw.gateway.controller.objects;
    const expected = explain(
      {
        snapshot: snapshotFromStore(store),
        listeners: gw.gateway.controller.lastReport!.gatewayApi.listeners,
        where: "among this gw's objects",
      },
      'route',
      { namespace: 'default', name: 'llm' },
    );
    assert.deepEqual(answer, JSON.parse(JSON.stringify(expected)));
    const traffic = answer.placements[0].sections.find((s: { title: string }) => s.title === 'traffic');
    const timeouts = traffic.fields.find((f: { field: string }) => f.field === 'timeouts');
    assert.equal(timeouts.setBy.source, 'GwPolicy default/llm-route');
    assert.equal(timeouts.overrides[0].source, 'GwPolicy default/gateway-defaults');
    const policies = JSON.parse((await get(`${gw.url}/ui/api/policies`)).text).policies as { name: string }[];
    assert.deepEqual(policies.map((p) => p.name).sort(), [
      'api-keys',
      'gateway-defaults',
      'llm-route',
      'provider-timeouts',
    ]);
    const overview = JSON.parse((await get(`${gw.url}/ui/api/overview`)).text);
    const ai = overview.gateways.find((g: { name: string }) => g.name === 'ai');
    assert.equal(ai.listeners[0].address, `127.0.0.1:${gw.listenerPort}`);
    assert.equal(ai.listeners[0].bound, true);
  });

  it("shows the models' live health: a failing target is evicted, with the time to its restore", async () => {
    const before = JSON.parse((await get(`${gw.url}/ui/api/models`)).text);
    const report = before.processes[0].reports.find((r: { models?: unknown[] }) => r.models);
    assert.deepEqual(report.discovery.sort(), ['primary-model', 'smart']);
    const smart = report.models.find((m: { key: string }) => m.key === 'default/smart');
    assert.equal(smart.routing, 'failover');
    assert.deepEqual(
      smart.targets.map((t: { model: string; priority: number }) => [t.model, t.priority]),
      [
        ['default/primary', 0],
        ['default/fallback', 1],
      ],
    );
    assert.equal(smart.targets[0].health.state, 'Healthy');
    // A request to the concrete model fails (its provider is down): one failure evicts it.
    await fetch(`http://127.0.0.1:${gw.modelsPort}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'primary-model', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const after = JSON.parse((await get(`${gw.url}/ui/api/models`)).text);
    const models = after.processes[0].reports.find((r: { models?: unknown[] }) => r.models).models;
    const primary = models.find((m: { key: string }) => m.key === 'default/primary');
    assert.equal(primary.health.state, 'Evicted');
    assert.ok(
      primary.health.restoresInMs > 0 && primary.health.restoresInMs <= 3000,
      String(primary.health.restoresInMs),
    );
    // The virtual model's target is the same health, shared.
    const target = models.find((m: { key: string }) => m.key === 'default/smart').targets[0];
    assert.equal(target.health.state, 'Evicted');
  });
});

describe('web UI off loopback', () => {
  it('is refused, visibly, without a token', async () => {
    const gw = await startUiGateway({ adminAddress: '0.0.0.0' });
    try {
      assert.equal(gw.ui.access, 'refused');
      for (const path of ['/', '/ui/', '/ui/api/overview', '/ui/assets/app.js']) {
        const answer = await get(`${gw.url}${path}`);
        assert.equal(answer.status, 403, path);
        assert.match(answer.text, /no admin token is set/);
      }
      assert.equal((await get(`${gw.url}/healthz/live`)).status, 200);
    } finally {
      await gw.stop();
    }
  });

  it('requires the token: a login sets an HttpOnly SameSite=Strict session cookie; a bearer token works too', async () => {
    const gw = await startUiGateway({ adminAddress: '0.0.0.0', token: TOKEN });
    try {
      assert.equal(gw.ui.access, 'token');
      // The shell and its assets load (the login form is in them); the API does not.
      assert.equal((await get(`${gw.url}/ui/`, { host: 'gw.example:15000' })).status, 200);
      const denied = await get(`${gw.url}/ui/api/overview`);
      assert.equal(denied.status, 401);
      assert.equal(JSON.parse(denied.text).login, true);
      const session = JSON.parse((await get(`${gw.url}/ui/api/session`)).text);
      assert.deepEqual([session.tokenRequired, session.authenticated], [true, false]);
      const wrong = await send(
        `${gw.url}/ui/api/session`,
        'POST',
        { token: 'not-the-token-at-all' },
        { 'x-gw-ui': '1' },
      );
      assert.equal(wrong.status, 401);
      assert.equal(wrong.headers.get('set-cookie'), null);
      const login = await send(`${gw.url}/ui/api/session`, 'POST', { token: TOKEN }, { 'x-gw-ui': '1' });
      assert.equal(login.status, 200);
      const cookie = login.headers.get('set-cookie') ?? '';
      assert.match(cookie, /^gw_admin_session=[^;]+; Path=\/ui; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
      assert.ok(!cookie.includes(TOKEN));
      const sessionCookie = cookie.split(';')[0]!;
      assert.equal((await get(`${gw.url}/ui/api/overview`, { cookie: sessionCookie })).status, 200);
      const forged = `${sessionCookie.slice(0, -4)}AAAA`;
      assert.equal((await get(`${gw.url}/ui/api/overview`, { cookie: forged })).status, 401);
      assert.equal((await get(`${gw.url}/ui/api/overview`, { authorization: `Bearer ${TOKEN}` })).status, 200);
      assert.equal(
        (await get(`${gw.url}/ui/api/overview`, { authorization: 'Bearer wrong-token-wrong-token' })).status,
        401,
      );
      // A login from another site is refused like any change.
      const crossSite = await send(
        `${gw.url}/ui/api/session`,
        'POST',
        { token: TOKEN },
        { 'x-gw-ui': '1', 'sec-fetch-site': 'cross-site' },
      );
      assert.equal(crossSite.status, 403);
    } finally {
      await gw.stop();
    }
  });

  it('gw run takes the token from --admin-token-file or GW_ADMIN_TOKEN and refuses a short one', () => {
    const fromEnv = parseRunArgs(['-f', 'x.yaml'], { GW_ADMIN_TOKEN: TOKEN });
    assert.equal(typeof fromEnv !== 'string' && fromEnv.adminToken, TOKEN);
    const short = parseRunArgs(['-f', 'x.yaml'], { GW_ADMIN_TOKEN: 'short' });
    assert.match(String(short), /GW_ADMIN_TOKEN: the admin token must be at least 16 characters/);
    const missing = parseRunArgs(['-f', 'x.yaml', '--admin-token-file', '/nonexistent/token'], {});
    assert.match(String(missing), /--admin-token-file \/nonexistent\/token: ENOENT/);
  });
});
