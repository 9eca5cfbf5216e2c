import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PolicyStatus } from '../../src/api/kinds/gateway-api/shared.ts';
import { formatFieldError } from '../../src/api/validate/errors.ts';
import { validateValue } from '../../src/api/validate/schema-validator.ts';
import { translateGatewayApi } from '../../src/controller/gateway-api/index.ts';
import { policyStatus } from '../../src/controller/policies/status.ts';
import { snapshotOf } from '../../src/controller/snapshot.ts';
import { admitted, GW_GATEWAY } from '../helpers/objects.ts';

const NOW = '2026-01-01T00:00:00Z';

const WORLD = `${GW_GATEWAY}apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: other}
spec: {gatewayClassName: someone-else, listeners: [{name: http, protocol: HTTP, port: 8080}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: llm}
spec:
  parentRefs: [{name: ai}]
  rules: [{name: chat, backendRefs: [{group: gw.dev, kind: GwBackend, name: openai}]}]
---
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: openai}
spec: {ai: {provider: {alpha: {}}}}
---
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: unused}
spec: {ai: {provider: {alpha: {}}}}
`;

/** The status of GwPolicy default/p, given the lines of its spec, among the objects of WORLD. */
function statusOf(spec: string): PolicyStatus {
  const world = admitted(WORLD);
  const policy = admitted(`apiVersion: gw.dev/v1alpha1\nkind: GwPolicy\nmetadata: {name: p}\nspec:${spec}`)[0]!;
  const snapshot = snapshotOf([...world, policy]);
  const status = policyStatus(policy, snapshot, translateGatewayApi(snapshot, NOW), NOW);
  // What the controller writes must itself be a valid status of the CRD.
  assert.deepEqual(validateValue(PolicyStatus, status, 'status').errors.map(formatFieldError), []);
  return status;
}

function summary(status: PolicyStatus) {
  return status.ancestors.map((a) => ({
    ancestor: `${a.ancestorRef.kind}/${a.ancestorRef.name}`,
    conditions: a.conditions.map((c) => `${c.type}=${c.status}/${c.reason}: ${c.message}`),
  }));
}

describe('GwPolicy status', () => {
  it('one ancestor per gw Gateway reached, through a route rule', () => {
    const status = statusOf(`
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: llm, sectionName: chat}]
  traffic: {buffer: {request: {maxBytes: 1Mi}}}
`);
    assert.deepEqual(summary(status), [
      {
        ancestor: 'Gateway/ai',
        conditions: [
          'Accepted=True/Accepted: Policy accepted',
          'Attached=True/Attached: Attached to HTTPRoute default/llm rule chat',
        ],
      },
    ]);
    assert.equal(status.ancestors[0]!.ancestorRef.namespace, 'default');
    assert.equal(status.ancestors[0]!.controllerName, 'gw.dev/gateway-controller');
  });

  it('a backend policy reaches the Gateways whose routes use the backend', () => {
    const status = statusOf(`
  targetRefs: [{group: gw.dev, kind: GwBackend, name: openai}, {group: gw.dev, kind: GwBackend, name: unused}]
  backend: {http: {requestTimeout: 30s}}
`);
    assert.deepEqual(summary(status), [
      {
        ancestor: 'Gateway/ai',
        conditions: [
          'Accepted=True/Accepted: Policy accepted',
          'Attached=True/Attached: Attached to GwBackend default/openai',
        ],
      },
      {
        ancestor: 'StatusSummary/summary',
        conditions: ['Attached=False/Pending: GwBackend default/unused is not attached to any gw Gateway'],
      },
    ]);
  });

  it('missing targets are TargetNotFound on the summary ancestor', () => {
    const status = statusOf(`
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai, sectionName: https}]
  traffic: {buffer: {request: {maxBytes: 1Mi}}}
`);
    assert.deepEqual(summary(status), [
      {
        ancestor: 'StatusSummary/summary',
        conditions: ['Accepted=False/TargetNotFound: Gateway default/ai has no listener "https" (it has http)'],
      },
    ]);
  });

  it('a Gateway of another controller is not reached', () => {
    const status = statusOf(`
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: other}]
  traffic: {buffer: {request: {maxBytes: 1Mi}}}
`);
    assert.deepEqual(summary(status), [
      {
        ancestor: 'StatusSummary/summary',
        conditions: ['Attached=False/Pending: Gateway default/other is not attached to any gw Gateway'],
      },
    ]);
  });
});

describe('GwPolicy status: the contents of the Secrets its backend authentication reads', () => {
  const withSecret = (data: string) => {
    const world = admitted(`${WORLD}---
apiVersion: v1
kind: Secret
metadata: {name: upstream-key}
stringData: ${data}
`);
    const policy = admitted(`apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: p}
spec:
  targetRefs: [{group: gw.dev, kind: GwBackend, name: openai}]
  backend: {auth: {secretRef: {name: upstream-key, key: token}}}
`)[0]!;
    const snapshot = snapshotOf([...world, policy]);
    const status = policyStatus(policy, snapshot, translateGatewayApi(snapshot, NOW), NOW);
    assert.deepEqual(validateValue(PolicyStatus, status, 'status').errors.map(formatFieldError), []);
    return status.ancestors[0]!.conditions.find((c) => c.type === 'ResolvedRefs');
  };

  it('a Secret without the data key is ResolvedRefs False (InvalidCredentialRef), naming field, Secret and key', () => {
    const resolved = withSecret('{Authorization: sk-never-shown}')!;
    assert.equal(`${resolved.status}/${resolved.reason}`, 'False/InvalidCredentialRef');
    assert.equal(resolved.message, 'spec.backend.auth.secretRef.key: Secret default/upstream-key has no key "token"');
  });

  it('the Secret holding the key resolves', () => {
    assert.equal(withSecret('{token: sk-upstream}'), undefined);
  });
});
