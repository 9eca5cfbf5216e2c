// rbac.authorization.k8s.io/v1 Role, ClusterRole, RoleBinding and ClusterRoleBinding: the
// permissions of gw's controller and of the data-plane pods, applied into the embedded API server
// like any cluster. Stored and served with kube-apiserver's structural checks; the embedded server
// does not authorize requests by them (its clients authenticate with a token and may do anything).
import { array, enumOf, named, object, required, string } from '../../schema/build.ts';
import type { Infer, ValidationRule } from '../../schema/schema.ts';
import { LabelSelector } from '../gateway-api/shared.ts';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';

const nonEmpty = (field: string) => `(has(self.${field}) && size(self.${field}) > 0)`;

const strings = (description: string) => array(string(), { listType: 'atomic', description });

export const PolicyRule = named(
  {
    name: 'PolicyRule',
    description: 'Verbs allowed on resources (or non-resource URLs).',
    source: 'core',
    notes: 'A rule names resources (with apiGroups) or nonResourceURLs; `*` means all.',
  },
  object(
    {
      verbs: required(
        array(string({ minLength: 1 }), {
          minItems: 1,
          listType: 'atomic',
          description: 'get, list, watch, create, update, patch, delete, deletecollection, or `*`.',
        }),
      ),
      apiGroups: strings('API groups of the resources; "" is the core group.'),
      resources: strings('Resources, e.g. deployments or gateways/status.'),
      resourceNames: strings('Only these object names, when set.'),
      nonResourceURLs: strings('URL paths such as /healthz (ClusterRoles only).'),
    },
    {
      rules: [
        {
          rule: `!${nonEmpty('nonResourceURLs')} || (!${nonEmpty('resources')} && !${nonEmpty('apiGroups')})`,
          message: 'rules cannot apply to both regular resources and non-resource URLs',
          fieldPath: '.nonResourceURLs',
        },
        {
          rule: `${nonEmpty('nonResourceURLs')} || ${nonEmpty('apiGroups')}`,
          message: 'resource rules must supply at least one api group',
          fieldPath: '.apiGroups',
          reason: 'FieldValueRequired',
        },
        {
          rule: `${nonEmpty('nonResourceURLs')} || ${nonEmpty('resources')}`,
          message: 'resource rules must supply at least one resource',
          fieldPath: '.resources',
          reason: 'FieldValueRequired',
        },
      ],
    },
  ),
);
export type PolicyRule = Infer<typeof PolicyRule>;

export const Subject = named(
  { name: 'Subject', description: 'Who a binding grants the role to.', source: 'core' },
  object(
    {
      kind: required(enumOf(['ServiceAccount', 'User', 'Group'], { description: 'ServiceAccount, User or Group.' })),
      apiGroup: string({ description: '"" for ServiceAccount, rbac.authorization.k8s.io for User and Group.' }),
      name: required(string({ minLength: 1, description: 'Name of the subject.' })),
      namespace: string({ description: 'Namespace of a ServiceAccount.' }),
    },
    {
      rules: [
        {
          rule: "self.kind != 'ServiceAccount' || !has(self.apiGroup) || self.apiGroup == ''",
          message: 'apiGroup must be "" for a ServiceAccount',
          fieldPath: '.apiGroup',
        },
        {
          rule: `self.kind == 'ServiceAccount' || (has(self.apiGroup) && self.apiGroup == '${RBAC_GROUP}')`,
          message: `apiGroup must be ${RBAC_GROUP} for a User or Group`,
          fieldPath: '.apiGroup',
        },
      ],
    },
  ),
);
export type Subject = Infer<typeof Subject>;

export const RoleRef = named(
  { name: 'RoleRef', description: 'The role a binding grants.', source: 'core' },
  object({
    apiGroup: required(enumOf([RBAC_GROUP], { description: RBAC_GROUP })),
    kind: required(enumOf(['Role', 'ClusterRole'], { description: 'Role or ClusterRole.' })),
    name: required(string({ minLength: 1, description: 'Name of the role.' })),
  }),
);
export type RoleRef = Infer<typeof RoleRef>;

export const roleFields = {
  rules: array(PolicyRule, { listType: 'atomic', description: 'What the role allows.' }),
};

export const clusterRoleFields = {
  ...roleFields,
  aggregationRule: object(
    {
      clusterRoleSelectors: array(LabelSelector, {
        listType: 'atomic',
        description: 'ClusterRoles whose rules are aggregated into this one.',
      }),
    },
    { description: 'Builds the rules from other ClusterRoles (a controller fills them in).' },
  ),
};

export const roleBindingFields = {
  subjects: array(Subject, { listType: 'atomic', description: 'Who is granted the role.' }),
  roleRef: required(RoleRef),
};

/** The Role rules: resource rules only (a Role is namespaced; URLs are cluster-wide). */
export const roleRules: ValidationRule[] = [
  {
    rule: '!has(self.rules) || self.rules.all(r, !has(r.nonResourceURLs) || size(r.nonResourceURLs) == 0)',
    message: 'namespaced rules cannot apply to non-resource URLs',
    fieldPath: '.rules',
  },
];

export const clusterRoleBindingRules: ValidationRule[] = [
  {
    rule: "self.roleRef.kind == 'ClusterRole'",
    message: 'a ClusterRoleBinding can only reference a ClusterRole',
    fieldPath: '.roleRef.kind',
  },
  {
    rule: "!has(self.subjects) || self.subjects.all(s, s.kind != 'ServiceAccount' || (has(s.namespace) && s.namespace != ''))",
    message: 'a ServiceAccount subject of a ClusterRoleBinding needs a namespace',
    fieldPath: '.subjects',
    reason: 'FieldValueRequired',
  },
];
