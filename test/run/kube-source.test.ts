// One controller for both worlds: the controller on the informer-based store (what runs against
// a cluster) produces exactly the configurations it produces on the embedded store, for every
// golden translation case; `gw controller` writes the statuses of objects created through an API
// server while `gw run --kubeconfig --read-only` serves their traffic and writes nothing; and bad
// command lines and kubeconfigs get clear errors.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { parseResources } from '../../src/api/load/documents.ts';
import { admit, type KubeObject } from '../../src/api/validate/admission.ts';
import { resourceOfKind } from '../../src/apiserver/resources.ts';
import { parseControllerArgs } from '../../src/cli/controller.ts';
import { parseRunArgs } from '../../src/cli/run.ts';
import type { DataPlaneConfig } from '../../src/contract/dataplane-config.ts';
import { Controller } from '../../src/controller/controller.ts';
import { DEFAULT_DOWNSTREAM_LIMITS } from '../../src/dataplane/server/downstream-limits.ts';
import { KubeSource } from '../../src/run/kube-source.ts';
import { LocalGateway } from '../../src/run/local-gateway.ts';
import { kindKey } from '../../src/store/store.ts';
import { DEFAULT_LOG_FILTER } from '../../src/util/log-filter.ts';
import { startTestApiServer, type TestApiServer } from '../apiserver/helpers.ts';
import { runGw, spawnGw } from '../helpers/cli.ts';
import { freePort, gatewayYaml, webRouteYaml } from '../helpers/gateway.ts';
import { REFUSED_TUNNEL_POLICY_YAML } from '../helpers/objects.ts';
import { eventually } from '../helpers/until.ts';

const CASES = new URL('../fixtures/controller/translate/', import.meta.url).pathname;

/** The objects of a golden case, admitted (defaults filled in) as the files are. */
function caseObjects(name: string): KubeObject[] {
  const loaded = parseResources(readFileSync(join(CASES, name, 'input.yaml'), 'utf8'), `${name}/input.yaml`);
  return loaded.documents.map((document) => {
    const result = admit(document.value);
    assert.ok(result.object, `${name}: ${JSON.stringify(result.errors)}`);
    return result.object;
  });
}

/** Creates objects in the API server's store: the case's Namespaces, then any other it uses, then the rest. */
function createInStore(server: TestApiServer, objects: KubeObject[]): void {
  const store = server.embedded.store;
  const existing = new Set(store.list('/Namespace').items.map((item) => item.metadata.name));
  const create = (object: KubeObject) => {
    const { creationTimestamp: _time, ...metadata } = object.metadata;
    store.create(
      resourceOfKind(kindKey(object))!,
      object.metadata.namespace,
      { ...object, metadata },
      {
        fieldManager: 'test',
      },
    );
  };
  const declared = objects.filter((object) => kindKey(object) === '/Namespace');
  for (const namespace of declared) {
    assert.ok(!existing.has(namespace.metadata.name), 'a case declares only namespaces of its own');
    create(namespace);
    existing.add(namespace.metadata.name);
  }
  for (const name of new Set(objects.map((object) => object.metadata.namespace).filter(Boolean))) {
    if (existing.has(name!)) continue;
    existing.add(name!);
    create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } } as KubeObject);
  }
  for (const object of objects) if (kindKey(object) !== '/Namespace') create(object);
}

/** Configurations without their revision (the resource version they were built at). */
function comparable(configs: ReadonlyMap<string, DataPlaneConfig>): Record<string, unknown> {
  return Object.fromEntries([...configs].map(([key, config]) => [key, { ...config, revision: '' }]));
}

describe('the controller on the informer-based store', () => {
  for (const name of readdirSync(CASES).sort()) {
    test(`${name}: the same configurations as on the embedded store`, async () => {
      const server = await startTestApiServer();
      const source = new KubeSource(
        { kube: { kubeconfig: server.embedded.kubeconfigPath, writeStatus: false } },
        () => {},
      );
      try {
        createInStore(server, caseObjects(name));
        const direct = new Controller(server.embedded.store);
        const expected = direct.reconcile();
        await source.start();
        const actual = source.controller.reconcile();
        assert.deepEqual(comparable(actual.configs), comparable(expected.configs));
        assert.deepEqual(actual.gatewayApi.listeners, expected.gatewayApi.listeners);
      } finally {
        await source.stop();
        await server.close();
      }
    });
  }
});

describe('gw controller and gw run --kubeconfig', () => {
  let upstream: Server;
  let upstreamPort: number;
  const temporary: string[] = [];
  before(async () => {
    upstream = createServer((_request, response) => response.end('hello from upstream'));
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamPort = (upstream.address() as { port: number }).port;
  });
  after(() => {
    upstream.close();
    for (const path of temporary) rmSync(path, { recursive: true, force: true });
  });

  async function createAll(server: TestApiServer, yaml: string): Promise<void> {
    for (const document of parseAllDocuments(yaml)) {
      const object = document.toJS();
      const resource = resourceOfKind(kindKey(object))!;
      const base = resource.group === '' ? '/api/v1' : `/apis/${resource.apiVersion}`;
      const path = resource.namespaced ? `${base}/namespaces/default/${resource.plural}` : `${base}/${resource.plural}`;
      const reply = await server.request('POST', path, { body: object });
      assert.equal(reply.status, 201, reply.text);
    }
  }

  test('gw controller writes statuses; a read-only gw run serves the traffic and writes none', async () => {
    const server = await startTestApiServer();
    const listenerPort = await freePort();
    const adminPort = await freePort();
    const controller = spawnGw([
      'controller',
      '--kubeconfig',
      server.embedded.kubeconfigPath,
      '--admin-port',
      String(adminPort),
    ]);
    const proxy = new LocalGateway({
      paths: [],
      address: '127.0.0.1',
      kube: { kubeconfig: server.embedded.kubeconfigPath, writeStatus: false },
    });
    try {
      await controller.waitForLog(/every kind listed/);
      await proxy.start();
      await createAll(server, gatewayYaml(listenerPort) + webRouteYaml(upstreamPort));
      await eventually(
        'the proxy serves the route',
        async () => {
          try {
            return (await (await fetch(`http://127.0.0.1:${listenerPort}/`)).text()) === 'hello from upstream';
          } catch {
            return false;
          }
        },
        10_000,
      );
      const gatewayPath = '/apis/gateway.networking.k8s.io/v1/namespaces/default/gateways/ai';
      await eventually(
        'gw controller writes the Gateway status',
        async () => {
          const status = (await server.request('GET', gatewayPath)).json.status;
          return status?.conditions?.some(
            (condition: { type: string; status: string }) =>
              condition.type === 'Programmed' && condition.status === 'True',
          );
        },
        10_000,
      );
      const route = (
        await server.request('GET', '/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes/web')
      ).json;
      assert.equal(route.status.parents[0].controllerName, 'gw.dev/gateway-controller');
      // Exactly one writer of statuses: the controller (the proxy was read-only).
      assert.deepEqual(
        route.metadata.managedFields
          .filter((entry: { subresource?: string }) => entry.subresource === 'status')
          .map((entry: { manager: string }) => entry.manager),
        ['gw-controller'],
      );
      await controller.waitForLog(/Gateway default\/ai: configuration/);
      const ready = await fetch(`http://127.0.0.1:${adminPort}/healthz/ready`);
      assert.equal(ready.status, 200);
      const metrics = await (await fetch(`http://127.0.0.1:${adminPort}/metrics`)).text();
      assert.match(metrics, /^gw_controller_gateways 1$/m);
      assert.match(metrics, /^gw_controller_provisioning_writes_total [1-9]/m);
      assert.match(metrics, /^gw_controller_store_synced 1$/m);
      assert.match(metrics, /^gw_controller_reconciles_total [1-9]/m);
    } finally {
      // Everything is stopped before the exit status is checked: a failed check must not leave
      // servers open, which would keep this file's process (and the test run) from ending.
      controller.child.kill('SIGTERM');
      const exited = await controller.exited;
      await proxy.stop();
      await server.close();
      assert.equal(exited, 0, controller.stderr);
    }
  });

  test('apart from the proxies, gw controller reports a refused field in the policy status and its log; the proxy answers 500', async () => {
    const server = await startTestApiServer();
    const listenerPort = await freePort();
    const controller = spawnGw(['controller', '--kubeconfig', server.embedded.kubeconfigPath, '--admin-port', '0']);
    const proxyLog: string[] = [];
    const proxy = new LocalGateway({
      paths: [],
      address: '127.0.0.1',
      kube: { kubeconfig: server.embedded.kubeconfigPath, writeStatus: false },
      log: (line) => proxyLog.push(line),
    });
    let upstreamHits = 0;
    upstream.on('request', () => upstreamHits++);
    try {
      await controller.waitForLog(/every kind listed/);
      await proxy.start();
      const tunnel = REFUSED_TUNNEL_POLICY_YAML;
      await createAll(server, gatewayYaml(listenerPort) + webRouteYaml(upstreamPort) + tunnel);
      await controller.waitForLog(
        /Gateway default\/ai: HTTPRoute default\/web rule 0 backend GwBackend default\/web: backend\.tunnel\.backendRef\.namespace: .*set by GwPolicy default\/via-proxy/,
      );
      const policyPath = '/apis/gw.dev/v1alpha1/namespaces/default/gwpolicies/via-proxy';
      await eventually(
        'the controller writes Accepted False (Unsupported) on the policy',
        async () => {
          const ancestors = (await server.request('GET', policyPath)).json.status?.ancestors ?? [];
          return ancestors.some((ancestor: { conditions: { type: string; reason: string; message: string }[] }) =>
            ancestor.conditions.some(
              (condition) =>
                condition.type === 'Accepted' &&
                condition.reason === 'Unsupported' &&
                condition.message.includes('spec.backend.tunnel'),
            ),
          );
        },
        10_000,
      );
      await eventually(
        'the proxy answers 500 for the refused field',
        async () => {
          try {
            // The client gets a request id; the proxy's log has the reason under it.
            const response = await fetch(`http://127.0.0.1:${listenerPort}/`);
            const id = response.headers.get('x-request-id');
            return (
              response.status === 500 &&
              id !== null &&
              !(await response.text()).includes('backend.tunnel') &&
              proxyLog.some((line) => line.includes(`request ${id} answered 500:`) && line.includes('backend.tunnel'))
            );
          } catch {
            return false;
          }
        },
        10_000,
      );
      const hitsBefore = upstreamHits;
      const refused = await fetch(`http://127.0.0.1:${listenerPort}/`);
      assert.equal(refused.status, 500);
      assert.match(await refused.text(), /^gw could not serve this request/);
      assert.ok(
        proxyLog.some((line) =>
          /answered 500: .*backend\.tunnel\.backendRef\.namespace: An endpoint reference resolves only/.test(line),
        ),
      );
      assert.equal(upstreamHits, hitsBefore, 'nothing reached the upstream');
    } finally {
      // Everything is stopped before the exit status is checked: a failed check must not leave
      // servers open, which would keep this file's process (and the test run) from ending.
      controller.child.kill('SIGTERM');
      const exited = await controller.exited;
      await proxy.stop();
      await server.close();
      assert.equal(exited, 0, controller.stderr);
    }
  });

  test('gw controller waits for an API server that is not up yet, and reports it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-controller-wait-'));
    temporary.push(dataDir);
    const server = await startTestApiServer({ dataDir });
    const port = server.embedded.server.address.port;
    const kubeconfig = join(dataDir, 'kubeconfig-copy');
    writeFileSync(kubeconfig, readFileSync(server.embedded.kubeconfigPath));
    await server.close();
    const controller = spawnGw(['controller', '--kubeconfig', kubeconfig, '--admin-port', '0']);
    let restarted: TestApiServer | undefined;
    try {
      await controller.waitForLog(/listing or watching .*\(retrying\)/);
      restarted = await startTestApiServer({ dataDir, port });
      await controller.waitForLog(/every kind listed/, 20_000);
    } finally {
      controller.child.kill('SIGTERM');
      const exited = await controller.exited;
      await restarted?.close();
      assert.equal(exited, 0, controller.stderr);
    }
  });
});

describe('command lines and kubeconfigs', () => {
  test('--kubeconfig is a source of its own', () => {
    assert.deepEqual(parseRunArgs(['--kubeconfig', '/k', '--read-only']), {
      paths: [],
      recursive: false,
      address: '127.0.0.1',
      adminPort: 15000,
      adminAddress: '127.0.0.1',
      workers: 1,
      limits: DEFAULT_DOWNSTREAM_LIMITS,
      kube: { kubeconfig: '/k', context: undefined, writeStatus: false },
      logFormat: 'json',
      logFilter: DEFAULT_LOG_FILTER,
    });
    assert.equal(
      (parseRunArgs(['--cluster']) as { kube: unknown }).kube !== undefined,
      true,
      '--cluster reads the default kubeconfig',
    );
    assert.equal(
      parseRunArgs(['--kubeconfig', '/k', '-f', 'dir', '--api-port', '1']),
      '--kubeconfig/--cluster read objects from a Kubernetes API server; drop -f, --api-port',
    );
    assert.equal(parseRunArgs(['--kubeconfig', '/k', '--cluster']), '--kubeconfig and --cluster: give one');
    assert.equal(parseRunArgs(['--read-only']), '--context and --read-only apply to --kubeconfig or --cluster');
    assert.equal(parseControllerArgs(['--admin-port', 'x']), '--admin-port must be a port number, not "x"');
    assert.deepEqual(parseControllerArgs(['--context', 'prod']), {
      kubeconfig: undefined,
      context: 'prod',
      adminPort: 15000,
      adminAddress: '127.0.0.1',
      logFormat: 'json',
      logFilter: DEFAULT_LOG_FILTER,
      provision: true,
    });
  });

  test('a kubeconfig that cannot be used is named in a one-line error', async () => {
    // The error is one log line (JSON): its message says what is wrong.
    const lastMessage = (stderr: string) => {
      const line = JSON.parse(stderr.trim().split('\n').at(-1)!) as { level: string; message: string };
      assert.equal(line.level, 'error');
      return line.message;
    };
    const missing = await runGw(['controller', '--kubeconfig', '/nonexistent/kubeconfig', '--admin-port', '0']);
    assert.equal(missing.code, 1);
    assert.match(lastMessage(missing.stderr), /^gw controller: cannot read \/nonexistent\/kubeconfig: .*ENOENT/);
    assert.doesNotMatch(missing.stderr, /\n\s+at /, 'no stack trace');

    const server = await startTestApiServer();
    try {
      const context = await runGw([
        'controller',
        '--kubeconfig',
        server.embedded.kubeconfigPath,
        '--context',
        'prod',
        '--admin-port',
        '0',
      ]);
      assert.equal(context.code, 1);
      assert.match(lastMessage(context.stderr), /the kubeconfig has no context "prod" \(it has: gw\)/);
      const run = await runGw(['run', '--kubeconfig', '/nonexistent/kubeconfig', '--admin-port', '0']);
      assert.equal(run.code, 1);
      assert.match(lastMessage(run.stderr), /^gw run: cannot read \/nonexistent\/kubeconfig/);
    } finally {
      await server.close();
    }
  });
});
