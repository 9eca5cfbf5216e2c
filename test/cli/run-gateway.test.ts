// gw run --gateway NAMESPACE/NAME, as the provisioned data plane runs it: only that Gateway's
// listeners serve (files, workers, a Kubernetes API server alike); a Gateway that does not exist
// yet or is not gw's is said so and waited for, /healthz/ready answering 503 until it serves.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { resourceOfKind } from '../../src/apiserver/resources.ts';
import { parseRunArgs } from '../../src/cli/run.ts';
import { kindKey } from '../../src/store/store.ts';
import { startTestApiServer } from '../apiserver/helpers.ts';
import { runGw, spawnGw } from '../helpers/cli.ts';
import { freePort, gatewayYaml, webRouteYaml } from '../helpers/gateway.ts';
import { eventually } from '../helpers/until.ts';

/** Gateway default/`name` of class `className` on `port`, and a route of it to the upstream. */
function namedGatewayYaml(name: string, port: number, className = 'gw'): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ${name}}
spec: {gatewayClassName: ${className}, listeners: [{name: http, protocol: HTTP, port: ${port}}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}}
spec:
  parentRefs: [{name: ${name}}]
  rules: [{backendRefs: [{group: gw.dev, kind: GwBackend, name: web}]}]
---
`;
}

/** The body of a GET, or the error code when nothing listens. */
async function answer(port: number): Promise<string> {
  try {
    return await (await fetch(`http://127.0.0.1:${port}/`)).text();
  } catch (error) {
    return ((error as Error).cause as { code?: string } | undefined)?.code ?? 'failed';
  }
}

async function readyStatus(adminPort: number): Promise<number> {
  return (await fetch(`http://127.0.0.1:${adminPort}/healthz/ready`)).status;
}

describe('gw run --gateway', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-run-gateway-'));
  let upstream: Server;
  let upstreamPort: number;
  before(async () => {
    upstream = createServer((_req, res) => res.end('hello from upstream'));
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamPort = (upstream.address() as { port: number }).port;
  });
  after(() => {
    upstream.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A directory with Gateway ai (routed to the upstream) on `aiPort` and Gateway other on `otherPort`. */
  function twoGateways(aiPort: number, otherPort: number): string {
    const files = mkdtempSync(join(dir, 'two-'));
    writeFileSync(join(files, 'ai.yaml'), gatewayYaml(aiPort) + webRouteYaml(upstreamPort));
    writeFileSync(join(files, 'other.yaml'), namedGatewayYaml('other', otherPort));
    return files;
  }

  for (const workers of ['1', '2']) {
    it(`serves only the named Gateway (--workers ${workers}); the other's port stays closed`, async () => {
      const [aiPort, otherPort, adminPort] = [await freePort(), await freePort(), await freePort()];
      const files = twoGateways(aiPort, otherPort);
      const gw = spawnGw([
        'run',
        '-f',
        files,
        '--gateway',
        'default/ai',
        '--workers',
        workers,
        '--admin-port',
        String(adminPort),
      ]);
      try {
        // Worker processes load gw's modules first, which a busy machine makes slow.
        await gw.waitForLog(/Gateway default\/ai: serving http HTTP :\d+/, 30_000);
        await gw.waitForLog(/serving Gateway default\/ai only \(--gateway\)/);
        assert.equal(await answer(aiPort), 'hello from upstream');
        assert.equal(await answer(otherPort), 'ECONNREFUSED', 'the other Gateway is not served');
        assert.doesNotMatch(gw.stderr, /Gateway default\/other: serving/);
        assert.equal(await readyStatus(adminPort), 200);
      } finally {
        gw.child.kill('SIGTERM');
      }
      assert.equal(await gw.exited, 0, gw.stderr);
    });
  }

  it('waits for a Gateway that does not exist yet (not ready meanwhile), serves it once it appears, and says when it is not gw’s', async () => {
    const [aiPort, laterPort, adminPort] = [await freePort(), await freePort(), await freePort()];
    const files = mkdtempSync(join(dir, 'later-'));
    writeFileSync(join(files, 'ai.yaml'), gatewayYaml(aiPort) + webRouteYaml(upstreamPort));
    const gw = spawnGw(['run', '-f', files, '--gateway', 'default/later', '--admin-port', String(adminPort)]);
    try {
      await gw.waitForLog(
        /"level":"warn","scope":"run","message":"Gateway default\/later does not exist \(yet\): waiting for it"/,
      );
      assert.equal(await readyStatus(adminPort), 503, 'not ready while the Gateway is missing');
      assert.equal(await answer(aiPort), 'ECONNREFUSED', 'Gateway ai is not the one to serve');
      writeFileSync(join(files, 'later.yaml'), namedGatewayYaml('later', laterPort));
      await gw.waitForLog(/Gateway default\/later: serving http HTTP :\d+/);
      assert.equal(await answer(laterPort), 'hello from upstream');
      await eventually('ready once its listener serves', async () => (await readyStatus(adminPort)) === 200, 5_000);
      // Moved to a class of another controller: no longer gw's, no longer served, not ready.
      writeFileSync(
        join(files, 'later.yaml'),
        `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: theirs}
spec: {controllerName: example.com/theirs}
---
${namedGatewayYaml('later', laterPort, 'theirs')}`,
      );
      await gw.waitForLog(
        /Gateway default\/later is not gw's: its GatewayClass theirs has controllerName example\.com\/theirs, not gw\.dev\/gateway-controller/,
      );
      await gw.waitForLog(/Gateway default\/later: no longer served/);
      assert.equal(await answer(laterPort), 'ECONNREFUSED');
      assert.equal(await readyStatus(adminPort), 503);
    } finally {
      gw.child.kill('SIGTERM');
    }
    assert.equal(await gw.exited, 0, gw.stderr);
  });

  it('with the embedded API server (files applied into it): the other Gateway is Programmed False there, reason Pending', async () => {
    const [aiPort, otherPort] = [await freePort(), await freePort()];
    const files = twoGateways(aiPort, otherPort);
    const dataDir = mkdtempSync(join(dir, 'data-'));
    const gw = spawnGw([
      'run',
      '-f',
      files,
      '--api-port',
      '0',
      '--data-dir',
      dataDir,
      '--gateway',
      'default/ai',
      '--admin-port',
      '0',
    ]);
    try {
      await gw.waitForLog(/Gateway default\/ai: serving http HTTP :\d+/, 30_000);
      assert.equal(await answer(aiPort), 'hello from upstream');
      assert.equal(await answer(otherPort), 'ECONNREFUSED');
      const kubeconfig = join(dataDir, 'kubeconfig');
      let status = '';
      await eventually(
        'the statuses are written',
        async () => {
          status = (await runGw(['status', '--kubeconfig', kubeconfig])).stdout;
          return status.includes('Pending');
        },
        10_000,
      );
      const other = status.slice(status.indexOf('Gateway default/other'));
      assert.match(
        other,
        /Programmed=False \(Pending\): listener http cannot be served: not served by this gw run, which serves only Gateway default\/ai \(--gateway\)/,
      );
      const ai = status.slice(status.indexOf('Gateway default/ai'), status.indexOf('Gateway default/other'));
      assert.match(ai, /Programmed=True/);
    } finally {
      gw.child.kill('SIGTERM');
    }
    assert.equal(await gw.exited, 0, gw.stderr);
  });

  it('with --kubeconfig --read-only: serves the named Gateway of the API server only, and waits for it', async () => {
    const server = await startTestApiServer();
    const [aiPort, laterPort, adminPort] = [await freePort(), await freePort(), await freePort()];
    const create = async (yaml: string) => {
      for (const document of parseAllDocuments(yaml)) {
        const object = document.toJS();
        if (object === null) continue;
        const resource = resourceOfKind(kindKey(object))!;
        const base = resource.group === '' ? '/api/v1' : `/apis/${resource.apiVersion}`;
        const path = resource.namespaced
          ? `${base}/namespaces/default/${resource.plural}`
          : `${base}/${resource.plural}`;
        const reply = await server.request('POST', path, { body: object });
        assert.equal(reply.status, 201, reply.text);
      }
    };
    const gw = spawnGw([
      'run',
      '--kubeconfig',
      server.embedded.kubeconfigPath,
      '--read-only',
      '--gateway',
      'default/later',
      '--admin-port',
      String(adminPort),
    ]);
    try {
      await create(gatewayYaml(aiPort) + webRouteYaml(upstreamPort));
      await gw.waitForLog(/Gateway default\/later does not exist \(yet\): waiting for it/);
      assert.equal(await readyStatus(adminPort), 503);
      await create(namedGatewayYaml('later', laterPort));
      await gw.waitForLog(/Gateway default\/later: serving http HTTP :\d+/);
      // The Gateway and its route are created one after the other: the route may come a moment later.
      await eventually('the route is served', async () => (await answer(laterPort)) === 'hello from upstream', 5_000);
      assert.equal(await answer(aiPort), 'ECONNREFUSED');
      await eventually('ready', async () => (await readyStatus(adminPort)) === 200, 5_000);
    } finally {
      gw.child.kill('SIGTERM');
      const exited = await gw.exited;
      await server.close();
      assert.equal(exited, 0, gw.stderr);
    }
  });

  it('--gateway takes NAMESPACE/NAME, and with a cluster --read-only', () => {
    assert.equal((parseRunArgs(['--gateway', 'default/ai', '-f', 'x']) as { gateway: string }).gateway, 'default/ai');
    assert.equal(
      parseRunArgs(['--gateway', 'ai', '-f', 'x']),
      '--gateway takes NAMESPACE/NAME (the Gateway\'s namespace and name), not "ai"',
    );
    assert.match(parseRunArgs(['--gateway', 'Default/ai', '-f', 'x']) as string, /"Default" is not a namespace name/);
    assert.match(parseRunArgs(['--gateway', 'default/a_i', '-f', 'x']) as string, /"a_i" is not a Gateway name/);
    assert.equal(
      parseRunArgs(['--gateway', 'default/ai', '--cluster']),
      '--gateway with --kubeconfig/--cluster needs --read-only: the statuses are written by gw controller (or by a gw run serving every Gateway)',
    );
    assert.equal(
      (parseRunArgs(['--gateway', 'default/ai', '--cluster', '--read-only']) as { gateway: string }).gateway,
      'default/ai',
    );
  });
});
