// Consent to references across namespaces (Gateway API ReferenceGrant): an object may refer to an
// object in another namespace only when a ReferenceGrant in that other namespace lists the
// referring group, kind and namespace in `from` and the referred group and kind (and name, when
// the entry gives one) in `to`. Every cross-namespace reference gw follows asks here: HTTPRoute
// backendRefs, Gateway and ListenerSet certificateRefs, GwModel parentRefs to HTTPRoutes. A grant
// removed revokes at the next translation: nothing is remembered.
import type { ReferenceGrantSpec } from '../api/kinds/gateway-api/reference-grant.ts';
import type { ObjectIndex, Snapshot } from './snapshot.ts';

export interface CrossNamespaceReference {
  /** The referring object's group ("" for core), kind and namespace. */
  from: { group: string; kind: string; namespace: string };
  /** The referred object. */
  to: { group: string; kind: string; namespace: string; name: string };
}

/** The grants of each namespace, per snapshot (a snapshot's indexes never change). */
const grantsByIndex = new WeakMap<ObjectIndex, Map<string, ReferenceGrantSpec[]>>();

function grantsIn(snapshot: Snapshot, namespace: string): readonly ReferenceGrantSpec[] {
  let byNamespace = grantsByIndex.get(snapshot.referenceGrants);
  if (!byNamespace) {
    byNamespace = new Map();
    for (const grant of snapshot.referenceGrants.values()) {
      const grantNamespace = grant.metadata.namespace ?? '';
      let grants = byNamespace.get(grantNamespace);
      if (!grants) {
        grants = [];
        byNamespace.set(grantNamespace, grants);
      }
      grants.push(grant.spec as ReferenceGrantSpec);
    }
    grantsByIndex.set(snapshot.referenceGrants, byNamespace);
  }
  return byNamespace.get(namespace) ?? [];
}

function allows(grant: ReferenceGrantSpec, { from, to }: CrossNamespaceReference): boolean {
  return (
    grant.from.some((f) => f.group === from.group && f.kind === from.kind && f.namespace === from.namespace) &&
    grant.to.some((t) => t.group === to.group && t.kind === to.kind && (t.name === undefined || t.name === to.name))
  );
}

const groupText = (group: string) => (group === '' ? '""' : group);

/**
 * Why `reference` may not be followed — no ReferenceGrant in the referred object's namespace
 * allows it — with the grant that would; undefined when it stays in its namespace or is allowed.
 */
export function missingReferenceGrant(snapshot: Snapshot, reference: CrossNamespaceReference): string | undefined {
  const { from, to } = reference;
  if (from.namespace === to.namespace) return undefined;
  if (grantsIn(snapshot, to.namespace).some((grant) => allows(grant, reference))) return undefined;
  return (
    `not permitted by any ReferenceGrant in namespace ${to.namespace}: add one there with ` +
    `from {group: ${groupText(from.group)}, kind: ${from.kind}, namespace: ${from.namespace}} and ` +
    `to {group: ${groupText(to.group)}, kind: ${to.kind}, name: ${to.name}} (without name: every ${to.kind} there)`
  );
}
