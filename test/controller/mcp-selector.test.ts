// MCP selector targets choose Services by label; the fast pass must rebuild a Gateway's
// configuration when a Service starts or stops matching — in the backend's namespace, or in any
// namespace when the selector also selects namespaces.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admit, type KubeObject } from '../../src/api/validate/admission.ts';
import type { BackendRefConfig } from '../../src/contract/dataplane-config.ts';
import { type ConfigUpdate, Controller } from '../../src/controller/controller.ts';
import { snapshotFromStore } from '../../src/controller/snapshot.ts';
import { translate } from '../../src/controller/translate.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';

function admitted(input: unknown): KubeObject {
  const result = admit(input);
  assert.deepEqual(result.errors, [], JSON.stringify(input));
  return result.object!;
}

function service(name: string, namespace: string, labels: Record<string, string>): KubeObject {
  return admitted({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace, labels },
    spec: { clusterIP: '10.0.0.1', ports: [{ port: 80, appProtocol: 'gw.dev/mcp' }] },
  });
}

const BASE = [
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name: 'gw' },
    spec: { controllerName: 'gw.dev/gateway-controller' },
  },
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'ai', namespace: 'default' },
    spec: { gatewayClassName: 'gw', listeners: [{ name: 'http', port: 8080, protocol: 'HTTP' }] },
  },
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'mcp', namespace: 'default' },
    spec: {
      parentRefs: [{ name: 'ai' }],
      rules: [{ backendRefs: [{ group: 'gw.dev', kind: 'GwBackend', name: 'tools' }] }],
    },
  },
  {
    apiVersion: 'gw.dev/v1alpha1',
    kind: 'GwBackend',
    metadata: { name: 'tools', namespace: 'default' },
    spec: {
      mcp: {
        targets: [
          { name: 'local', selector: { services: { matchLabels: { role: 'mcp' } } } },
          {
            name: 'shared',
            selector: { namespaces: { matchLabels: { team: 'tools' } }, services: { matchLabels: { role: 'shared' } } },
          },
        ],
      },
    },
  },
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tools', labels: { team: 'tools' } } },
];

describe('MCP selector targets', () => {
  it('follow Services as they start and stop matching, in the fast pass', () => {
    const store = new MemoryStore();
    for (const object of BASE) store.apply(admitted(object));
    const updates: ConfigUpdate[] = [];
    const controller = new Controller(store, {
      now: () => '2026-01-01T00:00:00Z',
      debounceMs: 60_000,
      statusDelayMs: 60_000,
      onConfigs: (update) => updates.push(update),
    });
    controller.start();
    const selected = () => {
      const ref = controller.currentConfigs.get('default/ai')!.listeners[0]!.routes[0]!.rules[0]!
        .backendRefs[0] as BackendRefConfig;
      return ref.mcpServices;
    };
    const step = (change: () => void, expected: Record<string, string[]>) => {
      const before = updates.length;
      change();
      controller.flush();
      assert.ok(
        updates.slice(before).some((update) => update.pass === 'fast' && update.changed.has('default/ai')),
        'the fast pass rebuilt the Gateway',
      );
      const got = Object.fromEntries(
        Object.entries(selected() ?? {}).map(([target, services]) => [target, services.map((s) => s.service)]),
      );
      assert.deepEqual(got, expected);
      const full = translate(snapshotFromStore(store), '2026-01-01T00:00:00Z', 'x').configs.get('default/ai')!;
      assert.deepEqual({ ...controller.currentConfigs.get('default/ai')!, revision: '' }, { ...full, revision: '' });
    };
    try {
      controller.flush();
      assert.deepEqual(selected(), { local: [], shared: [] });
      step(() => store.apply(service('a', 'default', { role: 'mcp' })), {
        local: ['Service default/a'],
        shared: [],
      });
      step(() => store.apply(service('b', 'tools', { role: 'shared' })), {
        local: ['Service default/a'],
        shared: ['Service tools/b'],
      });
      step(() => store.apply(service('a', 'default', { role: 'other' })), {
        local: [],
        shared: ['Service tools/b'],
      });
      step(() => store.delete('/Service', 'tools/b'), { local: [], shared: [] });
    } finally {
      controller.stop();
    }
  });
});
