import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadResources } from '../../src/api/load/documents.ts';
import { admit } from '../../src/api/validate/admission.ts';
import { DATAPLANE_CONFIG_VERSION, type DataPlaneConfig } from '../../src/contract/dataplane-config.ts';
import { Controller } from '../../src/controller/controller.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import { admitted } from '../helpers/objects.ts';

const examples = new URL('../../examples/', import.meta.url).pathname;

function configsOf(extraYaml = ''): Map<string, DataPlaneConfig> {
  const store = new MemoryStore();
  for (const document of loadResources([examples]).documents) store.apply(admit(document.value).object!);
  if (extraYaml) for (const object of admitted(extraYaml)) store.apply(object);
  return new Controller(store, { now: () => '2026-01-01T00:00:00Z' }).reconcile().configs;
}

describe('data-plane configuration', () => {
  it('is plain versioned JSON with every policy merged and every secret resolved', () => {
    const config = configsOf().get('default/ai')!;
    assert.deepEqual(JSON.parse(JSON.stringify(config)), config, 'survives serialisation unchanged');
    assert.equal(config.apiVersion, DATAPLANE_CONFIG_VERSION);
    assert.deepEqual(config.gateway, { namespace: 'default', name: 'ai' });
    assert.match(config.revision, /^\d+$/);
    const [listener] = config.listeners;
    assert.equal(listener!.port, 8080);
    const [rule] = listener!.routes[0]!.rules;
    assert.deepEqual(rule!.matches, [{ path: { type: 'PathPrefix', value: '/v1' } }]);
    assert.deepEqual(rule!.traffic.timeouts, { request: '300s' });
    assert.deepEqual(rule!.traffic.apiKeyAuthentication, { secretRef: { name: 'client-keys' }, mode: 'Strict' });
    const [ref] = rule!.backendRefs;
    assert.equal(ref!.backend, 'GwBackend default/demo-llm');
    assert.deepEqual(ref!.policy.http, { requestTimeout: '120s' });
    assert.deepEqual(config.backends['GwBackend default/demo-llm']!.spec, {
      ai: { provider: { alpha: {}, host: '127.0.0.1', port: 8081 } },
    });
    assert.deepEqual(config.data['Secret default/client-keys'], { 'team-a': 'key-for-team-a' });
  });

  it('carries the PreRouting traffic policy on the listener and the Services policies name as endpoints', () => {
    const config = configsOf(`apiVersion: v1
kind: Service
metadata: {name: authz}
spec: {clusterIP: 10.0.0.9, ports: [{port: 9000}]}
---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: ext-authz}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai}]
  traffic: {phase: PreRouting, extAuth: {backendRef: {name: authz, port: 9000}, grpc: {}}}
`).get('default/ai')!;
    const [listener] = config.listeners;
    assert.equal(listener!.preRouting.phase, 'PreRouting');
    assert.deepEqual((listener!.preRouting.extAuth as { backendRef: unknown }).backendRef, {
      name: 'authz',
      port: 9000,
      group: '',
      kind: 'Service',
    });
    assert.equal(listener!.routes[0]!.rules[0]!.traffic.extAuth, undefined, 'not in the PostRouting policy');
    const service = config.backends['Service default/authz']!.spec as { clusterIP: string };
    assert.equal(service.clusterIP, '10.0.0.9');
  });

  it('places programmed models on listeners and on GwModel "*" route rules, and leaves out the rest', () => {
    const configs = configsOf(`
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: picked}
spec:
  parentRefs: [{name: ai}]
  rules: [{name: any, matches: [{path: {type: PathPrefix, value: /models}}], backendRefs: [{group: gw.dev, kind: GwModel, name: '*'}]}]
---
apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: gpt-4o}
spec: {parentRefs: [{name: ai}], provider: Alpha}
---
apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: claude}
spec: {parentRefs: [{kind: HTTPRoute, name: picked, sectionName: any}], provider: Gamma, match: {model: 'claude-*'}}
---
apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: broken}
spec: {parentRefs: [{name: ai, sectionName: nope}], provider: Alpha}
`);
    const config = configs.get('default/ai')!;
    assert.deepEqual(config.listeners[0]!.modelRule?.models?.keys, ['default/gpt-4o']);
    const modelsRoute = config.listeners[0]!.routes.find((r) => r.route === 'default/picked')!;
    assert.deepEqual(modelsRoute.rules[0]!.models?.keys, ['default/claude']);
    assert.deepEqual(modelsRoute.rules[0]!.backendRefs, []);
    assert.deepEqual(Object.keys(config.models).sort(), ['default/claude', 'default/gpt-4o']);
    assert.equal(config.models['default/claude']!.provider, 'Gamma');
  });
});
