// The model cost catalog format (docs/decisions/0040-model-catalog.md): the JSON a ConfigMap key
// holds, read into the contract's prices. The format is agentgateway's, so one catalog serves both:
//
//   {"providers": {"openai": {"models": {"gpt-4o": {
//     "rates": {"input": "2.5", "output": "10", "cache_read": "1.25"},
//     "tiers": [{"context_over": 200000, "rates": {"input": "5"}}]}}}}}
//
// Rates are USD per 1,000,000 tokens: a decimal string (or a JSON number) of at most 6 fractional
// digits, never negative. Providers are named as telemetry's gen_ai.provider.name names them.
// Everything gw cannot price is refused with the JSON path of the value and why, never skipped:
// audio rates (gw does not count audio tokens apart), tags (gw routes by GwModel, not by tags),
// unknown fields and unknown providers.

import { MODEL_PROVIDERS, PROVIDER_FAMILIES } from '../../api/vendors.ts';
import type { ModelPricing, ModelRates } from '../../contract/dataplane-config.ts';
import { didYouMean } from '../../util/did-you-mean.ts';

/** Prices by provider, then model. */
export type CatalogPrices = Record<string, Record<string, ModelPricing>>;

export type CatalogParse = { ok: true; providers: CatalogPrices; models: number } | { ok: false; problems: string[] };

/** The provider names a catalog may use: every vendor's gen_ai.provider.name. */
export const CATALOG_PROVIDERS: ReadonlySet<string> = new Set(
  [...Object.values(PROVIDER_FAMILIES), ...Object.values(MODEL_PROVIDERS)].map((vendor) => vendor.genAiProviderName),
);

/** Catalog rate names (snake_case, as agentgateway writes them) → the contract's. */
const RATE_NAMES: Readonly<Record<string, keyof ModelRates>> = {
  input: 'input',
  output: 'output',
  cache_read: 'cacheRead',
  cache_write: 'cacheWrite',
  reasoning: 'reasoning',
};

/** Fields of agentgateway's format gw refuses, and why. */
const REFUSED_RATES: Readonly<Record<string, string>> = {
  input_audio:
    'gw does not count audio tokens apart from text tokens, so it cannot price them: remove it (audio tokens cost the input rate)',
  output_audio:
    'gw does not count audio tokens apart from text tokens, so it cannot price them: remove it (audio tokens cost the output rate)',
};
const REFUSED_MODEL_FIELDS: Readonly<Record<string, string>> = {
  tags: 'gw does not route by catalog tags (GwModels choose models): remove it',
};

/** Most problems reported for one catalog; the rest are counted. */
const MAX_PROBLEMS = 5;
/** Most fractional digits of a rate (micro-dollars per million tokens). */
const MAX_FRACTION_DIGITS = 6;
const DECIMAL = /^(\d+)(?:\.(\d+))?$/;

/** A JSON path step: `.name` for identifiers, `["gpt-4.1"]` otherwise. */
function step(path: string, key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeName(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

class Problems {
  readonly list: string[] = [];
  add(path: string, message: string): void {
    this.list.push(`${path}: ${message}`);
  }
  /** Fields of `object` other than `allowed` (and those `refused` names with a reason). */
  unknownFields(
    object: Record<string, unknown>,
    path: string,
    allowed: readonly string[],
    refused: Readonly<Record<string, string>> = {},
  ): void {
    for (const key of Object.keys(object)) {
      if (allowed.includes(key)) continue;
      const why = refused[key];
      const hint = didYouMean(key, allowed);
      this.add(step(path, key), why ?? `unknown field; allowed: ${allowed.join(', ')}${hint ? ` (${hint})` : ''}`);
    }
  }
}

/** A rate as canonical decimal text ("2.50" → "2.5"), or a problem. */
function rateText(value: unknown, path: string, problems: Problems): string | undefined {
  let text: string;
  if (typeof value === 'string') text = value.trim();
  else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else {
    problems.add(path, `a rate is a decimal string such as "2.5" (USD per 1,000,000 tokens), not ${typeName(value)}`);
    return undefined;
  }
  if (text.startsWith('-')) {
    problems.add(path, `negative price ${text}: a rate is at least 0`);
    return undefined;
  }
  const match = DECIMAL.exec(text);
  if (!match) {
    problems.add(
      path,
      `${JSON.stringify(text)} is not a decimal number (write it as "0.000123", not in exponent form)`,
    );
    return undefined;
  }
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (fraction.length > MAX_FRACTION_DIGITS) {
    problems.add(
      path,
      `${text} has more than ${MAX_FRACTION_DIGITS} fractional digits (rates are per 1,000,000 tokens)`,
    );
    return undefined;
  }
  const whole = match[1]!.replace(/^0+(?=\d)/, '');
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

function rates(value: unknown, path: string, problems: Problems): ModelRates | undefined {
  if (!isObject(value)) {
    problems.add(path, `rates are an object of prices (input, output, cache_read...), not ${typeName(value)}`);
    return undefined;
  }
  problems.unknownFields(value, path, Object.keys(RATE_NAMES), REFUSED_RATES);
  const out: ModelRates = {};
  for (const [name, field] of Object.entries(RATE_NAMES)) {
    if (value[name] === undefined) continue;
    const text = rateText(value[name], step(path, name), problems);
    if (text !== undefined) out[field] = text;
  }
  if (Object.keys(value).length === 0)
    problems.add(path, 'no rate: give at least one of input, output, cache_read, cache_write, reasoning');
  return out;
}

function tiers(value: unknown, path: string, problems: Problems): ModelPricing['tiers'] {
  if (!Array.isArray(value)) {
    problems.add(path, `tiers are an array of {context_over, rates}, not ${typeName(value)}`);
    return undefined;
  }
  const out: NonNullable<ModelPricing['tiers']> = [];
  let previous = -1;
  value.forEach((tier, index) => {
    const at = `${path}[${index}]`;
    if (!isObject(tier)) {
      problems.add(at, `a tier is an object {context_over, rates}, not ${typeName(tier)}`);
      return;
    }
    problems.unknownFields(tier, at, ['context_over', 'rates']);
    const over = tier.context_over;
    if (typeof over !== 'number' || !Number.isSafeInteger(over) || over < 0) {
      problems.add(
        `${at}.context_over`,
        'required: the input token count above which these rates apply (an integer, 0 or more)',
      );
      return;
    }
    if (over <= previous) {
      problems.add(`${at}.context_over`, `${over} is not greater than the tier before (${previous}): tiers go up`);
      return;
    }
    previous = over;
    const tierRates = rates(tier.rates, `${at}.rates`, problems);
    if (tierRates) out.push({ contextOver: over, rates: tierRates });
  });
  return out;
}

function model(value: unknown, path: string, problems: Problems): ModelPricing | undefined {
  if (!isObject(value)) {
    problems.add(path, `a model is an object {rates, tiers}, not ${typeName(value)}`);
    return undefined;
  }
  problems.unknownFields(value, path, ['rates', 'tiers'], REFUSED_MODEL_FIELDS);
  if (value.rates === undefined) {
    problems.add(`${path}.rates`, 'required: the model prices (USD per 1,000,000 tokens)');
    return undefined;
  }
  const base = rates(value.rates, `${path}.rates`, problems);
  if (!base) return undefined;
  const pricing: ModelPricing = { rates: base };
  if (value.tiers !== undefined) {
    const parsed = tiers(value.tiers, `${path}.tiers`, problems);
    if (parsed && parsed.length > 0) pricing.tiers = parsed;
  }
  return pricing;
}

/** What to write instead of an unknown provider name ("azure" → "azure.ai.openai or azure.ai.inference"). */
function providerHint(provider: string): string {
  const rule = 'gw names providers as gen_ai.provider.name does (docs/telemetry.md)';
  const extended = [...CATALOG_PROVIDERS].filter((name) => name.startsWith(`${provider}.`));
  if (extended.length > 0) return `${rule}: did you mean ${extended.join(' or ')}?`;
  const hint = didYouMean(provider, CATALOG_PROVIDERS);
  return `${rule}: ${hint || `one of ${[...CATALOG_PROVIDERS].join(', ')}`}`;
}

/** Reads one catalog's JSON text; every problem names its JSON path ($ is the document). */
export function parseModelCatalog(text: string): CatalogParse {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    return { ok: false, problems: [`not JSON: ${(error as Error).message}`] };
  }
  const problems = new Problems();
  const providers: CatalogPrices = {};
  let models = 0;
  if (!isObject(document)) {
    problems.add('$', `a catalog is an object {"providers": {...}}, not ${typeName(document)}`);
  } else {
    problems.unknownFields(document, '$', ['providers']);
    const byProvider = document.providers;
    if (!isObject(byProvider)) {
      problems.add(
        '$.providers',
        `required: an object of providers by name (openai, anthropic...), not ${typeName(byProvider)}`,
      );
    } else {
      for (const [provider, entry] of Object.entries(byProvider)) {
        const at = step('$.providers', provider);
        if (!CATALOG_PROVIDERS.has(provider)) {
          problems.add(at, `unknown provider; ${providerHint(provider)}`);
          continue;
        }
        if (!isObject(entry)) {
          problems.add(at, `a provider is an object {"models": {...}}, not ${typeName(entry)}`);
          continue;
        }
        problems.unknownFields(entry, at, ['models']);
        if (!isObject(entry.models)) {
          problems.add(`${at}.models`, `required: an object of models by name, not ${typeName(entry.models)}`);
          continue;
        }
        const priced: Record<string, ModelPricing> = {};
        for (const [name, value] of Object.entries(entry.models)) {
          const pricing = model(value, step(`${at}.models`, name), problems);
          if (pricing) {
            priced[name] = pricing;
            models++;
          }
        }
        providers[provider] = priced;
      }
    }
  }
  if (problems.list.length === 0) return { ok: true, providers, models };
  const shown = problems.list.slice(0, MAX_PROBLEMS);
  const more = problems.list.length - shown.length;
  return { ok: false, problems: more > 0 ? [...shown, `and ${more} more`] : shown };
}

/** Rates of `over` replace those of `base`, rate by rate. */
function overlayRates(base: ModelRates, over: ModelRates): ModelRates {
  return { ...base, ...over };
}

/**
 * Catalogs merged in order, a later one winning per model: its rates replace the earlier ones
 * rate by rate (a catalog that only lowers `output` keeps the earlier `input`), its tiers replace
 * the earlier tiers when it has any. agentgateway merges its sources the same way.
 */
export function mergeCatalogs(catalogs: readonly CatalogPrices[]): CatalogPrices {
  const merged: CatalogPrices = {};
  for (const catalog of catalogs) {
    for (const [provider, models] of Object.entries(catalog)) {
      merged[provider] ??= {};
      const target = merged[provider];
      for (const [name, pricing] of Object.entries(models)) {
        const earlier = target[name];
        if (!earlier) {
          target[name] = pricing;
          continue;
        }
        const combined: ModelPricing = { rates: overlayRates(earlier.rates, pricing.rates) };
        const tiers = pricing.tiers ?? earlier.tiers;
        if (tiers) combined.tiers = tiers;
        target[name] = combined;
      }
    }
  }
  return merged;
}
