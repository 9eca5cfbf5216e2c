// The controller of `gw run --gateway NAMESPACE/NAME`: it publishes that Gateway's configuration
// only, writes the other Gateways' listeners as not served by this process, and says why the
// chosen Gateway is not served while it is not (absent, of another controller's class), until it is.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConfigUpdate } from '../../src/controller/controller.ts';
import { Controller } from '../../src/controller/controller.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import { admitted, GW_GATEWAY } from '../helpers/objects.ts';

const OTHER_GATEWAY = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: other}
spec: {gatewayClassName: gw, listeners: [{name: http, protocol: HTTP, port: 9090}]}
---
`;

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

function programmed(store: MemoryStore, key: string) {
  const status = store.get('gateway.networking.k8s.io/Gateway', key)?.status as {
    conditions: Condition[];
    listeners: { conditions: Condition[] }[];
  };
  const find = (conditions: Condition[]) => conditions.find((entry) => entry.type === 'Programmed');
  return { gateway: find(status.conditions), listener: find(status.listeners[0]!.conditions) };
}

describe('Controller servedGateway', () => {
  it('publishes only the served Gateway and marks the others Programmed False (Pending)', () => {
    const store = new MemoryStore();
    for (const object of admitted(GW_GATEWAY + OTHER_GATEWAY)) store.apply(object);
    const updates: ConfigUpdate[] = [];
    const problems: (string | undefined)[] = [];
    const controller = new Controller(store, {
      servedGateway: 'default/ai',
      onConfigs: (update) => updates.push(update),
      onServedGateway: (problem) => problems.push(problem),
    });
    const report = controller.reconcile();
    assert.deepEqual([...report.configs.keys()].sort(), ['default/ai', 'default/other'], 'both are translated');
    assert.deepEqual([...controller.currentConfigs.keys()], ['default/ai']);
    assert.deepEqual(
      updates.flatMap((update) => [...update.changed.keys()]),
      ['default/ai'],
    );
    assert.deepEqual(problems, [undefined], 'served: said once');
    assert.equal(programmed(store, 'default/ai').gateway?.status, 'True');
    const other = programmed(store, 'default/other');
    assert.equal(other.listener?.status, 'False');
    assert.equal(other.listener?.reason, 'Pending');
    assert.match(
      other.listener!.message,
      /not served by this gw run, which serves only Gateway default\/ai \(--gateway\)/,
    );
    assert.equal(other.gateway?.status, 'False');
    assert.match(other.gateway!.message, /listener http cannot be served: not served by this gw run/);
  });

  it('says why the served Gateway is not served: absent, its class absent, another controller’s class', () => {
    const store = new MemoryStore();
    const problems: (string | undefined)[] = [];
    const controller = new Controller(store, {
      servedGateway: 'default/ai',
      onServedGateway: (problem) => problems.push(problem),
    });
    controller.reconcile();
    controller.reconcile();
    assert.deepEqual(problems, ['Gateway default/ai does not exist (yet): waiting for it'], 'said once');
    const [gatewayClass, gateway] = admitted(GW_GATEWAY);
    store.apply(gateway!);
    controller.reconcile();
    assert.match(problems.at(-1)!, /^Gateway default\/ai names GatewayClass gw, which does not exist \(yet\)/);
    store.apply({ ...gatewayClass!, spec: { controllerName: 'example.com/other' } });
    controller.reconcile();
    assert.equal(
      problems.at(-1),
      "Gateway default/ai is not gw's: its GatewayClass gw has controllerName example.com/other, not gw.dev/gateway-controller; waiting for it to be gw's",
    );
    assert.equal(controller.currentConfigs.size, 0);
    store.apply(gatewayClass!);
    controller.reconcile();
    assert.equal(problems.at(-1), undefined);
    assert.deepEqual([...controller.currentConfigs.keys()], ['default/ai']);
  });
});
