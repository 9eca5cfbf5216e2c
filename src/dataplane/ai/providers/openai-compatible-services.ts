// The named OpenAI-compatible services a GwModel can name as its provider (Provider07 to
// Provider19: Cohere ... Fireworks AI, src/api/vendors.ts): where each serves its OpenAI-style API
// by default, and whether it has an Embeddings endpoint. A model with one of them is compiled as a
// custom provider that speaks Chat Completions (and Embeddings where the service has them) under
// the service's base path; Messages and Responses requests are translated to Chat Completions.
// The addresses are the services' documented base URLs, the ones agentgateway's provider presets
// use (docs/providers.md lists them); a GwModel's baseURL replaces the address.
import type { ProviderFormatConfig } from '../../../api/types/llm-provider.ts';
import type { ModelProviderId } from '../../../api/vendors.ts';

export interface OpenAiCompatibleService {
  /** The documented base URL: scheme, host, port and the path the OpenAI paths go under. */
  readonly baseURL: string;
  /** Whether the service serves the Embeddings API at {base}/embeddings. */
  readonly embeddings: boolean;
}

/** The GwModel providers that are OpenAI-compatible services, in the spec's order. */
export const OPENAI_COMPATIBLE_SERVICES: Readonly<Partial<Record<ModelProviderId, OpenAiCompatibleService>>> = {
  // Cohere's Compatibility API; its native API (/v2) is another shape.
  Provider07: { baseURL: 'https://api.cohere.ai/compatibility/v1', embeddings: true },
  // A local server with no key by default.
  Provider08: { baseURL: 'http://localhost:11434/v1', embeddings: true },
  Provider09: { baseURL: 'https://inference.baseten.co/v1', embeddings: false },
  Provider10: { baseURL: 'https://api.cerebras.ai/v1', embeddings: false },
  Provider11: { baseURL: 'https://api.deepinfra.com/v1/openai', embeddings: true },
  // DeepSeek documents the bare host and, for OpenAI compatibility, /v1 under it (agentgateway's choice).
  Provider12: { baseURL: 'https://api.deepseek.com/v1', embeddings: false },
  Provider13: { baseURL: 'https://api.groq.com/openai/v1', embeddings: false },
  Provider14: { baseURL: 'https://router.huggingface.co/v1', embeddings: false },
  Provider15: { baseURL: 'https://api.mistral.ai/v1', embeddings: true },
  Provider16: { baseURL: 'https://openrouter.ai/api/v1', embeddings: true },
  Provider17: { baseURL: 'https://api.together.xyz/v1', embeddings: true },
  Provider18: { baseURL: 'https://api.x.ai/v1', embeddings: false },
  Provider19: { baseURL: 'https://api.fireworks.ai/inference/v1', embeddings: true },
};

/** The service a GwModel provider value stands for, if it is one of the named OpenAI-compatible services. */
export function openAiCompatibleService(provider: string): OpenAiCompatibleService | undefined {
  return Object.hasOwn(OPENAI_COMPATIBLE_SERVICES, provider)
    ? OPENAI_COMPATIBLE_SERVICES[provider as ModelProviderId]
    : undefined;
}

/** The formats gw sends a service: Chat Completions, and Embeddings where it has them. */
export function serviceFormats(service: OpenAiCompatibleService): ProviderFormatConfig[] {
  return service.embeddings ? [{ type: 'Completions' }, { type: 'Embeddings' }] : [{ type: 'Completions' }];
}
