// Family zeta: Amazon Bedrock, through its Converse API. Every chat request (Chat Completions,
// Messages, Responses) is translated to Converse and sent to /model/{modelId}/converse, or
// /converse-stream when the client streams; the model id goes in the path, escaped as Bedrock's
// own client escapes it (`:` of a versioned id as %3A). The region picks the host
// (bedrock-runtime.{region}.amazonaws.com) and is the signing region of the backend auth
// (cloudone, which the endpoint compiles by default: docs/decisions/0019-bedrock.md). A
// configured guardrail is sent as Converse's guardrailConfig. Embeddings requests go to InvokeModel
// (/model/{modelId}/invoke) for the embedding models gw knows (Amazon Titan, Cohere Embed), and
// count_tokens requests to CountTokens (/model/{modelId}/count-tokens). Rerank requests go to
// Bedrock Agent Runtime's Rerank (POST /rerank), on a host of its own
// (bedrock-agent-runtime.{region}.amazonaws.com, unless the provider names a host), signed as bedrock too.
import type { ZetaConfig } from '../../../api/types/llm-provider.ts';
import {
  type ExchangeTranslation,
  type JsonObject,
  translateCountTokens,
  translateEmbeddings,
} from '../formats/index.ts';
import { translateBedrockRerank } from '../formats/rerank/bedrock.ts';
import { type ClientFormat, ProviderConfigError } from './errors.ts';
import type { FamilyAddress } from './family-address.ts';
import { type ConfiguredPath, plainPath } from './paths.ts';
import { type ExchangePlanner, type PlannedExchange, ProviderPlanner } from './planner.ts';
import type { Origin, UpstreamFormat } from './types.ts';

/** The region when the provider names none (the API's default). */
export const ZETA_DEFAULT_REGION = 'us-east-1';

/** Bedrock's runtime host of a region. */
export function zetaHost(region: string): string {
  return `bedrock-runtime.${region}.amazonaws.com`;
}

/** Bedrock Agent Runtime's host of a region: the Rerank API's. */
export function zetaAgentRuntimeHost(region: string): string {
  return `bedrock-agent-runtime.${region}.amazonaws.com`;
}

/**
 * A model id as one path segment, as the AWS SDK writes a URI label: percent-encoded, with the
 * characters encodeURIComponent leaves alone except `-_.~` encoded too.
 */
export function modelIdSegment(modelId: string): string {
  return encodeURIComponent(modelId).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * An exchange with one Bedrock operation of a model (`/model/{modelId}/{operation}`): the model
 * (the override, else the client's) is required. Not under a configured path, which is the
 * Converse endpoint.
 */
function bedrockExchange(
  model: string | undefined,
  operation: 'invoke' | 'count-tokens',
  configuredPath: ConfiguredPath | undefined,
  providerFormat: UpstreamFormat,
  translate: (model: string) => ExchangeTranslation | string,
): PlannedExchange | string {
  if (configuredPath !== undefined) {
    return `The provider's configured path is its Converse endpoint; ${operation === 'invoke' ? 'embeddings are' : 'token counting is'} served only under Bedrock's own paths (remove path).`;
  }
  if (model === undefined || model === '') return 'The request must name a model: the provider has no model override.';
  const translation = translate(model);
  if (typeof translation === 'string') return translation;
  return { route: plainPath(`/model/${modelIdSegment(model)}/${operation}`), providerFormat, model, translation };
}

/**
 * A rerank request as Bedrock Agent Runtime's Rerank, sent to `origin`; the model (an id or an
 * ARN) goes in the body as an ARN of the provider's region.
 */
function bedrockRerank(
  body: JsonObject,
  model: string | undefined,
  region: string,
  origin: Origin,
  configuredPath: ConfiguredPath | undefined,
): PlannedExchange | string {
  if (configuredPath !== undefined) {
    return "The provider's configured path is its Converse endpoint; reranking is served only at Bedrock Agent Runtime's /rerank (remove path).";
  }
  if (model === undefined || model === '') return 'The request must name a model: the provider has no model override.';
  const translation = translateBedrockRerank(body, model, region);
  return { route: plainPath('/rerank'), providerFormat: 'rerank', model, translation, origin };
}

/** Embeddings (InvokeModel of an embedding model), count_tokens (CountTokens) and rerank (Agent Runtime's Rerank) on Bedrock. */
function zetaExchanges(
  configuredPath: ConfiguredPath | undefined,
  region: string,
  rerankOrigin: Origin,
): ReadonlyMap<ClientFormat, ExchangePlanner> {
  return new Map<ClientFormat, ExchangePlanner>([
    [
      'embeddings',
      (body, model) =>
        bedrockExchange(model, 'invoke', configuredPath, 'bedrock-invoke', (id) =>
          translateEmbeddings('bedrock-invoke', body, id),
        ),
    ],
    [
      'count_tokens',
      (body, model) =>
        bedrockExchange(model, 'count-tokens', configuredPath, 'converse', (id) =>
          translateCountTokens('converse', body, id),
        ),
    ],
    ['rerank', (body, model) => bedrockRerank(body, model, region, rerankOrigin, configuredPath)],
  ]);
}

export function compileZeta(
  config: ZetaConfig,
  address: FamilyAddress,
  name: string | undefined,
): ProviderPlanner | ProviderConfigError {
  if (address.pathPrefix !== undefined) {
    return new ProviderConfigError('pathPrefix', 'applies to the alpha and gamma families only; remove it');
  }
  const region = config.region ?? ZETA_DEFAULT_REGION;
  const guardrail: JsonObject | undefined = config.guardrail && {
    guardrailIdentifier: config.guardrail.identifier,
    guardrailVersion: config.guardrail.version,
  };
  const configuredPath = address.path;
  // A host the provider names takes every request; else reranking has its own.
  const rerankOrigin = address.origin(zetaAgentRuntimeHost(region));
  return new ProviderPlanner({
    name,
    family: 'zeta',
    origin: address.origin(zetaHost(region)),
    service: undefined,
    // A Bedrock API key is a bearer token; signed requests (cloudone) are the default.
    keyStyle: 'bearer',
    model: config.model,
    region,
    routes: new Map(),
    converse: {
      path: (model, stream) =>
        configuredPath ?? plainPath(`/model/${modelIdSegment(model)}/${stream ? 'converse-stream' : 'converse'}`),
      ...(guardrail === undefined ? {} : { fields: { guardrailConfig: guardrail } }),
    },
    exchanges: zetaExchanges(configuredPath, region, rerankOrigin),
    routeOrigins: [rerankOrigin],
    // Passthrough and Detect requests go to the client's own path (Bedrock's paths have no base).
    forwardedPath: (clientPath) => configuredPath ?? plainPath(clientPath),
    forwardedAnthropicVersion: false,
  });
}
