// The model cost catalog through gw (GwParameters spec.modelCatalog, docs/telemetry.md "Cost"):
// the official openai and Anthropic SDKs call gw (standalone, as `gw run -f`) in front of the
// scripted provider, whose every answer reports 11 input tokens (4 cached) and 7 output tokens
// (3 reasoning) and names the model asked for, dated. The Gateway's own GwParameters name a
// catalog ConfigMap; each request's cost is in the access log, the metrics and CEL, whole and
// streamed; a changed ConfigMap reprices the next request; a broken one leaves requests flowing
// unpriced and says why on the GwParameters and in the log; a GatewayClass's catalog is ignored,
// visibly.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { KubeObject } from '../../../src/api/validate/admission.ts';
import {
  aiBackendYaml,
  catalogConfigMapYaml,
  freePort,
  lastAccessLogLine,
  llmRouteYaml,
  pricedGatewayYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { type ScriptedProvider, startScriptedProvider } from '../../helpers/scripted-provider.ts';
import { until } from '../../helpers/until.ts';
import { startAnthropicMock } from '../../support/providers/anthropic-mock.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';
import { frontendPolicyYaml } from '../frontend/helpers.ts';

const PRICES = {
  providers: {
    openai: {
      models: {
        // The model that answered is looked up first, the model asked for after it.
        'gpt-4o-2026-01-01': { rates: { input: '5', output: '20', cache_read: '2.5' } },
        'gpt-4o': { rates: { input: '2.5', output: '10', cache_read: '1.25' } },
        'gpt-4.1': { rates: { input: '2', output: '8', reasoning: '4' } },
      },
    },
    anthropic: {
      models: { 'claude-sonnet-4-5': { rates: { input: '3', output: '15', cache_read: '0.3', cache_write: '3.75' } } },
    },
  },
};

/** GatewayClass gw, naming GwParameters class-wide whose catalog is ConfigMap class-prices; ends with ---. */
const CLASS_WITH_CATALOG = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gw}
spec:
  controllerName: gw.dev/gateway-controller
  parametersRef: {group: gw.dev, kind: GwParameters, name: class-wide, namespace: default}
---
apiVersion: gw.dev/v1alpha1
kind: GwParameters
metadata: {name: class-wide}
spec:
  modelCatalog: {sources: [{configMap: {name: class-prices}}]}
---
`;

describe('model cost catalog through gw', () => {
  let provider: ScriptedProvider;
  let counter: MockServer;
  let gw: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;

  before(async () => {
    provider = await startScriptedProvider();
    counter = await startAnthropicMock({ apiKey: 'sk-ant-counter' });
    const port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': [
        // Gateway ai's own GwParameters priced read ConfigMap prices (prices.yaml, rewritten below).
        pricedGatewayYaml(port, { gatewayClass: CLASS_WITH_CATALOG }),
        frontendPolicyYaml(
          `{accessLog: {attributes: {add: [{name: cost_output, expression: 'llm.cost.output'}, {name: priced, expression: 'has(llm.cost)'}, {name: over_budget, expression: 'has(llm.cost) && llm.cost.total > 0.0001'}]}}}`,
        ),
        '---\n',
        aiBackendYaml('openai', provider.port, 'alpha: {}', 'sk-upstream', undefined),
        aiBackendYaml('anthropic', provider.port, 'gamma: {}', 'sk-ant-upstream', undefined),
        aiBackendYaml('counter', counter.port, 'gamma: {}', 'sk-ant-counter', undefined),
        llmRouteYaml(['openai', 'anthropic', 'counter']),
      ].join(''),
      // The GatewayClass's catalog would price gpt-4o at 1000 per million tokens were it used.
      'class-prices.yaml': catalogConfigMapYaml('class-prices', {
        providers: { openai: { models: { 'gpt-4o': { rates: { input: '1000' } } } } },
      }),
      'prices.yaml': catalogConfigMapYaml('prices', PRICES),
    });
    openai = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/openai/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/anthropic`, maxRetries: 0 });
  });

  after(async () => {
    await gw?.stop();
    await provider?.close();
    await counter?.close();
  });

  const chat = (model: string) =>
    openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] });
  const openaiLine = () => lastAccessLogLine(gw, '/openai/v1/chat/completions');

  function parameters(name: string): KubeObject {
    return gw.gateway.files.store.list('gw.dev/GwParameters').items.find((object) => object.metadata.name === name)!;
  }
  const catalogCondition = (name: string) =>
    (
      parameters(name).status as { conditions?: { type: string; status: string; reason: string; message: string }[] }
    )?.conditions?.find((condition) => condition.type === 'ModelCatalogResolved');

  it('prices an openai SDK request by the model that answered: cached input and reasoning at their rates', async () => {
    const completion = await chat('gpt-4o');
    assert.equal(completion.model, 'gpt-4o-2026-01-01');
    const line = await openaiLine();
    // gpt-4o-2026-01-01: 7 input × 5 + 4 cached × 2.5 + 4 output × 20 + 3 reasoning × 20 (no reasoning rate), per million.
    assert.equal(line['gw.ai.usage.cost.total'], 0.000185);
    assert.equal(line.cost_output, 0.00008);
    assert.equal(line.priced, true);
    assert.equal(line.over_budget, true);
  });

  it('falls back to the model asked for; a rate the catalog lacks is billed at the input or output rate', async () => {
    await chat('gpt-4.1');
    const line = await openaiLine();
    assert.equal(line['gen_ai.response.model'], 'gpt-4.1-2026-01-01');
    // gpt-4.1: 11 input (cached at the input rate: no cache_read) × 2 + 4 output × 8 + 3 reasoning × 4.
    assert.equal(line['gw.ai.usage.cost.total'], 0.000066);
    assert.equal(line.over_budget, false);
  });

  it('a model the catalog does not price has no cost, and is counted as missing', async () => {
    await chat('gpt-unpriced');
    const line = await openaiLine();
    assert.equal(line['gen_ai.usage.input_tokens'], 11);
    assert.equal(line['gw.ai.usage.cost.total'], undefined);
    assert.equal(line.priced, false);
    const metrics = gw.telemetry.metrics.render();
    assert.match(
      metrics,
      /gw_ai_cost_catalog_lookups_total\{[^}]*gen_ai_request_model="gpt-unpriced"[^}]*,status="missing"\} 1\n/,
    );
  });

  it('prices a streamed answer once the stream ends (usage in the last chunk)', async () => {
    const stream = await openai.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.ok(text.length > 0);
    const line = await openaiLine();
    assert.equal(line['gw.ai.streaming'], true);
    assert.equal(line['gw.ai.usage.cost.total'], 0.000185);
  });

  it('prices an Anthropic SDK request, whole and streamed (cache reads at their rate)', async () => {
    const message = await anthropic.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(message.usage.cache_read_input_tokens, 4);
    // 7 input × 3 + 4 cache reads × 0.3 + 7 output × 15 (Anthropic reports no reasoning count), per million.
    let line = await lastAccessLogLine(gw, '/anthropic/v1/messages');
    assert.equal(line['gen_ai.provider.name'], 'anthropic');
    assert.equal(line['gw.ai.usage.cost.total'], 0.0001272);
    const stream = anthropic.messages.stream({
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
    });
    await stream.finalMessage();
    await until(() => gw.accessLog.filter((entry) => entry.includes('/anthropic/v1/messages')).length === 2, 1000);
    line = await lastAccessLogLine(gw, '/anthropic/v1/messages');
    assert.equal(line['gw.ai.streaming'], true);
    assert.equal(line['gw.ai.usage.cost.total'], 0.0001272);
  });

  it('a token count costs nothing: its usage is counted, not priced', async () => {
    const counting = new Anthropic({
      apiKey: 'client',
      baseURL: anthropic.baseURL.replace(/anthropic$/, 'counter'),
      maxRetries: 0,
    });
    const counted = await counting.messages.countTokens({
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'how many tokens is this' }],
    });
    assert.ok(counted.input_tokens > 0);
    const line = await lastAccessLogLine(gw, '/counter/v1/messages/count_tokens');
    assert.equal(line['gen_ai.usage.input_tokens'], counted.input_tokens);
    assert.equal(line['gw.ai.usage.cost.total'], undefined);
  });

  it('sums the costs in gen_ai_client_cost_usd_total per GenAI series', () => {
    const metrics = gw.telemetry.metrics.render();
    const series = (model: string) => {
      const match = new RegExp(
        `gen_ai_client_cost_usd_total\\{[^}]*gen_ai_request_model="${model}"[^}]*\\} (\\S+)`,
      ).exec(metrics);
      return match ? Number(match[1]) : undefined;
    };
    assert.match(metrics, /# TYPE gen_ai_client_cost_usd_total counter/);
    // Two gpt-4o requests (whole and streamed) answered by gpt-4o-2026-01-01.
    assert.ok(Math.abs(series('gpt-4o')! - 0.00037) < 1e-12, `gpt-4o: ${series('gpt-4o')}`);
    assert.equal(series('gpt-4.1'), 0.000066);
    assert.equal(series('gpt-unpriced'), undefined);
    assert.match(
      metrics,
      /gw_ai_cost_catalog_lookups_total\{[^}]*gen_ai_request_model="gpt-4o"[^}]*,status="priced"\} 2\n/,
    );
  });

  it("ignores the GatewayClass's catalog, visibly: its GwParameters says so and names the field", () => {
    const ignored = catalogCondition('class-wide');
    assert.equal(ignored?.status, 'False');
    assert.equal(ignored?.reason, 'Ignored');
    assert.match(ignored!.message, /spec\.modelCatalog is ignored as the parameters of GatewayClass gw/);
    const resolved = catalogCondition('priced');
    assert.equal(resolved?.status, 'True');
    assert.match(resolved!.message, /^4 models of 2 providers priced from ConfigMap default\/prices catalog\.json$/);
  });

  it('a changed catalog ConfigMap prices the next request', async () => {
    const cheaper = structuredClone(PRICES);
    cheaper.providers.openai.models['gpt-4.1'].rates = { input: '1', output: '4', reasoning: '4' };
    gw.write('prices.yaml', catalogConfigMapYaml('prices', cheaper));
    let cost: unknown;
    const repriced = await until(async () => {
      await chat('gpt-4.1');
      cost = (await openaiLine())['gw.ai.usage.cost.total'];
      return cost === 0.000039; // 11 × 1 + 4 × 4 + 3 × 4
    }, 5000);
    assert.ok(repriced, `still ${cost}`);
  });

  it('a broken catalog leaves requests flowing unpriced; the GwParameters and the log name the ConfigMap, key and JSON path', async () => {
    gw.write(
      'prices.yaml',
      catalogConfigMapYaml('prices', { providers: { openai: { models: { 'gpt-4o': { rates: { input: '-1' } } } } } }),
    );
    const flagged = await until(() => catalogCondition('priced')?.status === 'False', 5000);
    assert.ok(flagged, JSON.stringify(catalogCondition('priced')));
    const condition = catalogCondition('priced')!;
    assert.equal(condition.reason, 'InvalidModelCatalog');
    assert.match(
      condition.message,
      /spec\.modelCatalog\.sources\[0\]: ConfigMap default\/prices key catalog\.json: \$\.providers\.openai\.models\["gpt-4o"\]\.rates\.input: negative price -1/,
    );
    assert.ok(
      gw.logs.some((line) => /model catalog of GwParameters default\/priced: .*negative price -1/.test(line)),
      gw.logs.join('\n'),
    );
    const completion = await chat('gpt-4o');
    assert.equal(completion.choices[0]?.message.content, 'Hi there');
    assert.equal((await openaiLine())['gw.ai.usage.cost.total'], undefined);
  });

  it('a missing catalog ConfigMap is named too, and its creation prices requests again', async () => {
    gw.write('prices.yaml', '');
    const missing = await until(() => catalogCondition('priced')?.reason === 'RefNotFound', 5000);
    assert.ok(missing, JSON.stringify(catalogCondition('priced')));
    assert.match(
      catalogCondition('priced')!.message,
      /spec\.modelCatalog\.sources\[0\]: ConfigMap default\/prices not found/,
    );
    gw.write('prices.yaml', catalogConfigMapYaml('prices', PRICES));
    const back = await until(async () => {
      await chat('gpt-4o');
      return (await openaiLine())['gw.ai.usage.cost.total'] === 0.000185;
    }, 5000);
    assert.ok(back);
    assert.ok(await until(() => catalogCondition('priced')?.status === 'True', 5000));
  });
});
