// Policies: each GwPolicy with what it targets (targetRefs, or a selector) and its statuses: its
// own conditions and, per ancestor (the Gateway or route it took effect under), Accepted and why.
import { SNAPSHOT_KINDS } from '../../../controller/snapshot.ts';
import { statusesByObject, statusKey } from '../../../controller/status-report.ts';
import { json, type UiEndpoint } from './endpoint.ts';
import { refOf } from './object-ref.ts';

export const policiesEndpoint: UiEndpoint = {
  method: 'GET',
  path: '/ui/api/policies',
  handle: ({ sources }) => {
    const store = sources.controller.objects;
    const statuses = statusesByObject(store);
    const policies = store.list(SNAPSHOT_KINDS.policies).items.map((policy) => {
      const namespace = policy.metadata.namespace ?? 'default';
      const spec = policy.spec as { targetRefs?: unknown[]; targetSelectors?: unknown[] } & Record<string, unknown>;
      const status = statuses.get(statusKey(SNAPSHOT_KINDS.policies, namespace, policy.metadata.name ?? ''));
      return {
        ...refOf(SNAPSHOT_KINDS.policies, policy),
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
