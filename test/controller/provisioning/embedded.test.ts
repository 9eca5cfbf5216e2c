// The controller provisioning into the embedded API server (what `gw run --provision` runs, and
// what `gw controller` writes through the API server's REST interface): a Gateway of gw's class
// gets its ServiceAccount, session-key Secret, Service and Deployment; a typed field change updates
// the Deployment, a PDB overlay creates a PDB and removing it deletes it, an autoscaler's replicas
// are kept, a Deployment deleted by hand comes back, the session key survives every reconcile,
// invalid parameters keep the objects and say InvalidParameters, and deleting the Gateway (or
// moving it to another class) deletes everything it had.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../../src/api/validate/admission.ts';
import type { ApiStore } from '../../../src/apiserver/api-store.ts';
import { resourceOfKind } from '../../../src/apiserver/resources.ts';
import { Controller, type ReconcileReport } from '../../../src/controller/controller.ts';
import { kindKey } from '../../../src/store/store.ts';
import { startTestApiServer, type TestApiServer } from '../../apiserver/helpers.ts';
import { admitted } from '../../helpers/objects.ts';
import { provisioningWorld } from '../../helpers/provisioning.ts';
import { eventually } from '../../helpers/until.ts';

const WORLD = `${provisioningWorld()}---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: other}
spec: {controllerName: example.com/other-controller}
`;

const KINDS = {
  deployment: 'apps/Deployment',
  service: '/Service',
  serviceAccount: '/ServiceAccount',
  secret: '/Secret',
  pdb: 'policy/PodDisruptionBudget',
  hpa: 'autoscaling/HorizontalPodAutoscaler',
};

type Deployment = KubeObject & {
  spec: { replicas?: number; template: { spec: { containers: { image: string }[] } } };
};

let server: TestApiServer;
let store: ApiStore;
let controller: Controller;
const log: string[] = [];
const reports: ReconcileReport[] = [];

function create(yaml: string): void {
  for (const object of admitted(yaml)) {
    const { creationTimestamp: _time, ...metadata } = object.metadata;
    store.create(
      resourceOfKind(kindKey(object))!,
      object.metadata.namespace,
      { ...object, metadata },
      {
        fieldManager: 'test',
      },
    );
  }
}

function get(kind: string, key = 'team-a/ai'): KubeObject | undefined {
  return store.list(kind).items.find((object) => `${object.metadata.namespace}/${object.metadata.name}` === key);
}

/** A merge patch by `manager` (the test's, or an autoscaler's). */
function patch(kind: string, name: string, body: unknown, manager = 'test'): void {
  store.patch(resourceOfKind(kind)!, 'team-a', name, 'merge', JSON.stringify(body), { fieldManager: manager });
}

function setParameters(spec: unknown): void {
  const current = get('gw.dev/GwParameters')!;
  store.update(resourceOfKind('gw.dev/GwParameters')!, 'team-a', 'ai', { ...current, spec }, { fieldManager: 'test' });
}

function condition(object: KubeObject | undefined, type: string) {
  const conditions = (object?.status as { conditions?: { type: string }[] } | undefined)?.conditions ?? [];
  return conditions.find((entry) => entry.type === type) as
    | { status: string; reason: string; message: string }
    | undefined;
}

const image = () => (get(KINDS.deployment) as Deployment | undefined)?.spec.template.spec.containers[0]?.image;

describe('the controller provisioning into the embedded API server', () => {
  before(async () => {
    server = await startTestApiServer();
    store = server.embedded.store;
    create(WORLD);
    controller = new Controller(store, {
      provision: { version: '1.2.3', randomBytes, log: (line) => log.push(line) },
      onReconcile: (report) => reports.push(report),
    });
    controller.start();
  });
  after(async () => {
    controller.stop();
    await server.close();
  });

  let sessionKey: { uid?: string; data?: unknown };

  it("creates the Gateway's objects, owned by it, and says who uses the GwParameters", async () => {
    await eventually('the objects', async () =>
      Object.values(KINDS)
        .slice(0, 4)
        .every((kind) => get(kind, kind === KINDS.secret ? 'team-a/ai-session-key' : 'team-a/ai')),
    );
    const gateway = get('gateway.networking.k8s.io/Gateway')!;
    const deployment = get(KINDS.deployment) as Deployment;
    assert.deepEqual(
      (deployment.metadata.ownerReferences as { uid: string; kind: string }[]).map(({ kind, uid }) => ({ kind, uid })),
      [{ kind: 'Gateway', uid: gateway.metadata.uid }],
    );
    assert.equal(image(), 'ghcr.io/gw-dev/gw:1.2.3');
    assert.equal(deployment.spec.replicas, 1);
    const secret = get(KINDS.secret, 'team-a/ai-session-key')!;
    sessionKey = { uid: secret.metadata.uid, data: secret.data };
    await eventually(
      'the GwParameters status',
      async () => condition(get('gw.dev/GwParameters'), 'Accepted')?.status === 'True',
    );
    assert.deepEqual((get('gw.dev/GwParameters')!.status as { gateways: unknown }).gateways, [
      { namespace: 'team-a', name: 'ai' },
    ]);
  });

  it('a typed field change updates the Deployment; the session key stays', async () => {
    setParameters({ image: { tag: '2.0.0' } });
    await eventually('the new image', async () => image() === 'ghcr.io/gw-dev/gw:2.0.0');
    const secret = get(KINDS.secret, 'team-a/ai-session-key')!;
    assert.deepEqual({ uid: secret.metadata.uid, data: secret.data }, sessionKey);
  });

  it('a podDisruptionBudget overlay creates a PDB; removing it deletes it', async () => {
    setParameters({ image: { tag: '2.0.0' }, podDisruptionBudget: {} });
    await eventually('the PDB', async () => get(KINDS.pdb) !== undefined);
    setParameters({ image: { tag: '2.0.0' } });
    await eventually('the PDB gone', async () => get(KINDS.pdb) === undefined);
  });

  it("with an HPA, the replicas the autoscaler sets are kept across reconciles; without it, gw's come back", async () => {
    const hpa = { horizontalPodAutoscaler: { spec: { maxReplicas: 5 } } };
    setParameters({ image: { tag: '2.0.0' }, ...hpa });
    await eventually('the HPA', async () => get(KINDS.hpa) !== undefined);
    patch(KINDS.deployment, 'ai', { spec: { replicas: 4 } }, 'horizontal-pod-autoscaler');
    // Another change of the parameters: the Deployment is applied again, without replicas.
    setParameters({ image: { tag: '2.1.0' }, ...hpa });
    await eventually('the new image', async () => image() === 'ghcr.io/gw-dev/gw:2.1.0');
    assert.equal((get(KINDS.deployment) as Deployment).spec.replicas, 4, "the autoscaler's replicas");
    setParameters({ image: { tag: '2.1.0' } });
    await eventually('the HPA gone, one replica again', async () => {
      return get(KINDS.hpa) === undefined && (get(KINDS.deployment) as Deployment).spec.replicas === 1;
    });
  });

  it('a Deployment deleted or edited by hand is brought back', async () => {
    store.delete(resourceOfKind(KINDS.deployment)!, 'team-a', 'ai');
    await eventually('the Deployment again', async () => image() === 'ghcr.io/gw-dev/gw:2.1.0');
    patch(KINDS.deployment, 'ai', {
      spec: { template: { spec: { containers: [{ name: 'gw', image: 'evil/gw:1' }] } } },
    });
    await eventually("gw's image again", async () => image() === 'ghcr.io/gw-dev/gw:2.1.0');
  });

  it('invalid parameters: the objects are kept, the Gateway and the GwParameters say InvalidParameters naming the field', async () => {
    setParameters({ image: { tag: '3.0.0' }, horizontalPodAutoscaler: {} });
    await eventually(
      'Accepted False',
      async () => condition(get('gateway.networking.k8s.io/Gateway'), 'Accepted')?.status === 'False',
    );
    const accepted = condition(get('gateway.networking.k8s.io/Gateway'), 'Accepted')!;
    assert.equal(accepted.reason, 'InvalidParameters');
    assert.match(
      accepted.message,
      /^GwParameters team-a\/ai: spec\.horizontalPodAutoscaler\.spec\.maxReplicas: required/,
    );
    assert.equal(condition(get('gateway.networking.k8s.io/Gateway'), 'Programmed')?.status, 'False');
    const parameters = condition(get('gw.dev/GwParameters'), 'Accepted')!;
    assert.equal(parameters.reason, 'InvalidParameters');
    assert.match(parameters.message, /^spec\.horizontalPodAutoscaler\.spec\.maxReplicas: .*\(Gateway team-a\/ai\)$/);
    assert.equal(image(), 'ghcr.io/gw-dev/gw:2.1.0', 'the last good Deployment is kept');
    setParameters({ image: { tag: '3.0.0' } });
    await eventually(
      'Accepted again',
      async () => condition(get('gateway.networking.k8s.io/Gateway'), 'Accepted')?.status === 'True',
    );
    await eventually('the new image', async () => image() === 'ghcr.io/gw-dev/gw:3.0.0');
  });

  it('its writes settle: once the objects match, no pass runs and nothing is written', async () => {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const revision = store.revision;
    const passes = reports.length;
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(store.revision, revision);
    assert.equal(reports.length, passes, 'no pass started by its own writes');
    assert.deepEqual(
      controller.reconcile().provisioned,
      { applied: 0, created: 0, deleted: 0 },
      'a pass now writes nothing',
    );
  });

  it('the session key survived every reconcile', () => {
    const secret = get(KINDS.secret, 'team-a/ai-session-key')!;
    assert.deepEqual({ uid: secret.metadata.uid, data: secret.data }, sessionKey);
  });

  it('a Gateway moved to another class loses its objects; a Gateway deleted too', async () => {
    const gateway = get('gateway.networking.k8s.io/Gateway')!;
    store.update(
      resourceOfKind('gateway.networking.k8s.io/Gateway')!,
      'team-a',
      'ai',
      { ...gateway, spec: { ...(gateway.spec as object), gatewayClassName: 'other' } },
      { fieldManager: 'test' },
    );
    const gone = () =>
      Object.values(KINDS).every((kind) =>
        store.list(kind).items.every((object) => object.metadata.namespace !== 'team-a'),
      );
    await eventually('every object gone', async () => gone());
    create(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: team-a}
spec:
  gatewayClassName: gw
  listeners: [{name: http, port: 8080, protocol: HTTP}]
`);
    await eventually('the objects of web', async () => get(KINDS.deployment, 'team-a/web') !== undefined);
    store.delete(resourceOfKind('gateway.networking.k8s.io/Gateway')!, 'team-a', 'web');
    await eventually('every object gone', async () => gone());
    assert.deepEqual(
      log.filter((line) => /refused/.test(line)),
      [],
    );
  });
});
