import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { translateGatewayApi } from '../../src/controller/gateway-api/index.ts';
import { effectivePolicy, indexPolicies } from '../../src/controller/policies/attachments.ts';
import { valuesOf } from '../../src/controller/policies/merge.ts';
import { snapshotOf } from '../../src/controller/snapshot.ts';
import { admitted, GW_GATEWAY } from '../helpers/objects.ts';

const WORLD = admitted(`${GW_GATEWAY}apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: llm}
spec:
  parentRefs: [{name: ai}]
  rules: [{name: chat, backendRefs: [{group: gw.dev, kind: GwBackend, name: openai}]}]
---
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: openai, creationTimestamp: '2026-01-01T00:00:00Z'}
spec:
  ai:
    groups: [{providers: [{name: primary, alpha: {}, policies: {http: {requestTimeout: 5s}}}]}]
  policies: {tls: {sni: inline.example.com}}
---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: gateway-wide, creationTimestamp: '2026-01-01T00:00:00Z'}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai}]
  traffic: {buffer: {request: {maxBytes: 1Mi}}, timeouts: {request: 60s}}
---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: chat-rule, creationTimestamp: '2026-01-02T00:00:00Z'}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: llm, sectionName: chat}]
  traffic: {timeouts: {request: 120s}}
---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: backend-tls, creationTimestamp: '2026-01-02T00:00:00Z'}
spec:
  targetRefs: [{group: gw.dev, kind: GwBackend, name: openai}]
  backend: {tls: {sni: policy.example.com}, http: {requestTimeout: 30s}, tcp: {connectTimeout: 2s}}
---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: edge, creationTimestamp: '2026-01-02T00:00:00Z'}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai, port: 8080}]
  frontend: {tls: {handshakeTimeout: 5s}}
`);

describe('effective policy at an attachment point', () => {
  const snapshot = snapshotOf(WORLD);
  const listener = translateGatewayApi(snapshot, '2026-01-01T00:00:00Z').listeners.get('default/ai')![0]!;
  const index = indexPolicies(snapshot);

  it('traffic merges Gateway and route rule policies per field', () => {
    const effective = effectivePolicy(index, {
      gateway: 'default/ai',
      listener,
      route: { namespace: 'default', name: 'llm', rule: 'chat' },
    });
    assert.deepEqual(valuesOf(effective.traffic), {
      timeouts: { request: '120s' },
      buffer: { request: { maxBytes: '1Mi', failureMode: 'FailClosed' } },
    });
    assert.equal(effective.traffic.timeouts!.from.source, 'GwPolicy default/chat-rule');
    assert.deepEqual(
      effective.traffic.timeouts!.overridden.map((p) => p.source),
      ['GwPolicy default/gateway-wide'],
    );
    assert.deepEqual(valuesOf(effective.frontend), {
      tls: { handshakeTimeout: '5s', alpnProtocols: ['h2', 'http/1.1'] },
    });
  });

  it('backend policy: inline beats GwPolicy, and the provider beats the backend', () => {
    const effective = effectivePolicy(index, {
      gateway: 'default/ai',
      listener,
      route: { namespace: 'default', name: 'llm', rule: 'chat' },
      backend: { kind: 'GwBackend', namespace: 'default', name: 'openai', section: 'primary' },
    });
    assert.equal((effective.backend.tls!.value as { sni: string }).sni, 'inline.example.com');
    assert.equal(effective.backend.tls!.from.source, 'GwBackend default/openai');
    assert.deepEqual(effective.backend.http!.value, { requestTimeout: '5s' });
    assert.equal(effective.backend.http!.from.source, 'GwBackend default/openai provider primary');
    assert.deepEqual(effective.backend.tcp!.value, { connectTimeout: '2s' });
  });
});

describe('PreRouting and PostRouting traffic policies', () => {
  const world = admitted(`${GW_GATEWAY}apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec:
  parentRefs: [{name: ai}]
  rules: [{name: all, backendRefs: [{name: svc, port: 80}]}]
---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: before-routing, creationTimestamp: '2026-01-01T00:00:00Z'}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai}]
  traffic: {phase: PreRouting, authorization: {policy: {matchExpressions: ['true']}}}
---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: after-routing, creationTimestamp: '2026-01-02T00:00:00Z'}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai}]
  traffic: {authorization: {policy: {matchExpressions: ['false']}}, timeouts: {request: 5s}}
`);
  const snapshot = snapshotOf(world);
  const listener = translateGatewayApi(snapshot, '2026-01-01T00:00:00Z').listeners.get('default/ai')![0]!;
  const index = indexPolicies(snapshot);
  const effective = effectivePolicy(index, {
    gateway: 'default/ai',
    listener,
    route: { namespace: 'default', name: 'web', rule: 'all' },
  });

  it('merge apart: the same field in both phases is kept twice, neither overrides the other', () => {
    assert.deepEqual(valuesOf(effective.preRouting), {
      phase: 'PreRouting',
      authorization: { policy: { matchExpressions: ['true'] }, action: 'Allow' },
    });
    assert.deepEqual(valuesOf(effective.traffic), {
      authorization: { policy: { matchExpressions: ['false'] }, action: 'Allow' },
      timeouts: { request: '5s' },
    });
    assert.equal(effective.traffic.authorization!.overridden.length, 0);
  });
});
