// gw idp setup, the whole procedure through the real command against the Keycloak stand-in: a new
// realm ends up as spec document 3 says, the printed GwPolicy passes gw's own admission, a second
// run reports "unchanged" and changes nothing, and a realm prepared by hand gets only what differs.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { parseResources } from '../../src/api/load/documents.ts';
import { admit } from '../../src/api/validate/admission.ts';
import { addUser, OIDC, type Realm } from '../support/keycloak/model.ts';
import type { KeycloakStandIn } from '../support/keycloak/server.ts';
import { changes, MCP_URL, REALM, reportLines, runSetup, startRealm, USER_PASSWORD, writes } from './helpers.ts';

const scopesNamed = (realm: Realm, name: string) => [...realm.clientScopes.values()].filter((s) => s.name === name);

describe('gw idp setup on a new realm', () => {
  let kc: KeycloakStandIn;
  let first: Awaited<ReturnType<typeof runSetup>>;

  before(async () => {
    kc = await startRealm();
    first = await runSetup(kc);
  });
  after(() => kc?.close());

  it('creates the scope with both mappers, a default scope of every client, the group and its users', () => {
    assert.equal(first.code, 0, first.stderr);
    const realm = kc.realm(REALM);
    const [scope] = scopesNamed(realm, 'mcp-gateway');
    assert.ok(scope);
    assert.equal(scope.protocol, OIDC);
    const mappers = Object.fromEntries(scope.protocolMappers.map((m) => [m.name, [m.protocolMapper, m.config]]));
    assert.deepEqual(mappers, {
      'audience mapper': [
        'oidc-audience-mapper',
        { 'included.custom.audience': MCP_URL, 'access.token.claim': 'true' },
      ],
      'group mapper': [
        'oidc-group-membership-mapper',
        { 'claim.name': 'groups', 'full.path': 'false', 'access.token.claim': 'true' },
      ],
    });
    assert.equal(realm.realmDefaults.get(scope.id), true, 'a realm default scope: future clients get it');
    for (const client of realm.clients.values())
      assert.equal(client.scopes.get(scope.id), true, `current client ${client.clientId} has it as a default scope`);

    const groups = [...realm.groups.values()].filter((g) => g.name === 'mcp-users' && !g.parentId);
    assert.equal(groups.length, 1);
    const users = [...realm.users.values()].sort((a, b) => a.username.localeCompare(b.username));
    assert.deepEqual(
      users.map((u) => [u.username, u.email, u.firstName, u.lastName, u.enabled, u.requiredActions, u.password]),
      [
        ['alice', 'alice@example.com', 'Alice', 'Liddell', true, [], USER_PASSWORD],
        ['bob', 'bob@example.com', 'Bob', 'Builder', true, [], USER_PASSWORD],
      ],
    );
    for (const user of users) assert.deepEqual([...user.groups], [groups[0]!.id]);
  });

  it('reports each object it created, and leaves anonymous registration alone without the flag', () => {
    assert.deepEqual(reportLines(first.stderr), [
      'checked admin token: admin of realm master (signed in)',
      'created client scope: mcp-gateway (with audience mapper and group mapper)',
      'created default scope: realm default of new clients',
      'updated default scope: existing clients (added to 6: account, account-console, admin-cli, broker, realm-management, security-admin-console)',
      'created group: mcp-users',
      'created users: alice (alice@example.com, password set)',
      'created users: alice in mcp-users',
      'created users: bob (bob@example.com, password set)',
      'created users: bob in mcp-users',
      'skipped anonymous DCR: anonymous registration restrictions (kept; --allow-anonymous-dcr removes them for local testing)',
      'checked discovery: OpenID configuration (read)',
    ]);
    assert.ok(
      kc.calls.every((call) => !call.path.includes('/components')),
      'no registration policy was read',
    );
  });

  it('prints a GwPolicy that gw admits, with the derived issuer, audience, key set and group rule', () => {
    const issuer = `${kc.url}/realms/${REALM}`;
    assert.match(first.stdout, new RegExp(`^# issuer: +${issuer}$`, 'm'));
    assert.match(first.stdout, /^# JWKS path: +\/realms\/mcp\/protocol\/openid-connect\/certs$/m);
    assert.match(first.stdout, new RegExp(`^# audience: +${MCP_URL}$`, 'm'));
    const documents = parseResources(first.stdout, 'policy.yaml').documents;
    assert.equal(documents.length, 1);
    const result = admit(documents[0]!.value);
    assert.deepEqual(result.errors, []);
    const spec = result.object!.spec as {
      targetRefs: unknown;
      traffic: { jwtAuthentication: Record<string, unknown>; authorization: unknown };
    };
    assert.deepEqual(spec.targetRefs, [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'mcp' }]);
    const jwt = spec.traffic.jwtAuthentication;
    assert.deepEqual(jwt.providers, [
      {
        issuer,
        audiences: [MCP_URL],
        jwks: { remote: { url: `${issuer}/protocol/openid-connect/certs`, cacheDuration: '5m' } },
      },
    ]);
    assert.deepEqual(jwt.mcp, { provider: 'Idp02' });
    assert.deepEqual(spec.traffic.authorization, {
      policy: { matchExpressions: ['"mcp-users" in jwt.groups'] },
      action: 'Allow',
    });
  });

  it('reports "unchanged" on a second run, changing nothing and duplicating nothing', async () => {
    const from = kc.calls.length;
    const second = await runSetup(kc);
    assert.equal(second.code, 0, second.stderr);
    assert.deepEqual(changes(second.stderr), []);
    assert.match(second.stderr, /gw idp setup: unchanged — the realm was already set up/);
    assert.ok(reportLines(second.stderr).includes('unchanged users: password of alice (it signs in)'));
    assert.deepEqual(writes(kc, from), [], 'no call changed anything');
    const realm = kc.realm(REALM);
    assert.equal(scopesNamed(realm, 'mcp-gateway').length, 1);
    assert.equal(scopesNamed(realm, 'mcp-gateway')[0]!.protocolMappers.length, 2);
    assert.equal([...realm.groups.values()].filter((g) => g.name === 'mcp-users').length, 1);
    assert.equal(realm.users.size, 2);
    assert.equal(second.stdout, first.stdout, 'the same GwPolicy');
  });
});

describe('gw idp setup on a realm prepared by hand', () => {
  let kc: KeycloakStandIn;
  let run: Awaited<ReturnType<typeof runSetup>>;
  let scopeId: string;
  let bystander: string;

  before(async () => {
    kc = await startRealm();
    const realm = kc.realm(REALM);
    // The scope exists as an optional realm scope, with a stale audience, an extra key someone
    // set, and no group mapper; one client has it as an optional scope.
    scopeId = randomUUID();
    realm.clientScopes.set(scopeId, {
      id: scopeId,
      name: 'mcp-gateway',
      protocol: OIDC,
      attributes: {},
      protocolMappers: [
        {
          id: randomUUID(),
          name: 'audience mapper',
          protocol: OIDC,
          protocolMapper: 'oidc-audience-mapper',
          consentRequired: false,
          config: {
            'included.custom.audience': 'https://old.example.com/mcp',
            'access.token.claim': 'true',
            'id.token.claim': 'true',
          },
        },
      ],
    });
    realm.realmDefaults.set(scopeId, false);
    const adminCli = [...realm.clients.values()].find((c) => c.clientId === 'admin-cli')!;
    adminCli.scopes.set(scopeId, false);
    // A subgroup of the same name: the exact search answers its parent, which is not the group.
    const team = { id: randomUUID(), name: 'team' };
    realm.groups.set(team.id, team);
    const nested = { id: randomUUID(), name: 'mcp-users', parentId: team.id };
    realm.groups.set(nested.id, nested);
    // alice: another email and a temporary password; bob: another password; carol: not configured.
    addUser(realm, {
      username: 'Alice',
      email: 'alice@old.example.com',
      firstName: 'Alice',
      lastName: 'Liddell',
      password: USER_PASSWORD,
      requiredActions: ['UPDATE_PASSWORD'],
    });
    addUser(realm, {
      username: 'bob',
      email: 'bob@example.com',
      firstName: 'Bob',
      lastName: 'Builder',
      password: 'old',
    });
    bystander = addUser(realm, { username: 'carol', email: 'carol@example.com', password: 'carols-own' }).id;
    run = await runSetup(kc);
  });
  after(() => kc?.close());

  it('changes only what differs, and says what', () => {
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(changes(run.stderr), [
      'updated client scope: mapper "audience mapper" (set included.custom.audience)',
      'created client scope: mapper "group mapper" (oidc-group-membership-mapper)',
      'updated default scope: realm default of new clients (was a realm optional scope)',
      'updated default scope: existing clients (added to 6: account, account-console, admin-cli, broker, realm-management, security-admin-console)',
      'created group: mcp-users',
      'updated users: alice (set email)',
      'updated users: password of alice (set again: it was temporary)',
      'created users: alice in mcp-users',
      'updated users: password of bob (set again: it did not sign in)',
      'created users: bob in mcp-users',
    ]);
    assert.ok(reportLines(run.stderr).includes('unchanged client scope: mcp-gateway'));
  });

  it('keeps what it does not manage and completes what it does', () => {
    const realm = kc.realm(REALM);
    const scope = realm.clientScopes.get(scopeId)!;
    assert.equal(scopesNamed(realm, 'mcp-gateway').length, 1, 'the existing scope was used');
    const audience = scope.protocolMappers.find((m) => m.name === 'audience mapper')!;
    assert.deepEqual(audience.config, {
      'included.custom.audience': MCP_URL,
      'access.token.claim': 'true',
      'id.token.claim': 'true',
    });
    assert.equal(realm.realmDefaults.get(scopeId), true, 'moved from optional to default');
    const adminCli = [...realm.clients.values()].find((c) => c.clientId === 'admin-cli')!;
    assert.equal(adminCli.scopes.get(scopeId), true, 'the optional assignment became a default one');
    const topLevel = [...realm.groups.values()].filter((g) => g.name === 'mcp-users' && !g.parentId);
    assert.equal(topLevel.length, 1, 'a top-level group was made; the subgroup is not it');
    const alice = [...realm.users.values()].find((u) => u.username === 'alice')!;
    assert.equal(alice.email, 'alice@example.com');
    assert.deepEqual(alice.requiredActions, [], 'the password is no longer temporary');
    const bob = [...realm.users.values()].find((u) => u.username === 'bob')!;
    assert.equal(bob.password, USER_PASSWORD);
    const carol = realm.users.get(bystander)!;
    assert.equal(carol.password, 'carols-own');
    assert.equal(carol.groups.size, 0, 'users that are not configured are left alone');
  });

  it('then reports "unchanged"', async () => {
    const again = await runSetup(kc);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(changes(again.stderr), []);
  });
});
