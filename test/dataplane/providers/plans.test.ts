// Every client format against every family: which provider format serves it, at which path, with
// which headers and body, and what the proxy does with the answer.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ClientFormat } from '../../../src/dataplane/ai/providers/index.ts';
import { BODY_OF, CHAT_BODY, compiled, input, MESSAGES_BODY, planned, refused } from './helpers.ts';

const alpha = compiled({ alpha: {} });
const gamma = compiled({ gamma: {} });

interface Served {
  path: string;
  method: string;
  providerFormat: ClientFormat;
  translated: boolean;
}

const ALPHA_SERVES: Partial<Record<ClientFormat, Served>> = {
  completions: { path: '/v1/chat/completions', method: 'POST', providerFormat: 'completions', translated: false },
  messages: { path: '/v1/chat/completions', method: 'POST', providerFormat: 'completions', translated: true },
  responses: { path: '/v1/responses', method: 'POST', providerFormat: 'responses', translated: false },
  embeddings: { path: '/v1/embeddings', method: 'POST', providerFormat: 'embeddings', translated: false },
  models: { path: '/v1/models', method: 'GET', providerFormat: 'models', translated: false },
};

const GAMMA_SERVES: Partial<Record<ClientFormat, Served>> = {
  messages: { path: '/v1/messages', method: 'POST', providerFormat: 'messages', translated: false },
  count_tokens: {
    path: '/v1/messages/count_tokens',
    method: 'POST',
    providerFormat: 'count_tokens',
    translated: false,
  },
  completions: { path: '/v1/messages', method: 'POST', providerFormat: 'messages', translated: true },
  responses: { path: '/v1/messages', method: 'POST', providerFormat: 'messages', translated: true },
  models: { path: '/v1/models', method: 'GET', providerFormat: 'models', translated: false },
};

const ALL_FORMATS: ClientFormat[] = ['completions', 'messages', 'responses', 'embeddings', 'count_tokens', 'models'];

for (const [family, vendor, provider, serves, origin] of [
  ['alpha', 'OpenAI', alpha, ALPHA_SERVES, 'api.openai.com'],
  ['gamma', 'Anthropic', gamma, GAMMA_SERVES, 'api.anthropic.com'],
] as const) {
  for (const format of ALL_FORMATS) {
    const expected = serves[format];
    if (expected === undefined) {
      test(`${family}: ${format} is refused with 400 in the client's error format`, () => {
        const error = refused(provider, input(format, BODY_OF[format]));
        assert.equal(error.status, 400);
        assert.match(error.message, new RegExp(`not supported by provider ${family} \\(${vendor}\\)`));
        const response = error.response();
        assert.equal(response.status, 400);
        assert.equal(response.contentType, 'application/json');
        const body = JSON.parse(response.body);
        if (format === 'count_tokens') {
          assert.equal(body.type, 'error');
          assert.equal(body.error.type, 'invalid_request_error');
        } else {
          assert.equal(body.error.type, 'invalid_request_error');
          assert.equal(body.error.message, error.message);
        }
      });
      continue;
    }
    test(`${family}: ${format} goes to ${expected.method} ${expected.path}${expected.translated ? ' translated' : ''}`, () => {
      const plan = planned(provider, input(format, BODY_OF[format]));
      assert.deepEqual(plan.origin, { protocol: 'https:', host: origin, port: 443 });
      assert.equal(plan.path, expected.path);
      assert.deepEqual(plan.query, []);
      assert.equal(plan.method, expected.method);
      assert.equal(plan.providerFormat, expected.providerFormat);
      assert.equal(plan.service, undefined);
      if (format === 'models') {
        assert.equal(plan.body, undefined);
        // Anthropic's model listing asks for the version header too.
        assert.deepEqual(plan.headers, family === 'gamma' ? { 'anthropic-version': '2023-06-01' } : {});
      } else {
        assert.equal(plan.headers['content-type'], 'application/json');
        assert.equal(plan.headers['accept-encoding'], 'identity');
      }
      const anthropic =
        expected.providerFormat === 'messages' ||
        expected.providerFormat === 'count_tokens' ||
        (family === 'gamma' && format === 'models');
      assert.equal(plan.headers['anthropic-version'], anthropic ? '2023-06-01' : undefined);
      if (expected.translated) {
        assert.deepEqual(plan.response, {
          kind: 'translate',
          from: expected.providerFormat,
          to: format,
          includeUsage: false,
        });
      } else {
        assert.deepEqual(plan.response, { kind: 'same', dropUsageOnlyChunk: false });
        if (format !== 'models') assert.deepEqual(plan.body, BODY_OF[format]);
      }
      assert.equal(plan.requestModel, BODY_OF[format]?.model);
      assert.equal(plan.upstreamModel, BODY_OF[format]?.model);
    });
  }
}

test('gamma: a Chat Completions body is translated to Messages (system lifted, max_tokens defaulted)', () => {
  const plan = planned(gamma, input('completions', { ...CHAT_BODY, top_k: 5 }));
  assert.deepEqual(plan.body, {
    model: 'gpt-4o-mini',
    system: 'Be terse.',
    messages: [{ role: 'user', content: 'hello there' }],
    max_tokens: 4096,
    top_k: 5,
  });
});

test('alpha: a Messages body is translated to Chat Completions', () => {
  const plan = planned(alpha, input('messages', MESSAGES_BODY));
  assert.deepEqual(plan.body, {
    model: 'claude-test',
    messages: [
      { role: 'system', content: 'Be terse.' },
      { role: 'user', content: 'hello there' },
    ],
    max_completion_tokens: 100,
  });
});

test('a translation that drops a field reports it in warnings', () => {
  const plan = planned(gamma, input('completions', { ...CHAT_BODY, seed: 7 }));
  assert.deepEqual(
    plan.warnings?.map((warning) => warning.path),
    ['seed'],
  );
  assert.equal(planned(gamma, input('completions', CHAT_BODY)).warnings, undefined);
});

test('a body its own format rejects is a 400 in the client format, not a throw', () => {
  const error = refused(gamma, input('completions', { model: 'm', messages: 'not an array' }));
  assert.equal(error.status, 400);
  assert.match(error.message, /messages/);
  assert.equal(JSON.parse(error.response().body).error.type, 'invalid_request_error');

  const fromMessages = refused(alpha, input('messages', { model: 'm', max_tokens: 5, messages: 7 }));
  assert.equal(fromMessages.status, 400);
  assert.equal(JSON.parse(fromMessages.response().body).type, 'error');
});

test('a request without a body (other than the model listing) is a 400', () => {
  const error = refused(alpha, input('completions', undefined));
  assert.equal(error.status, 400);
  assert.equal(error.message, 'The request body must be a JSON object.');
});

test('streaming Chat Completions to alpha asks for the usage chunk and says so', () => {
  const plan = planned(alpha, input('completions', { ...CHAT_BODY, stream: true }));
  assert.deepEqual(plan.body?.stream_options, { include_usage: true });
  assert.deepEqual(plan.response, { kind: 'same', dropUsageOnlyChunk: true });
  // The client's body is not changed behind its back.
  assert.equal((CHAT_BODY as { stream_options?: unknown }).stream_options, undefined);
});

test('a streaming client that asked for usage itself keeps its usage chunk', () => {
  const body = { ...CHAT_BODY, stream: true, stream_options: { include_usage: true } };
  const plan = planned(alpha, input('completions', body));
  assert.equal(plan.body, body);
  assert.deepEqual(plan.response, { kind: 'same', dropUsageOnlyChunk: false });
});

test('streaming Messages to alpha: the translated request asks for usage', () => {
  const plan = planned(alpha, input('messages', { ...MESSAGES_BODY, stream: true }));
  assert.equal(plan.body?.stream, true);
  assert.deepEqual(plan.body?.stream_options, { include_usage: true });
  assert.deepEqual(plan.response, { kind: 'translate', from: 'completions', to: 'messages', includeUsage: false });
});

test("streaming Chat Completions to gamma: the stream translator gets the client's include_usage", () => {
  const asked = planned(
    gamma,
    input('completions', { ...CHAT_BODY, stream: true, stream_options: { include_usage: true } }),
  );
  assert.deepEqual(asked.response, { kind: 'translate', from: 'messages', to: 'completions', includeUsage: true });
  assert.equal(asked.body?.stream, true);
  assert.equal(asked.body?.stream_options, undefined);
  const notAsked = planned(gamma, input('completions', { ...CHAT_BODY, stream: true }));
  assert.deepEqual(notAsked.response, { kind: 'translate', from: 'messages', to: 'completions', includeUsage: false });
});

test('gamma keeps the anthropic-version a Messages client sent, and uses its own for translated requests', () => {
  const sent = planned(gamma, input('messages', MESSAGES_BODY, { headers: { 'anthropic-version': '2024-01-01' } }));
  assert.equal(sent.headers['anthropic-version'], '2024-01-01');
  const counted = planned(
    gamma,
    input('count_tokens', MESSAGES_BODY, { headers: { 'anthropic-version': '2024-01-01' } }),
  );
  assert.equal(counted.headers['anthropic-version'], '2024-01-01');
  const translated = planned(
    gamma,
    input('completions', CHAT_BODY, { headers: { 'anthropic-version': '2024-01-01' } }),
  );
  assert.equal(translated.headers['anthropic-version'], '2023-06-01');
});

test('unknown fields in a same-format request are sent unchanged', () => {
  const body = { ...MESSAGES_BODY, thinking: { type: 'enabled', budget_tokens: 1024 }, vendor_flag: [1, 2] };
  assert.deepEqual(planned(gamma, input('messages', body)).body, body);
});

test('Passthrough and Detect routes forward the request as it is, at its own path', () => {
  for (const routeType of ['Passthrough', 'Detect'] as const) {
    const body = { model: 'gpt-4o-mini', anything: true };
    const plan = planned(
      compiled({ alpha: { model: 'override' } }),
      input('completions', body, { routeType, method: 'POST', path: '/v1/files' }),
    );
    assert.equal(plan.path, '/v1/files');
    assert.equal(plan.method, 'POST');
    assert.equal(plan.body, body);
    assert.equal(plan.upstreamModel, 'gpt-4o-mini');
    if (routeType === 'Passthrough') {
      assert.deepEqual(plan.headers, {});
      assert.deepEqual(plan.response, { kind: 'passthrough' });
    } else {
      // Detect: a JSON body the body policies may have changed, and an answer read for its usage.
      assert.deepEqual(plan.headers, { 'content-type': 'application/json', 'accept-encoding': 'identity' });
      assert.deepEqual(plan.response, { kind: 'detect' });
    }
  }
  // A Detect body gw did not read (not JSON) keeps the client's content type.
  const unread = planned(alpha, input('completions', undefined, { routeType: 'Detect', path: '/v1/audio/speech' }));
  assert.deepEqual(unread.headers, { 'accept-encoding': 'identity' });
  const toGamma = planned(
    gamma,
    input('messages', undefined, { routeType: 'Passthrough', method: 'GET', path: '/v1/models' }),
  );
  assert.equal(toGamma.method, 'GET');
  assert.equal(toGamma.headers['anthropic-version'], '2023-06-01');
  assert.equal(refused(alpha, input('completions', undefined, { routeType: 'Passthrough' })).status, 500);
});

test('alpha opens Realtime sessions at /v1/realtime (the client query model kept) and reranks at /v1/rerank', () => {
  const session = planned(alpha, input('realtime', undefined, { realtimeModel: 'gpt-realtime' }));
  assert.deepEqual([session.method, session.path, session.query], ['GET', '/v1/realtime', []]);
  assert.equal(session.upstreamModel, 'gpt-realtime');
  const rerank = planned(alpha, input('rerank', BODY_OF.rerank));
  assert.deepEqual([rerank.method, rerank.path, rerank.body], ['POST', '/v1/rerank', BODY_OF.rerank]);
  assert.equal(refused(gamma, input('realtime', undefined)).status, 400, 'gamma has no Realtime API');
});

test('the refusal names the provider and what it serves', () => {
  const named = compiled({ gamma: {} }, { name: 'claude' });
  const error = refused(named, input('embeddings', BODY_OF.embeddings));
  assert.equal(
    error.message,
    'The embeddings API is not supported by provider claude (gamma, Anthropic); it serves messages, count_tokens, models, completions, responses, gemini.',
  );
});

test('a compiled provider describes itself', () => {
  assert.equal(alpha.family, 'alpha');
  assert.deepEqual(alpha.formats, ['completions', 'responses', 'embeddings', 'models', 'rerank', 'realtime']);
  assert.equal(alpha.keyStyle, 'bearer');
  assert.equal(gamma.keyStyle, 'x-api-key');
  assert.deepEqual(gamma.formats, ['messages', 'count_tokens', 'models']);
  assert.equal(gamma.name, undefined);
});
