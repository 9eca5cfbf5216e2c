// A Gateway's manifests (src/provisioning/manifests.ts): the typed fields' objects with the
// overlays of the GatewayClass's parameters, then the Gateway's, applied to each of its kind; an
// HPA gets its maximum from its overlay; the session-key Secret is left as generated; a problem
// in either half gives no objects and names the GwParameters and the field.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ProvisionedGateway } from '../../src/provisioning/gateway.ts';
import { gatewayManifests, type ManifestsInput } from '../../src/provisioning/manifests.ts';

const GATEWAY: ProvisionedGateway = {
  name: 'ai',
  namespace: 'team-a',
  uid: '0f5b6c1e-2a34-4d7e-9f10-1234567890ab',
  gatewayClassName: 'gw',
  listeners: [{ name: 'http', port: 8080, protocol: 'HTTP' }],
};

const counting = (size: number) => Uint8Array.from({ length: size }, (_, i) => i);

function manifests(levels: Pick<ManifestsInput, 'gatewayClassParameters' | 'gatewayParameters'>) {
  return gatewayManifests({ gateway: GATEWAY, version: '0.1.0', randomBytes: counting, ...levels });
}

type Container = { name: string; image?: string; env?: Array<{ name: string; value?: string }> };
const byKind = (objects: Array<Record<string, unknown>>, kind: string) => {
  const found = objects.find((object) => object.kind === kind);
  assert.ok(found, `no ${kind}`);
  return found as { metadata: { labels: Record<string, string> }; spec: Record<string, unknown> };
};

test('overlays of the GatewayClass, then the Gateway, on the typed fields’ Deployment; the Secret as generated', () => {
  const result = manifests({
    gatewayClassParameters: {
      parameters: 'infra/class',
      spec: {
        deployment: {
          metadata: { labels: { team: 'platform' } },
          spec: {
            replicas: 2,
            template: { spec: { containers: [{ name: 'log-shipper', image: 'example/shipper:1' }] } },
          },
        },
      },
    },
    gatewayParameters: {
      parameters: 'team-a/ai',
      spec: {
        deployment: {
          spec: {
            replicas: 3,
            template: { spec: { containers: [{ name: 'gw', env: [{ name: 'EXTRA', value: '1' }] }] } },
          },
        },
      },
    },
  });
  assert.ok(result.ok, JSON.stringify(result));
  const deployment = byKind(result.objects, 'Deployment');
  assert.equal(deployment.spec.replicas, 3, "the Gateway's overlay wins");
  assert.equal(deployment.metadata.labels.team, 'platform');
  const containers = (deployment.spec.template as { spec: { containers: Container[] } }).spec.containers;
  assert.deepEqual(
    containers.map((container) => container.name),
    ['gw', 'log-shipper'],
  );
  const gw = containers[0]!;
  assert.ok(gw.image, 'the typed image is kept');
  assert.deepEqual(
    gw.env?.map((variable) => variable.name),
    ['SESSION_KEY', 'EXTRA'],
    "gw's own variable stays; the overlay's is merged by name",
  );
  const secret = result.objects.find((object) => object.kind === 'Secret');
  assert.ok(secret, 'the session-key Secret');
});

test("an HPA takes its maximum from its overlay; the scale target is the typed fields' Deployment", () => {
  const result = manifests({
    gatewayParameters: {
      parameters: 'team-a/ai',
      spec: { horizontalPodAutoscaler: { spec: { minReplicas: 2, maxReplicas: 5 } } },
    },
  });
  assert.ok(result.ok, JSON.stringify(result));
  assert.deepEqual(byKind(result.objects, 'HorizontalPodAutoscaler').spec, {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'ai' },
    minReplicas: 2,
    maxReplicas: 5,
  });
});

test('a problem of an overlay or of a typed field: no objects, the GwParameters and the field named', () => {
  const overlay = manifests({
    gatewayClassParameters: {
      parameters: 'infra/class',
      spec: { deployment: { spec: { template: { spec: { containers: [{ image: 'no-name' }] } } } } },
    },
  });
  assert.ok(!overlay.ok);
  assert.equal(overlay.problems.length, 1);
  assert.equal(overlay.problems[0]!.parameters, 'infra/class');
  assert.match(overlay.problems[0]!.field, /^spec\.deployment\.spec\.template\.spec\.containers\[0\]/);
  const typed = manifests({
    gatewayParameters: { parameters: 'team-a/ai', spec: { env: [{ name: 'SESSION_KEY', value: '' }] } },
  });
  assert.ok(!typed.ok);
  assert.equal(typed.problems[0]!.field, 'spec.env[SESSION_KEY]');
});
