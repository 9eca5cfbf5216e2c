// The vendor behind each neutral identifier of the spec (docs/telemetry.md uses it): the LLM provider
// families of a GwBackend (`alpha`, `gamma`...), the GwModel providers (`Alpha`, `Provider07`...),
// the cloud credential families and the identity providers. The API keeps the spec's identifiers;
// everything a user reads (telemetry, docs, messages) says which vendor they are through this one
// table. Telemetry records OpenTelemetry's `gen_ai.provider.name` from it: the GenAI semantic
// conventions' well-known value where the vendor has one, else a lower-case snake_case name of the
// vendor in the same style.
import type { ModelProvider } from './types/model.ts';

/** A provider family of LLMProvider (GwBackend `spec.ai.provider`). */
export type ProviderFamily = 'alpha' | 'betaalpha' | 'beta' | 'gamma' | 'delta' | 'epsilon' | 'zeta' | 'custom';

export interface Vendor {
  /** The vendor or product as users know it. */
  readonly vendor: string;
  /** The wire protocol it speaks. */
  readonly speaks: string;
  /** OpenTelemetry `gen_ai.provider.name`. */
  readonly genAiProviderName: string;
}

/** The LLM provider families of a GwBackend, by their spec identifier. */
export const PROVIDER_FAMILIES: Readonly<Record<ProviderFamily, Vendor>> = {
  alpha: { vendor: 'OpenAI', speaks: 'the OpenAI API', genAiProviderName: 'openai' },
  betaalpha: {
    vendor: 'Azure OpenAI',
    speaks: 'the Azure OpenAI API (deployment paths, api-version)',
    genAiProviderName: 'azure.ai.openai',
  },
  beta: {
    vendor: 'Azure AI Foundry',
    speaks: 'the Azure AI model inference API',
    genAiProviderName: 'azure.ai.inference',
  },
  gamma: { vendor: 'Anthropic', speaks: 'the Anthropic Messages API', genAiProviderName: 'anthropic' },
  delta: { vendor: 'Google Gemini', speaks: 'the Gemini API', genAiProviderName: 'gcp.gemini' },
  epsilon: { vendor: 'Google Vertex AI', speaks: 'the Vertex AI API', genAiProviderName: 'gcp.vertex_ai' },
  zeta: { vendor: 'Amazon Bedrock', speaks: 'the Bedrock Converse API', genAiProviderName: 'aws.bedrock' },
  // A server of the operator's own (vLLM, llama.cpp, Ollama...): gw knows the formats, not the vendor.
  custom: { vendor: 'a custom server', speaks: 'the formats it lists', genAiProviderName: 'custom' },
};

/** The GwModel providers (`spec.provider`), by their spec identifier. */
export const MODEL_PROVIDERS: Readonly<Record<ModelProvider, Vendor>> = {
  Alpha: PROVIDER_FAMILIES.alpha,
  Beta: PROVIDER_FAMILIES.beta,
  Gamma: PROVIDER_FAMILIES.gamma,
  Delta: PROVIDER_FAMILIES.delta,
  Epsilon: PROVIDER_FAMILIES.epsilon,
  Zeta: PROVIDER_FAMILIES.zeta,
  Provider07: { vendor: 'Cohere', speaks: 'the Cohere API', genAiProviderName: 'cohere' },
  Provider08: { vendor: 'Ollama', speaks: 'an OpenAI-compatible API', genAiProviderName: 'ollama' },
  Provider09: { vendor: 'Baseten', speaks: 'an OpenAI-compatible API', genAiProviderName: 'baseten' },
  Provider10: { vendor: 'Cerebras', speaks: 'an OpenAI-compatible API', genAiProviderName: 'cerebras' },
  Provider11: { vendor: 'DeepInfra', speaks: 'an OpenAI-compatible API', genAiProviderName: 'deepinfra' },
  Provider12: { vendor: 'DeepSeek', speaks: 'an OpenAI-compatible API', genAiProviderName: 'deepseek' },
  Provider13: { vendor: 'Groq', speaks: 'an OpenAI-compatible API', genAiProviderName: 'groq' },
  Provider14: { vendor: 'Hugging Face', speaks: 'an OpenAI-compatible API', genAiProviderName: 'hugging_face' },
  Provider15: { vendor: 'Mistral AI', speaks: 'an OpenAI-compatible API', genAiProviderName: 'mistral_ai' },
  Provider16: { vendor: 'OpenRouter', speaks: 'an OpenAI-compatible API', genAiProviderName: 'openrouter' },
  Provider17: { vendor: 'Together AI', speaks: 'an OpenAI-compatible API', genAiProviderName: 'together_ai' },
  Provider18: { vendor: 'xAI', speaks: 'an OpenAI-compatible API', genAiProviderName: 'x_ai' },
  Provider19: { vendor: 'Fireworks AI', speaks: 'an OpenAI-compatible API', genAiProviderName: 'fireworks_ai' },
  Custom: PROVIDER_FAMILIES.custom,
};

/** The cloud credential families of backend auth. */
export const CREDENTIAL_FAMILIES: Readonly<Record<'cloudone' | 'cloudtwo', string>> = {
  cloudone: 'AWS (SigV4 signing, STS credentials)',
  cloudtwo: 'Google Cloud (access and ID tokens)',
};

/** The identity providers of spec document 3. */
export const IDENTITY_PROVIDERS: Readonly<Record<string, string>> = {
  Idp01: 'Auth0',
  Idp02: 'Keycloak',
  Idp03: 'Okta',
  Idp04: 'Descope',
  Idp05: 'authentik',
  Idp06: 'Microsoft Entra ID',
};

/** `gen_ai.provider.name` of a provider family; an identifier outside the table is returned as it is. */
export function genAiProviderName(family: string): string {
  return (PROVIDER_FAMILIES as Readonly<Record<string, Vendor>>)[family]?.genAiProviderName ?? family;
}
