// Spec document 1 "MCPBackend" and document 2 "MCP types": MCP server targets of an `mcp`
// GwBackend and the `mcp` backend policy (authorization, authentication, guardrails).

import { LabelSelector } from '../kinds/gateway-api/shared.ts';
import { array, enumOf, map, named, object, refine, required } from '../schema/build.ts';
import { exactlyOneOf, onlyWhen, uniqueKey } from '../schema/rules.ts';
import type { Infer } from '../schema/schema.ts';
import { BackendSimple } from './backend-connection.ts';
import { CELExpression, HeaderName, LongString, ObjectName, PortNumber, SectionName, ShortString } from './common.ts';
import { Authorization, FailureMode, MCPAuthentication } from './inbound-auth.ts';
import { endpointReferenceFields, endpointReferenceRule } from './references.ts';

export const McpSelector = named(
  { name: 'McpSelector', description: 'Services selected as MCP targets by namespace and labels.', source: '2' },
  object({
    namespaces: refine(LabelSelector, {
      description: "Namespaces to look for Services in; unset means only the backend's namespace.",
    }),
    services: refine(LabelSelector, { description: 'Services selected as MCP servers.' }),
  }),
);
export type McpSelector = Infer<typeof McpSelector>;

export const McpTarget = named(
  { name: 'McpTarget', description: 'An MCP server reached at a host or backendRef, port and path.', source: '2' },
  object(
    {
      host: refine(ShortString, { description: 'Host name or IP address of the MCP server.' }),
      backendRef: object(
        { name: required(ObjectName) },
        { description: "A Service in the backend's namespace, by name." },
      ),
      port: required(PortNumber),
      path: refine(LongString, { description: 'Request path; unset means /mcp for StreamableHTTP and /sse for SSE.' }),
      protocol: enumOf(['StreamableHTTP', 'SSE'], { description: 'MCP transport the server speaks.' }),
      policies: refine(BackendSimple, {
        description:
          "Connection policies for this target; they win over the GwBackend's and any GwPolicy's. Host-based targets only.",
      }),
    },
    {
      rules: [exactlyOneOf(['host', 'backendRef']), onlyWhen('policies', 'has(self.host)', 'for host-based targets')],
    },
  ),
);
export type McpTarget = Infer<typeof McpTarget>;

export const McpTargetSelector = named(
  {
    name: 'McpTargetSelector',
    description: 'An MCP target by name: one server (static) or the Services a selector finds.',
    source: '2',
  },
  object(
    {
      name: required(
        refine(SectionName, { description: 'Target name; a policy selects this target by targetRefs[].sectionName.' }),
      ),
      selector: refine(McpSelector, { description: 'Discover MCP servers among Services by labels.' }),
      static: refine(McpTarget, { description: 'One MCP server.' }),
    },
    { rules: [exactlyOneOf(['selector', 'static'])] },
  ),
);
export type McpTargetSelector = Infer<typeof McpTargetSelector>;

export const PrefixMode = named(
  {
    name: 'PrefixMode',
    description:
      'How tool names are prefixed with their target name: Conditional (only with several targets), Always or Never. Default Conditional.',
    source: '1',
    notes:
      'Conditional prefixes tool names with the target name only when there are several targets; Always always does; Never never does, so names must be unique across targets. Resource URIs keep their routing information in every mode.',
  },
  enumOf(['Conditional', 'Always', 'Never'], { default: 'Conditional' }),
);
export type PrefixMode = Infer<typeof PrefixMode>;

export const SessionRouting = named(
  {
    name: 'SessionRouting',
    description:
      'Stateful (default) keeps an MCP session on the targets it started with; Stateless handles each request on its own.',
    source: 'gw',
    notes:
      'Values not shown in the spec; gw follows agentgateway: Stateful (default) keeps an MCP session on the targets it started with, Stateless treats every request independently.',
  },
  enumOf(['Stateful', 'Stateless'], { default: 'Stateful' }),
);
export type SessionRouting = Infer<typeof SessionRouting>;

export const MCPBackend = named(
  {
    name: 'MCPBackend',
    description: 'An MCP (Model Context Protocol) backend: one or more MCP servers gw federates into one.',
    source: '1',
  },
  object(
    {
      targets: required(
        array(McpTargetSelector, { minItems: 1, maxItems: 128, description: 'MCP servers behind this backend.' }),
      ),
      sessionRouting: SessionRouting,
      failureMode: refine(FailureMode, {
        default: 'FailClosed',
        description: 'FailClosed fails the whole session when a target fails; FailOpen skips failed targets.',
      }),
      prefixMode: PrefixMode,
    },
    { rules: [uniqueKey('targets', 'name')] },
  ),
);
export type MCPBackend = Infer<typeof MCPBackend>;

export const MCPMethodPhase = named(
  {
    name: 'MCPMethodPhase',
    description: 'Which messages of a method go to the processor: Off, Request, Response or Full (both).',
    source: '2',
    notes: 'Off skips the processor; Request sends requests, Response sends responses, Full sends both.',
  },
  enumOf(['Off', 'Request', 'Response', 'Full']),
);
export type MCPMethodPhase = Infer<typeof MCPMethodPhase>;

export const MCPGuardrailsRemote = named(
  { name: 'MCPGuardrailsRemote', description: 'A remote service that inspects MCP messages.', source: '2' },
  object(
    {
      ...endpointReferenceFields,
      failureMode: refine(FailureMode, { description: 'What happens when the guardrail service cannot be reached.' }),
      metadata: map(CELExpression, {
        maxProperties: 64,
        description: 'Metadata sent with each call; values are CEL expressions.',
      }),
      allowedRequestHeaders: array(HeaderName, {
        maxItems: 64,
        description: 'Client headers forwarded (case-insensitive); empty forwards all, pseudo-headers included.',
      }),
      disallowedRequestHeaders: array(HeaderName, {
        maxItems: 64,
        description: 'Client headers never forwarded (case-insensitive).',
      }),
    },
    { rules: [endpointReferenceRule] },
  ),
);
export type MCPGuardrailsRemote = Infer<typeof MCPGuardrailsRemote>;

export const MCPGuardrailsProcessor = named(
  {
    name: 'MCPGuardrailsProcessor',
    description: 'A remote processor that inspects MCP messages, and which methods it sees.',
    source: '2',
  },
  object({
    remote: refine(MCPGuardrailsRemote, { description: 'A remote guardrail service.' }),
    methods: required(
      map(MCPMethodPhase, {
        minProperties: 1,
        maxProperties: 64,
        description:
          'MCP method to phase. Keys: an exact method, a prefix wildcard such as tools/*, a suffix wildcard such as */list, or *. The most specific key wins; unmatched methods bypass the processor.',
        rules: [
          {
            rule: "self.all(k, k.matches('^([*]|[*]/[^*]+|[^*]+/[*]|[^*]+)$'))",
            message:
              'method keys must be an exact method, a prefix wildcard such as tools/*, a suffix wildcard such as */list, or *',
          },
        ],
      }),
    ),
  }),
);
export type MCPGuardrailsProcessor = Infer<typeof MCPGuardrailsProcessor>;

export const MCPGuardrails = named(
  { name: 'MCPGuardrails', description: 'Processors that inspect MCP messages.', source: '2' },
  object({
    processors: required(
      array(MCPGuardrailsProcessor, {
        minItems: 1,
        maxItems: 16,
        description: 'Run in order; the first rejection ends processing.',
      }),
    ),
  }),
);
export type MCPGuardrails = Infer<typeof MCPGuardrails>;

export const BackendMCP = named(
  {
    name: 'BackendMCP',
    description: 'Policies of an MCP backend: authorization, authentication and guardrails.',
    source: '2',
  },
  object({
    authorization: refine(Authorization, {
      description: 'CEL rules; list operations drop items that fail, get/call operations on such items are rejected.',
    }),
    authentication: refine(MCPAuthentication, {
      description: 'Deprecated: use traffic.jwtAuthentication.mcp, which runs before transformation and rate limiting.',
    }),
    guardrails: MCPGuardrails,
  }),
);
export type BackendMCP = Infer<typeof BackendMCP>;
