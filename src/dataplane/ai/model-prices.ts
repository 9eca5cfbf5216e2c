// The cost of an LLM request from the Gateway's model catalog (DataPlaneConfig.modelCatalog,
// GwParameters spec.modelCatalog; docs/decisions/0040-model-catalog.md): compiled once per
// configuration into integer rates, then applied to each request's token usage when the usage is
// known (the whole answer, or the end of a stream or Realtime session). The cost goes into the
// request's LlmRecord, where the access log (`gw.ai.usage.cost.total`), the metrics
// (`gen_ai_client_cost_usd_total`) and CEL (`llm.cost`) read it.
//
// The model is looked up under the provider's gen_ai.provider.name, by the model that answered
// (gen_ai.response.model: "gpt-4o-2024-08-06") and else the model asked for ("gpt-4o"), as
// agentgateway does. Arithmetic is exact: rates are integers of micro-dollars per million tokens
// (the catalog allows 6 fractional digits), so a cost is an integer of 10^-12 dollars.
import type { ModelCatalogConfig, ModelPricing, ModelRates } from '../../contract/dataplane-config.ts';
import type { Usage } from './formats/usage.ts';

/** Rates in micro-dollars per 1,000,000 tokens. */
interface Rates {
  input?: bigint;
  output?: bigint;
  cacheRead?: bigint;
  cacheWrite?: bigint;
  reasoning?: bigint;
}

interface CompiledPricing {
  rates: Rates;
  /** Ascending by contextOver. */
  tiers: { contextOver: number; rates: Rates }[];
}

/** What one request cost, USD, by kind of token. */
export interface LlmCost {
  total: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  reasoning: number;
  /** The catalog model that priced it (the response model, else the requested one). */
  model: string;
}

/** Whether a request with usage found its model in the catalog. */
export type CostLookup = 'priced' | 'missing';

function micros(text: string): bigint {
  const [whole, fraction = ''] = text.split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
}

function compileRates(rates: ModelRates): Rates {
  const out: Rates = {};
  for (const name of ['input', 'output', 'cacheRead', 'cacheWrite', 'reasoning'] as const) {
    const text = rates[name];
    if (text !== undefined) out[name] = micros(text);
  }
  return out;
}

function compilePricing(pricing: ModelPricing): CompiledPricing {
  return {
    rates: compileRates(pricing.rates),
    tiers: (pricing.tiers ?? []).map((tier) => ({ contextOver: tier.contextOver, rates: compileRates(tier.rates) })),
  };
}

/**
 * Picodollars (tokens × micro-dollars per million tokens) as dollars: one rounding, at the end,
 * so 0.00354 is 0.00354 and not the 0.0035399999999999997 summing doubles gives.
 */
function dollars(pico: bigint): number {
  return Number(pico) / 1e12;
}

/** The rates for a request of `contextTokens` input tokens: the base rates under the highest tier it is over. */
function effectiveRates(pricing: CompiledPricing, contextTokens: number): Rates {
  let tier: Rates | undefined;
  for (const candidate of pricing.tiers) if (contextTokens > candidate.contextOver) tier = candidate.rates;
  return tier ? { ...pricing.rates, ...tier } : pricing.rates;
}

/**
 * The cost of `usage` at `rates`. Usage counts cached and cache-written tokens within the input,
 * reasoning tokens within the output (formats/usage.ts); each is billed at its own rate when the
 * catalog gives one, else at the input or output rate. A kind without a rate costs nothing.
 */
function costOf(usage: Usage, pricing: CompiledPricing, model: string): LlmCost {
  const rates = effectiveRates(pricing, usage.inputTokens);
  let input = BigInt(Math.max(0, usage.inputTokens));
  let output = BigInt(Math.max(0, usage.outputTokens));
  const take = (from: bigint, tokens: number | undefined): [bigint, bigint] => {
    const taken = BigInt(Math.max(0, Math.min(tokens ?? 0, Number(from))));
    return [from - taken, taken];
  };
  let cacheRead = 0n;
  let cacheWrite = 0n;
  let reasoning = 0n;
  if (rates.cacheRead !== undefined) [input, cacheRead] = take(input, usage.cachedInputTokens);
  if (rates.cacheWrite !== undefined) [input, cacheWrite] = take(input, usage.cacheCreationInputTokens);
  // Reasoning is output: at the reasoning rate when there is one, else the output rate.
  const reasoningRate = rates.reasoning ?? rates.output;
  if (reasoningRate !== undefined) [output, reasoning] = take(output, usage.reasoningTokens);
  const lines = {
    input: input * (rates.input ?? 0n),
    output: output * (rates.output ?? 0n),
    cacheRead: cacheRead * (rates.cacheRead ?? 0n),
    cacheWrite: cacheWrite * (rates.cacheWrite ?? 0n),
    reasoning: reasoning * (reasoningRate ?? 0n),
  };
  const total = lines.input + lines.output + lines.cacheRead + lines.cacheWrite + lines.reasoning;
  return {
    total: dollars(total),
    input: dollars(lines.input),
    output: dollars(lines.output),
    cacheRead: dollars(lines.cacheRead),
    cacheWrite: dollars(lines.cacheWrite),
    reasoning: dollars(lines.reasoning),
    model,
  };
}

/** A Gateway's catalog, compiled with its configuration. */
export class ModelPrices {
  readonly #providers = new Map<string, Map<string, CompiledPricing>>();

  constructor(config: ModelCatalogConfig) {
    for (const [provider, models] of Object.entries(config.providers)) {
      const compiled = new Map<string, CompiledPricing>();
      for (const [model, pricing] of Object.entries(models)) compiled.set(model, compilePricing(pricing));
      this.#providers.set(provider, compiled);
    }
  }

  /**
   * The cost of `usage` on `provider` (gen_ai.provider.name), by the first of `models` the catalog
   * prices; undefined when it prices none.
   */
  price(provider: string, models: readonly string[], usage: Usage): LlmCost | undefined {
    const byModel = this.#providers.get(provider);
    if (!byModel) return undefined;
    for (const model of models) {
      const pricing = model === '' ? undefined : byModel.get(model);
      if (pricing) return costOf(usage, pricing, model);
    }
    return undefined;
  }
}

/** What pricing reads and writes of a request's record (telemetry/request-record.ts). */
interface PricedRequest {
  readonly modelPrices: ModelPrices | undefined;
  readonly llm:
    | {
        readonly genAiProvider: string;
        readonly responseModel: string;
        readonly requestModel: string;
        readonly usage: Usage | undefined;
        cost: LlmCost | undefined;
        costLookup: CostLookup | undefined;
      }
    | undefined;
}

/**
 * Prices the LLM request of `record` once its usage is final (the backend calls this where it sets
 * the usage): sets `llm.cost` and `llm.costLookup`. Nothing when the Gateway has no catalog or the
 * provider reported no usage.
 */
export function priceLlmRequest(record: PricedRequest): void {
  const llm = record.llm;
  const prices = record.modelPrices;
  if (!llm || !prices || !llm.usage) return;
  // The model that answered first ("gpt-4o-2024-08-06"), then the one asked for ("gpt-4o").
  const cost = prices.price(llm.genAiProvider, [llm.responseModel, llm.requestModel], llm.usage);
  llm.cost = cost;
  llm.costLookup = cost ? 'priced' : 'missing';
}
