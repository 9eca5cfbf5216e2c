// --dry-run prints the planned calls and makes none; passwords (and the tokens Keycloak hands
// out) appear in nothing gw idp setup prints — a run, a second run, a dry run, failures.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runGw } from '../helpers/cli.ts';
import { ADMIN_USER, type KeycloakStandIn } from '../support/keycloak/server.ts';
import { REALM, runSetup, setupArgs, startRealm, USER_PASSWORD } from './helpers.ts';

describe('gw idp setup --dry-run', () => {
  let kc: KeycloakStandIn;
  before(async () => {
    kc = await startRealm();
  });
  after(() => kc?.close());

  it('prints every call it would make, in order, and makes none', async () => {
    const run = await runSetup(kc, ['--dry-run', '--allow-anonymous-dcr']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(kc.calls.length, 0, 'no call reached Keycloak');
    assert.equal(kc.realm(REALM).users.size, 0);
    const calls = run.stdout
      .split('\n')
      .filter((line) => line.startsWith('['))
      .map((line) => line.replace(kc.url, ''));
    const expectStart = [
      '[admin token] POST /realms/master/protocol/openid-connect/token',
      '[client scope] GET /admin/realms/mcp/client-scopes',
      '[client scope] POST /admin/realms/mcp/client-scopes',
    ];
    assert.deepEqual(calls.slice(0, 3), expectStart);
    for (const expected of [
      '[default scope] PUT /admin/realms/mcp/default-default-client-scopes/<scope-id>',
      '[group] GET /admin/realms/mcp/groups?search=mcp-users&exact=true',
      '[users] GET /admin/realms/mcp/users?username=alice&exact=true',
      '[users] PUT /admin/realms/mcp/users/<bob-id>/groups/<group-id>',
      `[anonymous DCR] DELETE /admin/realms/mcp/components/<component-id>`,
      '[discovery] GET /realms/mcp/.well-known/openid-configuration',
    ])
      assert.ok(calls.includes(expected), `${expected} in\n${calls.join('\n')}`);
    assert.match(run.stdout, /"included.custom.audience":"https:\/\/gw.example.com\/mcp"/);
    assert.match(run.stdout, /"credentials":\[\{"type":"password","value":"\(hidden\)","temporary":false\}\]/);
    assert.match(run.stdout, /username=admin&password=\(hidden\)/);
  });

  it('lists no registration policy call without --allow-anonymous-dcr', async () => {
    const run = await runSetup(kc, ['--dry-run']);
    assert.equal(run.code, 0);
    assert.doesNotMatch(run.stdout, /\[anonymous DCR\]/);
    assert.match(run.stdout, /anonymous registration restrictions are kept/);
    assert.equal(kc.calls.length, 0);
  });
});

describe('gw idp setup never prints a password or token', () => {
  let kc: KeycloakStandIn;
  const outputs: string[] = [];
  before(async () => {
    kc = await startRealm();
  });
  after(() => kc?.close());

  const keep = (run: { stdout: string; stderr: string }) => outputs.push(run.stdout, run.stderr);

  it('in runs, dry runs and failures', async () => {
    keep(await runSetup(kc, ['--allow-anonymous-dcr']));
    // A second run checks the users' passwords by signing in, and sets bob's again; Keycloak's
    // refusal echoes the password (as a misconfigured proxy may): it is hidden in the message.
    kc.realm(REALM).users.forEach((user) => {
      if (user.username === 'bob') user.password = 'changed';
    });
    kc.failNext({
      method: 'PUT',
      path: /\/reset-password$/,
      status: 400,
      body: JSON.stringify({ errorMessage: `password ${USER_PASSWORD} is not allowed` }),
    });
    const echoed = await runSetup(kc);
    assert.equal(echoed.code, 1);
    assert.match(echoed.stderr, /answered 400: password \(hidden\) is not allowed/);
    keep(echoed);
    keep(await runSetup(kc));
    keep(await runSetup(kc, ['--dry-run']));
    keep(await runGw(setupArgs(kc, ['--admin-password', 'wrong-pw-Kx22'])));
    kc.advanceClock(4000);
    kc.onRequest(({ path }) => {
      if (path.includes('/groups?')) kc.advanceClock(120);
    });
    keep(await runSetup(kc));
    kc.onRequest(undefined);

    const secrets = [ADMIN_USER.password, USER_PASSWORD, 'wrong-pw-Kx22', ...kc.tokens()];
    assert.ok(kc.tokens().length >= 6, 'tokens were handed out');
    for (const text of outputs)
      for (const secret of secrets) assert.ok(!text.includes(secret), `printed: ${secret.slice(0, 12)}…`);
  });
});
