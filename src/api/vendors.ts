// The vendor behind each neutral identifier of the API. The spec (and so gw's API) names provider
// families, GwModel providers and cloud credential kinds neutrally (alpha, Provider07, cloudone);
// what a user reads (validation messages, `gw explain`, `gw status`, descriptions) says which
// product each one is, from this one table.

/** LLM provider families (fields of LLMProvider): the API each one speaks. */
const PROVIDER_FAMILIES: Readonly<Record<string, string>> = {
  alpha: 'OpenAI',
  betaalpha: 'Azure OpenAI',
  beta: 'Azure AI',
  gamma: 'Anthropic',
  delta: 'Gemini',
  epsilon: 'Vertex AI',
  zeta: 'Amazon Bedrock',
};

/** GwModel `provider` values. */
const MODEL_PROVIDERS: Readonly<Record<string, string>> = {
  Alpha: 'OpenAI',
  Beta: 'Azure AI',
  Gamma: 'Anthropic',
  Delta: 'Gemini',
  Epsilon: 'Vertex AI',
  Zeta: 'Amazon Bedrock',
  Provider07: 'Cohere',
  Provider08: 'Ollama',
  Provider09: 'Baseten',
  Provider10: 'Cerebras',
  Provider11: 'DeepInfra',
  Provider12: 'DeepSeek',
  Provider13: 'Groq',
  Provider14: 'Hugging Face',
  Provider15: 'Mistral',
  Provider16: 'OpenRouter',
  Provider17: 'Together AI',
  Provider18: 'xAI',
  Provider19: 'Fireworks',
};

/** Cloud credential families (backend auth kinds, guard services). */
const CLOUDS: Readonly<Record<string, string>> = {
  cloudone: 'AWS',
  cloudtwo: 'Google Cloud',
  beta: 'Azure',
};

/** Identity provider products of McpIDP (spec document 3 walks through Idp02). */
const IDENTITY_PROVIDERS: Readonly<Record<string, string>> = {
  Idp01: 'Auth0',
  Idp02: 'Keycloak',
  Idp03: 'Okta',
  Idp04: 'Descope',
  Idp05: 'authentik',
  Idp06: 'Microsoft Entra ID',
};

/** The vendor of an LLM provider family (`alpha` → OpenAI); undefined for a name that is not one. */
export function vendorName(family: string): string | undefined {
  return PROVIDER_FAMILIES[family];
}

/** The vendor of a GwModel provider value (`Provider07` → Cohere). */
export function modelProviderVendor(provider: string): string | undefined {
  return MODEL_PROVIDERS[provider];
}

/** The cloud of a credential family (`cloudone` → AWS, `cloudtwo` → Google Cloud, `beta` → Azure). */
export function cloudName(kind: string): string | undefined {
  return CLOUDS[kind];
}

/** The product behind an McpIDP value (`Idp02` → Keycloak). */
export function identityProviderName(idp: string): string | undefined {
  return IDENTITY_PROVIDERS[idp];
}

function labelled(name: string, vendor: string | undefined): string {
  return vendor === undefined ? name : `${name} (${vendor})`;
}

/** A provider family as users read it: `delta (Gemini)`; a name that is no family is returned as is. */
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
