// Family alpha: the OpenAI API. Chat Completions, Responses, Embeddings and the model listing are
// served as they are; Messages requests are translated to Chat Completions.
import type { AlphaConfig } from '../../../api/types/llm-provider.ts';
import type { FamilyAddress } from './family-address.ts';
import { compileHosted, type HostedFamily, type ProviderPlanner } from './planner.ts';

export const ALPHA_DEFAULT_HOST = 'api.openai.com';

const ALPHA: HostedFamily = {
  family: 'alpha',
  defaultHost: ALPHA_DEFAULT_HOST,
  keyStyle: 'bearer',
  paths: [
    ['completions', '/chat/completions'],
    ['responses', '/responses'],
    ['embeddings', '/embeddings'],
    ['models', '/models'],
  ],
  forwardedAnthropicVersion: false,
};

export function compileAlpha(config: AlphaConfig, address: FamilyAddress, name: string | undefined): ProviderPlanner {
  return compileHosted(ALPHA, address, name, config.model);
}
