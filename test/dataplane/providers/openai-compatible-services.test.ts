// The GwModel providers that are named OpenAI-compatible services (Provider07 Cohere ...
// Provider19 Fireworks AI): without a baseURL each compiles to its service's real address
// (scheme, host, port and base path, as the service documents it and agentgateway's presets use
// it), with a bearer key, Chat Completions at {base}/chat/completions, Embeddings at
// {base}/embeddings where the service has them, and Messages and Responses translated to Chat
// Completions. The expected addresses are written out here, not read from the source table.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { GwModelSpec } from '../../../src/api/kinds/gw-model.ts';
import { MODEL_PROVIDERS } from '../../../src/api/vendors.ts';
import { modelProvider } from '../../../src/dataplane/ai/model-provider.ts';
import {
  compileProvider,
  PlanError,
  ProviderConfigError,
  type UpstreamPlan,
} from '../../../src/dataplane/ai/providers/index.ts';

interface Expected {
  vendor: string;
  origin: string;
  base: string;
  embeddings: boolean;
}

const SERVICES: Record<string, Expected> = {
  Provider07: { vendor: 'Cohere', origin: 'https://api.cohere.ai:443', base: '/compatibility/v1', embeddings: true },
  Provider08: { vendor: 'Ollama', origin: 'http://localhost:11434', base: '/v1', embeddings: true },
  Provider09: { vendor: 'Baseten', origin: 'https://inference.baseten.co:443', base: '/v1', embeddings: false },
  Provider10: { vendor: 'Cerebras', origin: 'https://api.cerebras.ai:443', base: '/v1', embeddings: false },
  Provider11: { vendor: 'DeepInfra', origin: 'https://api.deepinfra.com:443', base: '/v1/openai', embeddings: true },
  Provider12: { vendor: 'DeepSeek', origin: 'https://api.deepseek.com:443', base: '/v1', embeddings: false },
  Provider13: { vendor: 'Groq', origin: 'https://api.groq.com:443', base: '/openai/v1', embeddings: false },
  Provider14: { vendor: 'Hugging Face', origin: 'https://router.huggingface.co:443', base: '/v1', embeddings: false },
  Provider15: { vendor: 'Mistral AI', origin: 'https://api.mistral.ai:443', base: '/v1', embeddings: true },
  Provider16: { vendor: 'OpenRouter', origin: 'https://openrouter.ai:443', base: '/api/v1', embeddings: true },
  Provider17: { vendor: 'Together AI', origin: 'https://api.together.xyz:443', base: '/v1', embeddings: true },
  Provider18: { vendor: 'xAI', origin: 'https://api.x.ai:443', base: '/v1', embeddings: false },
  Provider19: {
    vendor: 'Fireworks AI',
    origin: 'https://api.fireworks.ai:443',
    base: '/inference/v1',
    embeddings: true,
  },
};

const CHAT = { model: 'some-model', messages: [{ role: 'user', content: 'hi' }] };
const MESSAGES = { model: 'some-model', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };

function compiled(spec: Partial<GwModelSpec>) {
  const address = modelProvider({ parentRefs: [{ name: 'gw' }], ...spec } as GwModelSpec);
  assert.ok(typeof address !== 'string', String(address));
  const provider = compileProvider(address.provider, { name: 'm' });
  assert.ok(!(provider instanceof ProviderConfigError), String(provider));
  return { provider, https: address.https };
}

function origin(plan: UpstreamPlan): string {
  return `${plan.origin.protocol}//${plan.origin.host}:${plan.origin.port}`;
}

describe('GwModel providers that are named OpenAI-compatible services', () => {
  it('cover Provider07 to Provider19, the vendors src/api/vendors.ts names', () => {
    for (const [provider, expected] of Object.entries(SERVICES))
      assert.equal(MODEL_PROVIDERS[provider as keyof typeof MODEL_PROVIDERS].vendor, expected.vendor);
  });

  for (const [value, expected] of Object.entries(SERVICES)) {
    it(`${value} (${expected.vendor}): ${expected.origin}${expected.base}, a bearer key`, () => {
      const { provider, https } = compiled({ provider: value as GwModelSpec['provider'] });
      assert.equal(provider.keyStyle, 'bearer');
      assert.equal(https, expected.origin.startsWith('https:'));
      const chat = provider.plan({ clientFormat: 'completions', routeType: 'Completions', body: CHAT, stream: false });
      assert.ok(!(chat instanceof PlanError), String(chat));
      assert.equal(origin(chat), expected.origin);
      assert.equal(chat.path, `${expected.base}/chat/completions`);
      assert.equal(chat.providerFormat, 'completions');
      // Messages and Responses are translated to Chat Completions.
      const messages = provider.plan({
        clientFormat: 'messages',
        routeType: 'Messages',
        body: MESSAGES,
        stream: false,
      });
      assert.ok(!(messages instanceof PlanError), String(messages));
      assert.equal(messages.path, `${expected.base}/chat/completions`);
      assert.deepEqual(messages.response, {
        kind: 'translate',
        from: 'completions',
        to: 'messages',
        includeUsage: false,
      });
      const responses = provider.plan({
        clientFormat: 'responses',
        routeType: 'Responses',
        body: { model: 'some-model', input: 'hi' },
        stream: false,
      });
      assert.ok(!(responses instanceof PlanError), String(responses));
      assert.equal(responses.providerFormat, 'completions');
      const embeddings = provider.plan({
        clientFormat: 'embeddings',
        routeType: 'Embeddings',
        body: { model: 'some-model', input: 'hi' },
        stream: false,
      });
      if (expected.embeddings) {
        assert.ok(!(embeddings instanceof PlanError), String(embeddings));
        assert.equal(embeddings.path, `${expected.base}/embeddings`);
      } else {
        assert.ok(embeddings instanceof PlanError);
        assert.equal(embeddings.status, 400);
        assert.match(embeddings.message, /embeddings API is not supported/);
      }
    });
  }

  it('baseURL replaces the address and the base path', () => {
    const { provider, https } = compiled({ provider: 'Provider13', baseURL: 'http://127.0.0.1:8080/groq/v1/' });
    assert.equal(https, false);
    const plan = provider.plan({ clientFormat: 'completions', routeType: 'Completions', body: CHAT, stream: false });
    assert.ok(!(plan instanceof PlanError));
    assert.equal(origin(plan), 'http://127.0.0.1:8080');
    assert.equal(plan.path, '/groq/v1/chat/completions');
  });
});

describe('GwModel providers Delta, Epsilon and Zeta', () => {
  it('map onto the delta, epsilon and zeta families with the model settings', () => {
    const delta = modelProvider({ parentRefs: [], provider: 'Delta' } as unknown as GwModelSpec);
    assert.deepEqual(delta, { provider: { delta: {} }, https: false });
    const epsilon = modelProvider({
      parentRefs: [],
      provider: 'Epsilon',
      epsilon: { projectId: 'p', region: 'europe-west4' },
    } as unknown as GwModelSpec);
    assert.deepEqual(epsilon, { provider: { epsilon: { projectId: 'p', region: 'europe-west4' } }, https: false });
    const guardrail = { identifier: 'gr', version: '1' };
    const zeta = modelProvider({
      parentRefs: [],
      provider: 'Zeta',
      zeta: { region: 'eu-west-1', guardrail },
      baseURL: 'https://bedrock.example:8443',
    } as unknown as GwModelSpec);
    assert.deepEqual(zeta, {
      provider: { zeta: { region: 'eu-west-1', guardrail }, host: 'bedrock.example', port: 8443 },
      https: true,
    });
  });

  it('refuse an Epsilon model without its settings, and a baseURL path for Epsilon and Zeta, naming the field', () => {
    assert.match(
      String(modelProvider({ parentRefs: [], provider: 'Epsilon' } as unknown as GwModelSpec)),
      /^spec\.epsilon: is required with provider Epsilon \(Google Vertex AI\); set its projectId/,
    );
    for (const provider of ['Epsilon', 'Zeta'])
      assert.match(
        String(
          modelProvider({
            parentRefs: [],
            provider,
            epsilon: { projectId: 'p' },
            baseURL: 'http://127.0.0.1:1/prefix',
          } as unknown as GwModelSpec),
        ),
        /^spec\.baseURL: a path is not supported with provider/,
      );
  });
});
