// Every object gw generates for a cluster, checked against the Kubernetes schemas of its kind
// (test/helpers/kubernetes-schemas.ts: kubernetes-models' validators compiled from Kubernetes'
// OpenAPI documents, plus fields the schema does not have): the objects gatewayManifests() makes
// for every golden input and for overlays of every kind, the install manifests (deploy/install.yaml)
// and the Gateway API CRDs (deploy/gateway-api-crds.yaml) and the InferencePool CRD
// (deploy/inference-extension-crds.yaml), CRDs with the apiextensions.k8s.io/v1
// model. The GatewayClass, a Gateway API kind kubernetes-models does not have, is admitted as gw
// validate (and a cluster with the CRDs above) admits it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { apiVersionOf } from '../../src/api/kinds/kind.ts';
import { admit } from '../../src/api/validate/admission.ts';
import { formatFieldError } from '../../src/api/validate/errors.ts';
import { gatewayManifests } from '../../src/provisioning/manifests.ts';
import { PROVISIONED_KINDS } from '../../src/provisioning/provisioned-kinds.ts';
import { CASES, counting, GATEWAY } from '../fixtures/provisioning/cases.ts';
import { isKubernetesKind, kubernetesSchemaProblems } from '../helpers/kubernetes-schemas.ts';

type Object_ = Record<string, unknown> & { apiVersion: string; kind: string; metadata: { name: string } };

async function assertValid(object: Object_, where: string) {
  if (isKubernetesKind(object)) {
    assert.deepEqual(await kubernetesSchemaProblems(object), [], `${where}: ${object.kind} ${object.metadata.name}`);
    return;
  }
  const admitted = admit(object);
  assert.ok(admitted.definition, `${where}: ${object.apiVersion} ${object.kind} is neither a Kubernetes nor a gw kind`);
  assert.deepEqual(
    [...admitted.errors, ...admitted.warnings].map(formatFieldError),
    [],
    `${where}: ${object.kind} ${object.metadata.name}`,
  );
}

/** Overlays on every kind a GwParameters can target, at both levels: what users write most. */
const OVERLAID = gatewayManifests({
  gateway: { ...GATEWAY, listeners: [{ name: 'web', port: 80, protocol: 'HTTP' }] },
  version: '0.1.0',
  randomBytes: counting,
  gatewayClassParameters: {
    parameters: 'infra/class',
    spec: {
      deployment: {
        metadata: { annotations: { 'example.com/owner': 'platform' } },
        spec: {
          template: {
            spec: {
              nodeSelector: { 'kubernetes.io/os': 'linux' },
              tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gateway', effect: 'NoSchedule' }],
              containers: [{ name: 'gw', resources: { requests: { cpu: '500m' } } }],
            },
          },
        },
      },
      service: { metadata: { labels: { exposure: 'internal' } }, spec: { type: 'ClusterIP' } },
      serviceAccount: { metadata: { annotations: { 'iam.example.com/role': 'gw' } } },
      podDisruptionBudget: { spec: { minAvailable: null, maxUnavailable: 1 } },
    },
  },
  gatewayParameters: {
    parameters: 'team-a/ai',
    spec: {
      deployment: {
        spec: {
          template: {
            spec: {
              containers: [
                { name: 'gw', env: [{ name: 'EXTRA', value: '1' }] },
                { name: 'shipper', image: 'example/shipper:1', args: ['--forward'] },
              ],
            },
          },
        },
      },
      horizontalPodAutoscaler: {
        spec: {
          minReplicas: 2,
          maxReplicas: 6,
          metrics: [
            { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
          ],
        },
      },
    },
  },
});

/** The objects of each golden input (test/fixtures/provisioning/cases.ts). */
const GOLDEN = Object.entries(CASES).map(([name, [gatewayClassParameters, gatewayParameters]]) => {
  const result = gatewayManifests({
    gateway: GATEWAY,
    version: '0.1.0',
    randomBytes: counting,
    ...(gatewayClassParameters && {
      gatewayClassParameters: { parameters: 'infra/class', spec: gatewayClassParameters },
    }),
    ...(gatewayParameters && { gatewayParameters: { parameters: 'team-a/ai', spec: gatewayParameters } }),
  });
  assert.ok(result.ok, `${name}: ${JSON.stringify(result)}`);
  return { name, objects: result.objects as Object_[] };
});

describe('the objects gw provisions pass the Kubernetes schemas', () => {
  for (const { name, objects } of GOLDEN) {
    it(`golden input ${name}`, async () => {
      for (const object of objects) await assertValid(object, name);
    });
  }

  it('with overlays of every kind, at both levels', async () => {
    assert.ok(OVERLAID.ok, JSON.stringify(OVERLAID));
    assert.deepEqual(
      OVERLAID.objects.map((object) => object.kind),
      [
        'ServiceAccount',
        'ClusterRoleBinding',
        'Secret',
        'Service',
        'ConfigMap',
        'Deployment',
        'PodDisruptionBudget',
        'HorizontalPodAutoscaler',
      ],
    );
    for (const object of OVERLAID.objects) await assertValid(object as Object_, 'overlays');
  });

  it('every kind provisioned is one the install manifests let the controller write (PROVISIONED_KINDS)', () => {
    const provisioned = new Set(PROVISIONED_KINDS.map((kind) => `${apiVersionOf(kind)} ${kind.kind}`));
    const generated = [...GOLDEN.flatMap(({ objects }) => objects), ...(OVERLAID.ok ? OVERLAID.objects : [])];
    assert.ok(generated.some((object) => object.kind === 'DaemonSet'));
    for (const object of generated)
      assert.ok(provisioned.has(`${object.apiVersion} ${object.kind}`), `${object.kind} is not in PROVISIONED_KINDS`);
  });
});

describe('the install manifests pass the Kubernetes schemas', () => {
  for (const [file, least] of [
    ['install.yaml', 5],
    ['gateway-api-crds.yaml', 5],
    ['inference-extension-crds.yaml', 1],
  ] as const) {
    it(`deploy/${file}`, async () => {
      const text = readFileSync(new URL(`../../deploy/${file}`, import.meta.url), 'utf8');
      const objects = parseAllDocuments(text).map((document) => document.toJS() as Object_);
      assert.ok(objects.length >= least);
      for (const object of objects) await assertValid(object, file);
    });
  }
});

describe('the schema check itself', () => {
  it('finds a wrong type, a missing required field and a field the schema does not have', async () => {
    const problems = await kubernetesSchemaProblems({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'x', labels: { a: 'b' } },
      spec: {
        replicas: 'two',
        template: { spec: { containers: [{ name: 'gw', image: 'i', imagePullPolicy: 'Always', comand: ['gw'] }] } },
        revisionHistory: 3,
      },
    });
    assert.equal(problems.length, 3, problems.join('\n'));
    assert.match(problems[0]!, /selector/);
    assert.match(problems[0]!, /replicas must be integer/);
    assert.deepEqual(problems.slice(1), [
      'unknown field .spec.template.spec.containers[0].comand',
      'unknown field .spec.revisionHistory',
    ]);
  });

  it('finds a field a CRD schema node does not have', async () => {
    const problems = await kubernetesSchemaProblems({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'xs.example.com' },
      spec: {
        group: 'example.com',
        names: { plural: 'xs', kind: 'X' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-preserve-unknown-fields': true } },
          },
        ],
      },
    });
    assert.deepEqual(problems, ['unknown field .spec.versions[0].schema.openAPIV3Schema.x-preserve-unknown-fields']);
  });
});
