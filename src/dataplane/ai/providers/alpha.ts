// Family alpha: the OpenAI API. Chat Completions, Responses, Embeddings, the model listing, rerank
// and Realtime sessions (WebSocket, /v1/realtime) are served as they are; Messages requests are
// translated to Chat Completions.
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
    // OpenAI itself has no rerank API; OpenAI-compatible servers reached with a host override do.
    ['rerank', '/rerank'],
    ['realtime', '/realtime'],
  ],
  forwardedAnthropicVersion: false,
};

export function compileAlpha(config: AlphaConfig, address: FamilyAddress, name: string | undefined): ProviderPlanner {
  return compileHosted(ALPHA, address, name, config.model);
}
