// The rbac.authorization.k8s.io/v1 kinds: the permissions of gw's controller and data plane, as
// the install manifests and the provisioning write them. Stored and served; the embedded API
// server does not authorize by them.
import { defineKind, type KindDefinition } from '../kind.ts';
import {
  clusterRoleBindingRules,
  clusterRoleFields,
  RBAC_GROUP,
  roleBindingFields,
  roleFields,
  roleRules,
} from './rbac.ts';

const common = {
  group: RBAC_GROUP,
  version: 'v1',
  unknownFields: 'warn' as const,
  builtIn: true,
  notRead: 'Kubernetes authorization: gw does not authorize by RBAC',
};

export const rbacKinds: KindDefinition[] = [
  defineKind({
    ...common,
    kind: 'Role',
    plural: 'roles',
    namespaced: true,
    nameFormat: 'pathSegment',
    description: 'Permissions within a namespace; stored, the embedded API server does not enforce them.',
    fields: roleFields,
    rules: roleRules,
  }),
  defineKind({
    ...common,
    kind: 'ClusterRole',
    plural: 'clusterroles',
    namespaced: false,
    nameFormat: 'pathSegment',
    description: 'Permissions across the cluster; stored, the embedded API server does not enforce them.',
    fields: clusterRoleFields,
  }),
  defineKind({
    ...common,
    kind: 'RoleBinding',
    plural: 'rolebindings',
    namespaced: true,
    nameFormat: 'pathSegment',
    description: 'Grants a Role or ClusterRole within a namespace; stored, not enforced.',
    fields: roleBindingFields,
    immutableFields: ['roleRef'],
  }),
  defineKind({
    ...common,
    kind: 'ClusterRoleBinding',
    plural: 'clusterrolebindings',
    namespaced: false,
    nameFormat: 'pathSegment',
    description: 'Grants a ClusterRole across the cluster; stored, not enforced.',
    fields: roleBindingFields,
    rules: clusterRoleBindingRules,
    immutableFields: ['roleRef'],
  }),
];
