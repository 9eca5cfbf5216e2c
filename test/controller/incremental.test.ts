// The controller's fast pass rebuilds only the configurations a change can reach. Whatever the
// change, the result must equal a full translation: random edits of every kind (seeded, so a
// failure repeats) are applied one at a time and the published configurations compared. Some
// references cross namespaces, and ReferenceGrants come and go, to allow or revoke them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admit, type KubeObject } from '../../src/api/validate/admission.ts';
import type { DataPlaneConfig } from '../../src/contract/dataplane-config.ts';
import { type ConfigUpdate, Controller } from '../../src/controller/controller.ts';
import { snapshotFromStore } from '../../src/controller/snapshot.ts';
import { translate } from '../../src/controller/translate.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import { kindKey, objectKey } from '../../src/store/store.ts';
import { admitted, GATEWAY_CLASS_YAML } from '../helpers/objects.ts';
import { seededRandom } from '../helpers/random.ts';

const GATEWAY_API = 'gateway.networking.k8s.io/v1';
const GW = 'gw.dev/v1alpha1';
const NAMESPACES = ['a', 'b'];

/** Random objects over small name spaces, so that references often resolve and sometimes do not. */
function generator(random: () => number) {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const n = (count: number) => Math.floor(random() * count);
  const meta = (name: string, namespace = pick(NAMESPACES), labels?: Record<string, string>) => ({
    name,
    namespace,
    ...(labels ? { labels } : {}),
  });
  const tier = () => ({ tier: pick(['gold', 'silver']) });
  /** Now and then another namespace (which needs a ReferenceGrant there). */
  const elsewhere = () => (random() < 0.3 ? { namespace: pick(NAMESPACES) } : {});
  return {
    gateway: () => ({
      apiVersion: GATEWAY_API,
      kind: 'Gateway',
      metadata: meta(`gw-${n(4)}`, pick(NAMESPACES), tier()),
      spec: {
        gatewayClassName: 'gw',
        listeners: [
          { name: 'http', protocol: 'HTTP', port: 8080, allowedRoutes: { namespaces: { from: 'All' } } },
          ...(random() < 0.5
            ? [
                {
                  name: 'https',
                  protocol: 'HTTPS',
                  port: 8443,
                  tls: { certificateRefs: [{ name: `cert-${n(2)}`, ...elsewhere() }] },
                  allowedRoutes: { namespaces: { from: pick(['All', 'Same']) } },
                },
              ]
            : []),
        ],
      },
    }),
    listenerSet: () => ({
      apiVersion: GATEWAY_API,
      kind: 'ListenerSet',
      metadata: meta(`set-${n(2)}`),
      spec: {
        parentRef: { name: `gw-${n(4)}`, namespace: pick(NAMESPACES) },
        listeners: [
          { name: 'extra', protocol: 'HTTP', port: 9000 + n(2), allowedRoutes: { namespaces: { from: 'All' } } },
        ],
      },
    }),
    route: () => ({
      apiVersion: GATEWAY_API,
      kind: 'HTTPRoute',
      metadata: meta(`route-${n(8)}`, pick(NAMESPACES), tier()),
      spec: {
        parentRefs: [
          random() < 0.8
            ? { name: `gw-${n(2)}`, namespace: pick(NAMESPACES), sectionName: 'http' }
            : { kind: 'ListenerSet', name: `set-${n(2)}`, namespace: pick(NAMESPACES) },
          ...(random() < 0.3 ? [{ name: `gw-${2 + n(2)}`, namespace: pick(NAMESPACES) }] : []),
        ],
        rules: [
          {
            name: 'chat',
            matches: [{ path: { type: 'PathPrefix', value: `/v${n(3)}` } }],
            backendRefs:
              random() < 0.7
                ? [{ group: 'gw.dev', kind: 'GwBackend', name: `llm-${n(4)}`, ...elsewhere() }]
                : [{ name: `svc-${n(3)}`, port: 80, ...elsewhere() }],
          },
          ...(random() < 0.3
            ? [{ name: 'models', backendRefs: [{ group: 'gw.dev', kind: 'GwModel', name: '*' }] }]
            : []),
        ],
      },
    }),
    backend: () => ({
      apiVersion: GW,
      kind: 'GwBackend',
      metadata: meta(`llm-${n(4)}`, pick(NAMESPACES), tier()),
      spec: {
        ai: { provider: { alpha: { model: pick(['gpt-4o', 'gpt-4o-mini']) } } },
        ...(random() < 0.5
          ? { policies: { auth: { secretRef: { name: `key-${n(2)}` } }, http: { requestTimeout: `${1 + n(9)}s` } } }
          : {}),
      },
    }),
    service: () => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(`svc-${n(3)}`),
      spec: { ports: [{ port: 80 }] },
    }),
    // The mesh (controller/mesh-endpoints.ts): namespaces enrolled or not, pods in or out of the
    // ambient mesh, ready or not, and the EndpointSlices naming them.
    namespace: () => ({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: pick(NAMESPACES), labels: random() < 0.5 ? { 'istio.io/dataplane-mode': 'ambient' } : {} },
    }),
    pod: () => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: meta(
        `pod-${n(4)}`,
        pick(NAMESPACES),
        pick<Record<string, string>>([{}, { 'istio.io/dataplane-mode': pick(['ambient', 'none']) }]),
      ),
      spec: { serviceAccountName: pick(['model', 'web']), containers: [{ name: 'app', image: 'app:1' }] },
    }),
    endpointSlice: () => {
      const namespace = pick(NAMESPACES);
      return {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: meta(`slice-${n(4)}`, namespace, { 'kubernetes.io/service-name': `svc-${n(3)}` }),
        addressType: 'IPv4',
        endpoints: [
          {
            addresses: [`10.0.0.${1 + n(4)}`],
            conditions: { ready: random() < 0.7 },
            targetRef: { kind: 'Pod', namespace, name: `pod-${n(4)}` },
          },
        ],
        ports: [{ port: 8000 + n(2) }],
      };
    },
    secret: () => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: meta(pick([`key-${n(2)}`, `cert-${n(2)}`]), pick(NAMESPACES), tier()),
      stringData: { Authorization: `sk-${n(1000)}`, 'tls.crt': 'x', 'tls.key': 'y' },
    }),
    model: () => ({
      apiVersion: GW,
      kind: 'GwModel',
      metadata: meta(`model-${n(3)}`),
      spec: {
        // One or two parents: a model is programmed only when every parent accepts it.
        parentRefs: [
          ...(random() < 0.6 ? [{ name: `gw-${n(4)}`, namespace: pick(NAMESPACES) }] : []),
          {
            group: 'gateway.networking.k8s.io',
            kind: 'HTTPRoute',
            name: `route-${n(8)}`,
            sectionName: 'models',
            ...elsewhere(),
          },
        ],
        provider: 'Alpha',
      },
    }),
    referenceGrant: () => ({
      apiVersion: pick(['gateway.networking.k8s.io/v1beta1', GATEWAY_API]),
      kind: 'ReferenceGrant',
      metadata: meta(`grant-${n(3)}`),
      spec: {
        from: [
          pick([
            { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: pick(NAMESPACES) },
            { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: pick(NAMESPACES) },
            { group: 'gw.dev', kind: 'GwModel', namespace: pick(NAMESPACES) },
          ]),
        ],
        to: [
          pick([
            { group: 'gw.dev', kind: 'GwBackend' },
            { group: '', kind: 'Service', name: `svc-${n(3)}` },
            { group: '', kind: 'Secret' },
            { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' },
          ]),
        ],
      },
    }),
    policy: () => {
      const traffic = { timeouts: { request: `${1 + n(9)}s` } };
      const backend = { http: { requestTimeout: `${1 + n(9)}s` } };
      const targets = [
        { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: `gw-${n(4)}` },
        { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: `route-${n(8)}` },
        { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: `route-${n(8)}`, sectionName: 'chat' },
        { group: 'gw.dev', kind: 'GwBackend', name: `llm-${n(4)}` },
        { group: '', kind: 'Service', name: `svc-${n(3)}` },
      ];
      const target = pick(targets);
      const bySelector = random() < 0.25;
      return {
        apiVersion: GW,
        kind: 'GwPolicy',
        metadata: meta(`policy-${n(6)}`),
        spec: {
          ...(bySelector
            ? {
                targetSelectors: [
                  { group: 'gateway.networking.k8s.io', kind: pick(['Gateway', 'HTTPRoute']), matchLabels: tier() },
                ],
              }
            : { targetRefs: [target] }),
          ...(target.kind === 'GwBackend' || target.kind === 'Service'
            ? { backend }
            : random() < 0.5
              ? { traffic }
              : { backend }),
        },
      };
    },
  };
}

function admitOrThrow(input: unknown): KubeObject {
  const result = admit(input);
  assert.deepEqual(result.errors, [], JSON.stringify(input));
  return result.object!;
}

/** A controller on `store` whose passes run only when the test flushes it; its updates, in order. */
function startController(store: MemoryStore): { controller: Controller; updates: ConfigUpdate[] } {
  const updates: ConfigUpdate[] = [];
  const controller = new Controller(store, {
    now: () => '2026-01-01T00:00:00Z',
    debounceMs: 60_000,
    statusDelayMs: 60_000,
    onConfigs: (update) => updates.push(update),
  });
  controller.start();
  return { controller, updates };
}

/** Configurations without their revision stamp, keyed and ordered for comparison. */
function comparable(configs: ReadonlyMap<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of [...configs.keys()].sort()) out[key] = { ...(configs.get(key) as object), revision: '' };
  return out;
}

describe('the fast pass', () => {
  it('publishes the same configurations as a full translation after any single change', () => {
    const random = seededRandom(20261121);
    const make = generator(random);
    const store = new MemoryStore();
    // The class joins the mesh: configurations carry the pods of Services in the ambient mesh.
    store.apply(
      admitOrThrow({
        apiVersion: GW,
        kind: 'GwParameters',
        metadata: { name: 'mesh', namespace: 'a' },
        spec: { mesh: {} },
      }),
    );
    store.apply(
      admitOrThrow({
        apiVersion: GATEWAY_API,
        kind: 'GatewayClass',
        metadata: { name: 'gw' },
        spec: {
          controllerName: 'gw.dev/gateway-controller',
          parametersRef: { group: 'gw.dev', kind: 'GwParameters', name: 'mesh', namespace: 'a' },
        },
      }),
    );
    const makers = Object.values(make);
    for (let i = 0; i < 60; i++) store.apply(admitOrThrow(makers[i % makers.length]!()));
    const { controller, updates } = startController(store);
    try {
      let fastUpdates = 0;
      let meshEndpoints = 0;
      for (let step = 0; step < 300; step++) {
        const existing = [...Object.values(snapshotFromStore(store))].flatMap((index) => [...index.values()]);
        const deletable = existing.filter(
          (object) => object.kind !== 'GatewayClass' && object.kind !== 'Namespace' && object.kind !== 'GwParameters',
        );
        const action = random();
        let description: string;
        if (action < 0.2 && deletable.length > 0) {
          const victim = deletable[Math.floor(random() * deletable.length)]!;
          store.delete(kindKey(victim), objectKey(victim));
          description = `delete ${victim.kind} ${objectKey(victim)}`;
        } else {
          const object = admitOrThrow(makers[Math.floor(random() * makers.length)]!());
          store.apply(object);
          description = `apply ${object.kind} ${objectKey(object)}`;
        }
        const before = updates.length;
        controller.flush();
        fastUpdates += updates.slice(before).filter((u) => u.pass === 'fast').length;
        const full = translate(snapshotFromStore(store), '2026-01-01T00:00:00Z', 'x').configs;
        for (const config of full.values())
          meshEndpoints += Object.values(config.backends).reduce(
            (sum, backend) => sum + (backend.kind === 'Service' ? (backend.mesh?.endpoints.length ?? 0) : 0),
            0,
          );
        assert.deepEqual(comparable(controller.currentConfigs), comparable(full), `after step ${step}: ${description}`);
      }
      assert.ok(fastUpdates > 50, `the fast pass published configurations (${fastUpdates} times)`);
      assert.ok(meshEndpoints > 0, 'some configurations reached Services at their pods in the mesh');
    } finally {
      controller.stop();
    }
  });
});

describe('the fast pass and ReferenceGrants', () => {
  // One Gateway whose references each cross into their own namespace: a certificate (certs), a
  // backend (backends), a GwModel attaching to its route (the route in routes, the model in
  // models). A grant in one namespace must reach the Gateway through that reference alone.
  const world = `${GATEWAY_CLASS_YAML}apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ai, namespace: infra}
spec:
  gatewayClassName: gw
  listeners:
    - {name: http, protocol: HTTP, port: 8080, allowedRoutes: {namespaces: {from: All}}}
    - {name: https, protocol: HTTPS, port: 8443, tls: {certificateRefs: [{name: cert, namespace: certs}]}}
---
apiVersion: v1
kind: Secret
metadata: {name: cert, namespace: certs}
stringData: {tls.crt: x, tls.key: y}
---
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: llm, namespace: backends}
spec: {ai: {provider: {alpha: {}}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: routes}
spec:
  parentRefs: [{name: ai, namespace: infra}]
  rules:
    - {name: chat, backendRefs: [{group: gw.dev, kind: GwBackend, name: llm, namespace: backends}]}
    - {name: models, matches: [{path: {value: /models}}], backendRefs: [{group: gw.dev, kind: GwModel, name: '*'}]}
---
apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: m, namespace: models}
spec: {parentRefs: [{kind: HTTPRoute, name: web, namespace: routes, sectionName: models}], provider: Alpha}
`;
  const grants = [
    {
      what: 'a certificate',
      grant: { namespace: 'certs', from: ['gateway.networking.k8s.io', 'Gateway', 'infra'], to: ['', 'Secret'] },
      served: (config: DataPlaneConfig) => config.listeners.some((listener) => listener.name === 'https'),
    },
    {
      what: 'a backend',
      grant: {
        namespace: 'backends',
        from: ['gateway.networking.k8s.io', 'HTTPRoute', 'routes'],
        to: ['gw.dev', 'GwBackend'],
      },
      served: (config: DataPlaneConfig) => config.backends['GwBackend backends/llm'] !== undefined,
    },
    {
      what: 'a GwModel',
      grant: {
        namespace: 'routes',
        from: ['gw.dev', 'GwModel', 'models'],
        to: ['gateway.networking.k8s.io', 'HTTPRoute'],
      },
      served: (config: DataPlaneConfig) => config.models['models/m'] !== undefined,
    },
  ];
  for (const { what, grant, served } of grants) {
    it(`a grant for ${what} added, then deleted, is followed by the fast pass alone`, () => {
      const store = new MemoryStore();
      for (const object of admitted(world)) store.apply(object);
      const { controller, updates } = startController(store);
      try {
        const config = () => controller.currentConfigs.get('infra/ai')!;
        assert.equal(served(config()), false, 'refused without the grant');
        const object = admitOrThrow({
          apiVersion: 'gateway.networking.k8s.io/v1beta1',
          kind: 'ReferenceGrant',
          metadata: { name: 'grant', namespace: grant.namespace },
          spec: {
            from: [{ group: grant.from[0], kind: grant.from[1], namespace: grant.from[2] }],
            to: [{ group: grant.to[0], kind: grant.to[1] }],
          },
        });
        store.apply(object);
        controller.flush();
        assert.equal(updates.at(-1)?.pass, 'fast');
        assert.equal(served(config()), true, 'allowed once granted');
        store.delete(kindKey(object), objectKey(object));
        controller.flush();
        assert.equal(updates.at(-1)?.pass, 'fast');
        assert.equal(served(config()), false, 'revoked once the grant is deleted');
      } finally {
        controller.stop();
      }
    });
  }
});
