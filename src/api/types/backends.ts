// Spec document 1, GwBackendSpec: the payload types of the non-AI, non-MCP backend kinds.
import { array, named, object, refine, required, string } from '../schema/build.ts';
import { exactlyOneOf } from '../schema/rules.ts';
import type { Infer } from '../schema/schema.ts';
import { PortNumber, ShortString } from './common.ts';

export const StaticBackend = named(
  {
    name: 'StaticBackend',
    description: 'A fixed destination: a host and port, or a Unix domain socket.',
    source: 'gw',
    notes:
      'Fields not shown in the spec; gw follows agentgateway: a TCP destination (host and port) or a Unix domain socket (unixPath), never both.',
  },
  object(
    {
      host: refine(ShortString, { description: 'Hostname or IP address of the destination.' }),
      port: PortNumber,
      unixPath: string({
        minLength: 1,
        maxLength: 1024,
        description:
          'Filesystem path of a Unix domain socket; the socket must be on a volume shared with the proxy pod.',
      }),
    },
    {
      rules: [
        {
          rule: 'has(self.unixPath) || (has(self.host) && has(self.port))',
          message: 'either unixPath or both host and port must be set',
        },
        {
          rule: '!has(self.unixPath) || (!has(self.host) && !has(self.port))',
          message: 'unixPath may not be set together with host or port',
        },
      ],
    },
  ),
);
export type StaticBackend = Infer<typeof StaticBackend>;

/** An address range in CIDR notation (IPv4 a.b.c.d/n, IPv6 x:y::z/n); the data plane parses it. */
const CidrRange = string({
  minLength: 3,
  maxLength: 64,
  pattern:
    '^(((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])/(3[0-2]|[12]?[0-9])|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*/(12[0-8]|1[01][0-9]|[1-9]?[0-9]))$',
});

/** A destination host name: exact, or `*.` and a suffix (any name below it). */
const HostPattern = string({
  minLength: 1,
  maxLength: 253,
  pattern: '^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
});

export const DynamicForwardProxyBackend = named(
  {
    name: 'DynamicForwardProxyBackend',
    description:
      "Forwards each request to the host its Host header names (a CONNECT's authority with Frontend.connect Route). Destinations resolving to loopback, link-local, cloud metadata, unspecified addresses and the gateway's own listeners are refused unless allowed here.",
    source: 'gw',
    notes:
      "The spec shows no fields; agentgateway's API has none and leaves access control to authorization policies. gw adds the destination rules of decision 0044: safe defaults, lifted per address range or host name, and further ranges refused.",
  },
  object({
    allowedAddresses: array(CidrRange, {
      maxItems: 64,
      listType: 'set',
      description:
        'An address range whose addresses are reached even though a default refuses them (loopback, link-local, unspecified); a cloud metadata address only when the range is that single address (/32, /128).',
    }),
    allowedHosts: array(HostPattern, {
      maxItems: 64,
      listType: 'set',
      description:
        "A host name (exact, or *.suffix for any name below the suffix) whose addresses are reached even though a default refuses them; cloud metadata addresses and the gateway's own listeners stay refused.",
    }),
    deniedAddresses: array(CidrRange, {
      maxItems: 64,
      listType: 'set',
      description:
        'An address range refused in addition to the defaults (private ranges such as 10.0.0.0/8 or fc00::/7, which are reached by default); wins over allowedAddresses and allowedHosts.',
    }),
  }),
);
export type DynamicForwardProxyBackend = Infer<typeof DynamicForwardProxyBackend>;

export const A2ABackend = named(
  { name: 'A2ABackend', description: 'An A2A (Agent2Agent protocol) agent, reached at a host and port.', source: '1' },
  object({
    host: required(refine(ShortString, { description: 'Hostname or IP address of the A2A agent.' })),
    port: required(PortNumber),
  }),
);
export type A2ABackend = Infer<typeof A2ABackend>;

export const CloudoneAgentCore = named(
  { name: 'CloudoneAgentCore', description: 'An Amazon Bedrock AgentCore agent runtime.', source: '1' },
  object({
    agentRuntimeId: required(
      string({ minLength: 1, maxLength: 2048, description: 'Identifier of the hosted agent runtime.' }),
    ),
    qualifier: string({
      minLength: 1,
      maxLength: 256,
      description: 'Alias or version of the runtime; the default endpoint when omitted.',
    }),
  }),
);
export type CloudoneAgentCore = Infer<typeof CloudoneAgentCore>;

export const CloudoneBackend = named(
  { name: 'CloudoneBackend', description: 'An agent runtime hosted on AWS (cloudone); set agentCore.', source: '1' },
  object({ agentCore: CloudoneAgentCore }, { rules: [exactlyOneOf(['agentCore'])] }),
);
export type CloudoneBackend = Infer<typeof CloudoneBackend>;
