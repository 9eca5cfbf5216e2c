// A dynamicForwardProxy GwBackend's Authorized condition: False (NoAuthorizationPolicy) naming each
// route rule that sends to it with no authorization policy (traffic.authorization or extAuth on
// the rule or in PreRouting, frontend.networkAuthorization), True once every one has one; absent
// when no route sends to it. The backend stays Accepted: it is a warning.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GwBackendStatus } from '../../src/api/kinds/gw-backend.ts';
import { GwBackendStatus as GwBackendStatusSchema } from '../../src/api/kinds/gw-backend.ts';
import { formatFieldError } from '../../src/api/validate/errors.ts';
import { validateValue } from '../../src/api/validate/schema-validator.ts';
import { snapshotOf } from '../../src/controller/snapshot.ts';
import { translate } from '../../src/controller/translate.ts';
import { admitted, gatewayYaml } from '../helpers/objects.ts';

const NOW = '2026-01-01T00:00:00Z';

function route(name: string, path: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}}
spec:
  parentRefs: [{name: ai}]
  rules: [{matches: [{path: {type: PathPrefix, value: ${path}}}], backendRefs: [{group: gw.dev, kind: GwBackend, name: egress}]}]
---
`;
}

const WORLD = `${gatewayYaml(8080)}apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: egress}
spec: {dynamicForwardProxy: {}}
---
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: unused}
spec: {dynamicForwardProxy: {}}
---
${route('open', '/open')}${route('guarded', '/guarded')}apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: only-admins}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: guarded}]
  traffic: {authorization: {policy: {matchExpressions: ['request.headers["x-role"] == "admin"']}}}
---
`;

function backendStatus(yaml: string, name: string): GwBackendStatus {
  const statuses = translate(snapshotOf(admitted(yaml)), NOW, '1').statuses.get('backends')!;
  return statuses.get(`default/${name}`) as GwBackendStatus;
}

describe('dynamicForwardProxy Authorized condition', () => {
  it('is False naming each route rule no authorization policy covers; the backend stays Accepted', () => {
    const status = backendStatus(WORLD, 'egress');
    assert.deepEqual(validateValue(GwBackendStatusSchema, status, 'status').errors.map(formatFieldError), []);
    const authorized = status.conditions!.find((c) => c.type === 'Authorized')!;
    assert.equal(authorized.status, 'False');
    assert.equal(authorized.reason, 'NoAuthorizationPolicy');
    assert.equal(
      authorized.message,
      'HTTPRoute default/open rule 0 (Gateway default/ai listener http): no authorization policy (traffic.authorization, traffic.extAuth or frontend.networkAuthorization) covers this route to a dynamic forward proxy, so every client of the listener can reach any destination its rules permit; attach a GwPolicy with one',
    );
    assert.equal(status.conditions!.find((c) => c.type === 'Accepted')!.status, 'True');
  });

  it('is True when every route has one (a frontend networkAuthorization on the Gateway covers the open route)', () => {
    const status = backendStatus(
      `${WORLD}apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: network}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai}]
  frontend: {networkAuthorization: {policy: {matchExpressions: ['source.address == "10.0.0.1"']}}}
`,
      'egress',
    );
    const authorized = status.conditions!.find((c) => c.type === 'Authorized')!;
    assert.equal(authorized.status, 'True', authorized.message);
    assert.equal(authorized.reason, 'AuthorizationPolicy');
  });

  it('is absent when no route sends to the backend', () => {
    const status = backendStatus(WORLD, 'unused');
    assert.equal(
      status.conditions!.some((c) => c.type === 'Authorized'),
      false,
    );
  });

  it('a range admission lets through but that does not parse makes the GwBackend Accepted False (Invalid)', () => {
    const status = backendStatus(
      `${gatewayYaml(8080)}apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: egress}
spec: {dynamicForwardProxy: {deniedAddresses: [10.0.0.0/8, "1:2:3/64"]}}
`,
      'egress',
    );
    const accepted = status.conditions!.find((c) => c.type === 'Accepted')!;
    assert.equal(accepted.status, 'False');
    assert.equal(accepted.reason, 'Invalid');
    assert.equal(
      accepted.message,
      'spec.dynamicForwardProxy.deniedAddresses[1]: "1:2:3/64" is not an address range (a.b.c.d/n or x:y::z/n); correct or remove the entry',
    );
  });
});
