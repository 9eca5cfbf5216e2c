// Family epsilon: Google Vertex AI. Its Gemini models speak the generateContent format the delta
// family speaks, under the project's and region's path
// (/v1/projects/{projectId}/locations/{region}/publishers/google/models/{model}:generateContent,
// :streamGenerateContent?alt=sse). The region picks the host: aiplatform.googleapis.com for
// global, aiplatform.{us,eu}.rep.googleapis.com for the multi-regions, {region}-aiplatform.googleapis.com
// otherwise. The token is a bearer token: a Google access token from the cloudtwo backend auth,
// which the endpoint compiles by default (docs/decisions/0021-vertex.md). Anthropic models on
// Vertex (claude-*, served by rawPredict) are not served yet: their requests are answered 400.
import type { EpsilonConfig } from '../../../api/types/llm-provider.ts';
import { geminiRoute } from './delta.ts';
import { ProviderConfigError } from './errors.ts';
import type { FamilyAddress } from './family-address.ts';
import { compileHosted, type HostedFamily, type ProviderPlanner } from './planner.ts';

/** The region when the provider names none (the API's default). */
export const EPSILON_DEFAULT_REGION = 'global';

/** Vertex AI's multi-region locations, served from their own hosts. */
const MULTI_REGIONS: ReadonlySet<string> = new Set(['us', 'eu']);

// A region and a project go into the host and the path: nothing but what Google's names contain.
const REGION = /^[a-z0-9]+(-[a-z0-9]+)*$/;
// Project ids (my-project-123), project numbers, and domain-scoped ids (example.com:my-project).
const PROJECT_ID = /^[a-z0-9][a-z0-9.:-]*$/;

/** The Vertex AI host serving a region. */
export function epsilonHost(region: string): string {
  if (region === 'global') return 'aiplatform.googleapis.com';
  if (MULTI_REGIONS.has(region)) return `aiplatform.${region}.rep.googleapis.com`;
  return `${region}-aiplatform.googleapis.com`;
}

/** A model Vertex serves from Anthropic (rawPredict), not from Google (generateContent). */
function anthropicModel(model: string | undefined): boolean {
  return model !== undefined && (model.startsWith('anthropic/') || model.includes('claude-'));
}

const ANTHROPIC_NOT_YET =
  'Anthropic models on Vertex AI (rawPredict) are not served by gw yet; this provider serves Google models ' +
  '(generateContent). Meanwhile use a gamma provider (Anthropic) for Claude.';

export function compileEpsilon(
  config: EpsilonConfig,
  address: FamilyAddress,
  name: string | undefined,
): ProviderPlanner | ProviderConfigError {
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
  const epsilon: HostedFamily = {
    family: 'epsilon',
    defaultHost: epsilonHost(region),
    // An access token (cloudtwo) or a key is sent as Authorization: Bearer.
    keyStyle: 'bearer',
    basePath: `/v1/projects/${config.projectId}/locations/${region}`,
    paths: [['gemini', '/publishers/google/models']],
    forwardedAnthropicVersion: false,
    modelRoute: (route, model, method) =>
      anthropicModel(model) ? ANTHROPIC_NOT_YET : geminiRoute(route, model, method, configuredPath),
  };
  return compileHosted(epsilon, address, name, config.model);
}
