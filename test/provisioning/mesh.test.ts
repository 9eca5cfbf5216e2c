// GwParameters `mesh` in the provisioned pod (src/provisioning/mesh.ts, decision 0035): labels,
// environment, CA token and mesh root volumes, compared with a golden manifest
// (test/fixtures/provisioning/mesh.yaml; UPDATE_GOLDEN=1 rewrites it); defaults; `enabled: false`;
// a user's env winning; and that what the pod gets is what the proxy reads
// (src/dataplane/mesh/settings.ts).
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { stringify } from 'yaml';
import type { EnvVar, GwParametersSpec } from '../../src/api/types/provisioning.ts';
import { meshSettingsFromEnv, ownIdentity } from '../../src/dataplane/mesh/settings.ts';
import { effectiveEnv } from '../../src/provisioning/env.ts';
import type { ProvisionedGateway } from '../../src/provisioning/gateway.ts';
import { provisionGateway } from '../../src/provisioning/provision.ts';
import { effectiveTypedFields } from '../../src/provisioning/typed-fields.ts';
import { workload } from '../../src/provisioning/workload.ts';

const GATEWAY: ProvisionedGateway = {
  name: 'ai',
  namespace: 'team-a',
  uid: '0f5b6c1e-2a34-4d7e-9f10-1234567890ab',
  gatewayClassName: 'gw',
  listeners: [{ name: 'http', port: 8080, protocol: 'HTTP' }],
};

function workloadOf(classSpec: GwParametersSpec | undefined, gatewaySpec: GwParametersSpec | undefined) {
  return workload(GATEWAY, effectiveTypedFields(classSpec, gatewaySpec), '0.1.0', [], 'settings-hash') as unknown as {
    spec: {
      template: {
        metadata: { labels: Record<string, string> };
        spec: {
          serviceAccountName: string;
          volumes?: unknown[];
          containers: { env?: EnvVar[]; volumeMounts?: unknown[] }[];
        };
      };
    };
  };
}

const envOf = (object: ReturnType<typeof workloadOf>) => object.spec.template.spec.containers[0]!.env ?? [];

/** The environment the container starts with, the downward API's fields resolved as the kubelet does. */
function podEnvironment(object: ReturnType<typeof workloadOf>): Record<string, string> {
  const resolved: Record<string, string> = {};
  const fieldValues: Record<string, string> = {
    'metadata.namespace': GATEWAY.namespace,
    'spec.serviceAccountName': object.spec.template.spec.serviceAccountName,
  };
  const variables = envOf(object);
  for (const [name, value] of effectiveEnv(variables)) {
    if ('value' in value) resolved[name] = value.value;
    else {
      const path = variables.findLast((variable) => variable.name === name)?.valueFrom?.fieldRef?.fieldPath;
      if (path !== undefined && fieldValues[path] !== undefined) resolved[name] = fieldValues[path];
    }
  }
  return resolved;
}

test('mesh from both levels: the workload matches mesh.yaml and is a valid apps/v1 Deployment', () => {
  const object = workloadOf(
    { mesh: { caAddress: 'https://istiod.mesh-system.svc:15012', trustDomain: 'corp.example', network: 'net-a' } },
    { mesh: { additionalTrustDomains: ['old.example', 'partner.example'], clusterId: 'east', network: 'net-b' } },
  );
  const actual = stringify(object, { lineWidth: 0 });
  const url = new URL('../fixtures/provisioning/mesh.yaml', import.meta.url);
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(url, actual);
  assert.equal(actual, readFileSync(url, 'utf8'));
  new Deployment(object as ConstructorParameters<typeof Deployment>[0]).validate();
});

test('mesh: {} joins with the defaults: istiod, cluster.local, cluster Kubernetes, no network', () => {
  const environment = podEnvironment(workloadOf(undefined, { mesh: {} }));
  assert.equal(environment.CA_ADDRESS, 'https://istiod.istio-system.svc:15012');
  assert.equal(environment.TRUST_DOMAIN, 'cluster.local');
  assert.equal(environment.CLUSTER_ID, 'Kubernetes');
  assert.equal(environment.ADDITIONAL_TRUST_DOMAINS, undefined);
  assert.equal(environment.NETWORK, undefined);
  const labels = workloadOf(undefined, { mesh: {} }).spec.template.metadata.labels;
  assert.equal(labels['istio.io/dataplane-mode'], 'none');
  assert.equal(labels['sidecar.istio.io/inject'], 'false');
});

test('what the pod is given is what the proxy reads: its identity is its namespace and ServiceAccount', () => {
  const object = workloadOf(
    { mesh: { trustDomain: 'corp.example', additionalTrustDomains: ['old.example'] } },
    { mesh: { clusterId: 'east', network: 'net-b' } },
  );
  const settings = meshSettingsFromEnv(podEnvironment(object));
  assert.ok(settings !== undefined && typeof settings !== 'string', String(settings));
  assert.equal(ownIdentity(settings), 'spiffe://corp.example/ns/team-a/sa/ai');
  assert.deepEqual(settings.additionalTrustDomains, ['old.example']);
  assert.equal(settings.clusterId, 'east');
  assert.equal(settings.network, 'net-b');
  assert.equal(settings.caAddress.href, 'https://istiod.istio-system.svc:15012/');
  // The files the settings name are the ones the volumes mount.
  const mounts = object.spec.template.spec.containers[0]!.volumeMounts as { mountPath: string }[];
  for (const path of [settings.tokenPath, settings.rootCertPath])
    assert.ok(
      mounts.some((mount) => path.startsWith(`${mount.mountPath}/`)),
      `${path} is not under a mount`,
    );
});

test("a GwParameters env entry of a mesh variable's name wins over the generated one", () => {
  const object = workloadOf({ mesh: {} }, { env: [{ name: 'CA_ADDRESS', value: 'https://ca.mesh.internal:8443' }] });
  const addresses = envOf(object).filter((variable) => variable.name === 'CA_ADDRESS');
  assert.deepEqual(addresses, [{ name: 'CA_ADDRESS', value: 'https://ca.mesh.internal:8443' }]);
});

test('enabled: false turns the integration off, also over a class that turns it on; nothing is refused', () => {
  const off = workloadOf({ mesh: { enabled: true, trustDomain: 'corp.example' } }, { mesh: { enabled: false } });
  assert.deepEqual(
    off.spec.template.spec.volumes,
    [{ name: 'run-settings', configMap: { name: 'ai' } }],
    "no mesh volume: the settings file's alone",
  );
  assert.equal(off.spec.template.metadata.labels['istio.io/dataplane-mode'], undefined);
  assert.ok(!envOf(off).some((variable) => variable.name === 'CA_ADDRESS'));
  const result = provisionGateway({
    gateway: GATEWAY,
    version: '0.1.0',
    randomBytes: (size) => new Uint8Array(size),
    gatewayClassParameters: { mesh: { enabled: true } },
    gatewayParameters: { mesh: { enabled: false } },
  });
  assert.ok(result.ok, JSON.stringify(result));
});

test('a mesh that is on is provisioned: gw run reaches the ambient mesh with it (test/run/mesh.test.ts)', () => {
  const result = provisionGateway({
    gateway: GATEWAY,
    version: '0.1.0',
    randomBytes: (size) => new Uint8Array(size),
    gatewayParameters: { mesh: {} },
  });
  assert.ok(result.ok, JSON.stringify(result));
});
