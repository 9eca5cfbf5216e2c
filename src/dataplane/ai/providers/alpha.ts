// Family alpha: the OpenAI API. Chat Completions, Responses, Embeddings and the model listing are
// served as they are; Messages requests are translated to Chat Completions.
import type { AlphaConfig } from '../../../api/types/llm-provider.ts';
import type { FamilyAddress } from './family-address.ts';
import { type ConfiguredPath, plainPath, prefixedClientPath } from './paths.ts';
import { type ProviderDefinition, ProviderPlanner } from './planner.ts';
import type { ClientFormat } from './types.ts';

export const ALPHA_DEFAULT_HOST = 'api.openai.com';
const ALPHA_BASE_PATH = '/v1';

/** Each served format's path below the base ("/v1", or the provider's pathPrefix). */
const ALPHA_PATHS: readonly (readonly [ClientFormat, string])[] = [
  ['completions', '/chat/completions'],
  ['responses', '/responses'],
  ['embeddings', '/embeddings'],
  ['models', '/models'],
];

export function compileAlpha(config: AlphaConfig, address: FamilyAddress, name: string | undefined): ProviderPlanner {
  const base = address.pathPrefix ?? ALPHA_BASE_PATH;
  const routes = new Map<ClientFormat, ConfiguredPath>(
    ALPHA_PATHS.map(([format, suffix]) => [format, address.path ?? plainPath(`${base}${suffix}`)]),
  );
  const definition: ProviderDefinition = {
    name,
    family: 'alpha',
    origin: address.origin(ALPHA_DEFAULT_HOST),
    service: undefined,
    keyStyle: 'bearer',
    model: config.model,
    routes,
    forwardedPath: (clientPath) =>
      address.path ?? plainPath(prefixedClientPath(clientPath, address.pathPrefix, ALPHA_BASE_PATH)),
    forwardedAnthropicVersion: false,
  };
  return new ProviderPlanner(definition);
}
