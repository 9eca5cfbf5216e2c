// What a Gateway's data plane may read of the cluster. Each proxy runs `gw run --cluster
// --read-only` and reads, through its own informers, every kind the controller translates — in all
// namespaces, since routes, policies, Secrets and Services of other namespaces may attach to its
// Gateway. The install manifests ship one ClusterRole, gw-proxy, granting exactly that (list and
// watch: the informers neither get single objects nor write); provisioning binds each Gateway's
// ServiceAccount to it with a ClusterRoleBinding of its own (decision 0037).
//
// A ClusterRoleBinding is cluster-scoped: it cannot be owned by the Gateway (a namespaced owner),
// so the garbage collector does not delete it with the Gateway. It carries gw's labels and the
// Gateway's namespace as a label, by which the controller finds and deletes it.

import type { KindDefinition } from '../api/kinds/kind.ts';
import { KINDS } from '../api/kinds/registry.ts';
import { SNAPSHOT_KINDS } from '../controller/snapshot.ts';
import type { ProvisionedGateway } from './gateway.ts';
import { GATEWAY_NAMESPACE_LABEL, objectLabels } from './labels.ts';

/** The ClusterRole of the install manifests that every data plane's ServiceAccount is bound to. */
export const PROXY_CLUSTER_ROLE = 'gw-proxy';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** An RBAC rule (rbac.authorization.k8s.io/v1 PolicyRule). */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  verbs: string[];
}

/** A resource of an API group, as RBAC names it (`deployments`, `gateways/status`). */
export interface GroupResource {
  group: string;
  resource: string;
}

/** The kinds `gw run` reads (the controller's snapshot), with their definitions. */
export function snapshotDefinitions(): KindDefinition[] {
  return Object.values(SNAPSHOT_KINDS).map((key) => {
    const definition = KINDS.find((kind) => `${kind.group}/${kind.kind}` === key);
    if (definition === undefined) throw new Error(`the snapshot kind ${key} is not in the API registry`);
    return definition;
  });
}

/** Rules granting `verbs` on the resources: one rule per API group, groups and resources sorted. */
export function rulesFor(resources: readonly GroupResource[], verbs: string[]): PolicyRule[] {
  const byGroup = new Map<string, string[]>();
  for (const { group, resource } of resources) byGroup.set(group, [...(byGroup.get(group) ?? []), resource]);
  return [...byGroup]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group, names]) => ({ apiGroups: [group], resources: names.sort(), verbs: [...verbs] }));
}

/** gw-proxy's rules: list and watch of every kind `gw run --cluster` reads. */
export function proxyClusterRoleRules(): PolicyRule[] {
  return rulesFor(
    snapshotDefinitions().map(({ group, plural }) => ({ group, resource: plural })),
    ['list', 'watch'],
  );
}

/**
 * The binding's name: unique per Gateway across the cluster. A namespace is a DNS label (no dots),
 * so `gw-proxy.NAMESPACE.NAME` cannot name two Gateways.
 */
export function proxyRoleBindingName(gateway: ProvisionedGateway): string {
  return `${PROXY_CLUSTER_ROLE}.${gateway.namespace}.${gateway.name}`;
}

/** Binds the Gateway's ServiceAccount (named as the Gateway, in its namespace) to gw-proxy. */
export function proxyRoleBinding(gateway: ProvisionedGateway, version: string) {
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: {
      name: proxyRoleBindingName(gateway),
      labels: { ...objectLabels(gateway, version), [GATEWAY_NAMESPACE_LABEL]: gateway.namespace },
    },
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: PROXY_CLUSTER_ROLE },
    subjects: [{ kind: 'ServiceAccount', name: gateway.name, namespace: gateway.namespace }],
  };
}
