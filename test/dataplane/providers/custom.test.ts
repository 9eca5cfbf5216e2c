// The custom family: the formats it lists, at their paths, reached by host and port or a Service.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LLMProvider } from '../../../src/api/types/llm-provider.ts';
import {
  type CompileProviderOptions,
  compileProvider,
  ProviderConfigError,
} from '../../../src/dataplane/ai/providers/index.ts';
import {
  CHAT_BODY,
  COUNT_TOKENS_BODY,
  compiled,
  EMBEDDINGS_BODY,
  input,
  MESSAGES_BODY,
  planned,
  RERANK_BODY,
  RESPONSES_BODY,
  refused,
} from './helpers.ts';

const at = { host: 'vllm.local', port: 8000 };

test('a custom provider serves the formats it lists at their usual paths', () => {
  const provider = compiled({
    custom: { formats: [{ type: 'Completions' }, { type: 'Embeddings' }, { type: 'Responses' }] },
    ...at,
  });
  assert.deepEqual(provider.origin, { protocol: 'http:', host: 'vllm.local', port: 8000 });
  assert.equal(provider.keyStyle, 'bearer');
  assert.equal(planned(provider, input('completions', CHAT_BODY)).path, '/v1/chat/completions');
  assert.equal(planned(provider, input('embeddings', EMBEDDINGS_BODY)).path, '/v1/embeddings');
  assert.equal(planned(provider, input('responses', RESPONSES_BODY)).path, '/v1/responses');
  const models = planned(provider, input('models', undefined));
  assert.equal(models.path, '/v1/models');
  assert.equal(models.method, 'GET');
});

test('the same format is preferred to a translatable one', () => {
  const provider = compiled({ custom: { formats: [{ type: 'Completions' }, { type: 'Messages' }] }, ...at });
  const chat = planned(provider, input('completions', CHAT_BODY));
  assert.equal(chat.providerFormat, 'completions');
  assert.equal(chat.response.kind, 'same');
  const messages = planned(provider, input('messages', MESSAGES_BODY));
  assert.equal(messages.providerFormat, 'messages');
  assert.equal(messages.path, '/v1/messages');
  assert.equal(messages.response.kind, 'same');
  assert.equal(messages.headers['anthropic-version'], '2023-06-01');
});

test('a chat format the server does not speak is translated to the one it does', () => {
  const messagesOnly = compiled({ custom: { formats: [{ type: 'Messages', path: '/anthropic/v1/messages' }] }, ...at });
  const plan = planned(messagesOnly, input('completions', CHAT_BODY));
  assert.equal(plan.providerFormat, 'messages');
  assert.equal(plan.path, '/anthropic/v1/messages');
  assert.deepEqual(plan.response, { kind: 'translate', from: 'messages', to: 'completions', includeUsage: false });
  assert.equal(plan.body?.max_tokens, 4096);
  // A Messages-only server is no OpenAI-style server: no model listing there.
  assert.equal(refused(messagesOnly, input('models', undefined)).status, 400);

  const completionsOnly = compiled({ custom: { formats: [{ type: 'Completions', path: '/api/chat' }] }, ...at });
  const back = planned(completionsOnly, input('messages', MESSAGES_BODY));
  assert.equal(back.path, '/api/chat');
  assert.deepEqual(back.response, { kind: 'translate', from: 'completions', to: 'messages', includeUsage: false });
});

test('formats that cannot be translated are refused in the client format; the Responses API is translated', () => {
  const provider = compiled({ custom: { formats: [{ type: 'Completions' }] }, ...at });
  for (const [format, body] of [
    ['count_tokens', COUNT_TOKENS_BODY],
    ['embeddings', EMBEDDINGS_BODY],
  ] as const) {
    const error = refused(provider, input(format, body));
    assert.equal(error.status, 400);
    assert.match(error.message, /not supported by provider custom/);
  }
  // The Responses API is translated to Chat Completions for it (its closest format).
  const responses = planned(provider, input('responses', RESPONSES_BODY));
  assert.equal(responses.path, '/v1/chat/completions');
  assert.deepEqual(responses.response, {
    kind: 'translate',
    from: 'completions',
    to: 'responses',
    includeUsage: false,
  });
  assert.deepEqual(responses.body, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }] });
  const counted = compiled({ custom: { formats: [{ type: 'GammaTokenCount' }] }, ...at });
  assert.equal(planned(counted, input('count_tokens', COUNT_TOKENS_BODY)).path, '/v1/messages/count_tokens');
});

test("a GwModel baseURL's path (pathPrefix) takes the place of the /v1 of the usual paths; a format's own path is kept", () => {
  const provider = compiled({
    custom: { formats: [{ type: 'Completions' }, { type: 'Embeddings', path: '/own/embed' }] },
    ...at,
    pathPrefix: '/api/openai/v1',
  });
  assert.equal(planned(provider, input('completions', CHAT_BODY)).path, '/api/openai/v1/chat/completions');
  assert.equal(planned(provider, input('embeddings', EMBEDDINGS_BODY)).path, '/own/embed');
  assert.equal(planned(provider, input('models', undefined)).path, '/api/openai/v1/models');
});

test("a format's own path beats the provider path, which beats the usual path", () => {
  const provider = compiled({
    custom: { formats: [{ type: 'Completions', path: '/own/chat' }, { type: 'Embeddings' }] },
    ...at,
    path: '/everything',
  });
  assert.equal(planned(provider, input('completions', CHAT_BODY)).path, '/own/chat');
  assert.equal(planned(provider, input('embeddings', EMBEDDINGS_BODY)).path, '/everything');
});

test('the custom model override applies', () => {
  const provider = compiled({ custom: { formats: [{ type: 'Completions' }], model: 'llama-3' }, ...at });
  assert.equal(planned(provider, input('completions', CHAT_BODY)).body?.model, 'llama-3');
});

/** Services of namespace ml as the configuration holds them (vllm at 10.0.0.7:8000 or over TLS at 443). */
const ML_SERVICES = (name: string, port: number) =>
  name === 'vllm' && port === 8000
    ? { protocol: 'http:' as const, host: '10.0.0.7', port, inferredVersion: 'HTTP1' as const }
    : name === 'tls' && port === 443
      ? { protocol: 'https:' as const, host: 'tls.example', port }
      : 'does not exist';

test('a backendRef to a Service: the plan goes to the address the Service resolves to', () => {
  const provider = compiled(
    { custom: { formats: [{ type: 'Completions' }], backendRef: { name: 'vllm', port: 8000 } } },
    { namespace: 'ml', resolveService: ML_SERVICES },
  );
  const destination = { protocol: 'http:', host: '10.0.0.7', port: 8000, inferredVersion: 'HTTP1' };
  assert.deepEqual(provider.service, { kind: 'Service', namespace: 'ml', name: 'vllm', port: 8000, destination });
  const plan = planned(provider, input('completions', CHAT_BODY));
  assert.equal(plan.service?.name, 'vllm');
  assert.deepEqual(plan.origin, { protocol: 'http:', host: '10.0.0.7', port: 8000 });
  assert.equal(plan.path, '/v1/chat/completions');
  // A backendRef wins over host and port; TLS is the resolver's (the backend policy's) word.
  const tls = compiled(
    { custom: { formats: [{ type: 'Completions' }], backendRef: { kind: 'Service', name: 'tls', port: 443 } }, ...at },
    { namespace: 'ml', resolveService: ML_SERVICES },
  );
  assert.deepEqual(tls.origin, { protocol: 'https:', host: 'tls.example', port: 443 });
});

function configError(provider: LLMProvider, options?: CompileProviderOptions): ProviderConfigError {
  const result = compileProvider(provider, options);
  assert.ok(result instanceof ProviderConfigError, 'expected a ProviderConfigError');
  return result;
}

test('a backendRef to an InferencePool names the pool in the origin and the service; each request is picked later', () => {
  const resolvePool = (name: string) => (name === 'p' ? { port: 8000 } : 'does not exist');
  const poolRef = { group: 'inference.networking.k8s.io', kind: 'InferencePool', name: 'p' };
  const provider = compileProvider(
    { custom: { formats: [{ type: 'Completions' }], backendRef: poolRef } },
    { namespace: 'ml', resolvePool },
  );
  assert.ok(!(provider instanceof ProviderConfigError), String(provider));
  assert.deepEqual(provider.service, { kind: 'InferencePool', namespace: 'ml', name: 'p' });
  assert.deepEqual(provider.origin, { protocol: 'http:', host: 'p.ml.inferencepool', port: 8000 });

  const missing = configError(
    { custom: { formats: [{ type: 'Completions' }], backendRef: { ...poolRef, name: 'gone' } } },
    { namespace: 'ml', resolvePool },
  );
  assert.equal(missing.field, 'custom.backendRef');
  assert.match(missing.message, /InferencePool ml\/gone: does not exist/);
  const realtime = configError(
    { custom: { formats: [{ type: 'Completions' }, { type: 'Realtime' }], backendRef: poolRef } },
    { namespace: 'ml', resolvePool },
  );
  assert.equal(realtime.field, 'custom.formats[1].type');
  assert.match(realtime.message, /Realtime is not served through an InferencePool/);
  const otherGroup = configError(
    {
      custom: {
        formats: [{ type: 'Completions' }],
        backendRef: { kind: 'InferencePool', group: 'example.com', name: 'p' },
      },
    },
    { namespace: 'ml', resolvePool },
  );
  assert.equal(otherGroup.field, 'custom.backendRef.kind');
});

test('custom configurations this data plane cannot serve are errors naming the field', () => {
  const missing = configError(
    { custom: { formats: [{ type: 'Completions' }], backendRef: { name: 'gone', port: 8000 } } },
    { namespace: 'ml', resolveService: ML_SERVICES },
  );
  assert.equal(missing.field, 'custom.backendRef');
  assert.match(missing.message, /Service ml\/gone: does not exist/);
  assert.equal(
    configError(
      { custom: { formats: [{ type: 'Completions' }], backendRef: { name: 'vllm' } } },
      { namespace: 'ml', resolveService: ML_SERVICES },
    ).field,
    'custom.backendRef.port',
  );
  // Without a namespace and Services to look in, a backendRef cannot be resolved.
  assert.equal(
    configError({ custom: { formats: [{ type: 'Completions' }], backendRef: { name: 'vllm', port: 80 } } }).field,
    'custom.backendRef',
  );
  assert.equal(configError({ custom: { formats: [{ type: 'Completions' }] }, port: 80 }).field, 'host');
  assert.equal(configError({ custom: { formats: [{ type: 'Completions' }] }, host: 'h' }).field, 'port');

  const none = configError({ custom: { formats: [] }, ...at });
  assert.equal(none.field, 'custom.formats');
  assert.match(none.message, /lists no format; .*Rerank, Realtime/);

  const twice = configError({ custom: { formats: [{ type: 'Messages' }, { type: 'Messages', path: '/x' }] }, ...at });
  assert.equal(twice.field, 'custom.formats[1].type');

  const relative = configError({ custom: { formats: [{ type: 'Messages', path: 'v1/messages' }] }, ...at });
  assert.equal(relative.field, 'custom.formats[0].path');
});

test('a custom provider listing Realtime and Rerank serves them at their paths (usual or configured)', () => {
  const provider = compiled({
    custom: { model: 'pinned', formats: [{ type: 'Realtime' }, { type: 'Rerank', path: '/v2/rerank' }] },
    ...at,
  });
  assert.deepEqual(provider.formats, ['realtime', 'rerank']);
  const session = planned(provider, input('realtime', undefined, { realtimeModel: 'gpt-realtime' }));
  assert.equal(session.method, 'GET');
  assert.equal(session.path, '/v1/realtime');
  assert.deepEqual(session.query, [['model', 'pinned']], 'the model override replaces the client query model');
  assert.equal(session.requestModel, 'gpt-realtime');
  assert.equal(session.upstreamModel, 'pinned');
  const rerank = planned(provider, input('rerank', RERANK_BODY));
  assert.equal(rerank.path, '/v2/rerank');
  assert.equal(rerank.method, 'POST');
  assert.deepEqual(rerank.body, { ...RERANK_BODY, model: 'pinned' });
  assert.equal(refused(provider, input('completions', CHAT_BODY)).status, 400);
});

test('a server that speaks only the Responses API serves Chat Completions and Messages clients by translation', () => {
  const provider = compiled({ custom: { formats: [{ type: 'Responses' }] }, ...at });
  const chat = planned(provider, { ...input('completions', { ...CHAT_BODY, stream: true }), stream: true });
  assert.equal(chat.providerFormat, 'responses');
  assert.equal(chat.path, '/v1/responses');
  assert.deepEqual(chat.response, { kind: 'translate', from: 'responses', to: 'completions', includeUsage: false });
  assert.equal(chat.body?.stream, true);
  assert.ok(Array.isArray(chat.body?.input));
  const messages = planned(provider, input('messages', MESSAGES_BODY));
  assert.equal(messages.providerFormat, 'responses');
  assert.deepEqual(messages.response, { kind: 'translate', from: 'responses', to: 'messages', includeUsage: false });
  // The client's own format still goes as it is.
  assert.equal(planned(provider, input('responses', RESPONSES_BODY)).response.kind, 'same');
  // With another chat format listed, that one serves: the Responses API only when it is the only one.
  const both = compiled({ custom: { formats: [{ type: 'Responses' }, { type: 'Completions' }] }, ...at });
  assert.equal(planned(both, input('messages', MESSAGES_BODY)).providerFormat, 'completions');
});

test('a Gemini client of a Responses-only server is translated to the Responses API too', () => {
  const provider = compiled({ custom: { formats: [{ type: 'Responses' }] }, ...at });
  const gemini = { model: 'm', contents: [{ role: 'user', parts: [{ text: 'hello there' }] }] };
  const plan = planned(provider, input('gemini', gemini));
  assert.equal(plan.providerFormat, 'responses');
  assert.equal(plan.path, '/v1/responses');
  assert.deepEqual(plan.body?.input, [{ role: 'user', content: 'hello there' }]);
  assert.deepEqual(plan.response, { kind: 'translate', from: 'responses', to: 'gemini', includeUsage: false });
});
