// The cost of an LLM request from a compiled model catalog (src/dataplane/ai/model-prices.ts) and
// its metrics across worker processes (telemetry/metrics.ts). Through gw with the SDKs:
// test/dataplane/gateway/model-catalog.test.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ModelPrices, priceLlmRequest } from '../../../src/dataplane/ai/model-prices.ts';
import {
  DataPlaneMetrics,
  mergeMetricsSnapshots,
  renderMetricsSnapshot,
} from '../../../src/dataplane/telemetry/metrics.ts';
import { llmRecord } from './fixtures.ts';
import { parseExposition, value } from './prometheus-text.ts';

const PRICES = new ModelPrices({
  parameters: 'default/p',
  sources: ['ConfigMap default/prices catalog.json'],
  providers: {
    anthropic: {
      'claude-sonnet-4-5': {
        rates: { input: '3', output: '15', cacheRead: '0.3', cacheWrite: '3.75' },
        tiers: [
          { contextOver: 1000, rates: { input: '6' } },
          { contextOver: 200000, rates: { input: '12', output: '30' } },
        ],
      },
    },
    openai: { 'gpt-4o': { rates: { input: '0.000001', output: '1' } } },
  },
});

describe('model prices', () => {
  it('bills cache reads and writes at their rates, the rest of the input at the input rate', () => {
    const cost = PRICES.price('anthropic', ['claude-sonnet-4-5'], {
      inputTokens: 900,
      outputTokens: 100,
      totalTokens: 1000,
      cachedInputTokens: 300,
      cacheCreationInputTokens: 200,
    })!;
    // 400 × 3 + 300 × 0.3 + 200 × 3.75 + 100 × 15 = 1200 + 90 + 750 + 1500 µUSD
    assert.deepEqual(cost, {
      total: 0.00354,
      input: 0.0012,
      output: 0.0015,
      cacheRead: 0.00009,
      cacheWrite: 0.00075,
      reasoning: 0,
      model: 'claude-sonnet-4-5',
    });
  });

  it('chooses the highest tier the input tokens are over, over the base rates', () => {
    const usage = (inputTokens: number) => ({ inputTokens, outputTokens: 0, totalTokens: inputTokens });
    const at = (tokens: number) => PRICES.price('anthropic', ['claude-sonnet-4-5'], usage(tokens))!.input;
    assert.equal(at(1000), 0.003); // not over 1000: base 3
    assert.equal(at(1001), 0.006006); // 6
    assert.equal(at(200001), 2.400012); // 12
  });

  it('sums exactly and rounds once: no double summing error, the smallest rate still counts', () => {
    const cost = PRICES.price('openai', ['gpt-4o'], { inputTokens: 3, outputTokens: 0, totalTokens: 3 })!;
    assert.equal(cost.total, 3e-12);
    assert.notEqual(0.0012 + 0.0015 + 0.00009 + 0.00075, 0.00354, 'doubles alone would not give 0.00354');
  });

  it('prices none of an unknown provider or model; the first model listed that is priced wins', () => {
    const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
    assert.equal(PRICES.price('gcp.gemini', ['gpt-4o'], usage), undefined);
    assert.equal(PRICES.price('openai', ['gpt-4o-2024-08-06', ''], usage), undefined);
    assert.equal(PRICES.price('openai', ['gpt-4o-2024-08-06', 'gpt-4o'], usage)?.model, 'gpt-4o');
  });

  it('records the lookup on the request: priced, missing, or nothing without a catalog or usage', () => {
    const priced = llmRecord();
    priced.modelPrices = PRICES;
    priceLlmRequest(priced);
    assert.equal(priced.llm!.costLookup, 'priced');
    // 120 input (100 cached: no cache rate, so at the input rate) × 0.000001 + 40 × 1
    assert.equal(priced.llm!.cost!.total, 0.00004000012);
    const missing = llmRecord();
    missing.llm!.requestModel = 'gpt-5';
    missing.llm!.responseModel = '';
    missing.modelPrices = PRICES;
    priceLlmRequest(missing);
    assert.equal(missing.llm!.costLookup, 'missing');
    assert.equal(missing.llm!.cost, undefined);
    const none = llmRecord();
    priceLlmRequest(none);
    assert.equal(none.llm!.costLookup, undefined);
    const noUsage = llmRecord();
    noUsage.modelPrices = PRICES;
    noUsage.llm!.usage = undefined;
    priceLlmRequest(noUsage);
    assert.equal(noUsage.llm!.costLookup, undefined);
  });

  it("workers' cost counters add up in the primary's scrape", () => {
    const workers = [new DataPlaneMetrics(), new DataPlaneMetrics()];
    for (const metrics of workers) {
      const record = llmRecord();
      record.modelPrices = PRICES;
      priceLlmRequest(record);
      metrics.record(record);
      const unpriced = llmRecord();
      unpriced.modelPrices = PRICES;
      unpriced.llm!.genAiProvider = 'anthropic';
      priceLlmRequest(unpriced);
      metrics.record(unpriced);
    }
    const text = parseExposition(renderMetricsSnapshot(mergeMetricsSnapshots(workers.map((m) => m.snapshot()))));
    assert.equal(text.types.get('gen_ai_client_cost_usd_total'), 'counter');
    const openai = { gen_ai_provider_name: 'openai', gen_ai_request_model: 'gpt-4o' };
    assert.ok(Math.abs(value(text, 'gen_ai_client_cost_usd_total', openai) - 0.00008000024) < 1e-15);
    assert.equal(value(text, 'gw_ai_cost_catalog_lookups_total', { ...openai, status: 'priced' }), 2);
    assert.equal(
      value(text, 'gw_ai_cost_catalog_lookups_total', { gen_ai_provider_name: 'anthropic', status: 'missing' }),
      2,
    );
  });
});
