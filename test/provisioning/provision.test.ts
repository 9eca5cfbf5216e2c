// Provisioning of a Gateway's data plane from its GwParameters' typed fields
// (src/provisioning/provision.ts): each case's objects compared with a golden manifest
// (test/fixtures/provisioning/<case>.yaml; UPDATE_GOLDEN=1 rewrites them), plus what every object
// must carry, the session key, and the fields refused with a problem.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { stringify } from 'yaml';
import type { GwParametersSpec } from '../../src/api/types/provisioning.ts';
import { parseRunArgs } from '../../src/cli/run.ts';
import { parseSessionKey } from '../../src/dataplane/mcp/session-seal.ts';
import type { ProvisionedGateway } from '../../src/provisioning/gateway.ts';
import { type ProvisioningInput, provisionGateway } from '../../src/provisioning/provision.ts';
import { CASES, counting, GATEWAY } from '../fixtures/provisioning/cases.ts';

const FIXTURES = new URL('../fixtures/provisioning/', import.meta.url);

function golden(name: string, actual: string): string {
  const url = new URL(name, FIXTURES);
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(url, actual);
  return readFileSync(url, 'utf8');
}

function provision(gatewayClassParameters?: GwParametersSpec, gatewayParameters?: GwParametersSpec) {
  const input: ProvisioningInput = { gateway: GATEWAY, version: '0.1.0', randomBytes: counting };
  if (gatewayClassParameters !== undefined) input.gatewayClassParameters = gatewayClassParameters;
  if (gatewayParameters !== undefined) input.gatewayParameters = gatewayParameters;
  return provisionGateway(input);
}

function objectsOf(result: ReturnType<typeof provision>) {
  if (!result.ok) assert.fail(`unexpected problems: ${JSON.stringify(result.problems)}`);
  return result.objects;
}

for (const [name, [classParameters, gatewayParameters]] of Object.entries(CASES)) {
  test(`${name}: the provisioned objects match ${name}.yaml`, () => {
    const objects = objectsOf(provision(classParameters, gatewayParameters));
    const actual = objects.map((object) => stringify(object, { lineWidth: 0 })).join('---\n');
    assert.equal(actual, golden(`${name}.yaml`, actual));
  });
}

test('every namespaced object is owned by its Gateway, carries gw labels and lives in its namespace', () => {
  for (const [classParameters, gatewayParameters] of Object.values(CASES)) {
    for (const object of objectsOf(provision(classParameters, gatewayParameters))) {
      if (object.kind === 'ClusterRoleBinding') continue; // cluster-scoped: the next test
      const metadata = object.metadata as unknown as {
        namespace: string;
        labels: Record<string, string>;
        ownerReferences: { kind: string; name: string; uid: string; controller: boolean }[];
      };
      assert.equal(metadata.namespace, 'team-a', object.kind);
      assert.deepEqual(
        metadata.ownerReferences.map(({ kind, name, uid, controller }) => ({ kind, name, uid, controller })),
        [{ kind: 'Gateway', name: 'ai', uid: GATEWAY.uid, controller: true }],
        object.kind,
      );
      assert.equal(metadata.labels['app.kubernetes.io/managed-by'], 'gw', object.kind);
      assert.equal(metadata.labels['gateway.networking.k8s.io/gateway-name'], 'ai', object.kind);
    }
  }
});

test("the ServiceAccount is bound to gw-proxy by a ClusterRoleBinding with gw's labels and the Gateway's namespace, unowned", () => {
  const objects = objectsOf(provision());
  const account = objects.find((object) => object.kind === 'ServiceAccount')!;
  const bindings = objects.filter((object) => object.kind === 'ClusterRoleBinding') as unknown as {
    metadata: { name: string; namespace?: string; labels: Record<string, string>; ownerReferences?: unknown };
    roleRef: unknown;
    subjects: unknown;
  }[];
  assert.equal(bindings.length, 1);
  const [binding] = bindings;
  assert.equal(binding!.metadata.name, 'gw-proxy.team-a.ai');
  assert.equal(binding!.metadata.namespace, undefined);
  assert.equal(binding!.metadata.ownerReferences, undefined, 'a namespaced Gateway cannot own a cluster-scoped object');
  assert.equal(binding!.metadata.labels['app.kubernetes.io/managed-by'], 'gw');
  assert.equal(binding!.metadata.labels['gateway.networking.k8s.io/gateway-name'], 'ai');
  assert.equal(binding!.metadata.labels['gw.dev/gateway-namespace'], 'team-a');
  assert.deepEqual(binding!.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'gw-proxy' });
  assert.deepEqual(binding!.subjects, [
    {
      kind: 'ServiceAccount',
      name: account.metadata.name,
      namespace: (account.metadata as { namespace?: string }).namespace,
    },
  ]);
});

test('pods run restricted; a listener below port 1024 lowers the first unprivileged port to it, no further', () => {
  const podSpecOf = (gateway: ProvisionedGateway) => {
    const result = provisionGateway({ gateway, version: '0.1.0', randomBytes: counting });
    const workload = objectsOf(result).find((object) => object.kind === 'Deployment') as unknown as {
      spec: {
        template: { spec: { securityContext: Record<string, unknown>; containers: { securityContext: unknown }[] } };
      };
    };
    return workload.spec.template.spec;
  };
  const unprivileged = podSpecOf(GATEWAY);
  assert.deepEqual(unprivileged.securityContext, { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
  assert.deepEqual(unprivileged.containers[0]!.securityContext, {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    capabilities: { drop: ['ALL'] },
  });
  const web = podSpecOf({
    ...GATEWAY,
    listeners: [
      { name: 'https', port: 443, protocol: 'HTTPS' },
      { name: 'http', port: 80, protocol: 'HTTP' },
      { name: 'alt', port: 8080, protocol: 'HTTP' },
    ],
  });
  assert.deepEqual(web.securityContext.sysctls, [{ name: 'net.ipv4.ip_unprivileged_port_start', value: '80' }]);
});

test('the session key is 32 bytes of the random source, in the form SESSION_KEY takes', () => {
  for (const source of [counting, (size: number) => new Uint8Array(randomBytes(size))]) {
    let given: Uint8Array | undefined;
    const recording = (size: number) => {
      given = source(size);
      return given;
    };
    const result = provisionGateway({ gateway: GATEWAY, version: '0.1.0', randomBytes: recording });
    const secret = objectsOf(result).find((object) => object.kind === 'Secret') as unknown as {
      data: { key: string };
    };
    const key = parseSessionKey(Buffer.from(secret.data.key, 'base64').toString());
    assert.ok(Buffer.isBuffer(key), `not a usable SESSION_KEY: ${String(key)}`);
    assert.deepEqual(new Uint8Array(key), given);
  }
  const short = () => provisionGateway({ gateway: GATEWAY, version: '0.1.0', randomBytes: () => new Uint8Array(8) });
  assert.throws(short, /wrong size/);
});

test('a HorizontalPodAutoscaler on a DaemonSet, or without maxReplicas, is refused naming the field', () => {
  const onDaemonSet = provision(
    { workload: { kind: 'DaemonSet' } },
    { horizontalPodAutoscaler: { spec: { maxReplicas: 3 } } },
  );
  assert.deepEqual(onDaemonSet.ok ? [] : onDaemonSet.problems.map((problem) => problem.field), [
    'spec.horizontalPodAutoscaler',
  ]);
  const noMaximum = provision(undefined, { horizontalPodAutoscaler: { metadata: { labels: { a: 'b' } } } });
  assert.deepEqual(noMaximum.ok ? [] : noMaximum.problems.map((problem) => problem.field), [
    'spec.horizontalPodAutoscaler.spec.maxReplicas',
  ]);
});

test('a log level gw run cannot read is a problem naming it; nothing is provisioned; mesh is provisioned', () => {
  const result = provision({ logging: { level: 'warn,mcp=debug' }, mesh: { enabled: true } });
  assert.equal(result.ok, false);
  assert.deepEqual(result.ok ? [] : result.problems.map((problem) => problem.field), ['spec.logging.level']);
  const [level] = result.ok ? [] : result.problems;
  assert.match(level!.message, /^"mcp=debug": unknown module "mcp" \(gw's modules: run, /);
  assert.equal(provision({ mesh: { enabled: true } }).ok, true);
});

test('rawConfig that gw run would refuse is a problem naming spec.rawConfig.<path>, as gw run words it', () => {
  const result = provision(
    { rawConfig: { binds: [], limits: { requestHeaderTimeout: 'soon' } } },
    { rawConfig: { admin: { port: 9000 }, address: '127.0.0.1', logging: { levle: 'debug' } } },
  );
  assert.deepEqual(result.ok ? [] : result.problems, [
    {
      field: 'spec.rawConfig.binds',
      message: 'binds: unknown key; the keys here are address, admin, workers, logging, limits',
    },
    {
      field: 'spec.rawConfig.limits.requestHeaderTimeout',
      message: 'limits.requestHeaderTimeout: "soon" is not a duration such as 3s or 1m30s',
    },
    {
      field: 'spec.rawConfig.logging.levle',
      message: 'logging.levle: unknown key (did you mean level?); the keys here are level, format',
    },
    {
      field: 'spec.rawConfig.address',
      message:
        "set by the provisioning on gw run's command line (the listeners bind 0.0.0.0 in a pod, for the Service to reach them); remove it",
    },
    {
      field: 'spec.rawConfig.admin.port',
      message:
        "set by the provisioning on gw run's command line (the probes and the container port name 15000); remove it",
    },
  ]);
});

test('the ConfigMap holds the settings file gw run reads: rawConfig merged, typed fields on top', () => {
  const [classParameters, gatewayParameters] = CASES['raw-config']!;
  const objects = objectsOf(provision(classParameters, gatewayParameters));
  const configMap = objects.find((object) => object.kind === 'ConfigMap') as unknown as {
    metadata: { name: string };
    data: Record<string, string>;
  };
  const dir = mkdtempSync(join(tmpdir(), 'gw-provisioned-settings-'));
  try {
    const file = join(dir, 'run.yaml');
    writeFileSync(file, configMap.data['run.yaml']!);
    const workload = objects.find((object) => object.kind === 'Deployment') as unknown as {
      spec: { template: { spec: { containers: { command: string[] }[]; volumes: { configMap: { name: string } }[] } } };
    };
    const container = workload.spec.template.spec.containers[0]!;
    assert.equal(workload.spec.template.spec.volumes[0]!.configMap.name, configMap.metadata.name);
    // The container's own arguments, the settings file at the path it names.
    const args = container.command.slice(2).map((arg) => (arg === '/etc/gw/run.yaml' ? file : arg));
    const options = parseRunArgs(args, {}) as Exclude<ReturnType<typeof parseRunArgs>, string>;
    assert.equal(typeof options, 'object', String(options));
    assert.equal(options.logFilter.text, 'debug', 'rawConfig where the typed fields set nothing');
    assert.equal(options.logFormat, 'text', 'the typed field over rawConfig');
    assert.equal(options.workers, 2);
    assert.equal(options.limits.requestHeaderTimeoutMs, 5000, "the GatewayClass's rawConfig");
    assert.equal(options.limits.maxBufferedBytes, 128 * 1024 ** 2, "the Gateway's rawConfig merged in");
    assert.equal(options.adminPort, 15000);
    assert.equal(options.gateway, 'team-a/ai');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the pod template carries the hash of the settings file: a change rolls the pods, none keeps them', () => {
  const hash = (parameters: GwParametersSpec) => {
    const workload = objectsOf(provision(undefined, parameters)).find(
      (object) => object.kind === 'Deployment',
    ) as unknown as {
      spec: { template: { metadata: { annotations: Record<string, string> } } };
    };
    return workload.spec.template.metadata.annotations['gw.dev/run-settings-sha256'];
  };
  const base = hash({ rawConfig: { workers: 2 } });
  assert.match(base!, /^[0-9a-f]{64}$/);
  assert.equal(hash({ rawConfig: { workers: 2 } }), base);
  assert.notEqual(hash({ rawConfig: { workers: 3 } }), base);
  assert.notEqual(hash({ rawConfig: { workers: 2 }, logging: { level: 'warn' } }), base);
});

test('modelCatalog needs nothing provisioned: the proxy reads its ConfigMaps through the API', () => {
  const withCatalog = provision(undefined, { modelCatalog: { sources: [{ configMap: { name: 'prices' } }] } });
  const without = provision(undefined, undefined);
  assert.ok(withCatalog.ok, JSON.stringify(withCatalog));
  assert.ok(without.ok);
  // The same objects as without a catalog (the session key aside, which is random per call).
  const names = (result: typeof without) =>
    result.ok ? result.objects.map((o) => `${o.kind} ${o.metadata.name}`) : [];
  assert.deepEqual(names(withCatalog), names(without));
});

test('a literal SESSION_KEY is checked as the container will see it, after $(VAR) expansion', () => {
  const key = 'ab'.repeat(32);
  const expanded = provision(undefined, {
    env: [
      { name: 'HALF', value: key.slice(0, 32) },
      { name: 'SESSION_KEY', value: `$(HALF)${key.slice(32)}` },
    ],
  });
  assert.ok(expanded.ok, JSON.stringify(expanded));
  assert.ok(
    !expanded.objects.some((object) => object.kind === 'Secret'),
    'no managed Secret when env sets SESSION_KEY',
  );
  for (const value of ['$(UNDEFINED)', '$$(HALF)', 'short', '']) {
    const result = provision(undefined, {
      env: [
        { name: 'HALF', value: key.slice(0, 32) },
        { name: 'SESSION_KEY', value },
      ],
    });
    assert.deepEqual(
      result.ok ? [] : result.problems.map((problem) => problem.field),
      ['spec.env[SESSION_KEY]'],
      value,
    );
  }
});
