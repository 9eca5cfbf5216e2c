// The Anthropic mock proven with the official SDK pointed straight at it.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import type { Tool } from '@anthropic-ai/sdk/resources/messages';
import { type AnthropicMockOptions, startAnthropicMock } from '../support/providers/anthropic-mock.ts';
import type { MockServer } from '../support/providers/mock-server.ts';

async function anthropic(
  t: TestContext,
  options: AnthropicMockOptions = {},
  clientOptions: { apiKey?: string; maxRetries?: number } = {},
): Promise<{ mock: MockServer; client: Anthropic }> {
  const mock = await startAnthropicMock(options);
  t.after(() => mock.close());
  const client = new Anthropic({ apiKey: 'test-key', baseURL: mock.url, maxRetries: 0, ...clientOptions });
  return { mock, client };
}

interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
  request_id: string;
}

async function errorBody(response: Response): Promise<AnthropicErrorBody> {
  return (await response.json()) as AnthropicErrorBody;
}

const WEATHER_TOOL: Tool = {
  name: 'get_weather',
  description: 'Weather for a place',
  input_schema: {
    type: 'object',
    properties: { location: { type: 'string' }, days: { type: 'integer' } },
    required: ['location'],
  },
};

const ANTHROPIC_HEADERS = { 'x-api-key': 'k', 'anthropic-version': '2023-06-01', 'content-type': 'application/json' };

test('a message echoes the last user turn with the request model and word-count usage', async (t) => {
  const { mock, client } = await anthropic(t);
  const message = await client.messages.create({
    model: 'claude-test',
    max_tokens: 100,
    system: 'You are terse.',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hello there' }] }],
  });
  assert.match(message.id, /^msg_/);
  assert.equal(message.type, 'message');
  assert.equal(message.role, 'assistant');
  assert.equal(message.model, 'claude-test');
  assert.deepEqual(message.content, [{ type: 'text', text: 'echo: hello there' }]);
  assert.equal(message.stop_reason, 'end_turn');
  assert.equal(message.stop_sequence, null);
  assert.equal(message.usage.input_tokens, 5);
  assert.equal(message.usage.output_tokens, 3);
  assert.equal(message.usage.cache_creation_input_tokens, 0);
  assert.equal(message.usage.cache_read_input_tokens, 0);

  const [recorded] = mock.requests;
  assert.equal(recorded.path, '/v1/messages');
  // This SDK version sends the key as a Bearer token; x-api-key is checked in the key test below.
  assert.equal(recorded.headers.authorization, 'Bearer test-key');
  assert.ok(recorded.headers['anthropic-version']);
  assert.equal((recorded.body as { max_tokens: number }).max_tokens, 100);
});

test('messages.stream() delivers text events and a final message equal to the plain answer', async (t) => {
  const { client } = await anthropic(t);
  const request = {
    model: 'claude-test',
    max_tokens: 100,
    messages: [{ role: 'user' as const, content: 'stream me please' }],
  };
  const stream = client.messages.stream(request);
  const texts: string[] = [];
  stream.on('text', (text) => texts.push(text));
  const final = await stream.finalMessage();
  assert.deepEqual(texts, ['echo:', ' stream', ' me', ' please']);
  assert.deepEqual(final.content, [{ type: 'text', text: 'echo: stream me please' }]);
  assert.equal(final.stop_reason, 'end_turn');
  assert.equal(final.usage.input_tokens, 3);
  assert.equal(final.usage.output_tokens, 4);

  const plain = await client.messages.create(request);
  assert.deepEqual(final.content, plain.content);
  assert.deepEqual(final.usage, plain.usage);
});

test('the stream is named server-sent events in the Messages order, ping after the first block start', async (t) => {
  const { mock } = await anthropic(t);
  const response = await fetch(`${mock.url}/v1/messages`, {
    method: 'POST',
    headers: ANTHROPIC_HEADERS,
    body: JSON.stringify({ model: 'm', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'a b' }] }),
  });
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
  assert.match(response.headers.get('request-id') ?? '', /^req_/);
  const frames = (await response.text()).split('\n\n').filter((frame) => frame !== '');
  const events = frames.map((frame) => {
    const [eventLine, dataLine] = frame.split('\n');
    const data = JSON.parse(dataLine.replace(/^data: /, ''));
    assert.equal(eventLine, `event: ${data.type}`);
    return data;
  });
  assert.deepEqual(
    events.map((event) => event.type),
    [
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ],
  );
  assert.equal(events[0].message.usage.input_tokens, 2);
  assert.deepEqual(events[0].message.content, []);
  assert.deepEqual(events[3].delta, { type: 'text_delta', text: 'echo:' });
  assert.equal(events[7].delta.stop_reason, 'end_turn');
  assert.equal(events[7].usage.output_tokens, 3);
});

test('"call <tool>" answers with tool_use, plain and streamed as input_json_delta pieces', async (t) => {
  const { client } = await anthropic(t);
  const request = {
    model: 'claude-test',
    max_tokens: 100,
    tools: [WEATHER_TOOL],
    messages: [{ role: 'user' as const, content: 'Could you call get_weather?' }],
  };
  const plain = await client.messages.create(request);
  assert.equal(plain.stop_reason, 'tool_use');
  const [block] = plain.content;
  assert.ok(block.type === 'tool_use');
  assert.match(block.id, /^toolu_/);
  assert.equal(block.name, 'get_weather');
  assert.deepEqual(block.input, { location: 'example', days: 1 });

  const stream = client.messages.stream(request);
  const pieces: string[] = [];
  stream.on('inputJson', (partial) => pieces.push(partial));
  const final = await stream.finalMessage();
  assert.ok(pieces.length > 2);
  assert.deepEqual(JSON.parse(pieces.join('')), { location: 'example', days: 1 });
  const [streamed] = final.content;
  assert.ok(streamed.type === 'tool_use');
  assert.equal(streamed.name, 'get_weather');
  assert.deepEqual(streamed.input, { location: 'example', days: 1 });
  assert.equal(final.stop_reason, 'tool_use');
});

test('a tool result is echoed instead of calling the tool again; max_tokens cuts with stop_reason max_tokens', async (t) => {
  const { client } = await anthropic(t);
  const answered = await client.messages.create({
    model: 'claude-test',
    max_tokens: 100,
    tools: [WEATHER_TOOL],
    messages: [
      { role: 'user', content: 'call get_weather' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny and warm' }] },
    ],
  });
  assert.equal(answered.stop_reason, 'end_turn');
  assert.deepEqual(answered.content, [{ type: 'text', text: 'echo: sunny and warm' }]);

  const cut = await client.messages.create({
    model: 'claude-test',
    max_tokens: 2,
    messages: [{ role: 'user', content: 'one two three' }],
  });
  assert.equal(cut.stop_reason, 'max_tokens');
  assert.deepEqual(cut.content, [{ type: 'text', text: 'echo: one' }]);
});

test('countTokens counts the words of the system prompt and the messages', async (t) => {
  const { client } = await anthropic(t);
  const count = await client.messages.countTokens({
    model: 'claude-test',
    system: 'two words',
    messages: [{ role: 'user', content: 'three more words' }],
  });
  assert.deepEqual(count, { input_tokens: 5 });
});

test('errors reach the SDK as its error classes with the Anthropic error body', async (t) => {
  const { mock, client } = await anthropic(t, { models: ['served'] });
  const ask = () =>
    client.messages.create({ model: 'served', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });

  mock.script('/v1/messages', { reply: { kind: 'error', status: 429 } });
  await assert.rejects(ask(), (error: unknown) => {
    assert.ok(error instanceof Anthropic.RateLimitError);
    assert.equal(error.status, 429);
    const body = error.error as { type: string; error: { type: string; message: string }; request_id: string };
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'rate_limit_error');
    assert.equal(body.request_id, error.requestID);
    assert.match(error.message, /^429 .*rate_limit_error/);
    return true;
  });

  for (const [status, errorClass, type] of [
    [400, Anthropic.BadRequestError, 'invalid_request_error'],
    [500, Anthropic.InternalServerError, 'api_error'],
    [529, Anthropic.InternalServerError, 'overloaded_error'],
  ] as const) {
    mock.script('/v1/messages', { reply: { kind: 'error', status, message: `scripted ${status}` } });
    await assert.rejects(ask(), (error: unknown) => {
      assert.ok(error instanceof errorClass);
      assert.equal(error.status, status);
      assert.deepEqual((error.error as { error: unknown }).error, { type, message: `scripted ${status}` });
      return true;
    });
  }

  await assert.rejects(
    client.messages.create({ model: 'elsewhere', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }),
    (error: unknown) =>
      error instanceof Anthropic.NotFoundError &&
      (error.error as { error: { type: string; message: string } }).error.message === 'model: elsewhere',
  );

  await assert.rejects(
    client.messages.create({ model: 'served', messages: [{ role: 'user', content: 'x' }] } as never),
    (error: unknown) =>
      error instanceof Anthropic.BadRequestError &&
      (error.error as { error: { message: string } }).error.message === 'max_tokens: Field required',
  );
});

test('keys and versions are checked as the real API does', async (t) => {
  const { mock, client } = await anthropic(t, { apiKey: 'right-key' }, { apiKey: 'wrong-key' });
  const body = JSON.stringify({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] });
  await assert.rejects(
    client.messages.create({ model: 'm', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
    Anthropic.AuthenticationError,
  );

  const missingKey = await fetch(`${mock.url}/v1/messages`, {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    body,
  });
  assert.equal(missingKey.status, 401);
  const missingBody = await errorBody(missingKey);
  assert.equal(missingBody.type, 'error');
  assert.deepEqual(missingBody.error, { type: 'authentication_error', message: 'x-api-key header is required' });
  assert.equal(missingBody.request_id, missingKey.headers.get('request-id'));

  const bearer = await fetch(`${mock.url}/v1/messages`, {
    method: 'POST',
    headers: { authorization: 'Bearer right-key', 'anthropic-version': '2023-06-01' },
    body,
  });
  assert.equal(bearer.status, 200);
  const apiKeyHeader = await fetch(`${mock.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': 'right-key', 'anthropic-version': '2023-06-01' },
    body,
  });
  assert.equal(apiKeyHeader.status, 200);
  const wrongApiKeyHeader = await fetch(`${mock.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': 'wrong', 'anthropic-version': '2023-06-01' },
    body,
  });
  assert.equal(wrongApiKeyHeader.status, 401);
  assert.equal((await errorBody(wrongApiKeyHeader)).error.type, 'authentication_error');

  const missingVersion = await fetch(`${mock.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': 'right-key' },
    body,
  });
  assert.equal(missingVersion.status, 400);
  assert.equal((await errorBody(missingVersion)).error.type, 'invalid_request_error');

  const unknownPath = await fetch(`${mock.url}/v1/complete`, {
    method: 'POST',
    headers: { ...ANTHROPIC_HEADERS, 'x-api-key': 'right-key' },
  });
  assert.equal(unknownPath.status, 404);
  assert.equal((await errorBody(unknownPath)).error.type, 'not_found_error');
});

test('scripted delay, reset and garbage reach the SDK as a slow answer, a connection error, a parse error', async (t) => {
  const { mock, client } = await anthropic(t);
  const ask = () => client.messages.create({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] });

  mock.script('/v1/messages', { delayMs: 100 });
  const started = performance.now();
  assert.equal((await ask()).stop_reason, 'end_turn');
  assert.ok(performance.now() - started >= 95);

  mock.script('/v1/messages', { reply: { kind: 'reset' } });
  await assert.rejects(ask(), Anthropic.APIConnectionError);

  mock.script('/v1/messages', { reply: { kind: 'garbage' } });
  await assert.rejects(ask(), /JSON/);

  assert.deepEqual((await ask()).content, [{ type: 'text', text: 'echo: x' }]);
});

test('a stream reset mid-way makes the SDK stream fail after the events already sent', async (t) => {
  const { mock, client } = await anthropic(t);
  mock.script('/v1/messages', { resetAfterEvents: 4 });
  const stream = client.messages.stream({
    model: 'm',
    max_tokens: 10,
    messages: [{ role: 'user', content: 'one two three' }],
  });
  const texts: string[] = [];
  stream.on('text', (text) => texts.push(text));
  await assert.rejects(stream.finalMessage());
  // message_start, content_block_start, ping, then one text delta.
  assert.deepEqual(texts, ['echo:']);
});

test('chunk delays space the events out and each event arrives as it is written', async (t) => {
  const { mock, client } = await anthropic(t);
  mock.script('/v1/messages', { chunkDelayMs: 25 });
  const started = performance.now();
  const arrivals: number[] = [];
  const stream = client.messages.stream({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'a b' }] });
  stream.on('streamEvent', () => arrivals.push(performance.now() - started));
  await stream.finalMessage();
  // 8 events the SDK reports (ping is skipped), 8 gaps of 25 ms between the 9 written.
  assert.equal(arrivals.length, 8);
  assert.ok(arrivals.at(-1)! - arrivals[0] >= 150, `events spread over ${arrivals.at(-1)! - arrivals[0]} ms`);
  assert.ok(arrivals[0] < arrivals.at(-1)! - 100, 'the first event came before the stream ended');
});
