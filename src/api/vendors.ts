// The vendor behind each neutral identifier of the spec: the LLM provider families of a GwBackend
// (`alpha`, `gamma`...), the GwModel providers (`Alpha`, `Provider07`...), the cloud credential
// families and the identity providers. The API keeps the spec's identifiers; everything a user
// reads says which vendor they are through this one table: telemetry (OpenTelemetry's
// `gen_ai.provider.name`: the GenAI semantic conventions' well-known value where the vendor has
// one, else a lower-case snake_case name of the vendor in the same style; docs/telemetry.md),
// validation messages, `gw status` and `gw explain`, and the schema descriptions (`kubectl
// explain`, docs/reference.md), through the *Label functions below. It imports nothing, so every
// schema module can use it.

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

/** The values of GwModel `spec.provider` (the schema's ModelProvider enum), in the spec's order. */
export const MODEL_PROVIDER_IDS = [
  'Alpha',
  'Beta',
  'Gamma',
  'Delta',
  'Epsilon',
  'Zeta',
  'Provider07',
  'Provider08',
  'Provider09',
  'Provider10',
  'Provider11',
  'Provider12',
  'Provider13',
  'Provider14',
  'Provider15',
  'Provider16',
  'Provider17',
  'Provider18',
  'Provider19',
  'Custom',
] as const;
export type ModelProviderId = (typeof MODEL_PROVIDER_IDS)[number];

/** The GwModel providers (`spec.provider`), by their spec identifier. */
export const MODEL_PROVIDERS: Readonly<Record<ModelProviderId, Vendor>> = {
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

/** The cloud credential families of backend auth (`beta` there is Azure's credentials). */
export const CREDENTIAL_FAMILIES: Readonly<
  Record<'cloudone' | 'cloudtwo' | 'beta', { readonly cloud: string; readonly credentials: string }>
> = {
  cloudone: { cloud: 'AWS', credentials: 'SigV4 signing, STS credentials' },
  cloudtwo: { cloud: 'Google Cloud', credentials: 'access and ID tokens' },
  beta: { cloud: 'Azure', credentials: 'Entra ID: managed identity, workload identity, client secret' },
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

// Names for messages and descriptions. `custom` stands for no vendor, so it is shown alone.

/** The vendor of an LLM provider family (`alpha` → OpenAI); undefined for custom and unknown names. */
export function vendorName(family: string): string | undefined {
  if (family === 'custom') return undefined;
  return (PROVIDER_FAMILIES as Readonly<Record<string, Vendor>>)[family]?.vendor;
}

/** The vendor of a GwModel provider value (`Provider07` → Cohere); undefined for Custom. */
export function modelProviderVendor(provider: string): string | undefined {
  if (provider === 'Custom') return undefined;
  return (MODEL_PROVIDERS as Readonly<Record<string, Vendor>>)[provider]?.vendor;
}

/** The cloud of a credential family (`cloudone` → AWS, `cloudtwo` → Google Cloud, `beta` → Azure). */
export function cloudName(kind: string): string | undefined {
  return (CREDENTIAL_FAMILIES as Readonly<Record<string, { cloud: string }>>)[kind]?.cloud;
}

/** The product behind an McpIDP value (`Idp02` → Keycloak). */
export function identityProviderName(idp: string): string | undefined {
  return IDENTITY_PROVIDERS[idp];
}

function labelled(name: string, vendor: string | undefined): string {
  return vendor === undefined ? name : `${name} (${vendor})`;
}

/** A provider family as users read it: `delta (Google Gemini)`; custom and unknown names as they are. */
export function familyLabel(family: string): string {
  return labelled(family, vendorName(family));
}

/** A GwModel provider as users read it: `Provider07 (Cohere)`. */
export function modelProviderLabel(provider: string): string {
  return labelled(provider, modelProviderVendor(provider));
}

/** A backend auth kind as users read it: `cloudone (AWS)`; kinds that are no cloud stay as they are. */
export function authKindLabel(kind: string): string {
  return labelled(kind, cloudName(kind));
}

/** An McpIDP value as users read it: `Idp02 (Keycloak)`. */
export function identityProviderLabel(idp: string): string {
  return labelled(idp, identityProviderName(idp));
}
