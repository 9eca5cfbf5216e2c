// GwBackend status: Accepted (the object was admitted, so its own rules hold — except those the
// spec has the controller check at translation time) and ResolvedRefs (every Secret, ConfigMap,
// Service and GwBackend it names exists in its namespace).
import type { GwBackendStatus } from '../../api/kinds/gw-backend.ts';
import type { KubeObject } from '../../api/validate/admission.ts';
import { isPlainObject } from '../../util/values.ts';
import { condition, contextOf, sortConditions } from '../gateway-api/conditions.ts';
import { missingReferences } from '../references.ts';
import type { Snapshot } from '../snapshot.ts';

/** Claims a jwtSign signer sets itself on every token it signs. */
const SIGNER_CLAIMS = ['iat', 'exp', 'nbf'];

/**
 * Every backend `auth.jwtSign` under `value` (a GwBackend spec, a GwPolicy spec...) whose claims
 * name iat, exp or nbf, as messages with the field path. The spec has the controller reject these
 * at translation time: admission rejects them too, but an object stored before that rule (an
 * older CRD on a cluster) reaches the controller unchecked.
 */
export function reservedClaimProblems(value: unknown, path: string, found: string[] = []): string[] {
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) reservedClaimProblems(item, `${path}[${index}]`, found);
    return found;
  }
  if (!isPlainObject(value)) return found;
  for (const [field, child] of Object.entries(value)) {
    const childPath = `${path}.${field}`;
    if (field === 'jwtSign' && isPlainObject(child) && isPlainObject(child.claims)) {
      const reserved = SIGNER_CLAIMS.filter((claim) => Object.hasOwn(child.claims as object, claim));
      if (reserved.length > 0) {
        found.push(
          `${childPath}.claims: ${reserved.join(', ')} may not be given: the signer sets iat, exp and nbf on every token (exp from ttl); remove ${reserved.join(', ')}`,
        );
      }
    }
    reservedClaimProblems(child, childPath, found);
  }
  return found;
}

export function backendStatus(backend: KubeObject, snapshot: Snapshot, now: string): GwBackendStatus {
  const context = contextOf(backend, now);
  const missing = missingReferences(backend.spec, backend.metadata.namespace ?? 'default', snapshot);
  const invalid = reservedClaimProblems(backend.spec, 'spec');
  return {
    conditions: sortConditions([
      invalid.length === 0
        ? condition(context, 'Accepted', true, 'Accepted', 'Backend accepted')
        : condition(context, 'Accepted', false, 'Invalid', invalid.join('; ')),
      missing.length === 0
        ? condition(context, 'ResolvedRefs', true, 'ResolvedRefs', 'All references resolved')
        : condition(context, 'ResolvedRefs', false, 'RefNotFound', missing.join('; ')),
    ]),
  };
}

export function backendStatuses(snapshot: Snapshot, now: string): Map<string, GwBackendStatus> {
  const statuses = new Map<string, GwBackendStatus>();
  for (const key of [...snapshot.backends.keys()].sort())
    statuses.set(key, backendStatus(snapshot.backends.get(key)!, snapshot, now));
  return statuses;
}
