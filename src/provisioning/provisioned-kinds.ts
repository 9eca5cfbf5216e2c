// Every kind gw provisions for a Gateway's data plane, with its RBAC resource name: what the
// controller must be allowed to create, update and delete (the install manifests' ClusterRole is
// generated from this list), and the kinds the controller looks through for objects it generated
// earlier and no longer generates (a PodDisruptionBudget whose overlay was removed, the Deployment
// after a switch to a DaemonSet, everything of a deleted Gateway). A kind provisioning starts to
// generate is added here; tests fail otherwise (test/provisioning/kinds.test.ts,
// test/packaging/kubernetes-schemas.test.ts).

export interface ProvisionedKind {
  /** The API group ('' for the core group). */
  group: string;
  version: string;
  kind: string;
  /** The resource name in RBAC rules and REST paths. */
  plural: string;
  namespaced: boolean;
}

export const PROVISIONED_KINDS: readonly ProvisionedKind[] = [
  { group: '', version: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', namespaced: true },
  { group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true },
  { group: '', version: 'v1', kind: 'Service', plural: 'services', namespaced: true },
  // gw run's settings file (GwParameters rawConfig), mounted into the data plane's pods.
  { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true },
  { group: 'apps', version: 'v1', kind: 'Deployment', plural: 'deployments', namespaced: true },
  { group: 'apps', version: 'v1', kind: 'DaemonSet', plural: 'daemonsets', namespaced: true },
  { group: 'policy', version: 'v1', kind: 'PodDisruptionBudget', plural: 'poddisruptionbudgets', namespaced: true },
  {
    group: 'autoscaling',
    version: 'v2',
    kind: 'HorizontalPodAutoscaler',
    plural: 'horizontalpodautoscalers',
    namespaced: true,
  },
  {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind: 'ClusterRoleBinding',
    plural: 'clusterrolebindings',
    namespaced: false,
  },
];

/** The store's kind keys ("group/Kind", "/Kind" for the core group) of PROVISIONED_KINDS. */
export const PROVISIONED_KIND_KEYS: readonly string[] = PROVISIONED_KINDS.map(({ group, kind }) => `${group}/${kind}`);
