// Benchmark: full translation (statuses and data-plane configuration) of 1,000 Gateways, 5,000
// HTTPRoutes, 5,000 GwPolicies and 2,000 GwBackends (goal ≤ 1 s), and the time for a one-object
// change in a watched file to produce new data-plane configuration (goal ≤ 100 ms).
// Run: node bench/controller.bench.ts
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { admit, type KubeObject } from '../src/api/validate/admission.ts';
import { Controller, type ReconcileReport } from '../src/controller/controller.ts';
import { FileStore } from '../src/store/file-store.ts';
import { MemoryStore } from '../src/store/memory-store.ts';

const GATEWAYS = 1_000;
const ROUTES = 5_000;
const POLICIES = 5_000;
const BACKENDS = 2_000;

function world(): unknown[] {
  const objects: unknown[] = [
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'gw' },
      spec: { controllerName: 'gw.dev/gateway-controller' },
    },
  ];
  const ns = (i: number) => `team-${i % 50}`;
  for (let i = 0; i < GATEWAYS; i++) {
    objects.push({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: `gw-${i}`, namespace: ns(i) },
      spec: { gatewayClassName: 'gw', listeners: [{ name: 'http', protocol: 'HTTP', port: 8080 }] },
    });
  }
  for (let i = 0; i < BACKENDS; i++) {
    objects.push({
      apiVersion: 'gw.dev/v1alpha1',
      kind: 'GwBackend',
      metadata: { name: `llm-${i}`, namespace: ns(i) },
      spec: { ai: { provider: { alpha: { model: 'gpt-4o' } } }, policies: { http: { requestTimeout: '30s' } } },
    });
  }
  for (let i = 0; i < ROUTES; i++) {
    objects.push({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { name: `route-${i}`, namespace: ns(i) },
      spec: {
        parentRefs: [{ name: `gw-${i % GATEWAYS}` }],
        hostnames: [`r${i}.example.com`],
        rules: [
          {
            name: 'chat',
            matches: [{ path: { type: 'PathPrefix', value: '/v1' } }],
            backendRefs: [{ group: 'gw.dev', kind: 'GwBackend', name: `llm-${i % BACKENDS}` }],
          },
        ],
      },
    });
  }
  for (let i = 0; i < POLICIES; i++) {
    const onRoute = i % 2 === 0;
    objects.push({
      apiVersion: 'gw.dev/v1alpha1',
      kind: 'GwPolicy',
      metadata: { name: `policy-${i}`, namespace: ns(i) },
      spec: onRoute
        ? {
            targetRefs: [
              {
                group: 'gateway.networking.k8s.io',
                kind: 'HTTPRoute',
                name: `route-${i % ROUTES}`,
                sectionName: 'chat',
              },
            ],
            traffic: { timeouts: { request: '60s' } },
          }
        : {
            targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: `gw-${i % GATEWAYS}` }],
            traffic: { buffer: { request: { maxBytes: '1Mi' } } },
          },
    });
  }
  return objects;
}

const inputs = world();
const admitted: KubeObject[] = inputs.map((input) => {
  const result = admit(input);
  if (result.errors.length > 0) throw new Error(JSON.stringify(result.errors[0]));
  return result.object!;
});

const store = new MemoryStore();
for (const object of admitted) store.apply(object);
const controller = new Controller(store);
let report = controller.reconcile();
console.log(
  `full translation of ${GATEWAYS} Gateways, ${ROUTES} HTTPRoutes, ${POLICIES} GwPolicies, ${BACKENDS} GwBackends:`,
);
console.log(`  first reconcile (writes ${report.statusesWritten} statuses): ${report.durationMs.toFixed(0)} ms`);
const runs: number[] = [];
for (let i = 0; i < 3; i++) runs.push(controller.reconcile().durationMs);
runs.sort((a, b) => a - b);
console.log(`  later reconciles (nothing to write), median of 3: ${runs[1]!.toFixed(0)} ms`);
console.log(`  goal ≤ 1000 ms: ${Math.max(report.durationMs, runs[1]!) <= 1000 ? 'met' : 'MISSED'}`);

// End to end: a file edit reaches new data-plane configuration through the file store's watch.
const dir = mkdtempSync(join(tmpdir(), 'gw-bench-'));
writeFileSync(join(dir, 'world.yaml'), inputs.map((o) => stringify(o)).join('---\n'));
const policyFile = join(dir, 'policy.yaml');
const policy = (seconds: number) =>
  stringify({
    apiVersion: 'gw.dev/v1alpha1',
    kind: 'GwPolicy',
    metadata: { name: 'edited', namespace: 'team-0' },
    spec: {
      targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'route-0', sectionName: 'chat' }],
      traffic: { timeouts: { request: `${seconds}s` } },
    },
  });
writeFileSync(policyFile, policy(1));
const fileStore = new FileStore([dir], { debounceMs: 5 });
fileStore.load();
let resolveConfig: ((r: ReconcileReport) => void) | undefined;
const fileController = new Controller(fileStore, { debounceMs: 1, onReconcile: (r) => resolveConfig?.(r) });
fileController.start();
fileStore.watchFiles();
const latencies: number[] = [];
for (let i = 2; i < 12; i++) {
  const done = new Promise<ReconcileReport>((resolve) => {
    resolveConfig = resolve;
  });
  const started = performance.now();
  writeFileSync(policyFile, policy(i));
  report = await done;
  const timeouts = report.configs.get('team-0/gw-0')!.listeners[0]!.routes.find((r) => r.route === 'team-0/route-0')!
    .rules[0]!.traffic.timeouts;
  if (JSON.stringify(timeouts) !== JSON.stringify({ request: `${i}s` }))
    throw new Error(`stale config: ${JSON.stringify(timeouts)}`);
  latencies.push(performance.now() - started);
  await new Promise((resolve) => setTimeout(resolve, 20));
}
fileController.stop();
await fileStore.close();
rmSync(dir, { recursive: true });
latencies.sort((a, b) => a - b);
console.log(
  'one-object file change to new data-plane configuration (file store watch, reload of all files, reconcile):',
);
console.log(
  `  median ${latencies[5]!.toFixed(0)} ms, worst ${latencies[latencies.length - 1]!.toFixed(0)} ms over ${latencies.length} edits`,
);
console.log(`  goal ≤ 100 ms: ${latencies[latencies.length - 1]! <= 100 ? 'met' : 'MISSED'}`);
