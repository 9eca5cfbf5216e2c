// gw manifests end to end: the objects it prints for a Gateway of gw's class, its GwParameters'
// overlays applied; a parametersRef that names nothing, and a field gw cannot provision, are errors
// naming the field, with nothing printed for that Gateway.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { runGw } from '../helpers/cli.ts';

const gatewayClass = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gw}
spec:
  controllerName: gw.dev/gateway-controller
  parametersRef: {group: gw.dev, kind: GwParameters, name: class-params, namespace: infra}
`;

const classParameters = `apiVersion: gw.dev/v1alpha1
kind: GwParameters
metadata: {name: class-params, namespace: infra}
spec:
  deployment:
    metadata: {labels: {team: platform}}
    spec: {replicas: 2}
`;

function gatewayParameters(spec: string): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwParameters
metadata: {name: ai, namespace: team-a}
spec:
${spec}`;
}

function gateway(uid?: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ai, namespace: team-a${uid ? `, uid: ${uid}` : ''}}
spec:
  gatewayClassName: gw
  infrastructure:
    parametersRef: {group: gw.dev, kind: GwParameters, name: ai}
  listeners: [{name: http, port: 8080, protocol: HTTP}]
`;
}

/** A directory holding the documents, one file each. */
function dirOf(...documents: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-manifests-'));
  documents.forEach((document, index) => {
    writeFileSync(join(dir, `${index}.yaml`), document);
  });
  return dir;
}

type Manifest = {
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; ownerReferences?: { uid: string }[] };
  spec?: { replicas?: number; ports?: { port: number }[] };
};

function parse(stdout: string): Manifest[] {
  const documents = parseAllDocuments(stdout);
  for (const document of documents) assert.deepEqual(document.errors, []);
  return documents.map((document) => document.toJSON() as Manifest);
}

describe('gw manifests', () => {
  it("prints the Gateway's objects as multi-document YAML, both levels' overlays applied, owned by the Gateway's uid", async () => {
    const uid = '6f1c2b1e-2d0a-4c55-9a3e-0a1b2c3d4e5f';
    const dir = dirOf(
      gatewayClass,
      classParameters,
      gatewayParameters('  deployment:\n    spec: {replicas: 3}\n'),
      gateway(uid),
    );
    const result = await runGw(['manifests', '-f', dir]);
    assert.equal(result.stderr, '');
    assert.equal(result.code, 0);
    const objects = parse(result.stdout);
    assert.deepEqual(
      objects.map((object) => object.kind),
      ['ServiceAccount', 'ClusterRoleBinding', 'Secret', 'Service', 'ConfigMap', 'Deployment'],
    );
    const deployment = objects.find((object) => object.kind === 'Deployment')!;
    assert.equal(deployment.spec?.replicas, 3, "the Gateway's overlay over the GatewayClass's");
    assert.equal(deployment.metadata.labels?.team, 'platform', "the GatewayClass's overlay");
    assert.deepEqual(
      objects.find((object) => object.kind === 'Service')!.spec?.ports?.map((port) => port.port),
      [8080],
    );
    // The ClusterRoleBinding is cluster-scoped: a namespaced Gateway cannot own it.
    for (const object of objects.filter((object) => object.kind !== 'ClusterRoleBinding'))
      assert.equal(object.metadata.ownerReferences?.[0]?.uid, uid, object.kind);
  });

  it('without a uid in the files, prints the objects unowned and says so', async () => {
    const dir = dirOf(gatewayClass, classParameters, gatewayParameters('  logging: {level: info}\n'), gateway());
    const result = await runGw(['manifests', '-f', dir]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /^Gateway team-a\/ai: no metadata\.uid in the files: .*without ownerReferences/);
    for (const object of parse(result.stdout)) assert.equal(object.metadata.ownerReferences, undefined, object.kind);
  });

  it('a parametersRef naming no GwParameters: exit 1, the field named, nothing printed', async () => {
    const dir = dirOf(gatewayClass, gatewayParameters('  logging: {level: info}\n'), gateway());
    const result = await runGw(['manifests', '-f', dir]);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.equal(
      result.stderr,
      'Gateway team-a/ai: GatewayClass gw spec.parametersRef: GwParameters infra/class-params is not among the given objects\n',
    );
  });

  it('a field gw cannot provision (an empty SESSION_KEY): exit 1, the GwParameters and the field named, nothing printed', async () => {
    const dir = dirOf(
      gatewayClass,
      classParameters,
      gatewayParameters('  env: [{name: SESSION_KEY, value: ""}]\n'),
      gateway(),
    );
    const result = await runGw(['manifests', '-f', dir]);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.match(
      result.stderr,
      /^Gateway team-a\/ai: GwParameters team-a\/ai: spec\.env\[SESSION_KEY\]: SESSION_KEY is empty[^\n]+\n$/,
    );
  });

  it('an invalid document: exit 1, the admission error, nothing printed', async () => {
    const dir = dirOf(gatewayClass, classParameters, gatewayParameters('  replicas: 2\n'), gateway());
    const result = await runGw(['manifests', '-f', dir]);
    assert.equal(result.code, 1);
    assert.equal(result.stdout, '');
    assert.match(result.stderr, /GwParameters team-a\/ai: spec\.replicas: Unknown field/);
    assert.match(result.stderr, /gw manifests: 1 invalid of 4: nothing printed\n$/);
  });
});
