// Gateway API Gateway: listeners, addresses and infrastructure of one data-plane instance.
import { array, enumOf, integer, map, named, object, refine, required, string } from '../../schema/build.ts';
import type { Infer, ValidationRule } from '../../schema/schema.ts';
import { Group, Kind, ObjectName, PortNumber } from '../../types/common.ts';
import {
  AddressType,
  conditions,
  HOSTNAME_PATTERN,
  IPV4_PATTERN,
  IPV6_PATTERN,
  LabelSelector,
  Listener,
  ListenerStatus,
  listenerListRules,
  ObjectReference,
  pendingConditions,
  SecretObjectReference,
} from './shared.ts';

/** An IPAddress-typed address must hold an IP literal (upstream expresses this with a oneOf on formats). */
const ipAddressRule: ValidationRule = {
  rule: `self.type != 'IPAddress' || !has(self.value) || self.value.matches(r'${IPV4_PATTERN}') || self.value.matches(r'${IPV6_PATTERN}')`,
  message: 'value must be an IPv4 or IPv6 address when type is IPAddress',
  fieldPath: '.value',
};

export const GatewaySpecAddress = named(
  { name: 'GatewaySpecAddress', description: 'An address requested for the Gateway.', source: 'gateway-api' },
  object(
    {
      type: refine(AddressType, { default: 'IPAddress' }),
      value: string({
        maxLength: 253,
        description: 'The requested address; the implementation assigns one when omitted.',
      }),
    },
    {
      rules: [
        ipAddressRule,
        {
          rule: `self.type == 'Hostname' ? (!has(self.value) || self.value.matches(r'${HOSTNAME_PATTERN}')) : true`,
          message: `Hostname value must be empty or contain only valid characters (matching ${HOSTNAME_PATTERN})`,
        },
      ],
    },
  ),
);
export type GatewaySpecAddress = Infer<typeof GatewaySpecAddress>;

export const LocalParametersReference = named(
  {
    name: 'LocalParametersReference',
    description: 'An object in the Gateway namespace holding parameters for the Gateway (for gw, a GwParameters).',
    source: 'gateway-api',
  },
  object({ group: required(Group), kind: required(Kind), name: required(ObjectName) }),
);
export type LocalParametersReference = Infer<typeof LocalParametersReference>;

/** An optional DNS-subdomain prefix and `/`, then a 1-63 character name. */
const QUALIFIED_KEY_PATTERN =
  '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$';

function keyRules(what: 'Label' | 'Annotation'): ValidationRule[] {
  const lower = what.toLowerCase();
  return [
    {
      rule: `self.all(key, key.matches(r'${QUALIFIED_KEY_PATTERN}'))`,
      message: `${what} keys must be in the form of an optional DNS subdomain prefix followed by a required name segment of up to 63 characters.`,
    },
    {
      rule: "self.all(key, !key.contains('/') || key.matches('^[^/]{0,252}/'))",
      message: `If specified, the ${lower} key's prefix must be a DNS subdomain not longer than 253 characters in total.`,
    },
  ];
}

export const GatewayInfrastructure = named(
  {
    name: 'GatewayInfrastructure',
    description: 'Labels, annotations and parameters for the resources created for the Gateway.',
    source: 'gateway-api',
  },
  object({
    labels: map(string({ maxLength: 63, pattern: '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$' }), {
      maxProperties: 8,
      description: 'Labels added to the resources generated for the Gateway.',
      rules: keyRules('Label'),
    }),
    annotations: map(string({ maxLength: 4096 }), {
      maxProperties: 16,
      description: 'Annotations added to the resources generated for the Gateway.',
      rules: keyRules('Annotation'),
    }),
    parametersRef: refine(LocalParametersReference, {
      description: "Gateway-specific configuration (for gw: a GwParameters in the Gateway's namespace).",
    }),
  }),
);
export type GatewayInfrastructure = Infer<typeof GatewayInfrastructure>;

export const ListenerNamespaces = named(
  {
    name: 'ListenerNamespaces',
    description: 'Namespaces whose ListenerSets may attach to the Gateway.',
    source: 'gateway-api',
  },
  object({
    from: enumOf(['All', 'Selector', 'Same', 'None'], {
      default: 'None',
      description: 'Which namespaces ListenerSets may attach from; None allows none.',
    }),
    selector: refine(LabelSelector, { description: 'Namespaces whose labels match; only used when from is Selector.' }),
  }),
);
export type ListenerNamespaces = Infer<typeof ListenerNamespaces>;

export const AllowedListeners = named(
  {
    name: 'AllowedListeners',
    description: 'Which ListenerSets may attach listeners to the Gateway.',
    source: 'gateway-api',
  },
  object({ namespaces: refine(ListenerNamespaces, { default: { from: 'None' } }) }),
);
export type AllowedListeners = Infer<typeof AllowedListeners>;

export const FrontendTLSValidation = named(
  {
    name: 'FrontendTLSValidation',
    description: 'How client certificates are checked: the trusted CA certificates and the mode.',
    source: 'gateway-api',
  },
  object({
    caCertificateRefs: required(
      array(ObjectReference, {
        minItems: 1,
        maxItems: 16,
        listType: 'atomic',
        description: 'CA certificates (ConfigMaps) that client certificates must chain to.',
      }),
    ),
    mode: enumOf(['AllowValidOnly', 'AllowInsecureFallback'], {
      default: 'AllowValidOnly',
      description:
        'AllowValidOnly (default) accepts only connections with a valid client certificate; AllowInsecureFallback also accepts the others.',
    }),
  }),
);
export type FrontendTLSValidation = Infer<typeof FrontendTLSValidation>;

export const TLSConfig = named(
  { name: 'TLSConfig', description: 'Client certificate validation settings.', source: 'gateway-api' },
  object({ validation: refine(FrontendTLSValidation, { description: 'Client certificate validation.' }) }),
);
export type TLSConfig = Infer<typeof TLSConfig>;

export const TLSPortConfig = named(
  { name: 'TLSPortConfig', description: 'Client certificate validation for one listener port.', source: 'gateway-api' },
  object({ port: required(PortNumber), tls: required(TLSConfig) }),
);
export type TLSPortConfig = Infer<typeof TLSPortConfig>;

export const FrontendTLSConfig = named(
  {
    name: 'FrontendTLSConfig',
    description: 'Validation of client certificates on HTTPS listeners: defaults and per-port settings.',
    source: 'gateway-api',
  },
  object({
    default: required(
      refine(TLSConfig, { description: 'Applies to every HTTPS listener port without a perPort entry.' }),
    ),
    perPort: array(TLSPortConfig, {
      maxItems: 64,
      description: 'Client certificate validation for particular listener ports, overriding default.',
      listType: 'map',
      listMapKeys: ['port'],
      rules: [
        {
          rule: 'self.all(t1, self.exists_one(t2, t1.port == t2.port))',
          message: 'Port for TLS configuration must be unique within the Gateway',
        },
      ],
    }),
  }),
);
export type FrontendTLSConfig = Infer<typeof FrontendTLSConfig>;

export const GatewayBackendTLS = named(
  {
    name: 'GatewayBackendTLS',
    description: 'TLS the Gateway uses toward backends: its client certificate.',
    source: 'gateway-api',
  },
  object({
    clientCertificateRef: refine(SecretObjectReference, {
      description: 'Client certificate the Gateway presents to backends that request one.',
    }),
  }),
);
export type GatewayBackendTLS = Infer<typeof GatewayBackendTLS>;

export const GatewayTLSConfig = named(
  {
    name: 'GatewayTLSConfig',
    description:
      'TLS settings of the whole Gateway: client certificate validation and the certificate gw presents to backends.',
    source: 'gateway-api',
  },
  object({ backend: GatewayBackendTLS, frontend: FrontendTLSConfig }),
);
export type GatewayTLSConfig = Infer<typeof GatewayTLSConfig>;

/** Among addresses of one type that carry a value, each value occurs once. */
function uniqueAddressValues(type: string): ValidationRule {
  return {
    rule: `self.all(a1, a1.type == '${type}' && has(a1.value) ? self.exists_one(a2, a2.type == a1.type && has(a2.value) && a2.value == a1.value) : true)`,
    message: `${type} values must be unique`,
  };
}

export const GatewaySpec = named(
  {
    name: 'GatewaySpec',
    description: 'Listeners, addresses and infrastructure of the Gateway.',
    source: 'gateway-api',
  },
  object({
    gatewayClassName: required(refine(ObjectName, { description: 'The GatewayClass this Gateway belongs to.' })),
    listeners: required(
      array(Listener, {
        minItems: 1,
        description: 'Where the Gateway accepts traffic: port, protocol, hostname and TLS of each listener.',
        maxItems: 64,
        listType: 'map',
        listMapKeys: ['name'],
        rules: listenerListRules,
      }),
    ),
    addresses: array(GatewaySpecAddress, {
      maxItems: 16,
      listType: 'atomic',
      description: 'Requested addresses; the implementation assigns addresses when omitted.',
      rules: [uniqueAddressValues('IPAddress'), uniqueAddressValues('Hostname')],
    }),
    infrastructure: GatewayInfrastructure,
    allowedListeners: refine(AllowedListeners, {
      description: 'Which ListenerSets may attach to this Gateway; none by default.',
    }),
    tls: GatewayTLSConfig,
  }),
);
export type GatewaySpec = Infer<typeof GatewaySpec>;

export const GatewayStatusAddress = named(
  { name: 'GatewayStatusAddress', description: 'An address the Gateway is reachable at.', source: 'gateway-api' },
  object(
    {
      type: refine(AddressType, { default: 'IPAddress' }),
      value: required(
        string({ minLength: 1, maxLength: 253, description: 'The address: an IP address or a hostname, by type.' }),
      ),
    },
    {
      rules: [
        ipAddressRule,
        {
          rule: `self.type == 'Hostname' ? self.value.matches(r'${HOSTNAME_PATTERN}') : true`,
          message: `Hostname value must only contain valid characters (matching ${HOSTNAME_PATTERN})`,
        },
      ],
    },
  ),
);
export type GatewayStatusAddress = Infer<typeof GatewayStatusAddress>;

export const GatewayStatus = named(
  {
    name: 'GatewayStatus',
    description: 'Addresses the Gateway is reachable at, and the state of the Gateway and each listener.',
    source: 'gateway-api',
    notes:
      'Gateway condition types: Accepted, Programmed, ResolvedRefs; listener condition types: Accepted, Conflicted, ResolvedRefs, Programmed, OverlappingTLSConfig.',
  },
  object({
    addresses: array(GatewayStatusAddress, {
      maxItems: 16,
      listType: 'atomic',
      description: 'Addresses the Gateway is reachable at.',
    }),
    conditions: refine(conditions(), { default: pendingConditions(['Accepted', 'Programmed']) }),
    listeners: array(ListenerStatus, {
      maxItems: 64,
      listType: 'map',
      listMapKeys: ['name'],
      description: 'State of each listener, by name.',
    }),
    attachedListenerSets: integer({ format: 'int32', description: 'Number of ListenerSets attached to the Gateway.' }),
  }),
);
export type GatewayStatus = Infer<typeof GatewayStatus>;
