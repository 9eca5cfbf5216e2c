import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type ErrorKind,
  errorBody,
  googleRetryDelaySeconds,
  isStreaming,
  requestModel,
  streamIncludesUsage,
  translateErrorBody,
  usageFromResponse,
  withStreamUsage,
} from '../../../src/dataplane/ai/formats/index.ts';

test('usage of every format, in one shape', () => {
  assert.deepEqual(
    usageFromResponse('completions', {
      usage: {
        prompt_tokens: 450,
        completion_tokens: 20,
        total_tokens: 470,
        prompt_tokens_details: { cached_tokens: 300 },
        completion_tokens_details: { reasoning_tokens: 8 },
      },
    }),
    { inputTokens: 450, outputTokens: 20, totalTokens: 470, cachedInputTokens: 300, reasoningTokens: 8 },
  );
  // Anthropic counts cache reads and writes apart from input_tokens; gw's inputTokens includes them.
  assert.deepEqual(
    usageFromResponse('messages', {
      usage: { input_tokens: 100, cache_read_input_tokens: 300, cache_creation_input_tokens: 50, output_tokens: 20 },
    }),
    { inputTokens: 450, outputTokens: 20, totalTokens: 470, cachedInputTokens: 300, cacheCreationInputTokens: 50 },
  );
  assert.deepEqual(
    usageFromResponse('responses', {
      usage: {
        input_tokens: 40,
        input_tokens_details: { cached_tokens: 10 },
        output_tokens: 9,
        output_tokens_details: { reasoning_tokens: 3 },
        total_tokens: 49,
      },
    }),
    { inputTokens: 40, outputTokens: 9, totalTokens: 49, cachedInputTokens: 10, reasoningTokens: 3 },
  );
  assert.deepEqual(usageFromResponse('embeddings', { usage: { prompt_tokens: 8, total_tokens: 8 } }), {
    inputTokens: 8,
    outputTokens: 0,
    totalTokens: 8,
  });
  assert.deepEqual(usageFromResponse('count_tokens', { input_tokens: 2095 }), {
    inputTokens: 2095,
    outputTokens: 0,
    totalTokens: 2095,
  });
  assert.equal(usageFromResponse('completions', { choices: [] }), undefined);
  assert.equal(usageFromResponse('messages', 'garbage'), undefined);
});

test("error bodies in the client format, typed by status with each vendor's conventions", () => {
  const openai = (status: number, kind?: ErrorKind) =>
    JSON.parse(errorBody('completions', status, 'nope', kind).body).error;
  const typeAndCode = (status: number, kind?: ErrorKind) => {
    const { type, code } = openai(status, kind);
    return [type, code];
  };
  assert.deepEqual(openai(400), { message: 'nope', type: 'invalid_request_error', param: null, code: null });
  assert.deepEqual(typeAndCode(401), ['invalid_request_error', 'invalid_api_key']);
  assert.deepEqual(typeAndCode(403), ['invalid_request_error', 'permission_denied']);
  assert.deepEqual(typeAndCode(404), ['invalid_request_error', 'not_found']);
  assert.deepEqual(typeAndCode(404, 'model_not_found'), ['invalid_request_error', 'model_not_found']);
  assert.deepEqual(typeAndCode(408), ['invalid_request_error', 'request_timeout']);
  assert.deepEqual(typeAndCode(413), ['invalid_request_error', 'request_too_large']);
  assert.deepEqual(typeAndCode(429), ['requests', 'rate_limit_exceeded']);
  assert.deepEqual(typeAndCode(500), ['server_error', null]);
  assert.deepEqual(typeAndCode(503, 'overloaded'), ['server_error', null]);
  assert.deepEqual(typeAndCode(529), ['server_error', null]);
  const anthropic = (status: number, kind?: ErrorKind) => JSON.parse(errorBody('messages', status, 'nope', kind).body);
  assert.deepEqual(anthropic(429), { type: 'error', error: { type: 'rate_limit_error', message: 'nope' } });
  assert.equal(anthropic(401).error.type, 'authentication_error');
  assert.equal(anthropic(403).error.type, 'permission_error');
  assert.equal(anthropic(404, 'model_not_found').error.type, 'not_found_error');
  assert.equal(anthropic(413).error.type, 'request_too_large');
  assert.equal(anthropic(529).error.type, 'overloaded_error');
  assert.equal(anthropic(503, 'overloaded').error.type, 'overloaded_error');
  assert.equal(anthropic(503).error.type, 'api_error');
  assert.equal(anthropic(504).error.type, 'timeout_error');
  assert.equal(anthropic(500).error.type, 'api_error');
  assert.equal(errorBody('count_tokens', 400, 'x').contentType, 'application/json');
  assert.equal(JSON.parse(errorBody('responses', 400, 'x').body).error.type, 'invalid_request_error');
});

test('provider errors convert to the client format and keep the message', () => {
  const anthropicError = JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  assert.deepEqual(JSON.parse(translateErrorBody('messages', 'completions', 529, anthropicError).body), {
    error: { message: 'Overloaded', type: 'server_error', param: null, code: null },
  });
  const openaiError = JSON.stringify({
    error: { message: 'Rate limit reached for gpt-4o', type: 'requests', param: null, code: 'rate_limit_exceeded' },
  });
  assert.deepEqual(JSON.parse(translateErrorBody('completions', 'messages', 429, openaiError).body), {
    type: 'error',
    error: { type: 'rate_limit_error', message: 'Rate limit reached for gpt-4o' },
  });
  // Same family: the provider's body passes unchanged, code and all.
  assert.equal(translateErrorBody('completions', 'completions', 429, openaiError).body, openaiError);
  // Shapes OpenAI-compatible servers use.
  const detail = translateErrorBody('completions', 'messages', 422, '{"detail":"bad field"}').body;
  assert.equal(JSON.parse(detail).error.message, 'bad field');
  // Bedrock's {"message"}, and {"Message"} from AWS's authorization layer.
  for (const key of ['message', 'Message']) {
    const bedrock = translateErrorBody('converse', 'gemini', 403, JSON.stringify({ [key]: 'not authorized' })).body;
    assert.deepEqual(JSON.parse(bedrock), {
      error: { code: 403, message: 'not authorized', status: 'PERMISSION_DENIED' },
    });
  }
});

test('an Anthropic or Google error reaches a client of its family as it is, whichever API sent it', () => {
  // Vertex answers Google's errors in front of Anthropic's models (rawPredict): details kept.
  const google = JSON.stringify({
    error: {
      code: 429,
      message: 'Quota exceeded',
      status: 'RESOURCE_EXHAUSTED',
      details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '6.5s' }],
    },
  });
  assert.equal(translateErrorBody('messages', 'gemini', 429, google).body, google);
  assert.deepEqual(JSON.parse(translateErrorBody('messages', 'messages', 429, google).body), {
    type: 'error',
    error: { type: 'rate_limit_error', message: 'Quota exceeded' },
  });
  const anthropic = JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
  assert.equal(translateErrorBody('gemini', 'messages', 529, anthropic).body, anthropic);
  // OpenAI's shape is told by elimination: from another API it is rewritten to OpenAI's in full.
  const loose = JSON.stringify({ error: { message: 'no' } });
  assert.deepEqual(JSON.parse(translateErrorBody('messages', 'completions', 400, loose).body), {
    error: { message: 'no', type: 'invalid_request_error', param: null, code: null },
  });
});

test("Google's RetryInfo in seconds, rounded up (its Retry-After for every client)", () => {
  const body = (retryDelay: unknown) =>
    JSON.stringify({
      error: { code: 429, details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay }] },
    });
  assert.equal(googleRetryDelaySeconds(body('6.5s')), 7);
  assert.equal(googleRetryDelaySeconds(body('30s')), 30);
  for (const bad of [body('soon'), body(7), body('-1s'), '{"error":{"code":429}}', 'RetryInfo <html>']) {
    assert.equal(googleRetryDelaySeconds(bad), undefined, bad);
  }
});

test('garbage error bodies become the generic message for the status', () => {
  for (const garbage of ['<html>Bad Gateway</html>', '', '{"error":{}}', '[1,2]', 'null']) {
    const out = JSON.parse(translateErrorBody('messages', 'completions', 502, garbage).body);
    assert.deepEqual(out.error, {
      message: 'The upstream provider returned HTTP 502 Bad Gateway.',
      type: 'server_error',
      param: null,
      code: null,
    });
  }
  const long = JSON.stringify({ error: { message: 'x'.repeat(100_000) } });
  assert.ok(translateErrorBody('completions', 'messages', 500, long).body.length < 5000);
});

test('request helpers: model, streaming, usage requests', () => {
  assert.equal(requestModel({ model: 'gpt-4o' }), 'gpt-4o');
  assert.equal(requestModel({ model: 3 }), undefined);
  assert.equal(isStreaming('messages', { stream: true }), true);
  assert.equal(isStreaming('completions', { stream: 'yes' }), false);
  assert.equal(isStreaming('embeddings', { stream: true }), false);
  assert.equal(streamIncludesUsage({ stream: true, stream_options: { include_usage: true } }), true);
  const added = withStreamUsage({ model: 'm', stream: true, stream_options: { include_obfuscation: false } });
  assert.equal(added.added, true);
  assert.deepEqual(added.body.stream_options, { include_obfuscation: false, include_usage: true });
  assert.equal(withStreamUsage({ model: 'm', stream: false }).added, false);
  assert.equal(withStreamUsage({ model: 'm', stream: true, stream_options: { include_usage: true } }).added, false);
});
