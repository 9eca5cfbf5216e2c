import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { admit } from '../../src/api/validate/admission.ts';
import { Controller, type ReconcileReport } from '../../src/controller/controller.ts';
import { keepTransitionTimes } from '../../src/controller/status.ts';
import { MemoryStore } from '../../src/store/memory-store.ts';
import { admitted, GW_GATEWAY } from '../helpers/objects.ts';

const WORLD = `${GW_GATEWAY}apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: llm}
spec:
  parentRefs: [{name: ai}]
  rules: [{backendRefs: [{name: model-server, port: 80}]}]
`;

function storeWith(yaml: string): MemoryStore {
  const store = new MemoryStore();
  for (const object of admitted(yaml)) store.apply(object);
  return store;
}

function condition(store: MemoryStore, kind: string, key: string, type: string) {
  const status = store.get(kind, key)?.status as {
    conditions?: { type: string }[];
    parents?: { conditions: { type: string }[] }[];
  };
  const conditions = status?.conditions ?? status?.parents?.[0]?.conditions ?? [];
  return conditions.find((c) => c.type === type) as
    | { status: string; reason: string; lastTransitionTime: string }
    | undefined;
}

describe('keepTransitionTimes', () => {
  it('keeps the time of conditions whose status is unchanged, matched by type and parent', () => {
    const parentRef = { name: 'ai' };
    const previous = {
      parents: [
        {
          parentRef,
          conditions: [
            { type: 'Accepted', status: 'True', lastTransitionTime: 'T1' },
            { type: 'ResolvedRefs', status: 'True', lastTransitionTime: 'T1' },
          ],
        },
      ],
    };
    const next = {
      parents: [
        {
          parentRef,
          conditions: [
            { type: 'ResolvedRefs', status: 'False', lastTransitionTime: 'T2' },
            { type: 'Accepted', status: 'True', lastTransitionTime: 'T2' },
          ],
        },
      ],
    };
    assert.deepEqual(keepTransitionTimes(previous, next), {
      parents: [
        {
          parentRef,
          conditions: [
            { type: 'ResolvedRefs', status: 'False', lastTransitionTime: 'T2' },
            { type: 'Accepted', status: 'True', lastTransitionTime: 'T1' },
          ],
        },
      ],
    });
  });
});

describe('Controller', () => {
  it('writes Gateway API statuses, and nothing when the world is unchanged', () => {
    const store = storeWith(WORLD);
    let clock = '2026-01-01T00:00:00Z';
    const controller = new Controller(store, { now: () => clock });
    const first = controller.reconcile();
    assert.equal(first.statusesWritten, 3);
    assert.equal(condition(store, 'gateway.networking.k8s.io/Gateway', 'default/ai', 'Programmed')?.status, 'True');
    assert.equal(
      condition(store, 'gateway.networking.k8s.io/HTTPRoute', 'default/llm', 'ResolvedRefs')?.reason,
      'BackendNotFound',
    );
    clock = '2026-01-02T00:00:00Z';
    assert.equal(controller.reconcile().statusesWritten, 0, 'an unchanged status is not rewritten');
  });

  it('reacts to changes of objects, not to its own status writes', async () => {
    const store = storeWith(WORLD);
    const reports: ReconcileReport[] = [];
    let clock = '2026-01-01T00:00:00Z';
    const controller = new Controller(store, {
      now: () => clock,
      debounceMs: 5,
      statusDelayMs: 1,
      onReconcile: (r) => reports.push(r),
    });
    controller.start();
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(reports.length, 1, 'status writes did not trigger another reconcile');
      clock = '2026-01-03T00:00:00Z';
      store.apply(
        admit({
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'model-server' },
          spec: { ports: [{ port: 80 }] },
        }).object!,
      );
      for (const until = Date.now() + 5000; reports.length < 2 && Date.now() < until; )
        await new Promise((resolve) => setTimeout(resolve, 5));
      assert.equal(reports.length, 2);
      const resolved = condition(store, 'gateway.networking.k8s.io/HTTPRoute', 'default/llm', 'ResolvedRefs')!;
      assert.equal(resolved.status, 'True');
      assert.equal(resolved.lastTransitionTime, '2026-01-03T00:00:00Z');
      const accepted = condition(store, 'gateway.networking.k8s.io/HTTPRoute', 'default/llm', 'Accepted')!;
      assert.equal(accepted.lastTransitionTime, '2026-01-01T00:00:00Z', 'an unchanged condition keeps its time');
    } finally {
      controller.stop();
    }
  });
});

describe('targetSelectors', () => {
  it('are re-evaluated when labels change', async () => {
    const store = storeWith(`${WORLD}---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: by-label}
spec:
  targetSelectors: [{group: gateway.networking.k8s.io, kind: HTTPRoute, matchLabels: {tier: gold}}]
  traffic: {timeouts: {request: 5s}}
`);
    let reconciled: (() => void) | undefined;
    const controller = new Controller(store, {
      now: () => '2026-01-01T00:00:00Z',
      debounceMs: 5,
      statusDelayMs: 1,
      onReconcile: () => reconciled?.(),
    });
    controller.start();
    try {
      const attached = () =>
        (
          store.get('gw.dev/GwPolicy', 'default/by-label')!.status as { ancestors: { ancestorRef: { kind: string } }[] }
        ).ancestors.map((a) => a.ancestorRef.kind);
      assert.deepEqual(attached(), ['StatusSummary']);
      const route = store.get('gateway.networking.k8s.io/HTTPRoute', 'default/llm')!;
      const fullPass = new Promise<void>((resolve) => {
        reconciled = resolve;
      });
      store.apply({
        ...structuredClone(route),
        metadata: { ...structuredClone(route.metadata), labels: { tier: 'gold' } },
      });
      await fullPass;
      assert.deepEqual(attached(), ['Gateway']);
    } finally {
      controller.stop();
    }
  });
});
