// Family gamma: the Anthropic Messages API. Messages and count_tokens are served as they are;
// Chat Completions requests are translated to Messages. Every request carries anthropic-version,
// and the key goes in x-api-key (keyStyle), as Anthropic's API requires.
import type { GammaConfig } from '../../../api/types/llm-provider.ts';
import type { FamilyAddress } from './family-address.ts';
import { type ConfiguredPath, plainPath, prefixedClientPath } from './paths.ts';
import { type ProviderDefinition, ProviderPlanner } from './planner.ts';
import type { ClientFormat } from './types.ts';

export const GAMMA_DEFAULT_HOST = 'api.anthropic.com';
const GAMMA_BASE_PATH = '/v1';

const GAMMA_PATHS: readonly (readonly [ClientFormat, string])[] = [
  ['messages', '/messages'],
  ['count_tokens', '/messages/count_tokens'],
];

export function compileGamma(config: GammaConfig, address: FamilyAddress, name: string | undefined): ProviderPlanner {
  const base = address.pathPrefix ?? GAMMA_BASE_PATH;
  const routes = new Map<ClientFormat, ConfiguredPath>(
    GAMMA_PATHS.map(([format, suffix]) => [format, address.path ?? plainPath(`${base}${suffix}`)]),
  );
  const definition: ProviderDefinition = {
    name,
    family: 'gamma',
    origin: address.origin(GAMMA_DEFAULT_HOST),
    service: undefined,
    keyStyle: 'x-api-key',
    model: config.model,
    routes,
    forwardedPath: (clientPath) =>
      address.path ?? plainPath(prefixedClientPath(clientPath, address.pathPrefix, GAMMA_BASE_PATH)),
    forwardedAnthropicVersion: true,
  };
  return new ProviderPlanner(definition);
}
