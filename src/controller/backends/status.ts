// GwBackend status: Accepted (as acceptance.ts judges the backend's own spec) and ResolvedRefs
// (every Secret, ConfigMap, Service and GwBackend it names exists in its namespace, and every
// Secret a backend authentication reads holds what it needs: secret-contents.ts).
import type { GwBackendStatus } from '../../api/kinds/gw-backend.ts';
import type { KubeObject } from '../../api/validate/admission.ts';
import { condition, contextOf, sortConditions } from '../gateway-api/conditions.ts';
import { missingReferences } from '../references.ts';
import { INVALID_CREDENTIAL_REF, secretContentProblems } from '../secret-contents.ts';
import type { Snapshot } from '../snapshot.ts';
import { backendAcceptance } from './acceptance.ts';

export function backendStatus(backend: KubeObject, snapshot: Snapshot, now: string): GwBackendStatus {
  const context = contextOf(backend, now);
  const namespace = backend.metadata.namespace ?? 'default';
  const missing = missingReferences(backend.spec, namespace, snapshot);
  const invalid = secretContentProblems(backend.spec, namespace, snapshot);
  const acceptance = backendAcceptance(backend);
  return {
    conditions: sortConditions([
      acceptance.accepted
        ? condition(context, 'Accepted', true, 'Accepted', 'Backend accepted')
        : condition(context, 'Accepted', false, acceptance.reason, acceptance.message),
      missing.length > 0
        ? condition(context, 'ResolvedRefs', false, 'RefNotFound', [...missing, ...invalid].join('; '))
        : invalid.length > 0
          ? condition(context, 'ResolvedRefs', false, INVALID_CREDENTIAL_REF, invalid.join('; '))
          : condition(context, 'ResolvedRefs', true, 'ResolvedRefs', 'All references resolved'),
    ]),
  };
}

export function backendStatuses(snapshot: Snapshot, now: string): Map<string, GwBackendStatus> {
  const statuses = new Map<string, GwBackendStatus>();
  for (const key of [...snapshot.backends.keys()].sort())
    statuses.set(key, backendStatus(snapshot.backends.get(key)!, snapshot, now));
  return statuses;
}
