// The beta family (Azure AI resources) planned: the host by resourceType, an Azure OpenAI
// resource (Alpha) at betaalpha's paths, a Foundry project (Omega) at its project-scoped v1 API,
// the model as the deployment, the api-key key style, and the settings it refuses, each naming its field.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { GwModelSpec } from '../../../src/api/kinds/gw-model.ts';
import type { LLMProvider } from '../../../src/api/types/llm-provider.ts';
import { modelProvider } from '../../../src/dataplane/ai/model-provider.ts';
import type { CompiledProvider } from '../../../src/dataplane/ai/providers/index.ts';
import {
  BODY_OF,
  CHAT_BODY,
  COUNT_TOKENS_BODY,
  compiled,
  configError,
  EMBEDDINGS_BODY,
  GEMINI_BODY,
  input,
  MESSAGES_BODY,
  planned,
  refused,
  pathAndQuery as route,
} from './helpers.ts';

/** The path and query of each OpenAI format in `formats`, as planned. */
function routes(
  provider: CompiledProvider,
  formats: readonly ('completions' | 'responses' | 'embeddings' | 'models')[],
) {
  return formats.map((format) => route(planned(provider, input(format, BODY_OF[format]))));
}

test('resourceType Alpha: <resourceName>.openai.azure.com at the v1 API, the client naming the deployment', () => {
  const provider = compiled({ beta: { resourceName: 'contoso', resourceType: 'Alpha' } });
  assert.equal(provider.family, 'beta');
  assert.deepEqual(provider.origin, { protocol: 'https:', host: 'contoso.openai.azure.com', port: 443 });
  assert.equal(provider.keyStyle, 'api-key');
  assert.deepEqual(routes(provider, ['completions', 'responses', 'embeddings', 'models']), [
    '/openai/v1/chat/completions',
    '/openai/v1/responses',
    '/openai/v1/embeddings',
    '/openai/v1/models',
  ]);
  assert.equal(planned(provider, input('completions', CHAT_BODY)).body?.model, 'gpt-4o-mini');
});

test('resourceType Alpha with a dated apiVersion: the model is the deployment, in the path', () => {
  const provider = compiled({
    beta: { resourceName: 'contoso', resourceType: 'Alpha', apiVersion: '2024-10-21', model: 'gpt-4o-prod' },
  });
  assert.deepEqual(routes(provider, ['completions', 'responses', 'embeddings', 'models']), [
    '/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21',
    '/openai/responses?api-version=2024-10-21',
    '/openai/deployments/gpt-4o-prod/embeddings?api-version=2024-10-21',
    '/openai/models?api-version=2024-10-21',
  ]);
  const messages = planned(provider, input('messages', MESSAGES_BODY));
  assert.equal(messages.providerFormat, 'completions', 'Messages clients are translated to Chat Completions');
  assert.equal(messages.body?.model, 'gpt-4o-prod');
});

test('resourceType Omega: <resourceName>.services.ai.azure.com, the project-scoped v1 API', () => {
  const provider = compiled({
    beta: { resourceName: 'contoso', resourceType: 'Omega', projectName: 'chat-app', model: 'gpt-4.1' },
  });
  assert.deepEqual(provider.origin, { protocol: 'https:', host: 'contoso.services.ai.azure.com', port: 443 });
  assert.equal(provider.keyStyle, 'api-key');
  assert.deepEqual(routes(provider, ['completions', 'responses', 'embeddings']), [
    '/api/projects/chat-app/openai/v1/chat/completions',
    '/api/projects/chat-app/openai/v1/responses',
    '/api/projects/chat-app/openai/v1/embeddings',
  ]);
  const chat = planned(provider, input('completions', CHAT_BODY));
  assert.equal(chat.body?.model, 'gpt-4.1', 'the model override replaces the body model');
  const messages = planned(provider, input('messages', MESSAGES_BODY));
  assert.equal(messages.providerFormat, 'completions');
  assert.equal(messages.path, '/api/projects/chat-app/openai/v1/chat/completions');
  const listing = refused(provider, input('models', undefined));
  assert.equal(listing.status, 400);
  assert.match(listing.message, /models API is not supported by provider beta \(Azure AI Foundry\)/);
});

test("resourceType Omega: Claude deployments through the resource's Anthropic Messages API", () => {
  const provider = compiled({ beta: { resourceName: 'contoso', resourceType: 'Omega', projectName: 'chat-app' } });
  const messages = planned(provider, input('messages', { ...MESSAGES_BODY, model: 'claude-haiku-4-5' }));
  assert.equal(route(messages), '/anthropic/v1/messages');
  assert.equal(messages.providerFormat, 'messages');
  assert.deepEqual(messages.response, { kind: 'same', dropUsageOnlyChunk: false });
  assert.equal(messages.headers['anthropic-version'], '2023-06-01');
  const chat = planned(provider, input('completions', { ...CHAT_BODY, model: 'Claude-Sonnet-4-5' }));
  assert.equal(route(chat), '/anthropic/v1/messages', 'Chat Completions clients are translated to Messages');
  assert.equal(chat.providerFormat, 'messages');
  const count = planned(provider, input('count_tokens', { ...COUNT_TOKENS_BODY, model: 'claude-haiku-4-5' }));
  assert.equal(route(count), '/anthropic/v1/messages/count_tokens');
  // Other models keep the project's OpenAI API; count_tokens is Claude's only.
  assert.equal(
    route(planned(provider, input('messages', { ...MESSAGES_BODY, model: 'gpt-4.1' }))),
    '/api/projects/chat-app/openai/v1/chat/completions',
  );
  assert.equal(refused(provider, input('count_tokens', { ...COUNT_TOKENS_BODY, model: 'gpt-4.1' })).status, 400);
  assert.equal(refused(provider, input('embeddings', { ...EMBEDDINGS_BODY, model: 'claude-haiku-4-5' })).status, 400);
  // Gemini clients too: generateContent becomes Chat Completions, or Messages for Claude.
  const gemini = planned(provider, input('gemini', { ...GEMINI_BODY, model: 'gpt-4.1' }));
  assert.equal(route(gemini), '/api/projects/chat-app/openai/v1/chat/completions');
  const geminiClaude = planned(provider, input('gemini', { ...GEMINI_BODY, model: 'claude-haiku-4-5' }));
  assert.equal(route(geminiClaude), '/anthropic/v1/messages');
  assert.equal(geminiClaude.providerFormat, 'messages');
  // The model override decides, whatever the client names.
  const pinned = compiled({
    beta: { resourceName: 'contoso', resourceType: 'Omega', projectName: 'chat-app', model: 'claude-opus-4-1' },
  });
  const pinnedChat = planned(pinned, input('completions', CHAT_BODY));
  assert.equal(route(pinnedChat), '/anthropic/v1/messages');
  assert.equal(pinnedChat.body?.model, 'claude-opus-4-1');
  // An Azure OpenAI resource has no Anthropic API: a claude-named deployment stays on the OpenAI paths.
  const resource = compiled({ beta: { resourceName: 'contoso', resourceType: 'Alpha' } });
  assert.equal(route(planned(resource, input('messages', MESSAGES_BODY))), '/openai/v1/chat/completions');
});

test('resourceType Omega with apiVersion preview: the same paths with api-version=preview', () => {
  const provider = compiled({
    beta: { resourceName: 'contoso', resourceType: 'Omega', projectName: 'p1', apiVersion: 'preview' },
  });
  assert.deepEqual(routes(provider, ['responses']), ['/api/projects/p1/openai/v1/responses?api-version=preview']);
});

test('host, port and path overrides', () => {
  const provider = compiled({
    beta: { resourceName: 'contoso', resourceType: 'Omega', projectName: 'p1' },
    host: '127.0.0.1',
    port: 8080,
    path: '/gateway/chat',
  });
  assert.deepEqual(provider.origin, { protocol: 'http:', host: '127.0.0.1', port: 8080 });
  assert.equal(route(planned(provider, input('completions', CHAT_BODY))), '/gateway/chat');
});

test('settings that cannot be served are refused, naming the field', () => {
  const cases: [LLMProvider, string, RegExp][] = [
    [
      { beta: { resourceName: 'contoso', resourceType: 'Omega' } },
      'beta.projectName',
      /is required when resourceType is Omega/,
    ],
    [
      { beta: { resourceName: 'contoso', resourceType: 'Alpha', projectName: 'p' } },
      'beta.projectName',
      /applies to resourceType Omega/,
    ],
    [
      { beta: { resourceName: 'contoso', resourceType: 'Omega', projectName: '../admin' } },
      'beta.projectName',
      /Foundry project name/,
    ],
    [
      { beta: { resourceName: 'contoso', resourceType: 'Omega', projectName: 'p', apiVersion: '2025-05-01' } },
      'beta.apiVersion',
      /v1 API only/,
    ],
    [
      { beta: { resourceName: 'contoso', resourceType: 'Alpha', apiVersion: '2024-10-21' } },
      'beta.model',
      /is required when apiVersion is "2024-10-21"/,
    ],
    [
      { beta: { resourceName: 'contoso', resourceType: 'Alpha', apiVersion: '2024-10-21', model: 'a/b' } },
      'beta.model',
      /deployment name/,
    ],
    [{ beta: { resourceName: 'evil.com/x', resourceType: 'Alpha' } }, 'beta.resourceName', /Azure resource name/],
    [{ beta: { resourceName: 'contoso', resourceType: 'Alpha', apiVersion: ' ' } }, 'beta.apiVersion', /empty/],
    [{ beta: { resourceName: 'contoso', resourceType: 'Alpha' }, pathPrefix: '/p' }, 'pathPrefix', /alpha and gamma/],
  ];
  for (const [provider, field, reason] of cases) {
    const error = configError(provider);
    assert.equal(error.field, field, JSON.stringify(provider));
    assert.match(error.message, reason);
  }
});

test('a GwModel with provider Beta: its settings, no baseURL path, an Azure OpenAI resource at the v1 API only', () => {
  const model = (spec: Partial<GwModelSpec>) =>
    modelProvider({ parentRefs: [], provider: 'Beta', ...spec } as unknown as GwModelSpec);
  const served = model({ beta: { resourceName: 'c', resourceType: 'Omega', projectName: 'p' }, baseURL: 'http://h:1' });
  assert.ok(typeof served !== 'string', String(served));
  assert.deepEqual(served.provider, {
    beta: { resourceName: 'c', resourceType: 'Omega', projectName: 'p' },
    host: 'h',
    port: 1,
  });
  assert.match(
    String(model({ beta: { resourceName: 'c', resourceType: 'Alpha' }, baseURL: 'https://proxy.example/azure' })),
    /^spec\.baseURL: a path is not supported with provider Beta \(Azure AI Foundry\)/,
  );
  assert.match(
    String(model({ beta: { resourceName: 'c', resourceType: 'Alpha', apiVersion: '2024-10-21' } })),
    /^spec\.beta\.apiVersion: .*v1 or preview/,
  );
  assert.match(String(model({})), /^spec\.beta: is required/);
});
