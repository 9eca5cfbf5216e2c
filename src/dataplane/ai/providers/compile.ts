// compileProvider: an LLMProvider of the API, checked and turned once into a CompiledProvider
// whose plan() the proxy calls per request. A configuration that cannot be served is a
// ProviderConfigError (the proxy answers its traffic with 500), never a throw.
import type { LLMProvider } from '../../../api/types/llm-provider.ts';
import { familyLabel } from '../../../api/vendors.ts';
import { compileAlpha } from './alpha.ts';
import { compileBeta } from './beta.ts';
import { compileBetaAlpha } from './betaalpha.ts';
import { compileCustom } from './custom.ts';
import { compileDelta } from './delta.ts';
import { compileEpsilon } from './epsilon.ts';
import { ProviderConfigError } from './errors.ts';
import { familyAddress } from './family-address.ts';
import { compileGamma } from './gamma.ts';
import type { CompiledProvider, PoolResolver, ServiceResolver } from './types.ts';
import { compileZeta } from './zeta.ts';

const FAMILIES = ['alpha', 'betaalpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'custom'] as const;

export interface CompileProviderOptions {
  /** The NamedLLMProvider's name (in errors and the plan's messages). */
  name?: string;
  /** The GwBackend's namespace: where a custom provider's backendRef Service lives. */
  namespace?: string;
  /** Resolves a custom provider's backendRef Service; without it such a provider is an error. */
  resolveService?: ServiceResolver;
  /** Resolves a custom provider's backendRef InferencePool; without it such a provider is an error. */
  resolvePool?: PoolResolver;
}

export function compileProvider(
  provider: LLMProvider,
  options: CompileProviderOptions = {},
): CompiledProvider | ProviderConfigError {
  const result = compileUnnamed(provider, options);
  if (result instanceof ProviderConfigError && options.name !== undefined) {
    return new ProviderConfigError(result.field, result.reason, options.name);
  }
  return result;
}

function compileUnnamed(
  provider: LLMProvider,
  options: CompileProviderOptions,
): CompiledProvider | ProviderConfigError {
  const set = FAMILIES.filter((family) => provider[family] !== undefined);
  if (set.length !== 1) {
    return new ProviderConfigError(
      '',
      `exactly one provider family must be set (${FAMILIES.map(familyLabel).join(', ')})`,
    );
  }
  const address = familyAddress(provider);
  if (address instanceof ProviderConfigError) return address;
  if (provider.alpha) return compileAlpha(provider.alpha, address, options.name);
  if (provider.betaalpha) return compileBetaAlpha(provider.betaalpha, address, options.name);
  if (provider.beta) return compileBeta(provider.beta, address, options.name);
  if (provider.gamma) return compileGamma(provider.gamma, address, options.name);
  if (provider.zeta) return compileZeta(provider.zeta, address, options.name);
  if (provider.delta) return compileDelta(provider.delta, address, options.name);
  if (provider.epsilon) return compileEpsilon(provider.epsilon, address, options.name);
  return compileCustom(provider.custom!, address, options);
}
