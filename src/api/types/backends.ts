// Spec document 1, GwBackendSpec: the payload types of the non-AI, non-MCP backend kinds.
import { named, object, refine, required, string } from '../schema/build.ts';
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

export const DynamicForwardProxyBackend = named(
  {
    name: 'DynamicForwardProxyBackend',
    description: 'Forwards each request to the host it names (Host header or TLS SNI); has no fields.',
    source: 'gw',
    notes:
      "Has no fields (as in agentgateway). The destination is the request's Host header, or the TLS SNI for TLS traffic; it can reach any destination, so restrict access with policies.",
  },
  object({}),
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
