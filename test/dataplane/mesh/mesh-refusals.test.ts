// A Service in Istio's ambient mesh where gw's connection is not an HTTPRoute backend's pool (an
// AI provider's backendRef, a policy endpoint, an MCP target) is refused, naming it, rather than
// reached in plaintext (src/dataplane/upstream/mesh-refusals.ts, decision 0035 part 3); the same
// Service as an HTTPRoute backend compiles. The configuration comes from the controller (a Gateway
// in the mesh, a Service of an ambient namespace with a ready pod).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Controller } from '../../../src/controller/controller.ts';
import { compileGateway } from '../../../src/dataplane/config/compile.ts';
import { type MeshSettings, meshSettingsFromEnv } from '../../../src/dataplane/mesh/settings.ts';
import { MeshTransport } from '../../../src/dataplane/mesh/transport.ts';
import { PolicyRuntime } from '../../../src/dataplane/policies/runtime.ts';
import { systemLookup } from '../../../src/dataplane/upstream/address-lookup.ts';
import { UpstreamPools } from '../../../src/dataplane/upstream/pools.ts';
import { MemoryStore } from '../../../src/store/memory-store.ts';
import { admitted, GATEWAY_CLASS_YAML } from '../../helpers/objects.ts';

const WORLD = `${GATEWAY_CLASS_YAML}apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ai, namespace: models}
spec:
  gatewayClassName: gw
  infrastructure: {parametersRef: {group: gw.dev, kind: GwParameters, name: ai}}
  listeners: [{name: http, protocol: HTTP, port: 8080}]
---
apiVersion: gw.dev/v1alpha1
kind: GwParameters
metadata: {name: ai, namespace: models}
spec: {mesh: {}}
---
apiVersion: v1
kind: Namespace
metadata: {name: models, labels: {istio.io/dataplane-mode: ambient}}
---
apiVersion: v1
kind: Service
metadata: {name: model, namespace: models}
spec: {clusterIP: 10.96.0.10, selector: {app: model}, ports: [{name: http, port: 80}]}
---
apiVersion: v1
kind: Pod
metadata: {name: model-0, namespace: models, labels: {app: model}}
spec: {containers: [{name: model, image: model:1}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: model-1, namespace: models, labels: {kubernetes.io/service-name: model}}
addressType: IPv4
endpoints: [{addresses: [10.0.0.1], targetRef: {kind: Pod, namespace: models, name: model-0}}]
ports: [{name: http, port: 8000}]
---
`;

/** The problems of compiling Gateway models/ai with `extra` objects beside WORLD, in a process in the mesh or not. */
function problemsWith(extra: string, inMesh = true): readonly string[] {
  const store = new MemoryStore();
  for (const object of admitted(WORLD + extra)) store.apply(object);
  const config = new Controller(store, { now: () => '2026-01-01T00:00:00Z' }).reconcile().configs.get('models/ai')!;
  const state = new Map<string, unknown>();
  return compileGateway('models/ai', config, {
    // A process with the mesh environment (its certificate source not started: nothing connects here).
    mesh: inMesh
      ? new MeshTransport(
          meshSettingsFromEnv({
            CA_ADDRESS: 'https://localhost:15012',
            POD_NAMESPACE: 'models',
            SERVICE_ACCOUNT: 'ai',
          }) as MeshSettings,
        )
      : undefined,
    pools: new UpstreamPools(),
    policyRuntime: new PolicyRuntime(),
    lifetime: <T>(key: string, create: () => T) =>
      (state.has(key) ? state.get(key) : state.set(key, create()).get(key)) as T,
    // Nothing listens or resolves here: only compiling is looked at.
    servesPort: () => false,
    resolveHost: systemLookup,
  }).problems;
}

const route = (backendRef: string) => `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r, namespace: models}
spec:
  parentRefs: [{name: ai}]
  rules: [{backendRefs: [${backendRef}]}]
---
`;

describe('Services in the mesh where only HTTPRoute backends are tunnelled', () => {
  it('an HTTPRoute backend Service in the mesh compiles (it is reached over HBONE)', () => {
    assert.deepEqual(problemsWith(route('{name: model, port: 80}')), []);
  });

  it('in a process without the mesh environment, the HTTPRoute backend is refused, saying so', () => {
    const problems = problemsWith(route('{name: model, port: 80}'), false);
    assert.equal(problems.length, 1);
    assert.match(
      problems[0]!,
      /Service models\/model: the Service is in the ambient mesh .* no mesh workload identity/,
    );
  });

  it("an AI provider's backendRef to it is refused, naming the Service", () => {
    const problems = problemsWith(`apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: llm, namespace: models}
spec:
  ai: {provider: {custom: {backendRef: {name: model, port: 80}, formats: [{type: Completions}]}}}
---
${route('{group: gw.dev, kind: GwBackend, name: llm}')}`);
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(problems[0]!, /custom\.backendRef.*Service models\/model: is in the ambient mesh/);
  });

  it('a policy endpoint (ExtAuth) naming it is refused, naming the field', () => {
    const problems = problemsWith(`apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: authz, namespace: models}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai}]
  traffic: {phase: PreRouting, extAuth: {backendRef: {name: model, port: 80}, grpc: {}}}
---
${route('{name: model, port: 80}')}`);
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(problems[0]!, /extAuth\.backendRef.*Service models\/model is in the ambient mesh/);
  });
});
