// Anthropic's Claude models on Vertex AI (the epsilon family), served through Vertex's partner-model
// API: the Messages body without its `model`, which goes in the path
// (…/publishers/anthropic/models/{model}:rawPredict, :streamRawPredict for a stream), and with
// `anthropic_version: "vertex-2023-10-16"` in the body instead of the header; token counting at
// …/publishers/anthropic/models/count-tokens:rawPredict, the model staying in the body. A request
// is planned as the gamma family plans Anthropic's API (Messages as it is, Chat Completions and
// Responses translated to Messages), then moved into Vertex's shape, as Anthropic's Vertex SDK
// moves its own requests. docs/decisions/0021-vertex.md says why.
import type { JsonObject } from '../formats/index.ts';
import { PlanError } from './errors.ts';
import type { FamilyAddress } from './family-address.ts';
import { compileHosted, type HostedFamily, type ProviderPlanner } from './planner.ts';
import type { PlanInput, UpstreamFormat, UpstreamPlan } from './types.ts';

/** The API version Vertex AI takes in the body of Anthropic requests (its only documented value). */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** The prefixes a client may write before a Claude model id (Vertex's resource name, agentgateway's form). */
const ANTHROPIC_PREFIXES = ['publishers/anthropic/models/', 'anthropic/'] as const;

// The Claude model ids Vertex names (claude-sonnet-4-5@20250929, claude-3-5-haiku@20241022): the
// only client text gw puts in the path, so nothing else (a slash, a query, a dot segment) may reach it.
const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._@-]*$/;

/**
 * A model Vertex serves from Anthropic (rawPredict) rather than from Google (generateContent): an
 * Anthropic prefix, or `claude-` in its name.
 */
export function isVertexAnthropicModel(model: string | undefined): boolean {
  return (
    model !== undefined && (ANTHROPIC_PREFIXES.some((prefix) => model.startsWith(prefix)) || model.includes('claude-'))
  );
}

/** The model id of the path (and of a count_tokens body): the prefix removed; undefined when it is not an id. */
function vertexModelId(model: unknown): string | undefined {
  if (typeof model !== 'string') return undefined;
  const prefix = ANTHROPIC_PREFIXES.find((candidate) => model.startsWith(candidate));
  const id = prefix === undefined ? model : model.slice(prefix.length);
  return MODEL_ID.test(id) ? id : undefined;
}

/** What the Gemini and the Anthropic models of an epsilon provider share: host, key style, base path. */
export type VertexHost = Pick<HostedFamily, 'defaultHost' | 'keyStyle' | 'basePath'>;

/**
 * The planner of an epsilon provider's Anthropic models. The host's `basePath` is the project's
 * and location's (/v1/projects/{projectId}/locations/{region}); a configured `path` replaces the
 * paths, as for the Gemini models.
 */
export function compileVertexAnthropic(
  host: VertexHost,
  address: FamilyAddress,
  name: string | undefined,
  model: string | undefined,
): VertexAnthropicPlanner {
  const messages = compileHosted(
    {
      ...host,
      family: 'epsilon',
      paths: [
        ['messages', '/publishers/anthropic/models'],
        ['count_tokens', '/publishers/anthropic/models/count-tokens:rawPredict'],
      ],
      forwardedAnthropicVersion: false,
    },
    address,
    name,
    model,
  );
  return new VertexAnthropicPlanner(messages, address.path !== undefined);
}

/** Plans a request as for Anthropic's own API, then writes it as Vertex's rawPredict takes it. */
export class VertexAnthropicPlanner {
  readonly #messages: ProviderPlanner;
  readonly #configuredPath: boolean;

  constructor(messages: ProviderPlanner, configuredPath: boolean) {
    this.#messages = messages;
    this.#configuredPath = configuredPath;
  }

  /** The formats Vertex's Anthropic endpoints take: Messages and token counting. */
  get formats(): readonly UpstreamFormat[] {
    return this.#messages.formats;
  }

  plan(input: PlanInput): UpstreamPlan | PlanError {
    const plan = this.#messages.plan(input);
    if (plan instanceof PlanError || plan.body === undefined) return plan;
    const id = vertexModelId(plan.body.model);
    if (id === undefined) {
      return new PlanError(
        400,
        input.clientFormat,
        `The model ${JSON.stringify(plan.body.model)} is not a Claude model id of Vertex AI (letters, digits, ".", "_", "@" and "-", e.g. claude-sonnet-4-5@20250929).`,
      );
    }
    // A new body: the plan's may be the client's own object, which is never changed.
    let body: JsonObject;
    if (plan.providerFormat === 'count_tokens') {
      // count-tokens:rawPredict is one endpoint for every model: the model stays in the body.
      body = { ...plan.body, model: id, anthropic_version: VERTEX_ANTHROPIC_VERSION };
    } else {
      const { model: _inPath, ...rest } = plan.body;
      body = { ...rest, anthropic_version: VERTEX_ANTHROPIC_VERSION };
      if (!this.#configuredPath) plan.path = `${plan.path}/${id}:${input.stream ? 'streamRawPredict' : 'rawPredict'}`;
    }
    plan.body = body;
    plan.upstreamModel = id;
    // Vertex answers in Anthropic's shape for the model's errors but in Google's for its own
    // (authentication, quota, an unknown model): an answer passed on as it is gets the latter rewritten.
    if (plan.response.kind === 'same') plan.response = { ...plan.response, rewriteErrors: true };
    return plan;
  }
}
