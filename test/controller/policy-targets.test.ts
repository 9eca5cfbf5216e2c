import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../src/api/validate/admission.ts';
import { resolvePolicyTargets } from '../../src/controller/policies/targets.ts';
import { snapshotOf } from '../../src/controller/snapshot.ts';
import { admitted } from '../helpers/objects.ts';

const world = admitted(`
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ai, labels: {tier: edge}}
spec:
  gatewayClassName: gw
  listeners: [{name: http, protocol: HTTP, port: 8080}, {name: admin, protocol: HTTP, port: 9090}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: llm}
spec:
  parentRefs: [{name: ai}]
  rules: [{name: chat, backendRefs: [{group: gw.dev, kind: GwBackend, name: openai}]}]
---
apiVersion: v1
kind: Service
metadata: {name: mcp}
spec: {ports: [{name: http, port: 8080}]}
---
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: openai}
spec:
  ai:
    groups:
      - providers: [{name: primary, alpha: {}}]
      - providers: [{name: fallback, gamma: {}}]
`);

function policy(targets: string, section = 'traffic: {buffer: {request: {maxBytes: 1Mi}}}'): KubeObject {
  return admitted(`
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: p}
spec:
  ${targets}
  ${section}
`)[0]!;
}

function resolve(targets: string, section?: string) {
  const snapshot = snapshotOf(world);
  return resolvePolicyTargets(policy(targets, section), snapshot);
}

describe('policy target resolution', () => {
  it('a Gateway, a listener, a route and a route rule, with their levels', () => {
    const gateway = resolve('targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai}]');
    assert.deepEqual(
      gateway.targets.map((t) => [t.level, t.description]),
      [['Gateway', 'Gateway default/ai']],
    );
    const listener = resolve(
      'targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai, sectionName: admin}]',
    );
    assert.deepEqual(
      listener.targets.map((t) => [t.level, t.description]),
      [['Listener', 'Gateway default/ai listener admin']],
    );
    const rule = resolve(
      'targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: llm, sectionName: chat}]',
    );
    assert.deepEqual(
      rule.targets.map((t) => [t.level, t.description]),
      [['RouteRule', 'HTTPRoute default/llm rule chat']],
    );
  });

  it('a Service port and a GwBackend provider, at backend levels', () => {
    const service = resolve(
      "targetRefs: [{group: '', kind: Service, name: mcp, sectionName: '8080'}]",
      'backend: {http: {requestTimeout: 5s}}',
    );
    assert.deepEqual(
      service.targets.map((t) => [t.level, t.description]),
      [['BackendSection', 'Service default/mcp port 8080']],
    );
    const provider = resolve(
      'targetRefs: [{group: gw.dev, kind: GwBackend, name: openai, sectionName: fallback}]',
      'backend: {http: {requestTimeout: 5s}}',
    );
    assert.deepEqual(
      provider.targets.map((t) => [t.level, t.description]),
      [['BackendSection', 'GwBackend default/openai provider fallback']],
    );
  });

  it('a Gateway port for frontend policies', () => {
    const resolution = resolve(
      'targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai, port: 9090}]',
      'frontend: {tcp: {keepalive: {}}}',
    );
    assert.deepEqual(
      resolution.targets.map((t) => t.description),
      ['Gateway default/ai port 9090'],
    );
    const missing = resolve(
      'targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai, port: 7000}]',
      'frontend: {tcp: {keepalive: {}}}',
    );
    assert.deepEqual(missing.problems, [
      { reason: 'TargetNotFound', message: 'Gateway default/ai has no listener on port 7000' },
    ]);
  });

  it('targets that do not exist are reported, never dropped silently', () => {
    const resolution = resolve(`targetRefs:
    - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: missing}
    - {group: gateway.networking.k8s.io, kind: HTTPRoute, name: llm, sectionName: embeddings}`);
    assert.deepEqual(resolution.targets, []);
    assert.deepEqual(
      resolution.problems.map((p) => p.message),
      ['HTTPRoute default/missing does not exist', 'HTTPRoute default/llm has no rule "embeddings" (it has chat)'],
    );
  });

  it('targetSelectors select by labels in the policy namespace', () => {
    const selected = resolve(
      'targetSelectors: [{group: gateway.networking.k8s.io, kind: Gateway, matchLabels: {tier: edge}}]',
    );
    assert.deepEqual(
      selected.targets.map((t) => t.description),
      ['Gateway default/ai'],
    );
    const none = resolve(
      'targetSelectors: [{group: gateway.networking.k8s.io, kind: Gateway, matchLabels: {tier: core}}]',
    );
    assert.deepEqual(
      none.problems.map((p) => p.message),
      ['no Gateway in namespace default matches the labels tier=core'],
    );
  });
});
