// The settings of gw idp setup: a flag wins over its environment variable, which wins over the
// config file, which wins over the default; users from --user, GW_IDP_USERS or the file; every
// problem listed at once; the command refuses bad settings with exit 2 before any call.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { resolveSettings, SettingsError, type SettingsInput } from '../../src/idp/settings.ts';
import { runGw } from '../helpers/cli.ts';
import { REALM, startRealm, USER_PASSWORD } from './helpers.ts';

const CONFIG = `
idpUrl: http://config.example:8080/
realm: from-config
adminPassword: config-admin-pw
mcpResourceUrl: https://gw.example.com/mcp
group: config-group
userPassword: shared-pw
timeout: 5
users:
  - {username: alice, email: alice@example.com, firstName: Alice, password: alices-own}
  - {username: bob, email: bob@example.com}
`;

function input(overrides: Partial<SettingsInput> = {}): SettingsInput {
  return {
    flags: {},
    userFlags: [],
    configFlag: 'gw-idp.yaml',
    allowAnonymousDcr: false,
    dryRun: false,
    env: {},
    readFile: () => CONFIG,
    ...overrides,
  };
}

describe('gw idp setup settings', () => {
  it('take the config file, then defaults', () => {
    const settings = resolveSettings(input());
    assert.equal(settings.idpUrl, 'http://config.example:8080');
    assert.equal(settings.realm, 'from-config');
    assert.equal(settings.adminRealm, 'master');
    assert.equal(settings.adminUsername, 'admin');
    assert.equal(settings.scope, 'mcp-gateway');
    assert.equal(settings.group, 'config-group');
    assert.equal(settings.route, 'mcp');
    assert.equal(settings.timeoutMs, 5000);
    assert.equal(settings.adminPassword.reveal(), 'config-admin-pw');
    assert.deepEqual(
      settings.users.map((u) => [u.username, u.email, u.firstName, u.lastName, u.password.reveal()]),
      [
        ['alice', 'alice@example.com', 'Alice', 'User', 'alices-own'],
        ['bob', 'bob@example.com', 'bob', 'User', 'shared-pw'],
      ],
    );
  });

  it('prefer environment variables to the file, and flags to both', () => {
    const env = {
      GW_IDP_REALM: 'from-env',
      GW_IDP_GROUP: 'env-group',
      GW_IDP_USERS: 'carol,carol@example.com; dan,dan@example.com,Dan,Dee',
    };
    const fromEnv = resolveSettings(input({ env }));
    assert.equal(fromEnv.realm, 'from-env');
    assert.equal(fromEnv.group, 'env-group');
    assert.deepEqual(
      fromEnv.users.map((u) => [u.username, u.lastName]),
      [
        ['carol', 'User'],
        ['dan', 'Dee'],
      ],
    );
    const fromFlags = resolveSettings(
      input({ env, flags: { realm: 'from-flag' }, userFlags: ['erin,erin@example.com'] }),
    );
    assert.equal(fromFlags.realm, 'from-flag');
    assert.equal(fromFlags.group, 'env-group');
    assert.deepEqual(
      fromFlags.users.map((u) => u.username),
      ['erin'],
    );
  });

  it('list every problem at once', () => {
    assert.throws(
      () =>
        resolveSettings(
          input({
            configFlag: undefined,
            flags: { idpUrl: 'ftp://kc', scope: 'has space', timeout: '0', route: 'Not_A_Name' },
            userFlags: ['frank', 'gina,gina@example.com', 'GINA,other@example.com'],
          }),
        ),
      (error: unknown) => {
        assert.ok(error instanceof SettingsError);
        const passwordNeeded =
          'a password is required: set --user-password, GW_IDP_USER_PASSWORD, or "userPassword" or the user\'s "password" in the config file';
        assert.deepEqual(error.problems, [
          'idpUrl "ftp://kc" must be an http(s) URL without query, fragment or credentials',
          'realm is required: set --realm, GW_IDP_REALM or "realm" in the config file',
          'adminPassword is required: set --admin-password, GW_IDP_ADMIN_PASSWORD or "adminPassword" in the config file',
          'mcpResourceUrl is required: set --mcp-resource-url, GW_IDP_MCP_RESOURCE_URL or "mcpResourceUrl" in the config file',
          'scope "has space": Keycloak takes printable ASCII without spaces, quotes or backslashes',
          'route "Not_A_Name" is not a Kubernetes object name (lowercase letters, digits, "-" and ".")',
          'timeout "0" must be a number of seconds above 0 and at most 300',
          'user 1 of --user (frank): an email address is required',
          `user 2 of --user (gina): ${passwordNeeded}`,
          'user 3 of --user: username GINA is listed twice',
          `user 3 of --user (GINA): ${passwordNeeded}`,
        ]);
        return true;
      },
    );
  });

  it('refuse unknown keys in the config file', () => {
    assert.throws(
      () => resolveSettings(input({ readFile: () => 'realm: x\nadminPasword: typo\n' })),
      /config file gw-idp.yaml: unknown setting "adminPasword"/,
    );
  });

  it('keep passwords out of String, JSON and inspect', () => {
    const settings = resolveSettings(input());
    const shown = `${settings.adminPassword} ${JSON.stringify(settings)}`;
    assert.ok(!shown.includes('config-admin-pw') && !shown.includes('alices-own') && !shown.includes('shared-pw'));
  });
});

describe('gw idp setup on the command line', () => {
  it('exits 2 naming what is missing, before any call', async () => {
    const run = await runGw(['idp', 'setup', '--realm', 'x']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /idpUrl is required: set --idp-url, GW_IDP_URL or "idpUrl" in the config file/);
    assert.match(run.stderr, /gw idp setup --help lists the settings/);
  });

  it('reads a config file named by --config', async () => {
    const kc = await startRealm();
    const dir = mkdtempSync(join(tmpdir(), 'gw-idp-'));
    try {
      const file = join(dir, 'idp.yaml');
      writeFileSync(
        file,
        `idpUrl: ${kc.url}\nrealm: ${REALM}\nadminPassword: admin-password-for-tests\nmcpResourceUrl: https://gw.example.com/mcp\nusers: [{username: zoe, email: zoe@example.com, password: ${USER_PASSWORD}}]\n`,
      );
      const run = await runGw(['idp', 'setup', '--config', file]);
      assert.equal(run.code, 0, run.stderr);
      assert.deepEqual(
        [...kc.realm(REALM).users.values()].map((u) => u.username),
        ['zoe'],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await kc.close();
    }
  });

  it('is listed by gw help, and explains itself with --help', async () => {
    const help = await runGw(['help']);
    assert.match(help.stdout, /gw idp setup/);
    const own = await runGw(['idp', 'setup', '--help']);
    assert.equal(own.code, 0);
    for (const name of [
      '--idp-url',
      'GW_IDP_URL',
      '--user-password',
      'GW_IDP_USERS',
      '--config',
      '--dry-run',
      '--allow-anonymous-dcr',
    ])
      assert.ok(own.stdout.includes(name), name);
  });
});
