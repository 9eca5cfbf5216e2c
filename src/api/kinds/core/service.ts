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
  { name: 'ServicePort', description: 'A port the Service exposes and where it sends traffic.', source: 'core' },
  object({
    name: string({
      maxLength: 63,
      pattern: DNS_LABEL_PATTERN,
      description: 'Required when the Service has several ports; a backendRef may name the port by it.',
    }),
    protocol: enumOf(['TCP', 'UDP', 'SCTP'], {
      default: 'TCP',
      description: 'Transport protocol of the port: TCP (default), UDP or SCTP.',
    }),
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
  { name: 'SessionAffinityConfig', description: 'Settings of session affinity.', source: 'core' },
  object({
    clientIP: object(
      {
        timeoutSeconds: integer({
          format: 'int32',
          minimum: 1,
          maximum: 86400,
          default: 10800,
          description: 'Seconds a client IP stays bound to the same endpoint; default 10800 (3 hours).',
        }),
      },
      { description: 'Settings of ClientIP affinity.' },
    ),
  }),
);
export type SessionAffinityConfig = Infer<typeof SessionAffinityConfig>;

const externallyReachable = "self.type in ['NodePort', 'LoadBalancer']";
const headless = "has(self.clusterIP) && self.clusterIP == 'None'";

export const ServiceSpec = named(
  {
    name: 'ServiceSpec',
    description: 'The ports and type of the Service (gw reads the parts it routes to).',
    source: 'core',
  },
  object(
    {
      type: enumOf(['ClusterIP', 'NodePort', 'LoadBalancer', 'ExternalName'], {
        default: 'ClusterIP',
        description: 'How the Service is exposed: ClusterIP (default), NodePort, LoadBalancer or ExternalName.',
      }),
      selector: map(string({ maxLength: 63 }), { description: 'Pods with these labels receive the traffic.' }),
      ports: array(ServicePort, {
        listType: 'map',
        listMapKeys: ['port', 'protocol'],
        patchMergeKey: 'port',
        description: 'Ports the Service exposes; gw routes to one of them by number or name.',
      }),
      clusterIP: string({ description: 'Virtual IP of the Service; `None` makes it headless.' }),
      clusterIPs: array(string(), {
        maxItems: 2,
        listType: 'atomic',
        description: 'The cluster IPs of the Service, one per IP family; the first equals clusterIP.',
      }),
      externalName: string({
        maxLength: 254,
        pattern: DNS_SUBDOMAIN_PATTERN.replace(/\$$/, '\\.?$'),
        description: 'DNS name the Service aliases (type ExternalName).',
      }),
      externalIPs: array(string(), {
        listType: 'atomic',
        description: 'Extra IPs, routed to the nodes by others, on which the Service also accepts traffic.',
      }),
      sessionAffinity: enumOf(['None', 'ClientIP'], {
        default: 'None',
        description: 'ClientIP keeps each client on one endpoint; None (default) does not.',
      }),
      sessionAffinityConfig: SessionAffinityConfig,
      externalTrafficPolicy: enumOf(['Cluster', 'Local'], {
        description:
          'Local keeps external traffic on the node that received it (preserving the client IP); Cluster spreads it.',
      }),
      internalTrafficPolicy: enumOf(['Cluster', 'Local'], {
        default: 'Cluster',
        description: 'Local sends in-cluster traffic only to endpoints on the same node; Cluster (default) to any.',
      }),
      ipFamilies: array(enumOf(['IPv4', 'IPv6']), {
        maxItems: 2,
        listType: 'atomic',
        description: 'IP families of the Service: IPv4, IPv6 or both.',
      }),
      ipFamilyPolicy: enumOf(['SingleStack', 'PreferDualStack', 'RequireDualStack'], {
        description: 'Whether the Service is single-stack or dual-stack.',
      }),
      loadBalancerClass: string({
        minLength: 1,
        description: 'Which load balancer implementation serves a LoadBalancer Service.',
      }),
      loadBalancerIP: string({
        description: 'Requested load balancer IP, where the implementation supports it (deprecated upstream).',
      }),
      loadBalancerSourceRanges: array(string(), {
        listType: 'atomic',
        description: 'Client CIDRs allowed through the load balancer.',
      }),
      allocateLoadBalancerNodePorts: boolean({
        description: 'Whether a LoadBalancer Service also gets node ports; default true.',
      }),
      healthCheckNodePort: integer({
        format: 'int32',
        description: 'Node port on which the load balancer checks node health (externalTrafficPolicy Local).',
      }),
      publishNotReadyAddresses: boolean({ description: 'Publish endpoints of pods that are not ready.' }),
      trafficDistribution: string({
        description: 'Preference for how traffic is spread across endpoints, such as PreferClose.',
      }),
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
  { name: 'LoadBalancerIngress', description: 'An address of a load balancer.', source: 'core' },
  object({
    ip: string({ description: 'IP address of the load balancer.' }),
    hostname: string({ description: 'Hostname of the load balancer.' }),
    ipMode: enumOf(['VIP', 'Proxy'], {
      description: 'VIP: traffic arrives with the load balancer IP as destination; Proxy: it arrives from a proxy.',
    }),
    ports: array(
      object({
        port: required(integer({ format: 'int32', description: 'Port number of the load balancer port.' })),
        protocol: required(enumOf(['TCP', 'UDP', 'SCTP'], { description: 'Protocol of the load balancer port.' })),
        error: string({ description: 'Problem with this port, if any.' }),
      }),
      { listType: 'atomic', description: 'Ports of the load balancer and their state.' },
    ),
  }),
);
export type LoadBalancerIngress = Infer<typeof LoadBalancerIngress>;

export const ServiceStatus = named(
  { name: 'ServiceStatus', description: 'State of the Service, including load balancer addresses.', source: 'core' },
  object({
    loadBalancer: object(
      { ingress: array(LoadBalancerIngress, { listType: 'atomic', description: 'Addresses of the load balancer.' }) },
      { description: 'The load balancer of a LoadBalancer Service.' },
    ),
    conditions: array(Condition, {
      listType: 'map',
      listMapKeys: ['type'],
      patchMergeKey: 'type',
      description: 'Latest observations of the Service.',
    }),
  }),
);
export type ServiceStatus = Infer<typeof ServiceStatus>;
