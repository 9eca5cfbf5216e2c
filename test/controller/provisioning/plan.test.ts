// The provisioning plan and the statuses it gives, as pure functions of a snapshot: the Service
// exposes the ports of the Gateway's listeners and of the ListenerSets merged into it; a
// parametersRef that does not resolve (missing object, wrong kind) and a field gw cannot provision
// stop that Gateway's objects and say so on the Gateway (Accepted False, InvalidParameters, naming
// the GwParameters and field), on the GatewayClass for its own parametersRef, and on GwParameters
// (who uses it; Accepted False naming the field and the Gateways).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GwParametersStatus } from '../../../src/api/kinds/gw-parameters.ts';
import { translateGatewayApi } from '../../../src/controller/gateway-api/index.ts';
import { planProvisioning } from '../../../src/controller/provisioning/plan.ts';
import { addProvisioningStatuses, provisioningStatuses } from '../../../src/controller/provisioning/statuses.ts';
import { snapshotOf } from '../../../src/controller/snapshot.ts';
import { translate } from '../../../src/controller/translate.ts';
import { admitted, catalogConfigMapYaml } from '../../helpers/objects.ts';

const NOW = '2026-01-01T00:00:00Z';

function classYaml(parametersRef?: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gw, generation: 1}
spec:
  controllerName: gw.dev/gateway-controller
${parametersRef ? `  parametersRef: ${parametersRef}\n` : ''}---
`;
}

const CLASS_PARAMETERS = `apiVersion: gw.dev/v1alpha1
kind: GwParameters
metadata: {name: class-params, namespace: infra, generation: 2}
spec:
  deployment: {metadata: {labels: {team: platform}}}
---
`;

function gatewayYaml(name: string, parameters?: string, extra = ''): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ${name}, namespace: team-a, uid: uid-${name}, generation: 3}
spec:
  gatewayClassName: gw
${parameters ? `  infrastructure: {parametersRef: {group: gw.dev, kind: GwParameters, name: ${parameters}}}\n` : ''}${extra}  listeners: [{name: http, port: 8080, protocol: HTTP}]
---
`;
}

function parametersYaml(name: string, spec: string): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwParameters
metadata: {name: ${name}, namespace: team-a, generation: 4}
spec: ${spec}
---
`;
}

const CLASS_REF = '{group: gw.dev, kind: GwParameters, name: class-params, namespace: infra}';

function planOf(yaml: string, refused: ReadonlyMap<string, string> = new Map()) {
  const snapshot = snapshotOf(admitted(yaml));
  const gatewayApi = translateGatewayApi(snapshot, NOW);
  const plan = planProvisioning(snapshot, gatewayApi, { version: '1.2.3', randomBytes: (n) => new Uint8Array(n) });
  const statuses = provisioningStatuses(
    snapshot,
    plan,
    { gateways: gatewayApi.gatewayStatuses, gatewayClasses: gatewayApi.gatewayClassStatuses },
    refused,
    NOW,
  );
  return { plan, statuses };
}

function conditionOf(status: { conditions?: { type: string }[] } | undefined, type: string) {
  return status?.conditions?.find((entry) => entry.type === type) as
    | { status: string; reason: string; message: string; observedGeneration?: number }
    | undefined;
}

describe("provisioning's statuses beside the translation's", () => {
  it('a GwParameters keeps the model catalog condition next to Accepted when the controller provisions', () => {
    const catalog = { providers: { openai: { models: { 'gpt-4o': { rates: { input: 2.5, output: 10 } } } } } };
    const yaml = `${classYaml()}${gatewayYaml('ai', 'priced')}${parametersYaml('priced', '{modelCatalog: {sources: [{configMap: {name: prices}}]}}')}${catalogConfigMapYaml('prices', catalog).replace('metadata: {name: prices}', 'metadata: {name: prices, namespace: team-a}')}`;
    const snapshot = snapshotOf(admitted(yaml));
    const translation = translate(snapshot, NOW, '1');
    const plan = planProvisioning(snapshot, translation.gatewayApi, {
      version: '1.2.3',
      randomBytes: (n) => new Uint8Array(n),
    });
    addProvisioningStatuses(translation, snapshot, plan, new Map(), NOW);
    const status = translation.statuses.get('parameters')?.get('team-a/priced') as GwParametersStatus | undefined;
    assert.equal(conditionOf(status, 'Accepted')?.status, 'True');
    assert.equal(conditionOf(status, 'ModelCatalogResolved')?.reason, 'Resolved');
    assert.equal(status?.attachedGateways, 1);
  });
});

describe('the provisioning plan', () => {
  it("exposes the ports of the Gateway's listeners and of its ListenerSets on the Service and the container", () => {
    const { plan } =
      planOf(`${classYaml()}${gatewayYaml('ai', undefined, '  allowedListeners: {namespaces: {from: Same}}\n')}apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: team-a}
spec:
  parentRef: {name: ai}
  listeners: [{name: more, port: 9090, protocol: HTTP}]
`);
    const provisioning = plan.gateways.get('team-a/ai');
    assert.ok(provisioning?.ok);
    const service = provisioning.objects.find((object) => object.kind === 'Service') as unknown as {
      spec: { ports: { port: number }[] };
    };
    assert.deepEqual(
      service.spec.ports.map((port) => port.port),
      [8080, 9090],
    );
    const deployment = provisioning.objects.find((object) => object.kind === 'Deployment') as unknown as {
      spec: { template: { spec: { containers: { ports: { containerPort: number }[] }[] } } };
    };
    assert.deepEqual(
      deployment.spec.template.spec.containers[0]?.ports.map((port) => port.containerPort),
      [8080, 9090, 15000],
    );
  });

  it('a Gateway whose own parametersRef names no GwParameters: no objects, Accepted False InvalidParameters naming the field', () => {
    const { plan, statuses } = planOf(`${classYaml()}${gatewayYaml('ai', 'missing')}`);
    assert.equal(plan.gateways.get('team-a/ai')?.ok, false);
    const gateway = statuses.gateways.get('team-a/ai');
    const accepted = conditionOf(gateway, 'Accepted');
    assert.equal(accepted?.status, 'False');
    assert.equal(accepted?.reason, 'InvalidParameters');
    assert.equal(
      accepted?.message,
      'Gateway team-a/ai spec.infrastructure.parametersRef: GwParameters team-a/missing does not exist',
    );
    assert.equal(accepted?.observedGeneration, 3);
    assert.equal(conditionOf(gateway, 'Programmed')?.status, 'False');
  });

  it('a GatewayClass whose parametersRef names another kind: the class and its Gateways are InvalidParameters', () => {
    const { plan, statuses } = planOf(
      `${classYaml('{group: "", kind: ConfigMap, name: settings, namespace: infra}')}${gatewayYaml('ai')}`,
    );
    const accepted = conditionOf(statuses.gatewayClasses.get('gw'), 'Accepted');
    assert.equal(accepted?.status, 'False');
    assert.equal(accepted?.reason, 'InvalidParameters');
    assert.match(
      accepted?.message ?? '',
      /^GatewayClass gw spec\.parametersRef: refers to ConfigMap of group ""; gw reads only GwParameters/,
    );
    assert.equal(plan.gateways.get('team-a/ai')?.ok, false);
    assert.equal(conditionOf(statuses.gateways.get('team-a/ai'), 'Accepted')?.reason, 'InvalidParameters');
  });

  it('a field gw cannot provision: the Gateway names the GwParameters and field; that GwParameters says which Gateways it stops', () => {
    const { plan, statuses } = planOf(
      `${classYaml(CLASS_REF)}${CLASS_PARAMETERS}${gatewayYaml('ai', 'scaled')}${gatewayYaml('web', 'scaled')}${gatewayYaml('plain')}${parametersYaml('scaled', '{horizontalPodAutoscaler: {}}')}${parametersYaml('unused', '{}')}`,
    );
    assert.equal(plan.gateways.get('team-a/plain')?.ok, true);
    const accepted = conditionOf(statuses.gateways.get('team-a/ai'), 'Accepted');
    assert.equal(accepted?.reason, 'InvalidParameters');
    assert.match(
      accepted?.message ?? '',
      /^GwParameters team-a\/scaled: spec\.horizontalPodAutoscaler\.spec\.maxReplicas: required/,
    );

    const scaled = statuses.parameters.get('team-a/scaled') as GwParametersStatus;
    const scaledAccepted = conditionOf(scaled, 'Accepted');
    assert.equal(scaledAccepted?.status, 'False');
    assert.equal(scaledAccepted?.reason, 'InvalidParameters');
    assert.match(
      scaledAccepted?.message ?? '',
      /^spec\.horizontalPodAutoscaler\.spec\.maxReplicas: required.* \(Gateways team-a\/ai, team-a\/web\)$/,
    );
    assert.equal(scaledAccepted?.observedGeneration, 4);
    assert.deepEqual(scaled.gateways, [
      { namespace: 'team-a', name: 'ai' },
      { namespace: 'team-a', name: 'web' },
    ]);
    assert.equal(scaled.attachedGateways, 2);

    const byClass = statuses.parameters.get('infra/class-params') as GwParametersStatus;
    assert.equal(conditionOf(byClass, 'Accepted')?.status, 'True', 'the problem is not in the class parameters');
    assert.deepEqual(byClass.gatewayClasses, [{ name: 'gw' }]);
    assert.equal(byClass.attachedGateways, 3);

    const unused = statuses.parameters.get('team-a/unused') as GwParametersStatus;
    assert.equal(conditionOf(unused, 'Accepted')?.message, 'Not used by any Gateway or GatewayClass of gw');
    assert.equal(unused.attachedGateways, 0);
  });

  it('a Gateway being deleted wants nothing (what it had is deleted, not re-created)', () => {
    const objects = admitted(`${classYaml()}${gatewayYaml('ai')}${gatewayYaml('web')}`);
    objects.find((object) => object.metadata.name === 'web')!.metadata.deletionTimestamp = NOW;
    const snapshot = snapshotOf(objects);
    const plan = planProvisioning(snapshot, translateGatewayApi(snapshot, NOW), {
      version: '1.2.3',
      randomBytes: (n) => new Uint8Array(n),
    });
    assert.deepEqual([...plan.gateways.keys()], ['team-a/ai']);
  });

  it("a write the API server refused shows on the Gateway's Programmed condition, naming the object", () => {
    const refused = new Map([['team-a/ai', 'apps/Deployment team-a/ai: spec.replicas: Invalid value: -1']]);
    const { statuses } = planOf(`${classYaml()}${gatewayYaml('ai')}`, refused);
    const gateway = statuses.gateways.get('team-a/ai');
    assert.equal(conditionOf(gateway, 'Accepted')?.status, 'True');
    assert.deepEqual(conditionOf(gateway, 'Programmed'), {
      type: 'Programmed',
      status: 'False',
      reason: 'Invalid',
      message:
        "The API server refused the data plane's objects: apps/Deployment team-a/ai: spec.replicas: Invalid value: -1",
      lastTransitionTime: NOW,
      observedGeneration: 3,
    });
  });

  it('an overlay that does not apply names the GwParameters that holds it', () => {
    const { statuses } = planOf(
      `${classYaml()}${gatewayYaml('ai', 'bad')}${parametersYaml('bad', '{serviceAccount: {spec: {automount: true}}}')}`,
    );
    const message = conditionOf(statuses.gateways.get('team-a/ai'), 'Accepted')?.message ?? '';
    assert.match(message, /^GwParameters team-a\/bad: spec\.serviceAccount\.spec: a ServiceAccount has no spec/);
    assert.match(
      conditionOf(statuses.parameters.get('team-a/bad'), 'Accepted')?.message ?? '',
      /^spec\.serviceAccount\.spec: .* \(Gateway team-a\/ai\)$/,
    );
  });
});
