// gw run with the embedded API server: the controller reads the API server's store, the data
// plane serves what is created through the API, statuses come back through the API, files given
// with -f are applied into it, and a gw killed during writes loses nothing it acknowledged.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseRunArgs } from '../../src/cli/run.ts';
import { DEFAULT_DOWNSTREAM_LIMITS } from '../../src/dataplane/server/downstream-limits.ts';
import { LocalGateway } from '../../src/run/local-gateway.ts';
import { DEFAULT_LOG_FILTER } from '../../src/util/log-filter.ts';
import { spawnGw } from '../helpers/cli.ts';
import { freePort, gatewayYaml, webRouteYaml } from '../helpers/gateway.ts';
import { eventually } from '../helpers/until.ts';
import { apiClient, createAll } from './helpers.ts';

const temporary: string[] = [];
function directory(prefix: string): string {
  const path = mkdtempSync(join(tmpdir(), prefix));
  temporary.push(path);
  return path;
}
after(() => {
  for (const path of temporary) rmSync(path, { recursive: true, force: true });
});

let upstream: Server;
let upstreamPort: number;
before(async () => {
  upstream = createServer((_request, response) => response.end('hello from upstream'));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamPort = (upstream.address() as { port: number }).port;
});
after(() => upstream.close());

async function get(url: string): Promise<string> {
  try {
    return await (await fetch(url)).text();
  } catch {
    return '';
  }
}

const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata: {name: from-file}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: nginx}]}
`;

describe('gw run with the API server, in process', () => {
  test('what is created through the API is served, and the controller writes statuses back to it', async () => {
    const dataDir = directory('gw-run-api-');
    const port = await freePort();
    const gateway = new LocalGateway({ paths: [], address: '127.0.0.1', api: { dataDir, port: 0 } });
    await gateway.start();
    try {
      const client = apiClient(dataDir, gateway.api!.api.server.address.port);
      await createAll(client, gatewayYaml(port) + webRouteYaml(upstreamPort));
      await eventually(
        'the route is served',
        async () => (await get(`http://127.0.0.1:${port}/`)) === 'hello from upstream',
      );
      await eventually('the Gateway status is written', async () => {
        const status = (
          await client.request('GET', '/apis/gateway.networking.k8s.io/v1/namespaces/default/gateways/ai')
        ).json.status;
        return status?.conditions?.some(
          (c: { type: string; status: string }) => c.type === 'Programmed' && c.status === 'True',
        );
      });
      const gatewayObject = (
        await client.request('GET', '/apis/gateway.networking.k8s.io/v1/namespaces/default/gateways/ai')
      ).json;
      assert.ok(
        gatewayObject.metadata.managedFields.some(
          (entry: { manager: string; subresource?: string }) =>
            entry.manager === 'gw-controller' && entry.subresource === 'status',
        ),
      );
      // A change through the API reaches the data plane.
      const deleted = await client.request(
        'DELETE',
        '/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes/web',
      );
      assert.equal(deleted.status, 200);
      await eventually(
        'the route is no longer served',
        async () => (await get(`http://127.0.0.1:${port}/`)) !== 'hello from upstream',
      );
    } finally {
      await gateway.stop();
    }
  });

  test('-f with the API server: files are applied (manager gw-files) and kept applied; API objects are left alone', async () => {
    const dataDir = directory('gw-run-files-');
    const files = directory('gw-run-files-src-');
    const port = await freePort();
    writeFileSync(join(files, 'gateway.yaml'), gatewayYaml(port));
    writeFileSync(join(files, 'route.yaml'), webRouteYaml(upstreamPort));
    const logs: string[] = [];
    const start = async () => {
      const gateway = new LocalGateway({
        paths: [files],
        address: '127.0.0.1',
        api: { dataDir, port: 0 },
        log: (line) => logs.push(line),
      });
      await gateway.start();
      return { gateway, client: apiClient(dataDir, gateway.api!.api.server.address.port) };
    };
    let { gateway, client } = await start();
    try {
      await eventually(
        'the files are served',
        async () => (await get(`http://127.0.0.1:${port}/`)) === 'hello from upstream',
      );
      const backend = (await client.request('GET', '/apis/gw.dev/v1alpha1/namespaces/default/gwbackends/web')).json;
      assert.deepEqual(
        backend.metadata.managedFields.map(
          (entry: { manager: string; operation: string; subresource?: string }) =>
            `${entry.manager}/${entry.operation}${entry.subresource ? `/${entry.subresource}` : ''}`,
        ),
        ['gw-files/Apply', 'gw-controller/Update/status'],
      );
      const own = await client.request('POST', '/api/v1/namespaces/default/configmaps', {
        body: { metadata: { name: 'mine' } },
      });
      assert.equal(own.status, 201);

      // An edit through the API holds until the file's definition of the object changes: then the
      // file wins.
      await client.request('PATCH', '/apis/gw.dev/v1alpha1/namespaces/default/gwbackends/web', {
        body: { spec: { static: { port: 1 } } },
        contentType: 'application/merge-patch+json',
      });
      const edited = webRouteYaml(upstreamPort).replace(
        'metadata: {name: web}',
        'metadata: {name: web, labels: {v: "2"}}',
      );
      writeFileSync(
        join(files, 'route.yaml'),
        `${edited}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-file}\n---\n${DEPLOYMENT}`,
      );
      await eventually('the file is applied again', async () => {
        const reply = await client.request('GET', '/apis/gw.dev/v1alpha1/namespaces/default/gwbackends/web');
        return reply.json.spec.static.port === upstreamPort && reply.json.metadata.labels?.v === '2';
      });
      await eventually(
        'the new object is applied',
        async () => (await client.request('GET', '/api/v1/namespaces/default/configmaps/from-file')).status === 200,
      );
      // A kind gw does not read is stored like any other: kubectl get deployments shows it.
      await eventually(
        'the Deployment of the file is stored',
        async () =>
          (await client.request('GET', '/apis/apps/v1/namespaces/default/deployments/from-file')).status === 200,
      );

      // A file removed while gw is stopped: its objects go at the next start; API objects stay.
      await gateway.stop();
      unlinkSync(join(files, 'route.yaml'));
      ({ gateway, client } = await start());
      assert.equal(
        (await client.request('GET', '/apis/gw.dev/v1alpha1/namespaces/default/gwbackends/web')).status,
        404,
      );
      assert.equal((await client.request('GET', '/api/v1/namespaces/default/configmaps/from-file')).status, 404);
      assert.equal((await client.request('GET', '/api/v1/namespaces/default/configmaps/mine')).status, 200);
      assert.equal(
        (await client.request('GET', '/apis/gateway.networking.k8s.io/v1/namespaces/default/gateways/ai')).status,
        200,
      );
      assert.deepEqual(
        logs.filter((line) => line.includes('from the files')),
        [],
      );
    } finally {
      await gateway.stop();
    }
  });
});

describe('gw run arguments', () => {
  test('without -f the API server runs on 6443 with the default data directory; with -f only given --api-port', () => {
    const env = { XDG_STATE_HOME: '/state' };
    assert.deepEqual(parseRunArgs([], env), {
      paths: [],
      recursive: false,
      address: '127.0.0.1',
      adminPort: 15000,
      adminAddress: '127.0.0.1',
      workers: 1,
      limits: DEFAULT_DOWNSTREAM_LIMITS,
      api: { port: 6443, address: '127.0.0.1', dataDir: '/state/gw' },
      logFormat: 'json',
      logFilter: DEFAULT_LOG_FILTER,
    });
    assert.equal((parseRunArgs(['-f', 'x'], env) as { api?: unknown }).api, undefined);
    assert.deepEqual((parseRunArgs(['-f', 'x', '--api-port', '0', '--data-dir', '/d'], env) as { api?: unknown }).api, {
      port: 0,
      address: '127.0.0.1',
      dataDir: '/d',
    });
    assert.equal(parseRunArgs([], { GW_DATA_DIR: '/g' }).constructor, Object);
    assert.match(String(parseRunArgs(['-f', 'x', '--data-dir', '/d'])), /give --api-port too/);
    assert.match(String(parseRunArgs(['--api-port', 'x'])), /--api-port must be a port/);
  });
});

describe('gw run, killed during writes', () => {
  test('after SIGKILL and a restart, every acknowledged write is there and a watch resumes from before the kill', async () => {
    const dataDir = directory('gw-run-crash-');
    const args = ['run', '--api-port', '0', '--data-dir', dataDir, '--admin-port', '0'];
    let gw = spawnGw(args);
    let [, port] = await gw.waitForLog(/API server on https:\/\/127\.0\.0\.1:(\d+)/, 30_000);
    let client = apiClient(dataDir, Number(port));
    const acknowledged: { name: string; revision: number }[] = [];
    const writer = (async () => {
      for (let i = 0; ; i++) {
        const reply = await client
          .request('POST', '/api/v1/namespaces/default/configmaps', {
            body: { metadata: { name: `cm-${i}` }, data: { index: String(i) } },
          })
          .catch(() => undefined);
        if (!reply) return;
        assert.equal(reply.status, 201, reply.text);
        acknowledged.push({ name: `cm-${i}`, revision: Number(reply.json.metadata.resourceVersion) });
      }
    })();
    await eventually('writes are acknowledged', async () => acknowledged.length >= 150, 20_000);
    gw.child.kill('SIGKILL');
    await writer;
    assert.equal(await gw.exited, null);

    gw = spawnGw(args);
    try {
      [, port] = await gw.waitForLog(/API server on https:\/\/127\.0\.0\.1:(\d+)/, 30_000);
      client = apiClient(dataDir, Number(port));
      const list = (await client.request('GET', '/api/v1/namespaces/default/configmaps')).json;
      const names = new Set(list.items.map((item: { metadata: { name: string } }) => item.metadata.name));
      for (const { name } of acknowledged) assert.ok(names.has(name), `${name} was acknowledged and is lost`);
      assert.ok(Number(list.metadata.resourceVersion) >= acknowledged.at(-1)!.revision);
      // A client that had seen up to the 100th write resumes its watch there.
      const from = acknowledged[99]!;
      const watch = await client.stream(
        `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${from.revision}`,
      );
      const later = acknowledged.slice(100);
      const events = await watch.waitFor(later.length);
      watch.close();
      assert.deepEqual(
        events.slice(0, later.length).map((event) => `${event.type} ${event.object.metadata.name}`),
        later.map(({ name }) => `ADDED ${name}`),
      );
    } finally {
      gw.child.kill('SIGTERM');
      assert.equal(await gw.exited, 0);
    }
  });
});
