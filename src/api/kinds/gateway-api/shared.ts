// Gateway API (gateway.networking.k8s.io/v1, standard channel) types shared by several kinds:
// names, references, listeners, conditions and route/policy status. Bounds, defaults and rule
// messages follow the upstream CRDs (v1.6) so that gw reports what a cluster would report; the
// CEL expressions are our own.
import { array, enumOf, integer, map, named, object, refine, required, string } from '../../schema/build.ts';
import type { Infer, ValidationRule } from '../../schema/schema.ts';
import { DNS_SUBDOMAIN_PATTERN, Group, Kind, ObjectName, PortNumber, SectionName } from '../../types/common.ts';

export const GATEWAY_API_GROUP = 'gateway.networking.k8s.io';

const DNS_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
/** Hostname as Gateway API writes it: a DNS subdomain, optionally with one leading `*.` label. */
export const HOSTNAME_PATTERN = '^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

export const Hostname = named(
  {
    name: 'Hostname',
    description: 'A DNS name, without port; may start with a *. wildcard label.',
    source: 'gateway-api',
    notes: 'A DNS name (no IP address, no port); may start with a `*.` wildcard label.',
  },
  string({ minLength: 1, maxLength: 253, pattern: HOSTNAME_PATTERN }),
);
export type Hostname = Infer<typeof Hostname>;

export const PreciseHostname = named(
  {
    name: 'PreciseHostname',
    description: 'A DNS name, without port or wildcard.',
    source: 'gateway-api',
    notes: 'Like Hostname but without wildcard.',
  },
  string({ minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN_PATTERN }),
);
export type PreciseHostname = Infer<typeof PreciseHostname>;

export const Namespace = named(
  { name: 'Namespace', description: 'Namespace of the referent.', source: 'gateway-api' },
  string({ minLength: 1, maxLength: 63, pattern: DNS_LABEL_PATTERN }),
);
export type Namespace = Infer<typeof Namespace>;

export const GatewayController = named(
  {
    name: 'GatewayController',
    description: 'Name of a controller, as a domain-prefixed path (gw uses gw.dev/gateway-controller).',
    source: 'gateway-api',
    notes: 'A domain-prefixed path, e.g. `example.com/gateway-controller`.',
  },
  string({
    minLength: 1,
    maxLength: 253,
    pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\/[A-Za-z0-9\\/\\-._~%!$&'()*+,;=:]+$",
  }),
);
export type GatewayController = Infer<typeof GatewayController>;

export const ProtocolType = named(
  {
    name: 'ProtocolType',
    description: 'Protocol of a listener: HTTP, HTTPS, TLS, TCP or UDP.',
    source: 'gateway-api',
    notes: 'Core values: HTTP, HTTPS, TLS, TCP, UDP; implementation-specific protocols are domain-prefixed.',
  },
  string({
    minLength: 1,
    maxLength: 255,
    pattern:
      '^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\/[A-Za-z0-9]+$',
  }),
);
export type ProtocolType = Infer<typeof ProtocolType>;

export const AddressType = named(
  {
    name: 'AddressType',
    description: 'Type of an address: IPAddress, Hostname or a domain-prefixed custom type.',
    source: 'gateway-api',
    notes: 'IPAddress, Hostname, NamedAddress, or a domain-prefixed custom type.',
  },
  string({
    minLength: 1,
    maxLength: 253,
    pattern:
      "^Hostname|IPAddress|NamedAddress|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\/[A-Za-z0-9\\/\\-._~%!$&'()*+,;=:]+$",
  }),
);
export type AddressType = Infer<typeof AddressType>;

/** IPv4 dotted quad, each octet 0-255. */
export const IPV4_PATTERN =
  '^((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$';
/** IPv6 shape (hex groups and colons, optionally an IPv4 tail); a loose check, as a regex can be. */
export const IPV6_PATTERN =
  '^[0-9a-fA-F]{0,4}(:[0-9a-fA-F]{0,4}){2,7}(:((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9]))?$';

// --- metav1 types -------------------------------------------------------------------------------

export const Condition = named(
  {
    name: 'Condition',
    description: 'One aspect of the state of an object: type, status, reason, message and when it last changed.',
    source: 'core',
    notes: 'Kubernetes metav1.Condition.',
  },
  object({
    type: required(
      string({
        maxLength: 316,
        pattern:
          '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
        description: 'Condition type in CamelCase, e.g. Accepted.',
      }),
    ),
    status: required(enumOf(['True', 'False', 'Unknown'], { description: 'True, False or Unknown.' })),
    observedGeneration: integer({
      format: 'int64',
      minimum: 0,
      description: 'metadata.generation the condition was computed for.',
    }),
    lastTransitionTime: required(string({ format: 'date-time', description: 'When status last changed (RFC 3339).' })),
    reason: required(
      string({
        minLength: 1,
        maxLength: 1024,
        pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
        description: 'Machine-readable CamelCase reason for the last transition.',
      }),
    ),
    message: required(string({ maxLength: 32768, description: 'Human-readable details.' })),
  }),
);
export type Condition = Infer<typeof Condition>;

/** A list of conditions keyed by type, at most `max` (8 throughout Gateway API). */
export function conditions(options?: { max?: number; min?: number; description?: string }) {
  return array(Condition, {
    maxItems: options?.max ?? 8,
    minItems: options?.min,
    listType: 'map',
    listMapKeys: ['type'],
    description:
      options?.description ?? 'Latest observations of the state, one per condition type (Accepted, Programmed, ...).',
  });
}

/** The conditions a controller has not yet written: Unknown/Pending for each type. */
export function pendingConditions(types: readonly string[]): Condition[] {
  return types.map((type) => ({
    type,
    status: 'Unknown' as const,
    reason: 'Pending',
    message: 'Waiting for controller',
    lastTransitionTime: '1970-01-01T00:00:00Z',
  }));
}

export const LabelSelectorRequirement = named(
  { name: 'LabelSelectorRequirement', description: 'A label key, an operator and values.', source: 'core' },
  object(
    {
      key: required(string({ minLength: 1, description: 'Label key the requirement applies to.' })),
      operator: required(
        enumOf(['In', 'NotIn', 'Exists', 'DoesNotExist'], {
          description: 'How the label is compared: In, NotIn, Exists or DoesNotExist.',
        }),
      ),
      values: array(string({ maxLength: 63 }), {
        listType: 'atomic',
        description: 'Label values for In and NotIn; empty for Exists and DoesNotExist.',
      }),
    },
    {
      rules: [
        {
          rule: "!(self.operator in ['In', 'NotIn']) || (has(self.values) && size(self.values) > 0)",
          message: "values must be specified when operator is 'In' or 'NotIn'",
          fieldPath: '.values',
          reason: 'FieldValueRequired',
        },
        {
          rule: "!(self.operator in ['Exists', 'DoesNotExist']) || !has(self.values) || size(self.values) == 0",
          message: "values may not be specified when operator is 'Exists' or 'DoesNotExist'",
          fieldPath: '.values',
          reason: 'FieldValueForbidden',
        },
      ],
    },
  ),
);
export type LabelSelectorRequirement = Infer<typeof LabelSelectorRequirement>;

export const LabelSelector = named(
  {
    name: 'LabelSelector',
    description: 'Selects objects by labels: all matchLabels and matchExpressions must hold; empty selects all.',
    source: 'core',
    notes: 'Kubernetes metav1.LabelSelector; all requirements are ANDed; empty selects everything.',
  },
  object({
    matchLabels: map(string({ maxLength: 63 }), {
      description: 'Labels an object must carry, all of them, to be selected.',
    }),
    matchExpressions: array(LabelSelectorRequirement, {
      listType: 'atomic',
      description: 'Label requirements an object must meet, all of them, to be selected.',
    }),
  }),
);
export type LabelSelector = Infer<typeof LabelSelector>;

// --- references ---------------------------------------------------------------------------------

const parentFields = {
  group: refine(Group, { default: GATEWAY_API_GROUP }),
  kind: refine(Kind, { default: 'Gateway' }),
  namespace: refine(Namespace, {
    description: "Namespace of the parent; the referring object's namespace when omitted.",
  }),
  name: required(ObjectName),
};

export const ParentReference = named(
  {
    name: 'ParentReference',
    description:
      'A parent (a Gateway or ListenerSet, optionally a listener by section name or port) the object attaches to.',
    source: 'gateway-api',
  },
  object({
    ...parentFields,
    sectionName: refine(SectionName, {
      description:
        'Part of the parent to attach to: a listener name on a Gateway or ListenerSet, a rule name on a route.',
    }),
    port: refine(PortNumber, { description: 'Attach only to listeners on this port.' }),
  }),
);
export type ParentReference = Infer<typeof ParentReference>;

export const ParentGatewayReference = named(
  { name: 'ParentGatewayReference', description: 'The Gateway a ListenerSet attaches to.', source: 'gateway-api' },
  object(parentFields),
);
export type ParentGatewayReference = Infer<typeof ParentGatewayReference>;

export const SecretObjectReference = named(
  {
    name: 'SecretObjectReference',
    description: 'A Secret (by default) by group, kind, name and namespace.',
    source: 'gateway-api',
  },
  object({
    group: refine(Group, { default: '' }),
    kind: refine(Kind, { default: 'Secret' }),
    name: required(ObjectName),
    namespace: refine(Namespace, { description: "A namespace other than the referrer's needs a ReferenceGrant." }),
  }),
);
export type SecretObjectReference = Infer<typeof SecretObjectReference>;

export const ObjectReference = named(
  { name: 'ObjectReference', description: 'An object by group, kind, name and namespace.', source: 'gateway-api' },
  object({
    group: required(refine(Group, { description: 'Empty means the core group.' })),
    kind: required(Kind),
    name: required(ObjectName),
    namespace: Namespace,
  }),
);
export type ObjectReference = Infer<typeof ObjectReference>;

export const LocalObjectReference = named(
  {
    name: 'LocalObjectReference',
    description: 'An object in the same namespace, by group, kind and name.',
    source: 'gateway-api',
  },
  object({
    group: required(refine(Group, { description: 'Empty means the core group.' })),
    kind: required(Kind),
    name: required(ObjectName),
  }),
);
export type LocalObjectReference = Infer<typeof LocalObjectReference>;

/** The rule Gateway API puts on every backend reference: a core Service needs a port. */
export const servicePortRule: ValidationRule = {
  rule: "(self.group == '' && self.kind == 'Service') ? has(self.port) : true",
  message: 'Must have port for Service reference',
};

const backendObjectReferenceFields = {
  group: refine(Group, { default: '' }),
  kind: refine(Kind, { default: 'Service' }),
  name: required(ObjectName),
  namespace: refine(Namespace, { description: "A namespace other than the route's needs a ReferenceGrant." }),
  port: refine(PortNumber, { description: 'Destination port; required for a Service.' }),
};

/**
 * Gateway API's BackendObjectReference (request mirror target). Distinct from the gw
 * `BackendObjectReference` in types/references.ts only in carrying the upstream rule message.
 */
export const GatewayBackendObjectReference = named(
  {
    name: 'GatewayBackendObjectReference',
    description: 'A backend (by default a Service) by group, kind, name, namespace and port.',
    source: 'gateway-api',
    notes: "Gateway API BackendObjectReference; named apart from gw's BackendObjectReference.",
  },
  object(backendObjectReferenceFields, { rules: [servicePortRule] }),
);
export type GatewayBackendObjectReference = Infer<typeof GatewayBackendObjectReference>;

export { backendObjectReferenceFields };

export const RouteGroupKind = named(
  { name: 'RouteGroupKind', description: 'A route kind, by group and kind.', source: 'gateway-api' },
  object({
    group: refine(Group, { default: GATEWAY_API_GROUP }),
    kind: required(Kind),
  }),
);
export type RouteGroupKind = Infer<typeof RouteGroupKind>;

// --- listeners (Gateway and ListenerSet) ----------------------------------------------------------

export const RouteNamespaces = named(
  {
    name: 'RouteNamespaces',
    description: 'Namespaces whose routes may attach: Same, All or those matching a selector.',
    source: 'gateway-api',
  },
  object({
    from: enumOf(['All', 'Selector', 'Same'], {
      default: 'Same',
      description: 'Which namespaces routes may attach from; Selector uses selector.',
    }),
    selector: refine(LabelSelector, { description: 'Namespaces whose labels match; only used when from is Selector.' }),
  }),
);
export type RouteNamespaces = Infer<typeof RouteNamespaces>;

export const AllowedRoutes = named(
  {
    name: 'AllowedRoutes',
    description: 'Which routes may attach to the listener: their namespaces and kinds.',
    source: 'gateway-api',
  },
  object({
    namespaces: refine(RouteNamespaces, { default: { from: 'Same' } }),
    kinds: array(RouteGroupKind, {
      maxItems: 8,
      listType: 'atomic',
      description: 'Route kinds allowed; defaults to the kinds the listener protocol supports.',
    }),
  }),
);
export type AllowedRoutes = Infer<typeof AllowedRoutes>;

const LabelValueish = string({ maxLength: 4096 });

export const ListenerTLSConfig = named(
  {
    name: 'ListenerTLSConfig',
    description: 'TLS of a listener: Terminate or Passthrough, and the certificates it serves.',
    source: 'gateway-api',
  },
  object(
    {
      mode: enumOf(['Terminate', 'Passthrough'], {
        default: 'Terminate',
        description:
          'Terminate (default): gw ends TLS with the listed certificates; Passthrough: TLS is forwarded untouched.',
      }),
      certificateRefs: array(SecretObjectReference, {
        maxItems: 64,
        listType: 'atomic',
        description: 'Certificates (kubernetes.io/tls Secrets) used to terminate TLS.',
      }),
      options: map(LabelValueish, {
        maxProperties: 16,
        description: 'Implementation-specific TLS options, keyed by domain-prefixed names.',
      }),
    },
    {
      rules: [
        {
          rule: "self.mode == 'Terminate' ? ((has(self.certificateRefs) && size(self.certificateRefs) > 0) || (has(self.options) && size(self.options) > 0)) : true",
          message: 'certificateRefs or options must be specified when mode is Terminate',
        },
      ],
    },
  ),
);
export type ListenerTLSConfig = Infer<typeof ListenerTLSConfig>;

const listenerFields = {
  name: required(refine(SectionName, { description: 'Unique name of the listener.' })),
  hostname: refine(Hostname, {
    description: 'Only requests for this host (SNI or Host header) match; all hosts when omitted.',
  }),
  port: required(PortNumber),
  protocol: required(ProtocolType),
  tls: ListenerTLSConfig,
  allowedRoutes: refine(AllowedRoutes, { default: { namespaces: { from: 'Same' } } }),
};

export const Listener = named(
  {
    name: 'Listener',
    description: 'A port, protocol and optional hostname on which the Gateway accepts traffic.',
    source: 'gateway-api',
  },
  object(listenerFields),
);
export type Listener = Infer<typeof Listener>;

export const ListenerEntry = named(
  { name: 'ListenerEntry', description: 'A listener a ListenerSet adds to its Gateway.', source: 'gateway-api' },
  object(listenerFields),
);
export type ListenerEntry = Infer<typeof ListenerEntry>;

/** Same hostname: both set and equal, or both unset. */
const sameHostname =
  '(has(l1.hostname) && has(l2.hostname) ? l1.hostname == l2.hostname : !has(l1.hostname) && !has(l2.hostname))';

/** The rules upstream puts on a list of listeners (Gateway and ListenerSet alike). */
export const listenerListRules: ValidationRule[] = [
  {
    rule: "self.all(l, l.protocol in ['HTTP', 'TCP', 'UDP'] ? !has(l.tls) : true)",
    message: "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
  },
  {
    rule: "self.all(l, (l.protocol == 'HTTPS' && has(l.tls)) ? (!has(l.tls.mode) || l.tls.mode == 'Terminate') : true)",
    message: 'tls mode must be Terminate for protocol HTTPS',
  },
  {
    rule: "self.all(l, l.protocol == 'TLS' ? (has(l.tls) && has(l.tls.mode) && l.tls.mode != '') : true)",
    message: 'tls mode must be set for protocol TLS',
  },
  {
    rule: "self.all(l, l.protocol in ['TCP', 'UDP'] ? (!has(l.hostname) || l.hostname == '') : true)",
    message: "hostname must not be specified for protocols ['TCP', 'UDP']",
  },
  {
    rule: 'self.all(l1, self.exists_one(l2, l1.name == l2.name))',
    message: 'Listener name must be unique within the Gateway',
  },
  {
    rule: `self.all(l1, self.exists_one(l2, l1.port == l2.port && l1.protocol == l2.protocol && ${sameHostname}))`,
    message: 'Combination of port, protocol and hostname must be unique for each listener',
  },
];

/** Status of one listener (Gateway ListenerStatus and ListenerSet ListenerEntryStatus). */
const listenerStatusFields = {
  name: required(SectionName),
  supportedKinds: array(RouteGroupKind, {
    maxItems: 8,
    listType: 'atomic',
    description: 'Route kinds the listener accepts.',
  }),
  attachedRoutes: required(
    integer({ format: 'int32', description: 'Number of routes successfully attached to the listener.' }),
  ),
  conditions: required(conditions()),
};

export const ListenerStatus = named(
  {
    name: 'ListenerStatus',
    description: 'State of one listener: routes attached, supported kinds and conditions.',
    source: 'gateway-api',
  },
  object(listenerStatusFields),
);
export type ListenerStatus = Infer<typeof ListenerStatus>;

export const ListenerEntryStatus = named(
  { name: 'ListenerEntryStatus', description: 'State of one listener of a ListenerSet.', source: 'gateway-api' },
  object(listenerStatusFields),
);
export type ListenerEntryStatus = Infer<typeof ListenerEntryStatus>;

// --- route and policy status ----------------------------------------------------------------------

export const RouteParentStatus = named(
  { name: 'RouteParentStatus', description: 'State of a route or model on one parent.', source: 'gateway-api' },
  object({
    parentRef: required(ParentReference),
    controllerName: required(refine(GatewayController, { description: 'The controller that wrote this entry.' })),
    conditions: required(conditions({ min: 1 })),
  }),
);
export type RouteParentStatus = Infer<typeof RouteParentStatus>;

export const PolicyAncestorStatus = named(
  { name: 'PolicyAncestorStatus', description: 'State of a policy on one ancestor.', source: 'gateway-api' },
  object({
    ancestorRef: required(ParentReference),
    controllerName: required(GatewayController),
    conditions: required(conditions({ min: 1 })),
  }),
);
export type PolicyAncestorStatus = Infer<typeof PolicyAncestorStatus>;

export const PolicyStatus = named(
  {
    name: 'PolicyStatus',
    description:
      'Where the policy applies (one entry per ancestor, such as a Gateway) and whether it was accepted there.',
    source: 'gateway-api',
  },
  object({
    ancestors: required(
      array(PolicyAncestorStatus, {
        maxItems: 16,
        listType: 'atomic',
        description: 'One entry per ancestor (such as a Gateway) the policy affects, with its conditions there.',
      }),
    ),
  }),
);
export type PolicyStatus = Infer<typeof PolicyStatus>;
