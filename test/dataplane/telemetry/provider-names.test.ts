// The names telemetry gives providers, through gw with real requests: OpenTelemetry's well-known
// `gen_ai.provider.name` values (openai, anthropic), never the spec's family identifiers (alpha,
// gamma), in the access log and the GenAI metrics; GwModel traffic's backend is the GwModel that
// answered (for a virtual model, its target), never "unknown".
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { MODEL_PROVIDERS, PROVIDER_FAMILIES } from '../../../src/api/vendors.ts';
import {
  aiBackendYaml,
  freePort,
  GW_MODELS_RULE,
  gatewayYaml,
  lastAccessLogLine,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { startAnthropicMock } from '../../support/providers/anthropic-mock.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';

const model = (name: string, body: string) => `apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: ${name}}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: llm, sectionName: models}]
${body}
---
`;

describe('gen_ai.provider.name and backend in telemetry', () => {
  let openaiUpstream: Awaited<ReturnType<typeof startOpenAiMock>>;
  let anthropicUpstream: Awaited<ReturnType<typeof startAnthropicMock>>;
  let gw: TestGateway;
  let port: number;

  before(async () => {
    openaiUpstream = await startOpenAiMock({ apiKey: 'sk-openai' });
    anthropicUpstream = await startAnthropicMock({ apiKey: 'sk-anthropic' });
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}${aiBackendYaml(
        'openai',
        openaiUpstream.port,
        'alpha: {}',
        'sk-openai',
        '{/v1/chat/completions: Completions}',
      )}${aiBackendYaml('anthropic', anthropicUpstream.port, 'gamma: {}', 'sk-anthropic', '{/v1/messages: Messages}')}${llmRouteYaml(['openai', 'anthropic'], GW_MODELS_RULE)}
---
${model('mini', `  provider: Alpha\n  baseURL: http://127.0.0.1:${openaiUpstream.port}/v1\n  policies: {auth: {key: sk-openai}}`)}${model('target', `  visibility: Internal\n  provider: Alpha\n  baseURL: http://127.0.0.1:${openaiUpstream.port}/v1\n  policies: {auth: {key: sk-openai}}`)}${model('smart', '  virtualModel:\n    failover:\n      targets:\n        - {modelRef: {name: target}, model: gpt-4o, priority: 0}')}`,
    });
  });

  after(async () => {
    await gw?.stop();
    await Promise.all([openaiUpstream?.close(), anthropicUpstream?.close()]);
  });

  it('loads', () => assert.deepEqual(gw.logs, []));

  const openai = (path: string) =>
    new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}${path}`, maxRetries: 0 });

  it('an OpenAI (alpha) backend is openai', async () => {
    await openai('/openai/v1').chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    const line = await lastAccessLogLine(gw, '/openai/v1/chat/completions');
    assert.equal(line['gen_ai.provider.name'], 'openai');
    assert.equal(line.backend, 'GwBackend default/openai');
    assert.match(gw.telemetry.metrics.render(), /gen_ai_client_token_usage_count\{[^}]*gen_ai_provider_name="openai"/);
  });

  it('an Anthropic (gamma) backend is anthropic', async () => {
    const client = new Anthropic({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/anthropic`, maxRetries: 0 });
    await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const line = await lastAccessLogLine(gw, '/anthropic/v1/messages');
    assert.equal(line['gen_ai.provider.name'], 'anthropic');
    assert.match(
      gw.telemetry.metrics.render(),
      /gen_ai_server_request_duration_seconds_count\{[^}]*gen_ai_provider_name="anthropic"/,
    );
    assert.doesNotMatch(gw.telemetry.metrics.render(), /gen_ai_provider_name="(alpha|gamma)"/);
  });

  it('a GwModel records the GwModel as its backend, and its vendor', async () => {
    await openai('/models/v1').chat.completions.create({ model: 'mini', messages: [{ role: 'user', content: 'hi' }] });
    const line = await lastAccessLogLine(gw, '/models/v1/chat/completions');
    assert.equal(line.backend, 'GwModel default/mini');
    assert.equal(line['gen_ai.provider.name'], 'openai');
    assert.match(gw.telemetry.metrics.render(), /gw_requests_total\{[^}]*backend="GwModel default\/mini"[^}]*\} 1/);
  });

  it("a virtual model's request records the target GwModel it went to", async () => {
    await openai('/models/v1').chat.completions.create({ model: 'smart', messages: [{ role: 'user', content: 'hi' }] });
    const line = await lastAccessLogLine(gw, '/models/v1/chat/completions');
    assert.equal(line.backend, 'GwModel default/target');
    assert.equal(line['gen_ai.request.model'], 'smart');
    const metrics = gw.telemetry.metrics.render();
    assert.match(metrics, /gw_requests_total\{[^}]*backend="GwModel default\/target"/);
    assert.doesNotMatch(metrics, /backend="unknown"/);
  });
});

describe('the vendor table', () => {
  it('names every provider family and every GwModel provider with its OpenTelemetry well-known value', () => {
    assert.deepEqual(
      Object.fromEntries(
        Object.entries(PROVIDER_FAMILIES).map(([family, vendor]) => [family, vendor.genAiProviderName]),
      ),
      {
        alpha: 'openai',
        betaalpha: 'azure.ai.openai',
        beta: 'azure.ai.inference',
        gamma: 'anthropic',
        delta: 'gcp.gemini',
        epsilon: 'gcp.vertex_ai',
        zeta: 'aws.bedrock',
        custom: 'custom',
      },
    );
    assert.equal(MODEL_PROVIDERS.Provider07.genAiProviderName, 'cohere');
    assert.equal(MODEL_PROVIDERS.Provider12.genAiProviderName, 'deepseek');
    assert.equal(MODEL_PROVIDERS.Provider13.genAiProviderName, 'groq');
    assert.equal(MODEL_PROVIDERS.Provider15.genAiProviderName, 'mistral_ai');
    assert.equal(MODEL_PROVIDERS.Provider18.genAiProviderName, 'x_ai');
  });
});
