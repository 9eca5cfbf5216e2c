// BackendAI.routes: which kind of LLM traffic a request path carries. Keys are path suffixes
// (ends-with match on the path without its query); `*` matches any path. Precedence, as
// agentgateway's: the longest matching suffix wins (ties cannot both match unless equal), `*`
// only when no suffix matches, and Completions when nothing matches at all (the spec's
// "unspecified traffic"). A backend that sets no routes gets DEFAULT_ROUTES, the APIs' well-known
// paths (docs/decisions/0012-default-ai-routes.md).
import type { RouteType } from '../../../api/types/ai.ts';

export type RouteTypeOf = (path: string) => RouteType;

const DEFAULT_ROUTE_TYPE: RouteType = 'Completions';

/**
 * The routes of a backend whose `policies.ai.routes` is unset: each API at its own path, as
 * agentgateway's default table for its model router has them. Any other path is Completions.
 */
export const DEFAULT_ROUTES: Readonly<Record<string, RouteType>> = Object.freeze({
  '/v1/chat/completions': 'Completions',
  '/v1/messages': 'Messages',
  '/v1/messages/count_tokens': 'GammaTokenCount',
  '/v1/responses': 'Responses',
  '/v1/responses/compact': 'Detect',
  '/v1/embeddings': 'Embeddings',
  '/v1/models': 'Models',
  '/v1/images/generations': 'Detect',
  '/v1/images/edits': 'Detect',
  '/v1/images/variations': 'Detect',
  '/v1/rerank': 'Rerank',
  '/v2/rerank': 'Rerank',
  ':generateContent': 'GenerateContent',
  ':streamGenerateContent': 'GenerateContent',
  ':countTokens': 'DeltaCountTokens',
});

/** Compiles the routes map once into a lookup used per request (unset or empty: DEFAULT_ROUTES). */
export function compileRouteTypes(routes: Record<string, RouteType> | undefined): RouteTypeOf {
  const table = routes === undefined || Object.keys(routes).length === 0 ? DEFAULT_ROUTES : routes;
  const fallback = table['*'] ?? DEFAULT_ROUTE_TYPE;
  // Longer suffixes first: "/v1/messages/count_tokens" must win over "/count_tokens" and "s".
  const suffixes = Object.entries(table)
    .filter(([suffix]) => suffix !== '*')
    .sort(([a], [b]) => b.length - a.length || (a < b ? -1 : a > b ? 1 : 0));
  return (path) => {
    const query = path.indexOf('?');
    const bare = query === -1 ? path : path.slice(0, query);
    for (const [suffix, routeType] of suffixes) if (bare.endsWith(suffix)) return routeType;
    return fallback;
  };
}

/** Which request policy steps run for a route type. */
export interface PolicySteps {
  /** defaults, overrides, transformations and finalTransformations. */
  body: boolean;
  /** modelAliases on the body's `model`. */
  modelAliases: boolean;
  /** prompt prepend/append: the spec's CHAT and CHAT_STREAMING route types only. */
  promptEnrichment: boolean;
}

const NONE: PolicySteps = { body: false, modelAliases: false, promptEnrichment: false };
const CHAT: PolicySteps = { body: true, modelAliases: true, promptEnrichment: true };
const LLM: PolicySteps = { body: true, modelAliases: true, promptEnrichment: false };
const DETECT: PolicySteps = { body: true, modelAliases: false, promptEnrichment: false };

const STEPS: Record<RouteType, PolicySteps> = {
  // CHAT and CHAT_STREAMING are the two chat formats, streamed (`stream: true`) or not.
  Completions: CHAT,
  Messages: CHAT,
  Responses: LLM,
  GammaTokenCount: LLM,
  Embeddings: LLM,
  Rerank: LLM,
  GenerateContent: LLM,
  DeltaCountTokens: LLM,
  // Detect forwards the body as is except for the body policies (as agentgateway does).
  Detect: DETECT,
  // Forwarded untouched: no LLM processing at all.
  Passthrough: NONE,
  Models: NONE,
  Realtime: NONE,
};

export function policyStepsFor(routeType: RouteType): PolicySteps {
  return STEPS[routeType] ?? NONE;
}
