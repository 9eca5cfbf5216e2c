// Family epsilon: Google Vertex AI. Its Gemini models speak the generateContent format the delta
// family speaks, under the project's and region's path
// (/v1/projects/{projectId}/locations/{region}/publishers/google/models/{model}:generateContent,
// :streamGenerateContent?alt=sse); Anthropic's Claude models are served through rawPredict
// (epsilon-anthropic.ts). The model of the request (the provider's `model`, else the client's)
// picks one or the other. The region picks the host: aiplatform.googleapis.com for global,
// aiplatform.{us,eu}.rep.googleapis.com for the multi-regions, {region}-aiplatform.googleapis.com
// otherwise. The token is a bearer token: a Google access token from the cloudtwo backend auth,
// which the endpoint compiles by default (docs/decisions/0021-vertex.md). Embeddings requests go to
// the Google text embedding models' :predict (the Gemini embedding models': :embedContent),
// count_tokens requests for a Gemini model to its :countTokens. Rerank requests go to Vertex AI's
// ranking API (Discovery Engine), on discoveryengine.googleapis.com unless the provider names a
// host: /v1/projects/{projectId}/locations/{region}/rankingConfigs/default_ranking_config:rank.
import type { EpsilonConfig } from '../../../api/types/llm-provider.ts';
import { translateCountTokens, translateEmbeddings } from '../formats/index.ts';
import { translateVertexRerank } from '../formats/rerank/vertex.ts';
import { ModelSwitchedProvider } from './by-model.ts';
import { geminiRoute, googleModelExchange } from './delta.ts';
import { compileVertexAnthropic, isVertexAnthropicModel, type VertexHost } from './epsilon-anthropic.ts';
import { type ClientFormat, ProviderConfigError } from './errors.ts';
import type { FamilyAddress } from './family-address.ts';
import { type ConfiguredPath, plainPath } from './paths.ts';
import { compileHosted, type ExchangePlanner, type HostedFamily } from './planner.ts';
import type { CompiledProvider, Origin, UpstreamFormat } from './types.ts';

/** The region when the provider names none (the API's default). */
export const EPSILON_DEFAULT_REGION = 'global';

/** Vertex AI's multi-region locations, served from their own hosts. */
const MULTI_REGIONS: ReadonlySet<string> = new Set(['us', 'eu']);

// A region and a project go into the host and the path: nothing but what Google's names contain.
const REGION = /^[a-z0-9]+(-[a-z0-9]+)*$/;
// Project ids (my-project-123), project numbers, and domain-scoped ids (example.com:my-project).
const PROJECT_ID = /^[a-z0-9][a-z0-9.:-]*$/;

/** The host of Vertex AI's ranking API (Discovery Engine's), whatever the region. */
export const EPSILON_RANKING_HOST = 'discoveryengine.googleapis.com';

/** The Vertex AI host serving a region. */
export function epsilonHost(region: string): string {
  if (region === 'global') return 'aiplatform.googleapis.com';
  if (MULTI_REGIONS.has(region)) return `aiplatform.${region}.rep.googleapis.com`;
  return `${region}-aiplatform.googleapis.com`;
}

/**
 * A model Vertex embeds through embedContent (one text per request) rather than predict: the
 * Gemini models other than gemini-embedding-001, and the partner (MaaS) ones, as @google/genai
 * tells them apart.
 */
function embedContentModel(model: string): boolean {
  return (model.includes('gemini') && model !== 'gemini-embedding-001') || model.includes('maas');
}

/** Where a rerank request goes: the ranking API's origin and the project's and location's ranking config. */
interface RankingTarget {
  origin: Origin;
  basePath: string;
}

/** Embeddings (predict or embedContent), count_tokens (countTokens) and rerank (the ranking API) on Vertex AI. */
function epsilonExchanges(configuredPath: boolean, ranking: RankingTarget): ReadonlyMap<ClientFormat, ExchangePlanner> {
  const models = (routes: ReadonlyMap<UpstreamFormat, ConfiguredPath>) => routes.get('gemini')!;
  return new Map<ClientFormat, ExchangePlanner>([
    [
      'embeddings',
      (body, model, routes) => {
        const embedContent = model !== undefined && embedContentModel(model);
        const method = embedContent ? 'embedContent' : 'predict';
        return googleModelExchange(
          models(routes),
          model,
          method,
          configuredPath,
          embedContent ? 'gemini' : 'vertex-predict',
          (id) => translateEmbeddings(embedContent ? 'vertex-embed-content' : 'vertex-predict', body, id),
        );
      },
    ],
    [
      'count_tokens',
      (body, model, routes) =>
        googleModelExchange(models(routes), model, 'countTokens', configuredPath, 'gemini', (id) =>
          translateCountTokens('vertex', body, id),
        ),
    ],
    [
      'rerank',
      (body, model) => {
        if (configuredPath) {
          return "The provider's configured path is its Gemini endpoint; reranking is served only at the ranking API's own path (remove path).";
        }
        if (model === undefined || model === '') {
          return 'The request must name a ranking model (semantic-ranker-default@latest...): the provider has no model override.';
        }
        return {
          route: plainPath(`${ranking.basePath}/rankingConfigs/default_ranking_config:rank`),
          providerFormat: 'rerank',
          model,
          translation: translateVertexRerank(body, model),
          origin: ranking.origin,
        };
      },
    ],
  ]);
}

export function compileEpsilon(
  config: EpsilonConfig,
  address: FamilyAddress,
  name: string | undefined,
): CompiledProvider | ProviderConfigError {
  if (address.pathPrefix !== undefined) {
    return new ProviderConfigError('pathPrefix', 'applies to the alpha and gamma families only; remove it');
  }
  const region = config.region ?? EPSILON_DEFAULT_REGION;
  if (!REGION.test(region)) {
    return new ProviderConfigError(
      'epsilon.region',
      `"${region}" is not a Vertex AI location (lower-case letters, digits and "-", e.g. us-central1 or global)`,
    );
  }
  if (!PROJECT_ID.test(config.projectId)) {
    return new ProviderConfigError(
      'epsilon.projectId',
      `"${config.projectId}" is not a Google Cloud project id or number (lower-case letters, digits, ".", ":" and "-")`,
    );
  }
  const configuredPath = address.path !== undefined;
  const basePath = `/v1/projects/${config.projectId}/locations/${region}`;
  const host: VertexHost = {
    defaultHost: epsilonHost(region),
    // An access token (cloudtwo) or a key is sent as Authorization: Bearer.
    keyStyle: 'bearer',
    basePath,
  };
  // A host the provider names takes every request; else reranking has its own.
  const ranking: RankingTarget = { origin: address.origin(EPSILON_RANKING_HOST), basePath };
  const gemini: HostedFamily = {
    ...host,
    family: 'epsilon',
    paths: [['gemini', '/publishers/google/models']],
    forwardedAnthropicVersion: false,
    modelRoute: (route, model, method) => geminiRoute(route, model, method, configuredPath),
    exchanges: epsilonExchanges(configuredPath, ranking),
    routeOrigins: [ranking.origin],
  };
  // A request for a Claude model goes to the Anthropic planner, every other (Gemini models, no
  // model at all, Passthrough and Detect) to the Gemini one.
  return new ModelSwitchedProvider(
    compileHosted(gemini, address, name, config.model),
    compileVertexAnthropic(host, address, name, config.model),
    isVertexAnthropicModel,
  );
}
