// The install manifests (src/install/manifests.ts, `gw install-manifests`, deploy/install.yaml):
// the committed file is the generated one; the RBAC grants what the controller and the data planes
// do and no more (checked with an evaluator of RBAC rules against the operations the code
// performs); the controller's Deployment runs `gw controller` restricted, probed on its admin
// port; the GatewayClass is one gw's controller accepts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { KINDS } from '../../src/api/kinds/registry.ts';
import type { KubeObject } from '../../src/api/validate/admission.ts';
import { parseControllerArgs } from '../../src/cli/controller.ts';
import { gatewayClassStatuses } from '../../src/controller/gateway-api/gateway-classes.ts';
import { SNAPSHOT_KINDS, type SnapshotKind, snapshotOf } from '../../src/controller/snapshot.ts';
import { translate } from '../../src/controller/translate.ts';
import { ADMIN_PORT } from '../../src/provisioning/command.ts';
import { imageReference } from '../../src/provisioning/image.ts';
import { PROVISIONED_KINDS } from '../../src/provisioning/provisioned-kinds.ts';
import { PROXY_CLUSTER_ROLE } from '../../src/provisioning/proxy-rbac.ts';
import { runGw } from '../helpers/cli.ts';

type Rule = { apiGroups: string[]; resources: string[]; resourceNames?: string[]; verbs: string[] };
type Manifest = KubeObject & {
  rules?: Rule[];
  roleRef?: { name: string };
  subjects?: { kind: string; name: string; namespace: string }[];
};

const committed = readFileSync(new URL('../../deploy/install.yaml', import.meta.url), 'utf8');
const objects = parseAllDocuments(committed).map((document) => document.toJS() as Manifest);
const find = (kind: string, name: string) => {
  const found = objects.find((object) => object.kind === kind && object.metadata.name === name);
  assert.ok(found, `no ${kind} ${name} in deploy/install.yaml`);
  return found;
};

/** Whether RBAC rules allow a verb on a resource (optionally of one name), as the RBAC authorizer decides. */
function allows(rules: Rule[], verb: string, group: string, resource: string, name?: string): boolean {
  return rules.some(
    (rule) =>
      (rule.verbs.includes(verb) || rule.verbs.includes('*')) &&
      (rule.apiGroups.includes(group) || rule.apiGroups.includes('*')) &&
      (rule.resources.includes(resource) || rule.resources.includes('*')) &&
      (rule.resourceNames === undefined || (name !== undefined && rule.resourceNames.includes(name))),
  );
}

/** Every (verb, group, resource) the rules grant, wildcards refused. */
function grants(rules: Rule[]): string[] {
  const granted = new Set<string>();
  for (const rule of rules)
    for (const verb of rule.verbs)
      for (const group of rule.apiGroups)
        for (const resource of rule.resources) {
          assert.ok(![verb, group, resource].includes('*'), 'no wildcard');
          granted.add(`${verb} ${group}/${resource}${rule.resourceNames ? `[${rule.resourceNames.join(',')}]` : ''}`);
        }
  return [...granted].sort();
}

const definitionOf = (key: string) => KINDS.find((definition) => `${definition.group}/${definition.kind}` === key)!;

describe('deploy/install.yaml', () => {
  it('is what gw install-manifests prints (run `npm run deploy` after changing what it is made from)', async () => {
    const result = await runGw(['install-manifests']);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(committed, result.stdout);
  });

  it("holds gw's CRDs first, then the namespace, the controller and its RBAC, gw-proxy and the GatewayClass", () => {
    assert.deepEqual(
      objects.map((object) => `${object.kind} ${object.metadata.name}`),
      [
        'CustomResourceDefinition gwbackends.gw.dev',
        'CustomResourceDefinition gwmodels.gw.dev',
        'CustomResourceDefinition gwparameters.gw.dev',
        'CustomResourceDefinition gwpolicies.gw.dev',
        'Namespace gw-system',
        'ServiceAccount gw-controller',
        'ClusterRole gw-controller',
        'ClusterRoleBinding gw-controller',
        'ClusterRole gw-proxy',
        'Deployment gw-controller',
        'GatewayClass gw',
      ],
    );
  });
});

describe('the RBAC', () => {
  const controllerRules = find('ClusterRole', 'gw-controller').rules!;
  const proxyRules = find('ClusterRole', PROXY_CLUSTER_ROLE).rules!;

  it('lets the controller list, watch and get every kind it reads', () => {
    for (const key of Object.values(SNAPSHOT_KINDS)) {
      const { group, plural } = definitionOf(key);
      for (const verb of ['list', 'watch', 'get'])
        assert.ok(allows(controllerRules, verb, group, plural), `${verb} ${key}`);
    }
  });

  it('lets the controller update the status of every kind it writes a status of, and no other', () => {
    const written = [...translate(snapshotOf([]), 'now', '1').statuses.keys()] as SnapshotKind[];
    assert.ok(written.length >= 7);
    // GwParameters: their status says which Gateways use them and what could not be provisioned.
    for (const kind of [...written, 'parameters' as const]) {
      const { group, plural } = definitionOf(SNAPSHOT_KINDS[kind]);
      assert.ok(allows(controllerRules, 'update', group, `${plural}/status`), `update ${plural}/status`);
    }
    for (const kind of ['namespaces', 'services', 'secrets', 'configMaps', 'referenceGrants'] as const) {
      const { group, plural } = definitionOf(SNAPSHOT_KINDS[kind]);
      assert.ok(!allows(controllerRules, 'update', group, `${plural}/status`), `no status of ${plural}`);
    }
  });

  it('lets the controller create, patch (server-side apply) and delete every kind provisioning writes, and bind gw-proxy only', () => {
    for (const { group, plural } of PROVISIONED_KINDS)
      for (const verb of ['create', 'patch', 'delete', 'list', 'watch'])
        assert.ok(allows(controllerRules, verb, group, plural), `${verb} ${plural}`);
    assert.ok(allows(controllerRules, 'bind', 'rbac.authorization.k8s.io', 'clusterroles', PROXY_CLUSTER_ROLE));
    assert.ok(!allows(controllerRules, 'bind', 'rbac.authorization.k8s.io', 'clusterroles', 'cluster-admin'));
    assert.ok(!allows(controllerRules, 'escalate', 'rbac.authorization.k8s.io', 'clusterroles', PROXY_CLUSTER_ROLE));
    // What it never does: write the objects users own, or touch pods, nodes or roles.
    for (const [group, resource] of [
      ['gw.dev', 'gwbackends'],
      ['gateway.networking.k8s.io', 'gateways'],
      ['', 'namespaces'],
      ['', 'pods'],
      ['', 'nodes'],
      ['rbac.authorization.k8s.io', 'clusterroles'],
      ['rbac.authorization.k8s.io', 'rolebindings'],
    ] as const)
      for (const verb of ['create', 'update', 'patch', 'delete'])
        assert.ok(!allows(controllerRules, verb, group, resource), `${verb} ${group}/${resource}`);
  });

  it('gives the data planes list and watch of what gw run reads, nothing else', () => {
    const expected = Object.values(SNAPSHOT_KINDS).flatMap((key) => {
      const { group, plural } = definitionOf(key);
      return ['list', 'watch'].map((verb) => `${verb} ${group}/${plural}`);
    });
    assert.deepEqual(grants(proxyRules), expected.sort());
  });

  it('binds the controller ServiceAccount to its ClusterRole', () => {
    const binding = find('ClusterRoleBinding', 'gw-controller');
    assert.equal(binding.roleRef!.name, 'gw-controller');
    assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'gw-controller', namespace: 'gw-system' }]);
  });
});

describe('the controller Deployment', () => {
  const deployment = find('Deployment', 'gw-controller') as unknown as {
    spec: {
      replicas: number;
      template: {
        spec: {
          serviceAccountName: string;
          securityContext: Record<string, unknown>;
          containers: {
            image: string;
            command: string[];
            ports: { name: string; containerPort: number }[];
            readinessProbe: { httpGet: { path: string; port: string } };
            livenessProbe: { httpGet: { path: string; port: string } };
            securityContext: Record<string, unknown>;
          }[];
        };
      };
    };
  };
  const pod = deployment.spec.template.spec;
  const [container] = pod.containers;

  it('runs gw controller (a command gw accepts) from gw’s image at this version, one replica', () => {
    assert.equal(deployment.spec.replicas, 1);
    assert.equal(pod.serviceAccountName, 'gw-controller');
    assert.deepEqual(container!.command.slice(0, 2), ['gw', 'controller']);
    const options = parseControllerArgs(container!.command.slice(2));
    assert.ok(typeof options !== 'string', String(options));
    assert.equal(options.adminAddress, '0.0.0.0', 'the kubelet probes from outside the pod');
    const version = (
      JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
    ).version;
    assert.equal(container!.image, imageReference({}, version));
  });

  it('is probed on its admin port: ready once every kind is listed, live while it answers', () => {
    const admin = container!.ports.find((port) => port.name === 'admin')!;
    assert.equal(admin.containerPort, ADMIN_PORT);
    const options = parseControllerArgs(container!.command.slice(2));
    assert.ok(typeof options !== 'string' && options.adminPort === ADMIN_PORT);
    assert.deepEqual(container!.readinessProbe.httpGet, { path: '/healthz/ready', port: 'admin' });
    assert.deepEqual(container!.livenessProbe.httpGet, { path: '/healthz/live', port: 'admin' });
  });

  it('runs restricted: non-root, seccomp RuntimeDefault, no capabilities, read-only root filesystem', () => {
    assert.deepEqual(pod.securityContext, { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    assert.deepEqual(container!.securityContext, {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
  });
});

describe('the GatewayClass', () => {
  it("names gw's controller, which accepts it", () => {
    const gatewayClass = find('GatewayClass', 'gw');
    const statuses = gatewayClassStatuses(snapshotOf([gatewayClass]), 'now');
    const accepted = statuses.get('gw')?.conditions?.find((condition) => condition.type === 'Accepted');
    assert.equal(accepted?.status, 'True');
  });
});

describe('gw install-manifests', () => {
  it('--namespace and --image place the controller', async () => {
    const result = await runGw(['install-manifests', '--namespace', 'platform-gw', '--image', 'registry.example/gw:1']);
    assert.equal(result.code, 0, result.stderr);
    const installed = parseAllDocuments(result.stdout).map((document) => document.toJS() as Manifest);
    assert.ok(installed.some((object) => object.kind === 'Namespace' && object.metadata.name === 'platform-gw'));
    for (const object of installed.filter((object) => ['ServiceAccount', 'Deployment'].includes(object.kind)))
      assert.equal(object.metadata.namespace, 'platform-gw', object.kind);
    const binding = installed.find((object) => object.kind === 'ClusterRoleBinding')!;
    assert.equal(binding.subjects![0]!.namespace, 'platform-gw');
    assert.match(result.stdout, /image: registry\.example\/gw:1\n/);
  });

  it('refuses a namespace that is not a DNS label, or an empty image, naming the option', async () => {
    const badNamespace = await runGw(['install-manifests', '--namespace', 'Gw_System']);
    assert.equal(badNamespace.code, 2);
    assert.match(badNamespace.stderr, /--namespace "Gw_System" is not a namespace name/);
    assert.equal(badNamespace.stdout, '');
    const badImage = await runGw(['install-manifests', '--image', '']);
    assert.equal(badImage.code, 2);
    assert.match(badImage.stderr, /--image "" is not an image reference/);
  });
});
