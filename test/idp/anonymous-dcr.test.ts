// --allow-anonymous-dcr: without it no registration policy is read or removed; with it a warning
// says it is for local testing, the trusted-hosts policies and the anonymous allowed-client-templates
// one are removed (the authenticated one and the other restrictions stay), and a second run
// finds none left.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { REGISTRATION_POLICY_TYPE } from '../support/keycloak/model.ts';
import type { KeycloakStandIn } from '../support/keycloak/server.ts';
import { changes, REALM, reportLines, runSetup, startRealm } from './helpers.ts';

const policies = (kc: KeycloakStandIn) =>
  [...kc.realm(REALM).components.values()]
    .filter((component) => component.providerType === REGISTRATION_POLICY_TYPE)
    .map((component) => `${component.providerId} ${component.subType}`)
    .sort();

describe('gw idp setup and anonymous Dynamic Client Registration', () => {
  let kc: KeycloakStandIn;
  let before8: string[];
  before(async () => {
    kc = await startRealm();
    before8 = policies(kc);
  });
  after(() => kc?.close());

  it('keeps every registration policy without the flag, and reads none', async () => {
    const run = await runSetup(kc);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(policies(kc), before8);
    assert.equal(before8.length, 8);
    assert.ok(!kc.calls.some((call) => call.path.includes('/components')));
    assert.doesNotMatch(run.stderr, /warning/);
  });

  it('with the flag warns that it is for local testing and removes only the two anonymous restrictions', async () => {
    const from = kc.calls.length;
    const run = await runSetup(kc, ['--allow-anonymous-dcr']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /warning: --allow-anonymous-dcr removes .* for local testing only/);
    assert.deepEqual(policies(kc), [
      'allowed-client-templates authenticated',
      'allowed-protocol-mappers anonymous',
      'allowed-protocol-mappers authenticated',
      'consent-required anonymous',
      'max-clients anonymous',
      'scope anonymous',
    ]);
    assert.deepEqual(changes(run.stderr), [
      'removed anonymous DCR: policy "Trusted Hosts" (trusted-hosts, anonymous)',
      'removed anonymous DCR: policy "Allowed Client Scopes" (allowed-client-templates, anonymous)',
    ]);
    const listing = kc.calls.slice(from).find((call) => call.path.includes('/components?'));
    assert.equal(
      listing?.path,
      `/admin/realms/mcp/components?type=${encodeURIComponent(REGISTRATION_POLICY_TYPE)}`,
      'listed by the registration policy type',
    );
  });

  it('finds none left on a second run', async () => {
    const run = await runSetup(kc, ['--allow-anonymous-dcr']);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(changes(run.stderr), []);
    assert.ok(
      reportLines(run.stderr).includes('unchanged anonymous DCR: anonymous registration restrictions (none left)'),
    );
  });
});
