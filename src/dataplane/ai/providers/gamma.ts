// Family gamma: the Anthropic Messages API. Messages, count_tokens and the model listing are served
// as they are; Chat Completions and Responses API requests are translated to Messages. Every request carries anthropic-version,
// and the key goes in x-api-key (keyStyle), as Anthropic's API requires.
import type { GammaConfig } from '../../../api/types/llm-provider.ts';
import type { FamilyAddress } from './family-address.ts';
import { compileHosted, type HostedFamily, type ProviderPlanner } from './planner.ts';

export const GAMMA_DEFAULT_HOST = 'api.anthropic.com';

const GAMMA: HostedFamily = {
  family: 'gamma',
  defaultHost: GAMMA_DEFAULT_HOST,
  keyStyle: 'x-api-key',
  paths: [
    ['messages', '/messages'],
    ['count_tokens', '/messages/count_tokens'],
    ['models', '/models'],
  ],
  forwardedAnthropicVersion: true,
};

export function compileGamma(config: GammaConfig, address: FamilyAddress, name: string | undefined): ProviderPlanner {
  return compileHosted(GAMMA, address, name, config.model);
}
