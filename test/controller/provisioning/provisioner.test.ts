// The provisioner's decisions, on an in-memory store whose object writes are recorded: which
// objects it applies, creates and deletes as the plan and the stored objects change. (The
// controller against the embedded API server, with real server-side apply: provisioning.test.ts.)
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../../src/api/validate/admission.ts';
import { translateGatewayApi } from '../../../src/controller/gateway-api/index.ts';
import { planProvisioning } from '../../../src/controller/provisioning/plan.ts';
import { holds, Provisioner } from '../../../src/controller/provisioning/provisioner.ts';
import { snapshotOf } from '../../../src/controller/snapshot.ts';
import { MemoryStore } from '../../../src/store/memory-store.ts';
import { kindKey, type ObjectWrites, objectKey } from '../../../src/store/store.ts';
import { admitted, GATEWAY_CLASS_YAML } from '../../helpers/objects.ts';

const WORLD = `${GATEWAY_CLASS_YAML}apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ai, namespace: team-a, uid: uid-ai}
spec:
  gatewayClassName: gw
  infrastructure: {parametersRef: {group: gw.dev, kind: GwParameters, name: ai}}
  listeners: [{name: http, port: 8080, protocol: HTTP}]
---
`;

function parameters(spec: string): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwParameters
metadata: {name: ai, namespace: team-a}
spec: ${spec}
`;
}

/** Object writes onto a MemoryStore, each recorded as "verb Kind namespace/name"; `refuse` rejects matching ones. */
function recordingWrites(store: MemoryStore, refuse?: RegExp) {
  const calls: string[] = [];
  const run = (call: string, write: () => void) => {
    calls.push(call);
    if (refuse?.test(call)) return Promise.reject(new Error(`${call}: spec.replicas: Invalid value`));
    write();
    return Promise.resolve();
  };
  const writes: ObjectWrites = {
    applyObject: (object) => run(`apply ${object.kind} ${objectKey(object)}`, () => store.apply(object)),
    createObject: (object) =>
      run(`create ${object.kind} ${objectKey(object)}`, () => {
        if (!store.get(kindKey(object), objectKey(object))) store.apply(object);
      }),
    deleteObject: (kind, key) => run(`delete ${kind.split('/')[1]} ${key}`, () => store.delete(kind, key)),
  };
  return { writes, calls };
}

let random = 0;
function planFor(yaml: string) {
  const snapshot = snapshotOf(admitted(yaml));
  return planProvisioning(snapshot, translateGatewayApi(snapshot, ''), {
    version: '1.2.3',
    randomBytes: (size) => new Uint8Array(size).fill(++random),
  });
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

function setup(refuse?: RegExp) {
  const store = new MemoryStore();
  const { writes, calls } = recordingWrites(store, refuse);
  let refusals = 0;
  const provisioner = new Provisioner(store, writes, { log: () => {}, onRefused: () => refusals++ });
  return { store, calls, provisioner, refusals: () => refusals };
}

describe('the provisioner', () => {
  it('creates every object once; an unchanged plan writes nothing; a changed field applies that object only', async () => {
    const { store, calls, provisioner } = setup();
    provisioner.sync(planFor(`${WORLD}---\n${parameters('{}')}`));
    await settle();
    assert.deepEqual(calls.splice(0), [
      'apply ServiceAccount team-a/ai',
      'apply ClusterRoleBinding gw-proxy.team-a.ai',
      'create Secret team-a/ai-session-key',
      'apply Service team-a/ai',
      'apply ConfigMap team-a/ai',
      'apply Deployment team-a/ai',
    ]);
    const key = store.get('/Secret', 'team-a/ai-session-key')?.data;
    provisioner.sync(planFor(`${WORLD}---\n${parameters('{}')}`));
    await settle();
    assert.deepEqual(calls.splice(0), [], 'nothing differs (the new plan drew a new key: the Secret is kept)');
    provisioner.sync(planFor(`${WORLD}---\n${parameters('{image: {tag: "2.0.0"}}')}`));
    await settle();
    assert.deepEqual(calls.splice(0), ['apply Deployment team-a/ai']);
    assert.deepEqual(store.get('/Secret', 'team-a/ai-session-key')?.data, key, 'the session key survives');
  });

  it("keeps fields others set (an autoscaler's replicas), re-applies when someone changes a field gw sets", async () => {
    const { store, calls, provisioner } = setup();
    const plan = planFor(`${WORLD}---\n${parameters('{horizontalPodAutoscaler: {spec: {maxReplicas: 5}}}')}`);
    provisioner.sync(plan);
    await settle();
    calls.splice(0);
    const deployment = structuredClone(store.get('apps/Deployment', 'team-a/ai')!) as KubeObject & {
      spec: Record<string, unknown> & { template: { spec: { containers: { image: string }[] } } };
    };
    assert.equal(deployment.spec.replicas, undefined, 'gw leaves replicas to the autoscaler');
    deployment.spec.replicas = 4;
    store.apply(deployment);
    const scaled = store.get('apps/Deployment', 'team-a/ai')!;
    assert.equal(provisioner.concerns({ type: 'MODIFIED', object: scaled }), false);
    provisioner.sync();
    await settle();
    assert.deepEqual(calls.splice(0), []);
    deployment.spec.template.spec.containers[0]!.image = 'elsewhere/gw:evil';
    store.apply(deployment);
    assert.equal(provisioner.concerns({ type: 'MODIFIED', object: store.get('apps/Deployment', 'team-a/ai')! }), true);
    provisioner.sync();
    await settle();
    assert.deepEqual(calls.splice(0), ['apply Deployment team-a/ai']);
  });

  it('deletes what it no longer generates: the PDB of a removed overlay, the Deployment after a switch, a labelled cluster-scoped object', async () => {
    const { store, calls, provisioner } = setup();
    provisioner.sync(planFor(`${WORLD}---\n${parameters('{podDisruptionBudget: {}}')}`));
    await settle();
    // A cluster-scoped object gw made for the Gateway earlier: labelled only (no namespaced owner).
    const binding = structuredClone(store.get('/ServiceAccount', 'team-a/ai')!) as KubeObject;
    store.apply({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'gw-team-a-ai', labels: { ...binding.metadata.labels, 'gw.dev/gateway-namespace': 'team-a' } },
    } as KubeObject);
    // Someone else's Deployment with gw's labels but no Gateway owner: never touched.
    store.apply({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'lookalike', namespace: 'team-a', labels: binding.metadata.labels },
    } as KubeObject);
    calls.splice(0);
    provisioner.sync(planFor(`${WORLD}---\n${parameters('{workload: {kind: DaemonSet}}')}`));
    await settle();
    assert.deepEqual(calls.splice(0).sort(), [
      'apply DaemonSet team-a/ai',
      'delete ClusterRoleBinding gw-team-a-ai',
      'delete Deployment team-a/ai',
      'delete PodDisruptionBudget team-a/ai',
    ]);
    assert.ok(store.get('apps/Deployment', 'team-a/lookalike'));
  });

  it("SESSION_KEY in env: gw's session-key Secret is no longer generated and is deleted", async () => {
    const { calls, provisioner } = setup();
    provisioner.sync(planFor(`${WORLD}---\n${parameters('{}')}`));
    await settle();
    calls.splice(0);
    const key = 'ab'.repeat(32);
    provisioner.sync(planFor(`${WORLD}---\n${parameters(`{env: [{name: SESSION_KEY, value: '${key}'}]}`)}`));
    await settle();
    assert.deepEqual(calls.splice(0).sort(), ['apply Deployment team-a/ai', 'delete Secret team-a/ai-session-key']);
  });

  it('a session-key Secret of an earlier Gateway of the same name is replaced by a new one', async () => {
    const { store, calls, provisioner } = setup();
    provisioner.sync(planFor(`${WORLD}---\n${parameters('{}')}`));
    await settle();
    const earlier = store.get('/Secret', 'team-a/ai-session-key')!;
    const recreated = WORLD.replace('uid: uid-ai', 'uid: uid-ai-2');
    calls.splice(0);
    provisioner.sync(planFor(`${recreated}---\n${parameters('{}')}`));
    await settle();
    assert.ok(calls.includes('delete Secret team-a/ai-session-key'), calls.join(', '));
    provisioner.sync(planFor(`${recreated}---\n${parameters('{}')}`));
    await settle();
    const secret = store.get('/Secret', 'team-a/ai-session-key')!;
    assert.notDeepEqual(secret.data, earlier.data, 'a new key');
    assert.equal((secret.metadata.ownerReferences as { uid: string }[])[0]?.uid, 'uid-ai-2');
  });

  it('a Gateway whose parameters have a problem keeps its objects; one that is gone loses them', async () => {
    const { store, calls, provisioner } = setup();
    provisioner.sync(planFor(`${WORLD}---\n${parameters('{}')}`));
    await settle();
    calls.splice(0);
    provisioner.sync(planFor(`${WORLD}---\n${parameters('{horizontalPodAutoscaler: {}}')}`));
    await settle();
    assert.deepEqual(calls.splice(0), []);
    provisioner.sync(planFor(parameters('{}')));
    await settle();
    assert.deepEqual(calls.splice(0).sort(), [
      'delete ClusterRoleBinding gw-proxy.team-a.ai',
      'delete ConfigMap team-a/ai',
      'delete Deployment team-a/ai',
      'delete Secret team-a/ai-session-key',
      'delete Service team-a/ai',
      'delete ServiceAccount team-a/ai',
    ]);
    assert.equal(store.list('apps/Deployment').items.length, 0);
  });

  it('a Gateway with problems keeps its own cluster-scoped objects, not those of a Gateway of the same name in another namespace', async () => {
    const { store, calls, provisioner } = setup();
    const teamB = WORLD.replace('namespace: team-a, uid: uid-ai', 'namespace: team-b, uid: uid-b-ai');
    const both = `${WORLD}---\n${teamB}---\n${parameters('{}')}---\n${parameters('{}').replace('team-a', 'team-b')}`;
    provisioner.sync(planFor(both));
    await settle();
    assert.ok(store.get('rbac.authorization.k8s.io/ClusterRoleBinding', 'gw-proxy.team-b.ai'));
    calls.splice(0);
    // team-a/ai's parameters get a problem (it keeps what it has); team-b/ai is deleted: the
    // binding of team-b's ServiceAccount must go, or a new ServiceAccount named ai in team-b
    // would read the cluster with gw-proxy's rights.
    provisioner.sync(planFor(`${WORLD}---\n${parameters('{horizontalPodAutoscaler: {}}')}`));
    await settle();
    const deleted = calls.splice(0).filter((call) => call.startsWith('delete '));
    assert.ok(deleted.includes('delete ClusterRoleBinding gw-proxy.team-b.ai'), deleted.join(', '));
    assert.ok(!deleted.some((call) => call.includes('team-a')), deleted.join(', '));
    assert.ok(store.get('rbac.authorization.k8s.io/ClusterRoleBinding', 'gw-proxy.team-a.ai'));
    assert.equal(store.get('rbac.authorization.k8s.io/ClusterRoleBinding', 'gw-proxy.team-b.ai'), undefined);
  });

  it('a refused write is told once, named per Gateway, and not tried again until something changes', async () => {
    const { calls, provisioner, refusals } = setup(/^apply Deployment/);
    provisioner.sync(planFor(`${WORLD}---\n${parameters('{}')}`));
    await settle();
    assert.equal(refusals(), 1);
    assert.match(
      provisioner.refused().get('team-a/ai') ?? '',
      /^apps\/Deployment team-a\/ai: apply Deployment team-a\/ai: spec\.replicas: Invalid value$/,
    );
    calls.splice(0);
    provisioner.sync(planFor(`${WORLD}---\n${parameters('{}')}`));
    await settle();
    assert.deepEqual(calls.splice(0), [], 'the same write is not repeated');
    assert.equal(refusals(), 1);
    provisioner.sync(planFor(`${WORLD}---\n${parameters('{image: {tag: "2.0.0"}}')}`));
    await settle();
    assert.deepEqual(calls.splice(0), ['apply Deployment team-a/ai'], 'a changed object is tried again');
  });
});

describe('holds', () => {
  it('compares only the fields wanted: extra fields count as held, lists item by item', () => {
    assert.equal(holds({ a: 1, b: { c: 2, d: 3 } }, { b: { c: 2 } }), true);
    assert.equal(holds({ a: [{ x: 1, y: 2 }] }, { a: [{ x: 1 }] }), true);
    assert.equal(holds({ a: [{ x: 1 }, { x: 2 }] }, { a: [{ x: 1 }] }), false, 'a list of another length');
    assert.equal(holds({ a: '1' }, { a: 1 }), false);
    assert.equal(holds(undefined, { a: 1 }), false);
  });
});
