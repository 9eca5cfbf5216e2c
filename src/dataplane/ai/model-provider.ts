// The LLM provider a concrete GwModel is sent to (spec document 2, "Model resource types"): its
// `provider` value mapped onto a provider family, with the model's settings for that family
// (spec.beta, spec.epsilon, spec.zeta, spec.custom), at its address: `baseURL` when set, else the family's
// default (for the named OpenAI-compatible services, the service's documented base URL).
// docs/dataplane.md ("GwModels") and docs/providers.md ("GwModel providers") describe the mapping.
import type { GwModelSpec } from '../../api/kinds/gw-model.ts';
import type { LLMProvider } from '../../api/types/llm-provider.ts';
import { modelProviderLabel } from '../../api/vendors.ts';
import { betaModelRefusal } from './providers/beta.ts';
import { openAiCompatibleService, serviceFormats } from './providers/openai-compatible-services.ts';

export interface ModelProviderAddress {
  /** The provider, without a name; host, port and pathPrefix set from the effective base URL. */
  provider: LLMProvider;
  /** The base URL is https: the connection originates TLS whatever its port. */
  https: boolean;
}

/** The provider of a concrete GwModel, or why it cannot be served (a message naming the field). */
export function modelProvider(spec: GwModelSpec): ModelProviderAddress | string {
  const value = spec.provider ?? '';
  const service = openAiCompatibleService(value);
  const provider = service ? { custom: { formats: serviceFormats(service) } } : familyProvider(spec);
  if (typeof provider === 'string') return provider;
  if (provider === undefined) return `provider ${modelProviderLabel(value)} is not served by this data plane yet`;
  const baseURL = spec.baseURL ?? service?.baseURL;
  if (baseURL === undefined) return { provider, https: false };
  const url = new URL(baseURL);
  const https = url.protocol === 'https:';
  provider.host = url.hostname.replace(/^\[|\]$/g, '');
  provider.port = url.port ? Number(url.port) : https ? 443 : 80;
  if (url.pathname !== '/') {
    // Vertex AI's, Bedrock's and Azure's paths are the API's own (project, model, resource): no base a path could replace.
    if (provider.epsilon || provider.zeta || provider.beta)
      return `spec.baseURL: a path is not supported with provider ${modelProviderLabel(value)}, whose request paths have no base to replace; give scheme, host and port only`;
    provider.pathPrefix = url.pathname.replace(/\/$/, '');
  }
  return { provider, https };
}

/** The family of a provider value that is not a named service, with the model's settings for it. */
function familyProvider(spec: GwModelSpec): LLMProvider | string | undefined {
  switch (spec.provider) {
    case 'Alpha':
      return { alpha: {} };
    case 'Gamma':
      return { gamma: {} };
    case 'Delta':
      return { delta: {} };
    case 'Epsilon':
      if (spec.epsilon === undefined)
        return `spec.epsilon: is required with provider ${modelProviderLabel('Epsilon')}; set its projectId (and region, default global)`;
      return { epsilon: { ...spec.epsilon } };
    case 'Zeta':
      return { zeta: { ...spec.zeta } };
    case 'Beta': {
      // Admission requires beta with provider Beta (its resourceType).
      if (spec.beta === undefined) return `spec.beta: is required with provider ${modelProviderLabel('Beta')}`;
      const refusal = betaModelRefusal(spec.beta);
      return refusal ?? { beta: { ...spec.beta } };
    }
    case 'Custom':
      // Admission requires custom with provider Custom.
      return spec.custom === undefined ? 'spec.custom: is required with provider Custom' : { custom: spec.custom };
    default:
      return undefined;
  }
}
