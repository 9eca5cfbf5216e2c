// `gw controller --kubeconfig` pointed at a gw embedded API server provisions through the API
// server's REST interface (the informer-based store, server-side apply): `kubectl get
// deployments` shows the Gateway's Deployment, a GwParameters change updates it, deleting the
// Gateway deletes what it had; `--no-provision` writes statuses only. And `gw run --provision`'s
// command line.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { resourceOfKind } from '../../src/apiserver/resources.ts';
import { parseControllerArgs } from '../../src/cli/controller.ts';
import { parseRunArgs } from '../../src/cli/run.ts';
import { kindKey } from '../../src/store/store.ts';
import { startTestApiServer, type TestApiServer } from '../apiserver/helpers.ts';
import { spawnGw } from '../helpers/cli.ts';
import { skipWithoutTool } from '../helpers/missing-tool.ts';
import { eventually } from '../helpers/until.ts';

const KUBECTL = process.env.KUBECTL ?? 'kubectl';
const kubectlSkip = skipWithoutTool(
  'kubectl',
  spawnSync(KUBECTL, ['version', '--client'], { encoding: 'utf8' }).error === undefined
    ? undefined
    : `looked for "${KUBECTL}": gw controller's provisioning was not checked with kubectl; install kubectl (bash .ci/install-kubectl DIR) or set KUBECTL`,
);

const WORLD = `apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gw}
spec: {controllerName: gw.dev/gateway-controller}
---
apiVersion: gw.dev/v1alpha1
kind: GwParameters
metadata: {name: ai, namespace: team-a}
spec: {podDisruptionBudget: {}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ai, namespace: team-a}
spec:
  gatewayClassName: gw
  infrastructure: {parametersRef: {group: gw.dev, kind: GwParameters, name: ai}}
  listeners: [{name: http, port: 8080, protocol: HTTP}]
`;

function path(kind: string, name?: string, namespace = 'team-a'): string {
  const resource = resourceOfKind(kind)!;
  const base = resource.group === '' ? '/api/v1' : `/apis/${resource.apiVersion}`;
  const scope = resource.namespaced ? `/namespaces/${namespace}` : '';
  return `${base}${scope}/${resource.plural}${name ? `/${name}` : ''}`;
}

async function createAll(server: TestApiServer, yaml: string): Promise<void> {
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

describe('gw controller provisions into an API server', () => {
  test('kubectl get deployments shows what it made; a GwParameters change updates it; deleting the Gateway deletes it all', {
    skip: kubectlSkip,
  }, async () => {
    const server = await startTestApiServer();
    const controller = spawnGw([
      'controller',
      '--kubeconfig',
      server.embedded.kubeconfigPath,
      '--admin-port',
      '0',
      '--log-format',
      'text',
    ]);
    try {
      await controller.waitForLog(/every kind listed/);
      await createAll(server, WORLD);
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
    } finally {
      controller.child.kill('SIGTERM');
      const exited = await controller.exited;
      await server.close();
      assert.equal(exited, 0, controller.stderr);
    }
  });

  test('--no-provision writes the statuses and generates nothing', async () => {
    const server = await startTestApiServer();
    const controller = spawnGw([
      'controller',
      '--kubeconfig',
      server.embedded.kubeconfigPath,
      '--admin-port',
      '0',
      '--no-provision',
    ]);
    try {
      await controller.waitForLog(/every kind listed/);
      await createAll(server, WORLD);
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
    } finally {
      controller.child.kill('SIGTERM');
      const exited = await controller.exited;
      await server.close();
      assert.equal(exited, 0, controller.stderr);
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
