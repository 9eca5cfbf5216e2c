// The labels and owner reference every object gw provisions for a Gateway carries. The label names
// are the ones Kubernetes recommends and the Gateway API defines (agentgateway's deployer uses the
// same set): the pod selector is the Gateway-specific subset, so two Gateways never share pods.
import type { ProvisionedGateway } from './gateway.ts';

/** The value of app.kubernetes.io/managed-by on what gw provisions. */
export const MANAGED_BY = 'gw';

/** Selects the pods of one Gateway's data plane. */
export function selectorLabels(gateway: ProvisionedGateway): Record<string, string> {
  return {
    'app.kubernetes.io/instance': gateway.name,
    'app.kubernetes.io/name': gateway.name,
    'gateway.networking.k8s.io/gateway-name': gateway.name,
  };
}

/** Labels of the objects themselves (and, less the version, of the pods). */
export function objectLabels(gateway: ProvisionedGateway, version: string): Record<string, string> {
  return {
    ...selectorLabels(gateway),
    'app.kubernetes.io/managed-by': MANAGED_BY,
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
