// Services in Istio's ambient mesh and the pods to reach them at (src/controller/mesh-endpoints.ts,
// decision 0035 part 3): enrollment by the namespace's or the pod's istio.io/dataplane-mode label,
// the pods ztunnel does not capture (opted out, sidecar-injected, host network), readiness from
// the EndpointSlice, each Service port's pod port, the pod's ServiceAccount; and the data-plane
// configuration of a Gateway in the mesh (GwParameters mesh) carries them, of another does not.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Controller } from '../../src/controller/controller.ts';
import { serviceMesh } from '../../src/controller/mesh-endpoints.ts';
import { snapshotOf } from '../../src/controller/snapshot.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import { admitted, GATEWAY_CLASS_YAML } from '../helpers/objects.ts';

const SERVICE = `apiVersion: v1
kind: Service
metadata: {name: model, namespace: models}
spec:
  clusterIP: 10.96.0.10
  selector: {app: model}
  ports: [{name: http, port: 80, targetPort: http}, {name: metrics, port: 9090}]
---
`;

function namespace(labels = ''): string {
  return `apiVersion: v1\nkind: Namespace\nmetadata: {name: models${labels ? `, labels: {${labels}}` : ''}}\n---\n`;
}

function pod(name: string, extra: { labels?: string; annotations?: string; spec?: string } = {}): string {
  const labels = `app: model${extra.labels ? `, ${extra.labels}` : ''}`;
  const annotations = extra.annotations ? `, annotations: {${extra.annotations}}` : '';
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: models, labels: {${labels}}${annotations}}
spec: {containers: [{name: model, image: model:1}]${extra.spec ? `, ${extra.spec}` : ''}}
---
`;
}

/** An EndpointSlice of Service models/model: [pod name, address, ready]. */
function slice(endpoints: [string, string, boolean | undefined][], name = 'model-1'): string {
  const items = endpoints
    .map(
      ([pod, address, ready]) =>
        `- {addresses: [${address}], ${ready === undefined ? '' : `conditions: {ready: ${ready}}, `}targetRef: {kind: Pod, namespace: models, name: ${pod}}}`,
    )
    .join('\n');
  return `apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: ${name}, namespace: models, labels: {kubernetes.io/service-name: model}}
addressType: IPv4
endpoints:
${items}
ports: [{name: http, port: 8000, protocol: TCP}, {name: metrics, port: 9091, protocol: TCP}]
---
`;
}

/** The mesh side of the Service in `yaml` for a Gateway in the mesh on `network` ('' unset). */
function meshOf(yaml: string, network = '') {
  const objects = admitted(yaml);
  const service = objects.find((object) => object.kind === 'Service')!;
  return serviceMesh(service, snapshotOf(objects), { network });
}

const PORTS = { '80': 8000, '9090': 9091 };

describe('Services in the ambient mesh', () => {
  it("an ambient namespace: its ready pods, each Service port's pod port, the pod's ServiceAccount", () => {
    const mesh = meshOf(
      namespace('istio.io/dataplane-mode: ambient') +
        SERVICE +
        pod('model-0', { spec: 'serviceAccountName: model' }) +
        pod('model-1') +
        pod('model-2', { spec: 'serviceAccountName: model' }) +
        slice([
          ['model-1', '10.0.0.2', undefined],
          ['model-0', '10.0.0.1', true],
          ['model-2', '10.0.0.3', false],
        ]),
    );
    assert.deepEqual(mesh, {
      endpoints: [
        { address: '10.0.0.1', namespace: 'models', serviceAccount: 'model', ports: PORTS },
        // A pod that names no ServiceAccount runs as default; a ready condition left unset means ready.
        { address: '10.0.0.2', namespace: 'models', serviceAccount: 'default', ports: PORTS },
      ],
    });
  });

  it('pods ztunnel does not capture are left out: opted out, sidecar-injected, on the host network', () => {
    const mesh = meshOf(
      namespace('istio.io/dataplane-mode: ambient') +
        SERVICE +
        pod('model-0', { labels: 'istio.io/dataplane-mode: none' }) +
        pod('model-1', { annotations: 'sidecar.istio.io/status: "{}"' }) +
        pod('model-2', { spec: 'hostNetwork: true' }) +
        pod('model-3') +
        slice([
          ['model-0', '10.0.0.1', true],
          ['model-1', '10.0.0.2', true],
          ['model-2', '10.0.0.3', true],
          ['model-3', '10.0.0.4', true],
        ]),
    );
    assert.deepEqual(
      mesh?.endpoints.map((endpoint) => endpoint.address),
      ['10.0.0.4'],
    );
  });

  it("a pod's own label enrolls it in a namespace that is not", () => {
    const mesh = meshOf(
      namespace() +
        SERVICE +
        pod('model-0', { labels: 'istio.io/dataplane-mode: ambient' }) +
        pod('model-1') +
        slice([
          ['model-0', '10.0.0.1', true],
          ['model-1', '10.0.0.2', true],
        ]),
    );
    assert.deepEqual(
      mesh?.endpoints.map((endpoint) => endpoint.address),
      ['10.0.0.1'],
    );
  });

  it("only the pods on the Gateway's network (mesh.network; pod label, else namespace label topology.istio.io/network)", () => {
    const yaml =
      namespace('istio.io/dataplane-mode: ambient, topology.istio.io/network: net-a') +
      SERVICE +
      pod('model-0') +
      pod('model-1', { labels: 'topology.istio.io/network: net-b' }) +
      slice([
        ['model-0', '10.0.0.1', true],
        ['model-1', '10.0.0.2', true],
      ]);
    const addresses = (network: string) => meshOf(yaml, network)?.endpoints.map((endpoint) => endpoint.address);
    assert.deepEqual(addresses('net-a'), ['10.0.0.1']);
    assert.deepEqual(addresses('net-b'), ['10.0.0.2']);
    assert.deepEqual(addresses(''), [], 'a Gateway of no network reaches no pod of a named one');
    const unlabelled =
      namespace('istio.io/dataplane-mode: ambient') + SERVICE + pod('model-0') + slice([['model-0', '10.0.0.1', true]]);
    assert.equal(meshOf(unlabelled, '')?.endpoints.length, 1, 'pods of no network label are on the Gateway’s');
  });

  it('a Service behind a waypoint (istio.io/use-waypoint on it or its namespace) gets no pods, and names the waypoint', () => {
    const pods = pod('model-0') + slice([['model-0', '10.0.0.1', true]]);
    const onService = SERVICE.replace(
      'namespace: models}',
      'namespace: models, labels: {istio.io/use-waypoint: waypoint}}',
    );
    assert.deepEqual(meshOf(namespace('istio.io/dataplane-mode: ambient') + onService + pods), {
      endpoints: [],
      waypoint: 'waypoint',
    });
    assert.deepEqual(
      meshOf(namespace('istio.io/dataplane-mode: ambient, istio.io/use-waypoint: ns-waypoint') + SERVICE + pods),
      { endpoints: [], waypoint: 'ns-waypoint' },
    );
    const optedOut = SERVICE.replace('namespace: models}', 'namespace: models, labels: {istio.io/use-waypoint: none}}');
    assert.equal(
      meshOf(namespace('istio.io/dataplane-mode: ambient, istio.io/use-waypoint: ns-waypoint') + optedOut + pods)
        ?.endpoints.length,
      1,
      'use-waypoint: none on the Service opts it out',
    );
  });

  it('a Service of no ambient namespace nor pod is not in the mesh (reached at its address)', () => {
    assert.equal(meshOf(namespace() + SERVICE + pod('model-0') + slice([['model-0', '10.0.0.1', true]])), undefined);
    assert.equal(
      meshOf(
        namespace('istio.io/dataplane-mode: ambient') +
          SERVICE.replace('clusterIP: 10.96.0.10', 'type: ExternalName\n  externalName: model.example'),
      ),
      undefined,
      'an ExternalName Service has no pods',
    );
  });

  it('a Service of an ambient namespace with no ready pod is in the mesh with no endpoint (nothing is sent)', () => {
    assert.deepEqual(meshOf(namespace('istio.io/dataplane-mode: ambient') + SERVICE), { endpoints: [] });
    assert.deepEqual(
      meshOf(
        namespace('istio.io/dataplane-mode: ambient') +
          SERVICE +
          pod('model-0') +
          slice([['model-0', '10.0.0.1', false]]),
      ),
      { endpoints: [] },
    );
  });

  it("only the Service's own slices, by the kubernetes.io/service-name label", () => {
    const other = slice([['model-0', '10.0.0.9', true]], 'other-1').replace(
      'kubernetes.io/service-name: model',
      'kubernetes.io/service-name: other',
    );
    const mesh = meshOf(namespace('istio.io/dataplane-mode: ambient') + SERVICE + pod('model-0') + other);
    assert.deepEqual(mesh, { endpoints: [] });
  });

  /** The Service models/model in the configuration of Gateway models/ai, whose GwParameters are `parameters`. */
  function configuredService(parameters: string) {
    const store = new MemoryStore();
    for (const object of admitted(`${GATEWAY_CLASS_YAML}apiVersion: gateway.networking.k8s.io/v1
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
spec: ${parameters}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: model, namespace: models}
spec:
  parentRefs: [{name: ai}]
  rules: [{backendRefs: [{name: model, port: 80}]}]
---
${namespace('istio.io/dataplane-mode: ambient')}${SERVICE}${pod('model-0')}${slice([['model-0', '10.0.0.1', true]])}`))
      store.apply(object);
    const config = new Controller(store, { now: () => '2026-01-01T00:00:00Z' }).reconcile().configs.get('models/ai')!;
    const backend = config.backends['Service models/model']!;
    assert.equal(backend.kind, 'Service');
    return backend as Extract<typeof backend, { kind: 'Service' }>;
  }

  it("a Gateway in the mesh (GwParameters mesh) gets the Service's mesh endpoints in its configuration", () => {
    assert.deepEqual(configuredService('{mesh: {}}').mesh, {
      endpoints: [{ address: '10.0.0.1', namespace: 'models', serviceAccount: 'default', ports: PORTS }],
    });
  });

  it('a Gateway outside the mesh (no mesh, or enabled: false) reaches the Service at its address as before', () => {
    assert.equal(configuredService('{}').mesh, undefined);
    assert.equal(configuredService('{mesh: {enabled: false}}').mesh, undefined);
  });
});
