// The model cost catalog format (src/controller/model-catalog/parse.ts): what a catalog ConfigMap
// may hold, each refusal with the JSON path of the value and why, and how sources merge. The
// controller's use of it (conditions, configurations) is the golden case model-catalog-sources.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mergeCatalogs, parseModelCatalog } from '../../src/controller/model-catalog/parse.ts';

function problems(json: unknown): string[] {
  const result = parseModelCatalog(typeof json === 'string' ? json : JSON.stringify(json));
  assert.equal(result.ok, false, 'the catalog is refused');
  return result.ok ? [] : result.problems;
}

const catalog = (models: Record<string, unknown>, provider = 'openai') => ({ providers: { [provider]: { models } } });

describe('model catalog format', () => {
  it("reads agentgateway's format: rates as decimal strings or numbers, canonical text, tiers", () => {
    const result = parseModelCatalog(
      JSON.stringify({
        providers: {
          openai: {
            models: { 'gpt-4.1': { rates: { input: '2.000', output: 8, cache_read: '0.50', reasoning: '08' } } },
          },
          anthropic: {
            models: {
              'claude-sonnet-4-5': {
                rates: { input: '3', output: '15', cache_write: '3.75' },
                tiers: [{ context_over: 200000, rates: { input: '6' } }],
              },
            },
          },
        },
      }),
    );
    assert.deepEqual(result, {
      ok: true,
      models: 2,
      providers: {
        openai: { 'gpt-4.1': { rates: { input: '2', output: '8', cacheRead: '0.5', reasoning: '8' } } },
        anthropic: {
          'claude-sonnet-4-5': {
            rates: { input: '3', output: '15', cacheWrite: '3.75' },
            tiers: [{ contextOver: 200000, rates: { input: '6' } }],
          },
        },
      },
    });
  });

  it('refuses invalid JSON, naming why', () => {
    assert.match(problems('{"providers": ')[0]!, /^not JSON: /);
  });

  it('refuses negative prices, too many digits, exponents and non-numbers at their JSON path', () => {
    assert.deepEqual(
      problems(catalog({ 'gpt-4o': { rates: { input: '-1', output: '0.0000001', reasoning: 1e-7 } } })),
      [
        '$.providers.openai.models["gpt-4o"].rates.input: negative price -1: a rate is at least 0',
        '$.providers.openai.models["gpt-4o"].rates.output: 0.0000001 has more than 6 fractional digits (rates are per 1,000,000 tokens)',
        '$.providers.openai.models["gpt-4o"].rates.reasoning: "1e-7" is not a decimal number (write it as "0.000123", not in exponent form)',
      ],
    );
    assert.deepEqual(problems(catalog({ m: { rates: { input: true } } })), [
      '$.providers.openai.models.m.rates.input: a rate is a decimal string such as "2.5" (USD per 1,000,000 tokens), not a boolean',
    ]);
  });

  it('refuses what gw cannot price rather than skipping it: audio rates, tags, unknown fields and providers', () => {
    const found = problems({
      providers: {
        openai: {
          models: { a: { rates: { input: '1', input_audio: '40' }, tags: ['x'] }, b: { rates: { inptu: '1' } } },
        },
        azure: { models: {} },
        antropic: { models: {} },
      },
      version: 1,
    });
    assert.deepEqual(found, [
      '$.version: unknown field; allowed: providers',
      '$.providers.openai.models.a.tags: gw does not route by catalog tags (GwModels choose models): remove it',
      '$.providers.openai.models.a.rates.input_audio: gw does not count audio tokens apart from text tokens, so it cannot price them: remove it (audio tokens cost the input rate)',
      '$.providers.openai.models.b.rates.inptu: unknown field; allowed: input, output, cache_read, cache_write, reasoning (did you mean input?)',
      '$.providers.azure: unknown provider; gw names providers as gen_ai.provider.name does (docs/telemetry.md): did you mean azure.ai.openai or azure.ai.inference?',
      'and 1 more',
    ]);
  });

  it('refuses a model without rates, empty rates and tiers that do not go up', () => {
    assert.deepEqual(
      problems(
        catalog({
          a: {},
          b: { rates: {} },
          c: {
            rates: { input: '1' },
            tiers: [
              { context_over: 1000, rates: { input: '2' } },
              { context_over: 1000, rates: { input: '3' } },
            ],
          },
        }),
      ),
      [
        '$.providers.openai.models.a.rates: required: the model prices (USD per 1,000,000 tokens)',
        '$.providers.openai.models.b.rates: no rate: give at least one of input, output, cache_read, cache_write, reasoning',
        '$.providers.openai.models.c.tiers[1].context_over: 1000 is not greater than the tier before (1000): tiers go up',
      ],
    );
    assert.deepEqual(problems([]), ['$: a catalog is an object {"providers": {...}}, not an array']);
  });

  it('merges sources in order: a later one wins rate by rate, its tiers replace earlier tiers', () => {
    const first = {
      openai: {
        a: { rates: { input: '1', output: '2' }, tiers: [{ contextOver: 10, rates: { input: '5' } }] },
        b: { rates: { input: '9' } },
      },
    };
    const second = { openai: { a: { rates: { output: '3' } } }, anthropic: { c: { rates: { input: '4' } } } };
    assert.deepEqual(mergeCatalogs([first, second]), {
      openai: {
        a: { rates: { input: '1', output: '3' }, tiers: [{ contextOver: 10, rates: { input: '5' } }] },
        b: { rates: { input: '9' } },
      },
      anthropic: { c: { rates: { input: '4' } } },
    });
  });
});
