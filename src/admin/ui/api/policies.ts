// Policies: each GwPolicy with what it targets (targetRefs, or a selector) and its statuses: its
// own conditions and, per ancestor (the Gateway or route it took effect under), Accepted and why.
import { SNAPSHOT_KINDS } from '../../../controller/snapshot.ts';
import { objectStatuses } from '../../../controller/status-report.ts';
import { json, type UiEndpoint } from './endpoint.ts';
import { objectRef } from './object-ref.ts';

export const policiesEndpoint: UiEndpoint = {
  method: 'GET',
  path: '/ui/api/policies',
  handle: ({ sources }) => {
    const store = sources.controller.objects;
    const statuses = objectStatuses(store);
    const policies = store.list(SNAPSHOT_KINDS.policies).items.map((policy) => {
      const namespace = policy.metadata.namespace ?? 'default';
      const spec = policy.spec as { targetRefs?: unknown[]; targetSelectors?: unknown[] } & Record<string, unknown>;
      const status = statuses.find(
        (s) => s.kindKey === SNAPSHOT_KINDS.policies && s.namespace === namespace && s.name === policy.metadata.name,
      );
      return {
        ...objectRef({
          kindKey: SNAPSHOT_KINDS.policies,
          kind: 'GwPolicy',
          namespace,
          name: policy.metadata.name ?? '',
        }),
        targetRefs: spec.targetRefs ?? [],
        targetSelectors: spec.targetSelectors ?? [],
        sections: Object.keys(spec).filter((key) => key !== 'targetRefs' && key !== 'targetSelectors'),
        conditions: status?.conditions ?? [],
        ancestors: status?.relations ?? [],
      };
    });
    return json({ policies });
  },
};
