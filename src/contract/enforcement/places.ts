// The places of the enforcement registry. A place is one data-plane consumer of policy values:
// the code that takes a section (an effective Frontend of a listener, the traffic policy of a
// rule with AI backends, the policies of one LLM provider, a GwModel's spec...) and applies it.
// The same field can be enforced at one place and refused at another (traffic.retry works on
// HTTP backends and means nothing to an MCP backend), so every field is declared per place.
//
// A place names its root schema node; its fields are the root's, minus `excluded` paths that
// another place covers. A place with a `base` takes the base's place declarations before the
// named types' (registry.ts). To add a place: add it here, declare what differs in
// PLACE_DECLARATIONS, run the registry test (test/contract/enforcement.test.ts) and `npm run docs`.
import { GwBackendSpec } from '../../api/kinds/gw-backend.ts';
import { GwModelSpec } from '../../api/kinds/gw-model.ts';
import type { SchemaNode } from '../../api/schema/schema.ts';
import { BackendFull } from '../../api/types/backend-policies.ts';
import { Frontend } from '../../api/types/frontend.ts';
import { ModelPolicies } from '../../api/types/model.ts';
import { Traffic } from '../../api/types/traffic.ts';

export const PLACE_NAMES = [
  'frontend',
  'traffic',
  'traffic:ai',
  'traffic:mcp',
  'traffic:models',
  'traffic:aws',
  'backend:http',
  'backend:dynamic',
  'backend:aws',
  'backend:ai',
  'backend:ai-provider',
  'backend:mcp',
  'backend:mcp-target',
  'backend:models',
  'model-policies',
  'backend-spec',
  'model-spec',
] as const;

export type PlaceName = (typeof PLACE_NAMES)[number];

export interface Place {
  readonly name: PlaceName;
  readonly root: SchemaNode;
  /** Which objects' fields land here (docs/enforcement.md shows it). */
  readonly description: string;
  /** A place whose place declarations apply here too (after this place's own). */
  readonly base?: PlaceName;
  /** Dotted paths of the root that are not this place's, and where they are declared instead. */
  readonly excluded?: Readonly<Record<string, string>>;
}

const BACKEND_SECTIONS =
  'the effective backend policy: GwPolicy spec.backend (on the Gateway, listener, route, rule or the backend itself) merged with GwBackend spec.policies';

export const PLACES: readonly Place[] = [
  {
    name: 'frontend',
    root: Frontend,
    description:
      'GwPolicy spec.frontend, merged per listener: how a listener accepts connections (TCP, TLS, HTTP, PROXY protocol, CONNECT) and its telemetry.',
  },
  {
    name: 'traffic',
    root: Traffic,
    description:
      'GwPolicy spec.traffic on rules whose backends are HTTP backends (a static or `a2a` GwBackend, or a Service), and every PreRouting traffic policy (it runs before a route, so before a backend, is chosen).',
  },
  {
    name: 'traffic:ai',
    base: 'traffic',
    root: Traffic,
    description: 'GwPolicy spec.traffic on rules whose backend is an `ai` GwBackend.',
  },
  {
    name: 'traffic:mcp',
    base: 'traffic',
    root: Traffic,
    description: 'GwPolicy spec.traffic on rules whose backend is an `mcp` GwBackend.',
  },
  {
    name: 'traffic:models',
    base: 'traffic',
    root: Traffic,
    description:
      'GwPolicy spec.traffic on rules that serve GwModels (a GwModel parentRef naming the route) and on listeners that serve GwModels (a GwModel parentRef naming the Gateway, a listener or a ListenerSet).',
  },
  {
    name: 'traffic:aws',
    base: 'traffic',
    root: Traffic,
    description:
      'GwPolicy spec.traffic on rules whose backend is an `aws` GwBackend (an Amazon Bedrock AgentCore runtime).',
  },
  {
    name: 'backend:http',
    root: BackendFull,
    description: `${BACKEND_SECTIONS}, reaching a static or \`a2a\` GwBackend, or a Service.`,
  },
  {
    name: 'backend:dynamic',
    base: 'backend:http',
    root: BackendFull,
    description: `${BACKEND_SECTIONS}, reaching a \`dynamicForwardProxy\` GwBackend (applied to the connection to each request's destination).`,
  },
  {
    name: 'backend:aws',
    base: 'backend:http',
    root: BackendFull,
    description: `${BACKEND_SECTIONS}, reaching an \`aws\` GwBackend (the connection to the Amazon Bedrock AgentCore endpoint and the signing of each invocation).`,
  },
  {
    name: 'backend:ai',
    root: BackendFull,
    description: `${BACKEND_SECTIONS}, reaching an \`ai\` GwBackend as a whole (every provider of it, unless a provider's own policies say otherwise).`,
  },
  {
    name: 'backend:ai-provider',
    base: 'backend:ai',
    root: BackendFull,
    description:
      "One LLM provider of an `ai` GwBackend's priority groups: the fields its NamedLLMProvider `policies` (a BackendWithAI) set, and those of GwPolicies whose targetRefs[].sectionName names the provider. They win over the backend's for that provider.",
  },
  {
    name: 'backend:mcp',
    root: BackendFull,
    description: `${BACKEND_SECTIONS}, reaching an \`mcp\` GwBackend as a whole (every target of it).`,
  },
  {
    name: 'backend:mcp-target',
    base: 'backend:mcp',
    root: BackendFull,
    description:
      "One target of an `mcp` GwBackend: the fields its McpTarget `policies` (a BackendSimple) set, and those of GwPolicies whose targetRefs[].sectionName names the target. They win over the backend's for that target.",
  },
  {
    name: 'backend:models',
    root: BackendFull,
    description:
      'GwPolicy spec.backend reaching a rule or listener that serves GwModels (a GwPolicy on the Gateway, listener, route or rule).',
  },
  {
    name: 'model-policies',
    root: ModelPolicies,
    description: "GwModel spec.policies: a concrete model's connection, credentials, request changes and guards.",
  },
  {
    name: 'backend-spec',
    root: GwBackendSpec,
    description:
      'GwBackend spec: the backend kind (static, ai, mcp, a2a, aws, dynamicForwardProxy) and, for `aws` backends, the AgentCore runtime; for `ai` backends, the provider configurations (LLMProvider and its family configs); for `mcp` backends, the targets.',
    excluded: {
      policies: 'backend:http, backend:dynamic, backend:aws, backend:ai, backend:mcp',
      'ai.groups.providers.policies': 'backend:ai-provider',
      'mcp.targets.static.policies': 'backend:mcp-target',
    },
  },
  {
    name: 'model-spec',
    root: GwModelSpec,
    description:
      'GwModel spec: the provider (its enum value and settings: beta, epsilon, zeta, custom), baseURL, match, visibility and virtualModel.',
    excluded: {
      policies: 'model-policies',
      parentRefs: 'not a policy: the controller attaches the model to its parents (GwModel status)',
    },
  },
];

const BY_NAME = new Map(PLACES.map((place) => [place.name, place]));

export function placeNamed(name: PlaceName): Place {
  return BY_NAME.get(name)!;
}
