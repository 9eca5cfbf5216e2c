// Every kind gw's provisioning may write, by the store's kind key. The controller looks in each of
// them for objects it generated earlier and no longer generates (a PodDisruptionBudget whose
// overlay was removed, the Deployment after a switch to a DaemonSet, everything of a deleted
// Gateway), so a kind the provisioning starts to generate is added here too; a test fails
// otherwise (test/provisioning/kinds.test.ts).

/** The kind keys ("group/Kind", "/Kind" for the core group) of what provisioning generates. */
export const PROVISIONED_KINDS: readonly string[] = [
  '/ServiceAccount',
  '/Secret',
  '/Service',
  '/ConfigMap',
  'apps/Deployment',
  'apps/DaemonSet',
  'policy/PodDisruptionBudget',
  'autoscaling/HorizontalPodAutoscaler',
  'rbac.authorization.k8s.io/Role',
  'rbac.authorization.k8s.io/RoleBinding',
  'rbac.authorization.k8s.io/ClusterRole',
  'rbac.authorization.k8s.io/ClusterRoleBinding',
];
