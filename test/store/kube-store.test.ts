// @kubernetes/client-node against gw's embedded API server, and the informer-based store the
// controller runs on in a cluster: client-node's own list and watch calls, the store's cache and
// events, status writes through the status subresource (conflicts, other controllers' entries),
// and the informers' re-list after the server answers a watch with 410 Gone.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, CustomObjectsApi, KubeConfig, Watch } from '@kubernetes/client-node';
import { ApiStore } from '../../src/apiserver/api-store.ts';
import { EmbeddedApiServer } from '../../src/apiserver/embedded.ts';
import { resourceOfKind } from '../../src/apiserver/resources.ts';
import { SNAPSHOT_KINDS } from '../../src/controller/snapshot.ts';
import { KubeStore } from '../../src/store/kube/kube-store.ts';
import type { WatchEvent } from '../../src/store/store.ts';
import {
  BACKENDS_PATH,
  backend,
  CONFIG_MAPS_PATH,
  startTestApiServer,
  type TestApiServer,
} from '../apiserver/helpers.ts';
import { eventually } from '../helpers/until.ts';

const ROUTES_PATH = '/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes';

function kubeConfigOf(server: { embedded: EmbeddedApiServer }): KubeConfig {
  const config = new KubeConfig();
  config.loadFromFile(server.embedded.kubeconfigPath);
  return config;
}

function configMap(name: string, data: Record<string, string> = { key: 'value' }) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data };
}

function route(name: string) {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name },
    spec: { parentRefs: [{ name: 'ai' }], rules: [{ backendRefs: [{ name: 'web', port: 80 }] }] },
  };
}

function newStore(server: TestApiServer, options: Partial<ConstructorParameters<typeof KubeStore>[0]> = {}) {
  const logs: string[] = [];
  const store = new KubeStore({
    kubeConfig: kubeConfigOf(server),
    kinds: Object.values(SNAPSHOT_KINDS),
    controllerName: 'gw.dev/gateway-controller',
    retry: { initialMs: 20, maxMs: 200 },
    log: (line) => logs.push(line),
    ...options,
  });
  return { store, logs };
}

describe('@kubernetes/client-node against the embedded API server', () => {
  let server: TestApiServer;
  before(async () => {
    // A short history, so that a watch from an early resourceVersion meets 410 Gone.
    server = await startTestApiServer({ historyLimit: 5 });
  });
  after(() => server.close());

  test('typed and custom-object clients list what was created', async () => {
    for (const name of ['one', 'two']) {
      assert.equal((await server.request('POST', BACKENDS_PATH, { body: backend(name) })).status, 201);
      assert.equal((await server.request('POST', CONFIG_MAPS_PATH, { body: configMap(name) })).status, 201);
    }
    const config = kubeConfigOf(server);
    const custom = config.makeApiClient(CustomObjectsApi);
    const backends = (await custom.listNamespacedCustomObject({
      group: 'gw.dev',
      version: 'v1alpha1',
      namespace: 'default',
      plural: 'gwbackends',
    })) as { items: { metadata: { name: string }; spec: unknown }[] };
    assert.deepEqual(
      backends.items.map((item) => item.metadata.name),
      ['one', 'two'],
    );
    assert.deepEqual(backends.items[0]!.spec, { ai: { provider: { alpha: { model: 'gpt-4o' } } } });

    const core = config.makeApiClient(CoreV1Api);
    const maps = await core.listNamespacedConfigMap({ namespace: 'default', labelSelector: '' });
    assert.deepEqual(
      maps.items.map((item) => item.metadata?.name),
      ['one', 'two'],
    );
    // The typed client decodes timestamps; the server sent them as RFC 3339.
    assert.ok(maps.items[0]!.metadata?.creationTimestamp instanceof Date);
    const one = await core.readNamespacedConfigMap({ name: 'one', namespace: 'default' });
    assert.deepEqual(one.data, { key: 'value' });
  });

  test('Watch delivers ADDED, MODIFIED and DELETED from a resourceVersion', async () => {
    const listed = (await server.request('GET', CONFIG_MAPS_PATH)).json;
    const events: { type: string; name: string; data?: unknown }[] = [];
    const watch = new Watch(kubeConfigOf(server));
    let done: unknown = 'open';
    const controller = await watch.watch(
      CONFIG_MAPS_PATH,
      { resourceVersion: listed.metadata.resourceVersion },
      (type, object) => events.push({ type, name: object.metadata.name, data: object.data }),
      (error) => {
        done = error;
      },
    );
    try {
      await server.request('POST', CONFIG_MAPS_PATH, { body: configMap('watched') });
      await server.request('PATCH', `${CONFIG_MAPS_PATH}/watched`, {
        body: { data: { key: 'changed' } },
        contentType: 'application/merge-patch+json',
      });
      await server.request('DELETE', `${CONFIG_MAPS_PATH}/watched`);
      await eventually('three events', async () => events.length >= 3);
      assert.deepEqual(events, [
        { type: 'ADDED', name: 'watched', data: { key: 'value' } },
        { type: 'MODIFIED', name: 'watched', data: { key: 'changed' } },
        { type: 'DELETED', name: 'watched', data: { key: 'changed' } },
      ]);
      assert.equal(done, 'open');
    } finally {
      controller.abort();
    }
  });

  test('a watch from a compacted resourceVersion ends with the 410 Gone Status', async () => {
    const events: { type: string; code?: number; reason?: string }[] = [];
    const watch = new Watch(kubeConfigOf(server));
    const ended = new Promise<unknown>((resolve) => {
      void watch.watch(
        CONFIG_MAPS_PATH,
        { resourceVersion: '1' },
        (type, object) => events.push({ type, code: object.code, reason: object.reason }),
        resolve,
      );
    });
    await ended;
    assert.deepEqual(events, [{ type: 'ERROR', code: 410, reason: 'Expired' }]);
  });
});

describe('KubeStore: the informer-based store', () => {
  test('lists every kind, follows changes, and writes statuses through the status subresource', async () => {
    const server = await startTestApiServer();
    const { store, logs } = newStore(server);
    try {
      await server.request('POST', BACKENDS_PATH, { body: backend('before') });
      await server.request('POST', CONFIG_MAPS_PATH, { body: configMap('settings') });
      await store.start();
      assert.ok(store.synced());
      const backends = store.list('gw.dev/GwBackend');
      assert.deepEqual(
        backends.items.map((item) => item.metadata.name),
        ['before'],
      );
      assert.ok(Object.isFrozen(backends.items[0]), 'objects are handed out frozen');
      assert.equal(backends.items[0]!.metadata.managedFields, undefined, 'managedFields are not cached');
      // Items of a list of a built-in kind carry no apiVersion/kind on the wire; the store adds them.
      const maps = store.list('/ConfigMap').items;
      assert.equal(maps[0]!.kind, 'ConfigMap');
      assert.equal(maps[0]!.apiVersion, 'v1');
      assert.ok(store.list('/Namespace').items.some((item) => item.metadata.name === 'default'));

      const events: WatchEvent[] = [];
      const stop = store.watch(undefined, backends.resourceVersion, (event) => events.push(event));
      await server.request('POST', BACKENDS_PATH, { body: backend('after') });
      await server.request('DELETE', `${BACKENDS_PATH}/before`);
      await eventually('the create and the delete', async () => events.length >= 2);
      assert.deepEqual(
        events.map((event) => `${event.type} ${event.object.kind} ${event.object.metadata.name}`),
        ['ADDED GwBackend after', 'DELETED GwBackend before'],
      );
      stop();

      const status = {
        conditions: [
          {
            type: 'Accepted',
            status: 'True',
            reason: 'Accepted',
            message: 'ok',
            lastTransitionTime: '2026-01-01T00:00:00Z',
          },
        ],
      };
      assert.equal(store.writeStatus('gw.dev/GwBackend', 'default/after', status), true);
      assert.equal(
        store.writeStatus('gw.dev/GwBackend', 'default/after', status),
        false,
        'the same status again is not written twice',
      );
      await store.statusesWritten();
      const written = (await server.request('GET', `${BACKENDS_PATH}/after`)).json;
      assert.deepEqual(written.status, status, logs.join('\n'));
      assert.deepEqual(written.spec, backend('after').spec);
      assert.ok(
        written.metadata.managedFields.some(
          (entry: { manager: string; subresource?: string }) =>
            entry.manager === 'gw-controller' && entry.subresource === 'status',
        ),
      );
      await eventually('the cache sees the status', async () => {
        return store.list('gw.dev/GwBackend').items.some((item) => item.status !== undefined);
      });
      assert.equal(
        store.writeStatus('gw.dev/GwBackend', 'default/after', status),
        false,
        'unchanged: nothing to write',
      );
      assert.equal(store.writeStatus('gw.dev/GwBackend', 'default/missing', status), false);
    } finally {
      await store.close();
      await server.close();
    }
  });

  test('a status write after someone else changed the object retries on the conflict and keeps their change', async () => {
    const server = await startTestApiServer();
    const { store } = newStore(server);
    try {
      await server.request('POST', BACKENDS_PATH, { body: backend('contested') });
      await store.start();
      // The cache still holds the old resourceVersion when the status goes out.
      const labelled = await server.request('PATCH', `${BACKENDS_PATH}/contested`, {
        body: { metadata: { labels: { team: 'a' } } },
        contentType: 'application/merge-patch+json',
      });
      assert.equal(labelled.status, 200);
      const status = {
        conditions: [
          {
            type: 'Accepted',
            status: 'False',
            reason: 'Invalid',
            message: 'no',
            lastTransitionTime: '2026-01-01T00:00:00Z',
          },
        ],
      };
      assert.equal(store.writeStatus('gw.dev/GwBackend', 'default/contested', status), true);
      await store.statusesWritten();
      const object = (await server.request('GET', `${BACKENDS_PATH}/contested`)).json;
      assert.deepEqual(object.status, status);
      assert.deepEqual(object.metadata.labels, { team: 'a' });
    } finally {
      await store.close();
      await server.close();
    }
  });

  test('route status entries of other controllers are kept', async () => {
    const server = await startTestApiServer();
    const { store } = newStore(server);
    try {
      const created = (await server.request('POST', ROUTES_PATH, { body: route('shared') })).json;
      const theirs = {
        parentRef: { name: 'other-gateway' },
        controllerName: 'example.com/other-controller',
        conditions: [
          {
            type: 'Accepted',
            status: 'True',
            reason: 'Accepted',
            message: '',
            lastTransitionTime: '2026-01-01T00:00:00Z',
          },
        ],
      };
      const put = await server.request('PUT', `${ROUTES_PATH}/shared/status`, {
        body: { ...created, status: { parents: [theirs] } },
      });
      assert.equal(put.status, 200, put.text);
      await store.start();
      const ours = {
        parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'ai' },
        controllerName: 'gw.dev/gateway-controller',
        conditions: [
          {
            type: 'Accepted',
            status: 'True',
            reason: 'Accepted',
            message: '',
            lastTransitionTime: '2026-01-02T00:00:00Z',
          },
        ],
      };
      assert.equal(
        store.writeStatus('gateway.networking.k8s.io/HTTPRoute', 'default/shared', { parents: [ours] }),
        true,
      );
      await store.statusesWritten();
      const object = (await server.request('GET', `${ROUTES_PATH}/shared`)).json;
      assert.deepEqual(
        object.status.parents.map((entry: { controllerName: string }) => entry.controllerName),
        ['gw.dev/gateway-controller', 'example.com/other-controller'],
      );
      await eventually('the cache sees the status', async () =>
        store.list('gateway.networking.k8s.io/HTTPRoute').items.some((item) => item.status !== undefined),
      );
      assert.equal(
        store.writeStatus('gateway.networking.k8s.io/HTTPRoute', 'default/shared', { parents: [ours] }),
        false,
        'our part is as written: nothing to write',
      );
    } finally {
      await store.close();
      await server.close();
    }
  });

  test('a read-only store writes no status', async () => {
    const server = await startTestApiServer();
    const { store } = newStore(server, { writeStatus: false });
    try {
      await server.request('POST', BACKENDS_PATH, { body: backend('read-only') });
      await store.start();
      assert.equal(store.writeStatus('gw.dev/GwBackend', 'default/read-only', { conditions: [] }), false);
    } finally {
      await store.close();
      await server.close();
    }
  });

  test('after the server comes back with its history compacted, the informer re-lists (410) and reports what changed', async () => {
    const first = await startTestApiServer({ historyLimit: 5 });
    const { dataDir } = first;
    const port = first.embedded.server.address.port;
    const { store, logs } = newStore(first);
    let server: EmbeddedApiServer | undefined;
    let firstClosed = false;
    try {
      await first.request('POST', BACKENDS_PATH, { body: backend('stays') });
      await first.request('POST', BACKENDS_PATH, { body: backend('goes') });
      await store.start();
      const events: WatchEvent[] = [];
      store.watch(undefined, '', (event) => {
        if (event.object.kind === 'GwBackend') events.push(event);
      });
      await first.embedded.close();
      firstClosed = true;

      // While the server is down its database changes: more than its history can replay.
      const offline = new ApiStore(join(dataDir, 'state.db'), { historyLimit: 5 });
      const backends = resourceOfKind('gw.dev/GwBackend')!;
      const configMaps = resourceOfKind('/ConfigMap')!;
      offline.delete(backends, 'default', 'goes');
      offline.create(backends, 'default', backend('new'), { fieldManager: 'test' });
      for (let index = 0; index < 10; index++)
        offline.create(configMaps, 'default', configMap(`filler-${index}`), { fieldManager: 'test' });
      await offline.close();
      await eventually('the store notices the server is gone', async () => store.problems().length > 0);

      server = await EmbeddedApiServer.start({ dataDir, port, historyLimit: 5 });
      await eventually('the re-list reports the delete and the create', async () => events.length >= 2, 10_000);
      assert.deepEqual(events.map((event) => `${event.type} ${event.object.metadata.name}`).sort(), [
        'ADDED new',
        'DELETED goes',
      ]);
      assert.deepEqual(
        store
          .list('gw.dev/GwBackend')
          .items.map((item) => item.metadata.name)
          .sort(),
        ['new', 'stays'],
      );
      await eventually('every kind re-listed', async () => store.list('/ConfigMap').items.length === 10);
      await eventually('the problems clear', async () => store.problems().length === 0);
      assert.ok(
        logs.some((line) => line.includes('(retrying)')),
        logs.join('\n'),
      );
    } finally {
      await store.close();
      await server?.close();
      if (firstClosed) rmSync(dataDir, { recursive: true, force: true });
      else await first.close();
    }
  });
});

describe('KubeStore against a server without some kinds', () => {
  /**
   * A plain-HTTP front for the embedded API server that answers 404 for ListenerSets while
   * `hidden` holds — as a cluster without that CRD does.
   */
  async function partialServer(server: TestApiServer, hidden: { listenerSets: boolean }) {
    const front = createServer((request, response) => {
      if (hidden.listenerSets && request.url?.includes('/listenersets')) {
        response.writeHead(404, { 'Content-Type': 'application/json' });
        response.end(
          JSON.stringify({
            kind: 'Status',
            apiVersion: 'v1',
            status: 'Failure',
            reason: 'NotFound',
            code: 404,
            message: 'the server could not find the requested resource',
          }),
        );
        return;
      }
      const upstream = httpsRequest(
        {
          host: '127.0.0.1',
          port: server.port,
          method: request.method,
          path: request.url,
          headers: request.headers,
          ca: server.ca,
          servername: 'localhost',
        },
        (answer) => {
          response.writeHead(answer.statusCode!, answer.headers);
          response.flushHeaders(); // a watch answers its headers before any event
          answer.pipe(response);
        },
      );
      upstream.on('error', () => response.destroy());
      request.pipe(upstream);
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    const port = (front.address() as { port: number }).port;
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'partial', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'admin', token: server.token }],
      contexts: [{ name: 'partial', cluster: 'partial', user: 'admin' }],
      currentContext: 'partial',
    });
    return { front, kubeConfig };
  }

  test('a kind the server does not serve reads as empty, is reported with the fix, and is picked up once served', async () => {
    const server = await startTestApiServer();
    const hidden = { listenerSets: true };
    const { front, kubeConfig } = await partialServer(server, hidden);
    const logs: string[] = [];
    const store = new KubeStore({
      kubeConfig,
      kinds: Object.values(SNAPSHOT_KINDS),
      retry: { initialMs: 20, maxMs: 200 },
      notServedRetryMs: 50,
      log: (line) => logs.push(line),
    });
    try {
      await server.request('POST', BACKENDS_PATH, { body: backend('present') });
      await store.start();
      assert.ok(store.synced(), 'a kind not served does not hold the start back');
      assert.deepEqual(store.list('gateway.networking.k8s.io/ListenerSet').items, []);
      assert.equal(store.list('gw.dev/GwBackend').items.length, 1);
      assert.deepEqual(
        store.problems().map((problem) => problem.message),
        ['gateway.networking.k8s.io/v1 listenersets is not served'],
      );
      assert.equal(logs.filter((line) => line.includes('ListenerSet is not served')).length, 1, logs.join('\n'));

      const created = await server.request(
        'POST',
        '/apis/gateway.networking.k8s.io/v1/namespaces/default/listenersets',
        {
          body: {
            apiVersion: 'gateway.networking.k8s.io/v1',
            kind: 'ListenerSet',
            metadata: { name: 'extra' },
            spec: { parentRef: { name: 'ai' }, listeners: [{ name: 'http', port: 8081, protocol: 'HTTP' }] },
          },
        },
      );
      assert.equal(created.status, 201, created.text);
      hidden.listenerSets = false;
      await eventually(
        'the kind is picked up',
        async () => store.list('gateway.networking.k8s.io/ListenerSet').items.length === 1,
      );
      assert.deepEqual(store.problems(), []);
      assert.ok(
        logs.some((line) => line.includes('ListenerSet is served')),
        logs.join('\n'),
      );
    } finally {
      await store.close();
      front.closeAllConnections();
      front.close();
      await server.close();
    }
  });
});
