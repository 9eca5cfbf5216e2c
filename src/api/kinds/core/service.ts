// Core v1 Service: the fields gw reads to resolve backendRefs (ports, selector, type) plus the
// commonly written ones, each with the checks kube-apiserver makes on it.
import {
  array,
  boolean,
  enumOf,
  integer,
  intOrString,
  map,
  named,
  object,
  refine,
  required,
  string,
} from '../../schema/build.ts';
import { onlyWhen, requiredWhen } from '../../schema/rules.ts';
import type { Infer } from '../../schema/schema.ts';
import { DNS_SUBDOMAIN_PATTERN, PortNumber } from '../../types/common.ts';
import { Condition } from '../gateway-api/shared.ts';

const DNS_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';

/** A named container port (IANA_SVC_NAME): at most 15 of [-a-z0-9], a letter, no edge or double dash. */
const svcNameRule =
  "size(self) <= 15 && self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$') && self.matches('[a-z]') && !self.contains('--')";

export const ServicePort = named(
  { name: 'ServicePort', source: 'core' },
  object({
    name: string({
      maxLength: 63,
      pattern: DNS_LABEL_PATTERN,
      description: 'Required when the Service has several ports; a backendRef may name the port by it.',
    }),
    protocol: enumOf(['TCP', 'UDP', 'SCTP'], { default: 'TCP' }),
    appProtocol: string({
      minLength: 1,
      maxLength: 316,
      description:
        'Application protocol, e.g. `http`, `kubernetes.io/h2c`, `kubernetes.io/ws`; gw uses it to pick HTTP/2 or WebSocket.',
    }),
    port: required(refine(PortNumber, { description: 'Port the Service exposes.' })),
    targetPort: intOrString({
      description: 'Pod port number or named container port; the same as port when omitted.',
      rules: [
        {
          rule: `type(self) == int ? (self >= 1 && self <= 65535) : (${svcNameRule})`,
          message:
            'targetPort must be a port number from 1 to 65535 or a valid port name (at most 15 lowercase letters, digits and dashes, with a letter)',
        },
      ],
    }),
    nodePort: integer({
      format: 'int32',
      minimum: 0,
      maximum: 65535,
      description: 'Port on every node (NodePort and LoadBalancer only).',
    }),
  }),
);
export type ServicePort = Infer<typeof ServicePort>;

export const SessionAffinityConfig = named(
  { name: 'SessionAffinityConfig', source: 'core' },
  object({
    clientIP: object({
      timeoutSeconds: integer({ format: 'int32', minimum: 1, maximum: 86400, default: 10800 }),
    }),
  }),
);
export type SessionAffinityConfig = Infer<typeof SessionAffinityConfig>;

const externallyReachable = "self.type in ['NodePort', 'LoadBalancer']";
const headless = "has(self.clusterIP) && self.clusterIP == 'None'";

export const ServiceSpec = named(
  { name: 'ServiceSpec', source: 'core' },
  object(
    {
      type: enumOf(['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'], { default: 'ClusterIP' }),
      selector: map(string({ maxLength: 63 }), { description: 'Pods with these labels receive the traffic.' }),
      ports: array(ServicePort, { listType: 'map', listMapKeys: ['port', 'protocol'] }),
      clusterIP: string({ description: 'Virtual IP of the Service; `None` makes it headless.' }),
      clusterIPs: array(string(), { maxItems: 2, listType: 'atomic' }),
      externalName: string({
        maxLength: 254,
        pattern: DNS_SUBDOMAIN_PATTERN.replace(/\$$/, '\\.?$'),
        description: 'DNS name the Service aliases (type ExternalName).',
      }),
      externalIPs: array(string(), { listType: 'atomic' }),
      sessionAffinity: enumOf(['None', 'ClientIP'], { default: 'None' }),
      sessionAffinityConfig: SessionAffinityConfig,
      externalTrafficPolicy: enumOf(['Cluster', 'Local']),
      internalTrafficPolicy: enumOf(['Cluster', 'Local'], { default: 'Cluster' }),
      ipFamilies: array(enumOf(['IPv4', 'IPv6']), { maxItems: 2, listType: 'atomic' }),
      ipFamilyPolicy: enumOf(['SingleStack', 'PreferDualStack', 'RequireDualStack']),
      loadBalancerClass: string({ minLength: 1 }),
      loadBalancerIP: string(),
      loadBalancerSourceRanges: array(string(), { listType: 'atomic' }),
      allocateLoadBalancerNodePorts: boolean(),
      healthCheckNodePort: integer({ format: 'int32' }),
      publishNotReadyAddresses: boolean(),
      trafficDistribution: string(),
    },
    {
      rules: [
        requiredWhen('externalName', "self.type == 'ExternalName'", 'when type is ExternalName'),
        {
          rule: `self.type == 'ExternalName' || (${headless}) || (has(self.ports) && size(self.ports) > 0)`,
          message: 'ports are required unless type is ExternalName or the Service is headless',
          fieldPath: '.ports',
          reason: 'FieldValueRequired',
        },
        {
          rule: "!has(self.ports) || size(self.ports) <= 1 || self.ports.all(p, has(p.name) && p.name != '')",
          message: 'each port must have a name when the Service has more than one',
          fieldPath: '.ports',
        },
        {
          rule: '!has(self.ports) || self.ports.all(p, !has(p.name) || self.ports.exists_one(q, has(q.name) && q.name == p.name))',
          message: 'port names must be unique',
          fieldPath: '.ports',
        },
        {
          rule: `!(${headless}) || !(${externallyReachable})`,
          message: 'clusterIP None (headless) is not allowed for NodePort or LoadBalancer Services',
          fieldPath: '.clusterIP',
        },
        {
          rule: "self.type != 'ClusterIP' || !has(self.ports) || self.ports.all(p, !has(p.nodePort) || p.nodePort == 0)",
          message: 'nodePort may not be set when type is ClusterIP',
          fieldPath: '.ports',
          reason: 'FieldValueForbidden',
        },
        onlyWhen('externalTrafficPolicy', externallyReachable, 'when type is NodePort or LoadBalancer'),
        onlyWhen('loadBalancerClass', "self.type == 'LoadBalancer'", 'when type is LoadBalancer'),
        onlyWhen('clusterIP', "self.type != 'ExternalName' || self.clusterIP == ''", 'when type is not ExternalName'),
      ],
    },
  ),
);
export type ServiceSpec = Infer<typeof ServiceSpec>;

export const LoadBalancerIngress = named(
  { name: 'LoadBalancerIngress', source: 'core' },
  object({
    ip: string(),
    hostname: string(),
    ipMode: enumOf(['VIP', 'Proxy']),
    ports: array(
      object({
        port: required(integer({ format: 'int32' })),
        protocol: required(enumOf(['TCP', 'UDP', 'SCTP'])),
        error: string(),
      }),
      { listType: 'atomic' },
    ),
  }),
);
export type LoadBalancerIngress = Infer<typeof LoadBalancerIngress>;

export const ServiceStatus = named(
  { name: 'ServiceStatus', source: 'core' },
  object({
    loadBalancer: object({ ingress: array(LoadBalancerIngress, { listType: 'atomic' }) }),
    conditions: array(Condition, { listType: 'map', listMapKeys: ['type'] }),
  }),
);
export type ServiceStatus = Infer<typeof ServiceStatus>;
