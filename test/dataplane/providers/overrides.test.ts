// host, port, path, pathPrefix and model overrides, and the TLS rule: TLS exactly when the port is 443.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CHAT_BODY, compiled, EMBEDDINGS_BODY, input, MESSAGES_BODY, planned, RESPONSES_BODY } from './helpers.ts';

test('no overrides: the family host on 443 with TLS', () => {
  assert.deepEqual(compiled({ alpha: {} }).origin, { protocol: 'https:', host: 'api.openai.com', port: 443 });
  assert.deepEqual(compiled({ gamma: {} }).origin, { protocol: 'https:', host: 'api.anthropic.com', port: 443 });
});

test('host without port: that host on 443 with TLS', () => {
  const provider = compiled({ alpha: {}, host: 'llm.internal.example' });
  assert.deepEqual(provider.origin, { protocol: 'https:', host: 'llm.internal.example', port: 443 });
});

test('host and a port other than 443: plain HTTP', () => {
  const provider = compiled({ gamma: {}, host: '10.0.0.7', port: 8080 });
  assert.deepEqual(provider.origin, { protocol: 'http:', host: '10.0.0.7', port: 8080 });
  assert.deepEqual(planned(provider, input('messages', MESSAGES_BODY)).origin, provider.origin);
});

test('host and port 443: TLS', () => {
  assert.equal(compiled({ alpha: {}, host: 'proxy.example', port: 443 }).origin.protocol, 'https:');
});

test("port without host: the family's host on that port, TLS only on 443", () => {
  assert.deepEqual(compiled({ alpha: {}, port: 8443 }).origin, {
    protocol: 'http:',
    host: 'api.openai.com',
    port: 8443,
  });
  assert.deepEqual(compiled({ alpha: {}, port: 443 }).origin, {
    protocol: 'https:',
    host: 'api.openai.com',
    port: 443,
  });
});

test('the host keeps the default paths', () => {
  const provider = compiled({ alpha: {}, host: 'localhost', port: 8000 });
  assert.equal(planned(provider, input('completions', CHAT_BODY)).path, '/v1/chat/completions');
});

test('pathPrefix replaces the "/v1" base of every alpha path', () => {
  const provider = compiled({ alpha: {}, pathPrefix: '/openai/v2/' });
  assert.equal(planned(provider, input('completions', CHAT_BODY)).path, '/openai/v2/chat/completions');
  assert.equal(planned(provider, input('responses', RESPONSES_BODY)).path, '/openai/v2/responses');
  assert.equal(planned(provider, input('embeddings', EMBEDDINGS_BODY)).path, '/openai/v2/embeddings');
  assert.equal(planned(provider, input('models', undefined)).path, '/openai/v2/models');
  assert.equal(planned(provider, input('messages', MESSAGES_BODY)).path, '/openai/v2/chat/completions');
});

test('pathPrefix replaces the "/v1" base of every gamma path', () => {
  const provider = compiled({ gamma: {}, pathPrefix: '/anthropic' });
  assert.equal(planned(provider, input('messages', MESSAGES_BODY)).path, '/anthropic/messages');
  assert.equal(planned(provider, input('count_tokens', MESSAGES_BODY)).path, '/anthropic/messages/count_tokens');
  assert.equal(planned(provider, input('completions', CHAT_BODY)).path, '/anthropic/messages');
});

test('pathPrefix "/" drops the base', () => {
  const provider = compiled({ alpha: {}, pathPrefix: '/' });
  assert.equal(planned(provider, input('completions', CHAT_BODY)).path, '/chat/completions');
});

test('pathPrefix on a Passthrough route replaces a leading /v1 segment, else goes in front', () => {
  const provider = compiled({ alpha: {}, pathPrefix: '/proxy/openai' });
  const passthrough = (path: string) =>
    planned(provider, input('completions', undefined, { routeType: 'Passthrough', method: 'GET', path })).path;
  assert.equal(passthrough('/v1/files'), '/proxy/openai/files');
  assert.equal(passthrough('/v1'), '/proxy/openai');
  assert.equal(passthrough('/v10/files'), '/proxy/openai/v10/files');
  assert.equal(passthrough('/files'), '/proxy/openai/files');
});

test('path replaces the path of every request, its query kept apart', () => {
  const provider = compiled({ alpha: {}, path: '/deployments/chat?api-version=2024-10-21&x=a%20b' });
  for (const plan of [
    planned(provider, input('completions', CHAT_BODY)),
    planned(provider, input('embeddings', EMBEDDINGS_BODY)),
    planned(provider, input('completions', CHAT_BODY, { routeType: 'Passthrough', path: '/v1/other' })),
  ]) {
    assert.equal(plan.path, '/deployments/chat');
    assert.deepEqual(plan.query, [
      ['api-version', '2024-10-21'],
      ['x', 'a b'],
    ]);
  }
});

test('path wins over pathPrefix', () => {
  const provider = compiled({ gamma: {}, path: '/one/endpoint', pathPrefix: '/ignored' });
  assert.equal(planned(provider, input('messages', MESSAGES_BODY)).path, '/one/endpoint');
});

test('the model override replaces the model of every body, translated or not', () => {
  const alpha = compiled({ alpha: { model: 'gpt-4.1' } });
  for (const [format, body] of [
    ['completions', CHAT_BODY],
    ['responses', RESPONSES_BODY],
    ['embeddings', EMBEDDINGS_BODY],
    ['messages', MESSAGES_BODY],
  ] as const) {
    const plan = planned(alpha, input(format, body));
    assert.equal(plan.body?.model, 'gpt-4.1', format);
    assert.equal(plan.requestModel, body.model);
    assert.equal(plan.upstreamModel, 'gpt-4.1');
  }
  // The client's object is left as it was.
  assert.equal(CHAT_BODY.model, 'gpt-4o-mini');

  const gamma = compiled({ gamma: { model: 'claude-sonnet-4-5' } });
  for (const format of ['messages', 'count_tokens', 'completions'] as const) {
    const plan = planned(gamma, input(format, format === 'completions' ? CHAT_BODY : MESSAGES_BODY));
    assert.equal(plan.body?.model, 'claude-sonnet-4-5');
    assert.equal(plan.upstreamModel, 'claude-sonnet-4-5');
  }
  assert.equal(compiled({ gamma: { model: 'claude-sonnet-4-5' } }).model, 'claude-sonnet-4-5');
});

test('the model override also fills a body that names no model', () => {
  const plan = planned(compiled({ alpha: { model: 'gpt-4.1' } }), input('embeddings', { input: 'x' }));
  assert.equal(plan.body?.model, 'gpt-4.1');
  assert.equal(plan.requestModel, undefined);
});

test('a streaming request with a model override gets both changes', () => {
  const plan = planned(compiled({ alpha: { model: 'gpt-4.1' } }), input('completions', { ...CHAT_BODY, stream: true }));
  assert.equal(plan.body?.model, 'gpt-4.1');
  assert.deepEqual(plan.body?.stream_options, { include_usage: true });
});

test('without an override the upstream model is the client model and the body is not copied', () => {
  const body = { ...CHAT_BODY };
  const plan = planned(compiled({ alpha: {} }), input('completions', body));
  assert.equal(plan.body, body);
  assert.equal(plan.upstreamModel, 'gpt-4o-mini');
});
