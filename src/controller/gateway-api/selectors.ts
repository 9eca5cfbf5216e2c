// Label selectors over namespaces, for allowedRoutes and allowedListeners.
import type { LabelSelector } from '../../api/kinds/gateway-api/shared.ts';
import type { Snapshot } from '../snapshot.ts';

/**
 * The labels of a namespace. The API server gives every namespace the label
 * kubernetes.io/metadata.name; a namespace absent from the snapshot (files often leave them out)
 * is taken to exist with only that label.
 */
function namespaceLabels(snapshot: Snapshot, namespace: string): Record<string, string> {
  const labels = snapshot.namespaces.get(namespace)?.metadata.labels ?? {};
  return { ...labels, 'kubernetes.io/metadata.name': namespace };
}

/** Kubernetes semantics: requirements are ANDed, an empty selector matches everything. */
export function selectorMatches(selector: LabelSelector, labels: Record<string, string>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const requirement of selector.matchExpressions ?? []) {
    const present = Object.hasOwn(labels, requirement.key);
    const values = requirement.values ?? [];
    switch (requirement.operator) {
      case 'In':
        if (!present || !values.includes(labels[requirement.key]!)) return false;
        break;
      case 'NotIn':
        if (present && values.includes(labels[requirement.key]!)) return false;
        break;
      case 'Exists':
        if (!present) return false;
        break;
      case 'DoesNotExist':
        if (present) return false;
        break;
    }
  }
  return true;
}

/**
 * Whether `namespace` is admitted by a `from` policy (Same/All/Selector/None) relative to the
 * namespace of the object that holds the policy. Selector without a selector admits nothing, as
 * a nil Kubernetes selector selects nothing.
 */
export function namespaceAllowed(
  snapshot: Snapshot,
  policy: { from?: string; selector?: LabelSelector } | undefined,
  defaultFrom: string,
  ownerNamespace: string,
  namespace: string,
): boolean {
  const from = policy?.from ?? defaultFrom;
  switch (from) {
    case 'All':
      return true;
    case 'Same':
      return namespace === ownerNamespace;
    case 'Selector':
      return policy?.selector !== undefined && selectorMatches(policy.selector, namespaceLabels(snapshot, namespace));
    default:
      return false;
  }
}
