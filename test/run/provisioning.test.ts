// `gw controller --kubeconfig` pointed at a gw embedded API server provisions through the API
// server's REST interface (the informer-based store, server-side apply): `kubectl get
// deployments` shows the Gateway's Deployment, a GwParameters change updates it, deleting the
// Gateway deletes what it had; `--no-provision` writes statuses only. And `gw run --provision`'s
// command line.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { resourceOfKind } from '../../src/apiserver/resources.ts';
import { parseControllerArgs } from '../../src/cli/controller.ts';
import { parseRunArgs } from '../../src/cli/run.ts';
import { ApiSource } from '../../src/run/api-source.ts';
import { kindKey } from '../../src/store/store.ts';
import { type ApiClient, apiClient, startTestApiServer, type TestApiServer } from '../apiserver/helpers.ts';
import { type GwProcess, spawnGw } from '../helpers/cli.ts';
import { skipWithoutTool } from '../helpers/missing-tool.ts';
import { provisioningWorld } from '../helpers/provisioning.ts';
import { eventually } from '../helpers/until.ts';

const KUBECTL = process.env.KUBECTL ?? 'kubectl';
const kubectlSkip = skipWithoutTool(
  'kubectl',
  spawnSync(KUBECTL, ['version', '--client'], { encoding: 'utf8' }).error === undefined
    ? undefined
    : `looked for "${KUBECTL}": gw controller's provisioning was not checked with kubectl; install kubectl (bash .ci/install-kubectl DIR) or set KUBECTL`,
);

const WORLD = provisioningWorld('{podDisruptionBudget: {}}');

function path(kind: string, name?: string, namespace = 'team-a'): string {
  const resource = resourceOfKind(kind)!;
  const base = resource.group === '' ? '/api/v1' : `/apis/${resource.apiVersion}`;
  const scope = resource.namespaced ? `/namespaces/${namespace}` : '';
  return `${base}${scope}/${resource.plural}${name ? `/${name}` : ''}`;
}

async function createAll(server: ApiClient, yaml: string): Promise<void> {
  for (const document of parseAllDocuments(yaml)) {
    const object = document.toJS();
    const reply = await server.request('POST', path(kindKey(object)), { body: object });
    assert.equal(reply.status, 201, reply.text);
  }
}

async function exists(server: TestApiServer, kind: string, name = 'ai'): Promise<boolean> {
  return (await server.request('GET', path(kind, name))).status === 200;
}

function kubectl(server: TestApiServer, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      KUBECTL,
      args,
      { env: { ...process.env, KUBECONFIG: server.embedded.kubeconfigPath }, timeout: 30_000 },
      (error, stdout, stderr) => (error ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout)),
    );
  });
}

/** Runs `gw controller --kubeconfig` (and `extra`) at a fresh embedded API server while `check` runs. */
async function withController(
  extra: string[],
  check: (server: TestApiServer, controller: GwProcess) => Promise<void>,
): Promise<void> {
  const server = await startTestApiServer();
  const args = ['controller', '--kubeconfig', server.embedded.kubeconfigPath, '--admin-port', '0', ...extra];
  const controller = spawnGw(args);
  try {
    await controller.waitForLog(/every kind listed/);
    await createAll(server, WORLD);
    await check(server, controller);
  } finally {
    controller.child.kill('SIGTERM');
    const exited = await controller.exited;
    await server.close();
    assert.equal(exited, 0, controller.stderr);
  }
}

describe('gw controller provisions into an API server', () => {
  test('kubectl get deployments shows what it made; a GwParameters change updates it; deleting the Gateway deletes it all', {
    skip: kubectlSkip,
  }, async () => {
    await withController(['--log-format', 'text'], async (server) => {
      await eventually('the Deployment', () => exists(server, 'apps/Deployment'), 10_000);
      const listed = await kubectl(
        server,
        'get',
        'deployments,services,serviceaccounts,poddisruptionbudgets',
        '-n',
        'team-a',
        '-o',
        'name',
      );
      assert.deepEqual(listed.trim().split('\n').sort(), [
        'deployment.apps/ai',
        'poddisruptionbudget.policy/ai',
        'service/ai',
        'serviceaccount/ai',
      ]);
      const image = await kubectl(
        server,
        'get',
        'deployment',
        'ai',
        '-n',
        'team-a',
        '-o',
        'jsonpath={.spec.template.spec.containers[0].image}',
      );
      assert.match(image, /^ghcr\.io\/gw-dev\/gw:/);
      const secret = (await server.request('GET', path('/Secret', 'ai-session-key'))).json;

      const parameters = (await server.request('GET', path('gw.dev/GwParameters', 'ai'))).json;
      const reply = await server.request('PUT', path('gw.dev/GwParameters', 'ai'), {
        body: { ...parameters, spec: { image: { tag: '9.9.9' } } },
      });
      assert.equal(reply.status, 200, reply.text);
      await eventually(
        'the new image',
        async () =>
          (await server.request('GET', path('apps/Deployment', 'ai'))).json.spec.template.spec.containers[0].image ===
          'ghcr.io/gw-dev/gw:9.9.9',
        10_000,
      );
      await eventually('the PDB gone', async () => !(await exists(server, 'policy/PodDisruptionBudget')), 10_000);
      await eventually(
        'the GwParameters status',
        async () =>
          (await server.request('GET', path('gw.dev/GwParameters', 'ai'))).json.status?.attachedGateways === 1,
        10_000,
      );
      const kept = (await server.request('GET', path('/Secret', 'ai-session-key'))).json;
      assert.deepEqual([kept.metadata.uid, kept.data], [secret.metadata.uid, secret.data], 'the session key is kept');
      const managers = (await server.request('GET', path('apps/Deployment', 'ai'))).json.metadata.managedFields.map(
        (entry: { manager: string; operation: string }) => `${entry.manager} ${entry.operation}`,
      );
      assert.deepEqual(managers, ['gw-controller Apply']);

      assert.equal((await server.request('DELETE', path('gateway.networking.k8s.io/Gateway', 'ai'))).status, 200);
      await eventually(
        'everything gone',
        async () => {
          for (const kind of ['apps/Deployment', '/Service', '/ServiceAccount'])
            if (await exists(server, kind)) return false;
          return !(await exists(server, '/Secret', 'ai-session-key'));
        },
        10_000,
      );
      assert.equal(await kubectl(server, 'get', 'deployments', '-n', 'team-a', '-o', 'name'), '');
    });
  });

  test('--no-provision writes the statuses and generates nothing', async () => {
    await withController(['--no-provision'], async (server, controller) => {
      await eventually(
        'the Gateway status',
        async () =>
          (await server.request('GET', path('gateway.networking.k8s.io/Gateway', 'ai'))).json.status?.conditions?.some(
            (condition: { type: string; status: string }) =>
              condition.type === 'Accepted' && condition.status === 'True',
          ),
        10_000,
      );
      await controller.waitForLog(/Gateway team-a\/ai: configuration/);
      assert.equal(await exists(server, 'apps/Deployment'), false);
      assert.equal((await server.request('GET', path('gw.dev/GwParameters', 'ai'))).json.status, undefined);
    });
  });

  test('gw run --provision generates into its embedded API server; without it, nothing is generated', async () => {
    const dirs = [mkdtempSync(join(tmpdir(), 'gw-provision-')), mkdtempSync(join(tmpdir(), 'gw-provision-'))];
    const sources = dirs.map(
      (dataDir, index) => new ApiSource({ paths: [], api: { dataDir, port: 0, provision: index === 0 } }, () => {}),
    );
    try {
      for (const [index, source] of sources.entries()) {
        await source.start();
        await createAll(apiClient(dirs[index]!, source.api.server.address.port), WORLD);
      }
      const [provisioning, plain] = sources.map((source) => source.api.store);
      await eventually('the Deployment', async () => provisioning!.list('apps/Deployment').items.length === 1);
      // The plain gw run has reconciled the same objects (its Gateway status is written) and made nothing.
      await eventually('the plain Gateway status', async () =>
        plain!.list('gateway.networking.k8s.io/Gateway').items.every((gateway) => gateway.status !== undefined),
      );
      assert.equal(plain!.list('apps/Deployment').items.length, 0);
      assert.equal(plain!.list('gw.dev/GwParameters').items[0]?.status, undefined);
    } finally {
      for (const source of sources) await source.stop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    }
  });

  test('command lines: gw controller provisions unless --no-provision; gw run --provision needs the embedded API server', () => {
    const controller = parseControllerArgs([]);
    assert.ok(typeof controller !== 'string' && controller.provision);
    const off = parseControllerArgs(['--no-provision']);
    assert.ok(typeof off !== 'string' && !off.provision);
    const run = parseRunArgs(['--provision', '--api-port', '0'], { GW_DATA_DIR: '/tmp/gw-test' });
    assert.ok(typeof run !== 'string' && run.api?.provision === true);
    assert.match(String(parseRunArgs(['--provision', '-f', 'x.yaml'])), /with -f, give --api-port too/);
    assert.match(String(parseRunArgs(['--provision', '--cluster'])), /gw controller provisions/);
  });
});
