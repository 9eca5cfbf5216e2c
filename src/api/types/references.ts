// Spec document 2, "References and targets" and "Endpoint reference".
import { enumOf, map, named, object, refine, required, string } from '../schema/build.ts';
import { atMostOneOf, exactlyOneOf } from '../schema/rules.ts';
import type { Infer } from '../schema/schema.ts';
import { Group, HTTPURL, Kind, ObjectName, PortNumber, SectionName } from './common.ts';

const LabelMap = map(string({ maxLength: 63 }), {
  maxProperties: 64,
  description: 'Labels an object must carry, all of them, to be selected.',
});

export const LocalBackendObjectReference = named(
  {
    name: 'LocalBackendObjectReference',
    description: 'A backend in the same namespace: a Service (default) or another kind, by name and port.',
    source: '2',
  },
  object(
    {
      group: string({
        maxLength: 253,
        description: 'API group of the referent; empty for the core group (a Service).',
      }),
      kind: refine(Kind, { default: 'Service' }),
      name: required(
        string({ minLength: 1, maxLength: 253, description: 'Name of the referent, in the same namespace.' }),
      ),
      port: PortNumber,
    },
    {
      rules: [
        {
          rule: "self.kind != 'Service' || (has(self.group) && self.group != '') || has(self.port)",
          message: 'port is required when the reference is to a Service',
          fieldPath: '.port',
          reason: 'FieldValueRequired',
        },
      ],
    },
  ),
);
export type LocalBackendObjectReference = Infer<typeof LocalBackendObjectReference>;

/**
 * The `backendRef` of an endpoint reference. The spec leaves its fields "not shown"; gw uses the
 * Gateway API BackendObjectReference shape (group, kind, name, namespace, port), as agentgateway does.
 */
export const BackendObjectReference = named(
  {
    name: 'BackendObjectReference',
    description:
      'An object requests are sent to: a Service (the default kind) or another kind gw resolves, by group, kind, name, namespace and port.',
    source: 'gw',
    notes:
      "Not shown in the spec; gw follows Gateway API BackendObjectReference: kind defaults to Service, port is required for a Service, namespace defaults to the referring object's namespace. gw resolves it in that namespace only: another namespace is not resolved and the traffic that needs it fails (a ReferenceGrant opens route backendRefs, listener certificates and GwModel parents, not these).",
  },
  object(
    {
      group: refine(Group, { default: '' }),
      kind: refine(Kind, { default: 'Service' }),
      name: required(ObjectName),
      namespace: string({
        minLength: 1,
        maxLength: 63,
        pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
        description:
          "Namespace of the referent; unset means the referring object's namespace, the only one gw resolves.",
      }),
      port: PortNumber,
    },
    {
      rules: [
        {
          rule: "(self.group != '' && self.group != 'core') || self.kind != 'Service' || has(self.port)",
          message: 'port is required when the reference is to a Service',
          fieldPath: '.port',
          reason: 'FieldValueRequired',
        },
      ],
    },
  ),
);
export type BackendObjectReference = Infer<typeof BackendObjectReference>;

/**
 * Fields of an endpoint reference, spread into the types that use one (ExtAuth, ExtProc, ...),
 * together with `endpointReferenceRule`.
 */
export const endpointReferenceFields = {
  backendRef: BackendObjectReference,
  url: refine(HTTPURL, {
    description:
      'http(s)://host[:port][/path]; https enables backend TLS. Opaque: a Service host named here gets no Service policies or load balancing.',
  }),
};
export const endpointReferenceRule = exactlyOneOf(['backendRef', 'url']);

export const LocalSecretObjectRef = named(
  { name: 'LocalSecretObjectRef', description: 'A Secret in the same namespace.', source: '2' },
  object({
    name: required(ObjectName),
    group: refine(Group, { description: 'Empty means the core group.' }),
    kind: refine(Kind, { description: 'Empty means Secret.' }),
  }),
);
export type LocalSecretObjectRef = Infer<typeof LocalSecretObjectRef>;

export const LocalSecretKeyRef = named(
  { name: 'LocalSecretKeyRef', description: 'A key of a Secret in the same namespace.', source: '2' },
  object({
    name: required(ObjectName),
    group: Group,
    kind: Kind,
    key: string({
      minLength: 1,
      maxLength: 253,
      description: 'The key within the Secret; each use names its own default when omitted.',
    }),
  }),
);
export type LocalSecretKeyRef = Infer<typeof LocalSecretKeyRef>;

export const LocalCACertificateRef = named(
  {
    name: 'LocalCACertificateRef',
    description: 'A ConfigMap or Secret in the same namespace holding CA certificates.',
    source: '2',
  },
  object({
    name: required(ObjectName),
    kind: enumOf(['ConfigMap', 'Secret'], {
      default: 'ConfigMap',
      description: 'Kind of object holding the CA certificates.',
    }),
  }),
);
export type LocalCACertificateRef = Infer<typeof LocalCACertificateRef>;

export const LocalPolicyTargetReference = named(
  {
    name: 'LocalPolicyTargetReference',
    description: 'An object in the same namespace a policy attaches to.',
    source: '2',
  },
  object({ group: required(Group), kind: required(Kind), name: required(ObjectName) }),
);
export type LocalPolicyTargetReference = Infer<typeof LocalPolicyTargetReference>;

const targetSectionRules = [
  atMostOneOf(['sectionName', 'port']),
  {
    rule: "!has(self.port) || self.kind == 'Gateway'",
    message: 'port may be set only when targeting a Gateway',
    fieldPath: '.port',
    reason: 'FieldValueForbidden' as const,
  },
];

export const LocalPolicyTargetReferenceWithSectionName = named(
  {
    name: 'LocalPolicyTargetReferenceWithSectionName',
    description:
      'An object in the same namespace a policy attaches to, optionally one section of it (a listener, a route rule, a port).',
    source: '2',
  },
  object(
    {
      group: required(Group),
      kind: required(Kind),
      name: required(ObjectName),
      sectionName: SectionName,
      port: PortNumber,
    },
    { rules: targetSectionRules },
  ),
);
export type LocalPolicyTargetReferenceWithSectionName = Infer<typeof LocalPolicyTargetReferenceWithSectionName>;

export const LocalPolicyTargetSelector = named(
  {
    name: 'LocalPolicyTargetSelector',
    description: 'Objects in the same namespace a policy attaches to, selected by kind and labels.',
    source: '2',
  },
  object({ group: required(Group), kind: required(Kind), matchLabels: required(LabelMap) }),
);
export type LocalPolicyTargetSelector = Infer<typeof LocalPolicyTargetSelector>;

export const LocalPolicyTargetSelectorWithSectionName = named(
  {
    name: 'LocalPolicyTargetSelectorWithSectionName',
    description:
      'Objects in the same namespace a policy attaches to, selected by kind and labels, optionally one section of each.',
    source: '2',
  },
  object(
    {
      group: required(Group),
      kind: required(Kind),
      matchLabels: required(LabelMap),
      sectionName: SectionName,
      port: PortNumber,
    },
    { rules: targetSectionRules },
  ),
);
export type LocalPolicyTargetSelectorWithSectionName = Infer<typeof LocalPolicyTargetSelectorWithSectionName>;

export const ConfigMapSelector = named(
  { name: 'ConfigMapSelector', description: 'ConfigMaps in the same namespace selected by labels.', source: '2' },
  object({ matchLabels: required(LabelMap) }),
);
export type ConfigMapSelector = Infer<typeof ConfigMapSelector>;

export const SecretSelector = named(
  {
    name: 'SecretSelector',
    description: 'Secrets in the same namespace selected by labels.',
    source: 'gw',
    notes:
      "Not shown in the spec; gw selects Secrets in the policy's namespace by matchLabels, like ConfigMapSelector (agentgateway does the same).",
  },
  object({ matchLabels: required(LabelMap) }),
);
export type SecretSelector = Infer<typeof SecretSelector>;
