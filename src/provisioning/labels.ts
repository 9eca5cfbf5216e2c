// The labels and owner reference every object gw provisions for a Gateway carries. The label names
// are the ones Kubernetes recommends and the Gateway API defines (agentgateway's deployer uses the
// same set): the pod selector is the Gateway-specific subset, so two Gateways never share pods.
import type { ProvisionedGateway } from './gateway.ts';

/** The value of app.kubernetes.io/managed-by on what gw provisions. */
export const MANAGED_BY = 'gw';
const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';

/** The label naming the Gateway an object was generated for (with the namespace, its identity). */
export const GATEWAY_NAME_LABEL = 'gateway.networking.k8s.io/gateway-name';

/**
 * The label naming the Gateway's namespace, on the objects of a Gateway that have no namespace of
 * their own (cluster-scoped: they cannot have the Gateway as owner either).
 */
export const GATEWAY_NAMESPACE_LABEL = 'gw.dev/gateway-namespace';

/** The label selector of everything gw generated, for listing only that of a kind. */
export const MANAGED_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;

/** Selects the pods of one Gateway's data plane. */
export function selectorLabels(gateway: ProvisionedGateway): Record<string, string> {
  return {
    'app.kubernetes.io/instance': gateway.name,
    'app.kubernetes.io/name': gateway.name,
    [GATEWAY_NAME_LABEL]: gateway.name,
  };
}

/** Labels of the objects themselves (and, less the version, of the pods). */
export function objectLabels(gateway: ProvisionedGateway, version: string): Record<string, string> {
  return {
    ...selectorLabels(gateway),
    [MANAGED_BY_LABEL]: MANAGED_BY,
    'app.kubernetes.io/version': version,
    'gateway.networking.k8s.io/gateway-class-name': gateway.gatewayClassName,
  };
}

/** Labels of the pods: without the version, so an upgrade alone does not look like a new pod set. */
export function podLabels(gateway: ProvisionedGateway): Record<string, string> {
  return { ...selectorLabels(gateway), 'gateway.networking.k8s.io/gateway-class-name': gateway.gatewayClassName };
}

/** Makes the Gateway the controlling owner: deleting it deletes its data plane. */
export function ownerReference(gateway: ProvisionedGateway) {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    name: gateway.name,
    uid: gateway.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

interface LabelledObject {
  metadata: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    ownerReferences?: readonly { kind?: string; name?: string; uid?: string; controller?: boolean }[];
  };
}

/**
 * The Gateway an object was generated for, from gw's labels: its name, and its namespace for a
 * namespaced object (the object's own). A namespaced object counts only with a controlling owner
 * reference to that Gateway as well, so an object someone else made with the same labels is never
 * taken for gw's. A cluster-scoped object cannot have a namespaced owner: its labels alone count,
 * the Gateway's namespace among them (an object without it is not gw's: a Gateway of the same name
 * in another namespace must never keep it, nor be taken for its owner).
 */
export function generatedFor(object: LabelledObject): { name: string; namespace: string } | undefined {
  const { labels, namespace, ownerReferences } = object.metadata;
  const name = labels?.[GATEWAY_NAME_LABEL];
  if (labels?.[MANAGED_BY_LABEL] !== MANAGED_BY || name === undefined) return undefined;
  if (namespace === undefined) {
    const gatewayNamespace = labels[GATEWAY_NAMESPACE_LABEL];
    return gatewayNamespace === undefined ? undefined : { name, namespace: gatewayNamespace };
  }
  const owned = ownerReferences?.some((ref) => ref.kind === 'Gateway' && ref.name === name && ref.controller === true);
  return owned ? { name, namespace } : undefined;
}
