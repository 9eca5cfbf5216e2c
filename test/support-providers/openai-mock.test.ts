// The OpenAI mock proven with the official SDK pointed straight at it.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import OpenAI from 'openai';
import type { ChatCompletionChunk, ChatCompletionTool } from 'openai/resources/chat/completions';
import { mockEmbedding } from '../support/providers/deterministic.ts';
import type { MockServer } from '../support/providers/mock-server.ts';
import { DEFAULT_OPENAI_MODELS, type OpenAiMockOptions, startOpenAiMock } from '../support/providers/openai-mock.ts';

async function openAi(
  t: TestContext,
  options: OpenAiMockOptions = {},
  clientOptions: { apiKey?: string; maxRetries?: number; timeout?: number } = {},
): Promise<{ mock: MockServer; client: OpenAI }> {
  const mock = await startOpenAiMock(options);
  t.after(() => mock.close());
  const client = new OpenAI({ apiKey: 'test-key', baseURL: `${mock.url}/v1`, maxRetries: 0, ...clientOptions });
  return { mock, client };
}

interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

async function errorBody(response: Response): Promise<OpenAiErrorBody> {
  return (await response.json()) as OpenAiErrorBody;
}

const WEATHER_TOOL: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: {
      type: 'object',
      properties: { location: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } },
      required: ['location'],
    },
  },
};

test('a chat completion echoes the last user message with the request model and word-count usage', async (t) => {
  const { mock, client } = await openAi(t);
  const completion = await client.chat.completions.create({
    model: 'gpt-test',
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: [{ type: 'text', text: 'hello there' }] },
    ],
  });
  assert.equal(completion.object, 'chat.completion');
  assert.match(completion.id, /^chatcmpl-/);
  assert.equal(completion.model, 'gpt-test');
  assert.equal(completion.system_fingerprint, 'fp_mock');
  assert.deepEqual(completion.choices, [
    {
      index: 0,
      message: { role: 'assistant', content: 'echo: hello there', refusal: null, annotations: [] },
      logprobs: null,
      finish_reason: 'stop',
    },
  ]);
  assert.equal(completion.usage?.prompt_tokens, 5);
  assert.equal(completion.usage?.completion_tokens, 3);
  assert.equal(completion.usage?.total_tokens, 8);
  assert.deepEqual(completion.usage?.prompt_tokens_details, { cached_tokens: 0, audio_tokens: 0 });

  const [recorded] = mock.requests;
  assert.equal(recorded.method, 'POST');
  assert.equal(recorded.path, '/v1/chat/completions');
  assert.equal(recorded.headers.authorization, 'Bearer test-key');
  assert.equal((recorded.body as { model: string }).model, 'gpt-test');
});

test('a streamed chat completion sends the role, word deltas, the finish reason, then usage when asked', async (t) => {
  const { client } = await openAi(t);
  const stream = await client.chat.completions.create({
    model: 'gpt-test',
    messages: [{ role: 'user', content: 'stream me please' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);

  assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '', refusal: null });
  const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
  assert.equal(text, 'echo: stream me please');
  assert.deepEqual(
    chunks.slice(1, 5).map((chunk) => chunk.choices[0].delta.content),
    ['echo:', ' stream', ' me', ' please'],
  );
  const finish = chunks.at(-2)!;
  assert.deepEqual(finish.choices, [{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]);
  const last = chunks.at(-1)!;
  assert.deepEqual(last.choices, []);
  assert.equal(last.usage?.prompt_tokens, 3);
  assert.equal(last.usage?.completion_tokens, 4);
  assert.ok(chunks.slice(0, -1).every((chunk) => chunk.usage === null));
  assert.ok(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.id === chunks[0].id));
});

test('without include_usage a stream has no usage chunk and no usage field', async (t) => {
  const { client } = await openAi(t);
  const stream = await client.chat.completions.create({
    model: 'gpt-test',
    messages: [{ role: 'user', content: 'hi' }],
    stream: true,
  });
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  assert.equal(chunks.at(-1)?.choices[0].finish_reason, 'stop');
  assert.ok(chunks.every((chunk) => !('usage' in chunk) && chunk.choices.length === 1));
});

test('the stream is server-sent events: event-stream content type, data lines, blank-line separators, [DONE]', async (t) => {
  const { mock } = await openAi(t);
  const response = await fetch(`${mock.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'a b' }] }),
  });
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
  assert.match(response.headers.get('x-request-id') ?? '', /^req_/);
  const body = await response.text();
  assert.ok(body.endsWith('data: [DONE]\n\n'));
  const frames = body.split('\n\n').filter((frame) => frame !== '');
  assert.ok(frames.every((frame) => frame.startsWith('data: ') && !frame.includes('\n')));
  assert.equal(frames.length, 1 + 3 + 1 + 1); // role, three words ("echo: a b"), finish, [DONE]
});

test('"call <tool>" in the last user message answers with a tool call and schema-derived arguments', async (t) => {
  const { client } = await openAi(t);
  const completion = await client.chat.completions.create({
    model: 'gpt-test',
    tools: [WEATHER_TOOL],
    messages: [{ role: 'user', content: 'Please call get_weather for Paris.' }],
  });
  const [choice] = completion.choices;
  assert.equal(choice.finish_reason, 'tool_calls');
  assert.equal(choice.message.content, null);
  assert.equal(choice.message.tool_calls?.length, 1);
  const call = choice.message.tool_calls![0];
  assert.equal(call.type, 'function');
  assert.match(call.id, /^call_/);
  assert.ok(call.type === 'function');
  assert.equal(call.function.name, 'get_weather');
  assert.deepEqual(JSON.parse(call.function.arguments), { location: 'example', unit: 'celsius' });
});

test('a streamed tool call sends id and name first, then argument pieces the SDK reassembles', async (t) => {
  const { client } = await openAi(t);
  const stream = await client.chat.completions.create({
    model: 'gpt-test',
    tools: [WEATHER_TOOL],
    messages: [{ role: 'user', content: 'call get_weather' }],
    stream: true,
  });
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  const first = chunks[0].choices[0].delta;
  assert.equal(first.role, 'assistant');
  assert.equal(first.tool_calls?.[0].index, 0);
  assert.match(first.tool_calls?.[0].id ?? '', /^call_/);
  assert.deepEqual(first.tool_calls?.[0].function, { name: 'get_weather', arguments: '' });
  const pieces = chunks.slice(1, -1).map((chunk) => chunk.choices[0].delta.tool_calls?.[0].function?.arguments);
  assert.ok(pieces.length > 1);
  assert.deepEqual(JSON.parse(pieces.join('')), { location: 'example', unit: 'celsius' });
  assert.equal(chunks.at(-1)?.choices[0].finish_reason, 'tool_calls');

  const final = await client.chat.completions
    .stream({ model: 'gpt-test', tools: [WEATHER_TOOL], messages: [{ role: 'user', content: 'call get_weather' }] })
    .finalChatCompletion();
  const toolCall = final.choices[0].message.tool_calls?.[0];
  assert.ok(toolCall?.type === 'function');
  assert.equal(toolCall.function.name, 'get_weather');
  assert.deepEqual(JSON.parse(toolCall.function.arguments), { location: 'example', unit: 'celsius' });
});

test('a tool result is echoed back instead of calling the tool again', async (t) => {
  const { client } = await openAi(t);
  const completion = await client.chat.completions.create({
    model: 'gpt-test',
    tools: [WEATHER_TOOL],
    messages: [
      { role: 'user', content: 'call get_weather' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny and warm' },
    ],
  });
  assert.equal(completion.choices[0].finish_reason, 'stop');
  assert.equal(completion.choices[0].message.content, 'echo: sunny and warm');
});

test('max_tokens cuts the answer to that many words with finish_reason length', async (t) => {
  const { client } = await openAi(t);
  const completion = await client.chat.completions.create({
    model: 'gpt-test',
    max_tokens: 2,
    messages: [{ role: 'user', content: 'one two three' }],
  });
  assert.equal(completion.choices[0].message.content, 'echo: one');
  assert.equal(completion.choices[0].finish_reason, 'length');
  assert.equal(completion.usage?.completion_tokens, 2);
});

test('a response echoes the input with usage; instructions count as input', async (t) => {
  const { client } = await openAi(t);
  const response = await client.responses.create({
    model: 'gpt-test',
    instructions: 'be brief',
    input: [{ role: 'user', content: [{ type: 'input_text', text: 'hello responses' }] }],
  });
  assert.equal(response.object, 'response');
  assert.match(response.id, /^resp_/);
  assert.equal(response.status, 'completed');
  assert.equal(response.model, 'gpt-test');
  assert.equal(response.output_text, 'echo: hello responses');
  assert.equal(response.output[0].type, 'message');
  assert.equal(response.usage?.input_tokens, 4);
  assert.equal(response.usage?.output_tokens, 3);
  assert.equal(response.usage?.total_tokens, 7);
  assert.equal(response.instructions, 'be brief');
});

test('a streamed response sends the typed events in order with sequence numbers', async (t) => {
  const { client } = await openAi(t);
  const stream = await client.responses.create({ model: 'gpt-test', input: 'hi there', stream: true });
  const events = [];
  for await (const event of stream) events.push(event);
  assert.deepEqual(
    events.map((event) => event.type),
    [
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ],
  );
  assert.deepEqual(
    events.map((event) => event.sequence_number),
    events.map((_, index) => index),
  );
  const deltas = events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : []));
  assert.deepEqual(deltas, ['echo:', ' hi', ' there']);
  const created = events[0];
  assert.ok(created.type === 'response.created');
  assert.equal(created.response.status, 'in_progress');
  const completed = events.at(-1)!;
  assert.ok(completed.type === 'response.completed');
  assert.equal(completed.response.usage?.output_tokens, 3);
  assert.equal(completed.response.usage?.input_tokens, 2);
});

test('the SDK response stream helper assembles text and function calls from the events', async (t) => {
  const { client } = await openAi(t);
  const text = await client.responses.stream({ model: 'gpt-test', input: 'assemble this' }).finalResponse();
  assert.equal(text.output_text, 'echo: assemble this');

  const called = await client.responses
    .stream({
      model: 'gpt-test',
      input: [{ role: 'user', content: 'call lookup' }],
      tools: [
        {
          type: 'function',
          name: 'lookup',
          strict: false,
          parameters: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer' } } },
        },
      ],
    })
    .finalResponse();
  const [item] = called.output;
  assert.ok(item.type === 'function_call');
  assert.equal(item.name, 'lookup');
  assert.match(item.call_id, /^call_/);
  assert.deepEqual(JSON.parse(item.arguments), { query: 'example', limit: 1 });
});

test('the responses stream is event: + data: frames', async (t) => {
  const { mock } = await openAi(t);
  const response = await fetch(`${mock.url}/v1/responses`, {
    method: 'POST',
    headers: { authorization: 'Bearer k' },
    body: JSON.stringify({ model: 'm', input: 'x', stream: true }),
  });
  assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);
  const frames = (await response.text()).split('\n\n').filter((frame) => frame !== '');
  for (const frame of frames) {
    const [eventLine, dataLine] = frame.split('\n');
    const data = JSON.parse(dataLine.replace(/^data: /, ''));
    assert.equal(eventLine, `event: ${data.type}`);
  }
  assert.equal(frames.at(-1)?.split('\n')[0], 'event: response.completed');
});

test('embeddings come as floats, or as base64 the SDK decodes to the same floats', async (t) => {
  const { mock, client } = await openAi(t);
  const input = ['first text', 'second'];
  const floats = await client.embeddings.create({ model: 'embed-test', input, encoding_format: 'float' });
  assert.equal(floats.object, 'list');
  assert.equal(floats.model, 'embed-test');
  assert.deepEqual(
    floats.data.map((entry) => entry.index),
    [0, 1],
  );
  assert.deepEqual(floats.data[0].embedding, mockEmbedding('first text'));
  assert.deepEqual(floats.data[1].embedding, mockEmbedding('second'));
  assert.deepEqual(floats.usage, { prompt_tokens: 3, total_tokens: 3 });

  const decoded = await client.embeddings.create({ model: 'embed-test', input, dimensions: 4 });
  assert.equal((mock.requests.at(-1)!.body as { encoding_format: string }).encoding_format, 'base64');
  assert.deepEqual(decoded.data[0].embedding, mockEmbedding('first text', 4));
  assert.deepEqual(decoded.data[1].embedding, mockEmbedding('second', 4));

  const raw = await client.embeddings.create({ model: 'embed-test', input: 'x', encoding_format: 'base64' });
  assert.equal(typeof raw.data[0].embedding, 'string');
});

test('models are listed in the list shape; an unknown one is a 404', async (t) => {
  const { client } = await openAi(t);
  const page = await client.models.list();
  assert.deepEqual(
    page.data.map((model) => model.id),
    DEFAULT_OPENAI_MODELS,
  );
  assert.equal(page.data[0].object, 'model');
  await assert.rejects(client.models.retrieve('nope'), OpenAI.NotFoundError);

  const { client: limited } = await openAi(t, { models: ['only-model'] });
  assert.deepEqual(
    (await limited.models.list()).data.map((model) => model.id),
    ['only-model'],
  );
  assert.equal((await limited.models.retrieve('only-model')).id, 'only-model');
});

test('errors reach the SDK as its error classes with OpenAI error fields', async (t) => {
  const { mock, client } = await openAi(t, { models: ['served'] });
  const ask = () => client.chat.completions.create({ model: 'served', messages: [{ role: 'user', content: 'x' }] });

  mock.script('/v1/chat/completions', { reply: { kind: 'error', status: 429 } });
  await assert.rejects(ask(), (error: unknown) => {
    assert.ok(error instanceof OpenAI.RateLimitError);
    assert.equal(error.status, 429);
    assert.equal(error.message, '429 Rate limit reached for requests.');
    assert.equal(error.type, 'requests');
    assert.equal(error.code, 'rate_limit_exceeded');
    assert.match(error.requestID ?? '', /^req_/);
    return true;
  });

  mock.script('/v1/chat/completions', { reply: { kind: 'error', status: 500 } });
  await assert.rejects(ask(), OpenAI.InternalServerError);

  mock.script('/v1/chat/completions', {
    reply: { kind: 'error', status: 400, message: 'bad thing', param: 'temperature' },
  });
  await assert.rejects(ask(), (error: unknown) => {
    assert.ok(error instanceof OpenAI.BadRequestError);
    assert.equal(error.message, '400 bad thing');
    assert.equal(error.type, 'invalid_request_error');
    assert.equal(error.param, 'temperature');
    return true;
  });

  await assert.rejects(
    client.chat.completions.create({ model: 'not-served', messages: [{ role: 'user', content: 'x' }] }),
    (error: unknown) => {
      assert.ok(error instanceof OpenAI.NotFoundError);
      assert.equal(error.code, 'model_not_found');
      assert.match(error.message, /`not-served` does not exist/);
      return true;
    },
  );

  await assert.rejects(
    client.chat.completions.create({ model: 'served', messages: [] }),
    (error: unknown) => error instanceof OpenAI.BadRequestError && error.param === 'messages',
  );
});

test('a required API key turns a wrong key into 401 invalid_api_key; a missing key is 401 too', async (t) => {
  const { mock, client } = await openAi(t, { apiKey: 'right-key' }, { apiKey: 'wrong-key-123' });
  await assert.rejects(client.models.list(), (error: unknown) => {
    assert.ok(error instanceof OpenAI.AuthenticationError);
    assert.equal(error.code, 'invalid_api_key');
    return true;
  });
  const right = new OpenAI({ apiKey: 'right-key', baseURL: `${mock.url}/v1`, maxRetries: 0 });
  assert.equal((await right.models.list()).data.length, DEFAULT_OPENAI_MODELS.length);

  const response = await fetch(`${mock.url}/v1/models`);
  assert.equal(response.status, 401);
  const body = await errorBody(response);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
  assert.equal(body.error.type, 'invalid_request_error');
});

test('unknown paths and bodies that are not JSON get OpenAI errors', async (t) => {
  const { mock } = await openAi(t);
  const unknown = await fetch(`${mock.url}/v1/nothing`, { method: 'POST', headers: { authorization: 'Bearer k' } });
  assert.equal(unknown.status, 404);
  assert.equal((await errorBody(unknown)).error.message, 'Invalid URL (POST /v1/nothing)');
  const broken = await fetch(`${mock.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer k' },
    body: '{not json',
  });
  assert.equal(broken.status, 400);
  assert.equal((await errorBody(broken)).error.type, 'invalid_request_error');
  assert.equal(mock.requests.at(-1)?.body, '{not json');
});

test('scripted delay holds the headers back; a client timeout shorter than it fails', async (t) => {
  const { mock, client } = await openAi(t);
  mock.script('/v1/chat/completions', { delayMs: 120 });
  const started = performance.now();
  await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
  assert.ok(performance.now() - started >= 115);

  mock.script('/v1/chat/completions', { delayMs: 300 });
  await assert.rejects(
    client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }, { timeout: 50 }),
    OpenAI.APIConnectionTimeoutError,
  );
});

test('scripted resets and garbage reach the SDK as a connection error and a parse error', async (t) => {
  const { mock, client } = await openAi(t);
  const ask = () => client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
  mock.script('/v1/chat/completions', { reply: { kind: 'reset' } });
  await assert.rejects(ask(), OpenAI.APIConnectionError);

  mock.script('/v1/chat/completions', { reply: { kind: 'garbage' } });
  await assert.rejects(ask(), /JSON/);

  mock.script('/v1/chat/completions', { reply: { kind: 'body', body: { custom: 'shape' } } });
  assert.deepEqual(await ask(), { custom: 'shape' });

  // The queue is used up: the normal answer is back.
  assert.equal((await ask()).choices[0].message.content, 'echo: x');
});

test('a stream reset after K events delivers exactly K events, then the SDK fails', async (t) => {
  const { mock, client } = await openAi(t);
  mock.script('/v1/chat/completions', { resetAfterEvents: 2 });
  const stream = await client.chat.completions.create({
    model: 'm',
    messages: [{ role: 'user', content: 'one two three four' }],
    stream: true,
  });
  const received: ChatCompletionChunk[] = [];
  await assert.rejects(async () => {
    for await (const chunk of stream) received.push(chunk);
  });
  assert.equal(received.length, 2);
});

test('retries see the scripted errors in turn, then the normal answer', async (t) => {
  const { mock, client } = await openAi(t, {}, { maxRetries: 2 });
  // retry-after-ms: 0 makes the SDK retry at once.
  mock.script('/v1/chat/completions', { reply: { kind: 'error', status: 503, headers: { 'retry-after-ms': '0' } } }, 2);
  const completion = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
  assert.equal(completion.choices[0].message.content, 'echo: x');
  assert.deepEqual(
    mock.requests.map((request) => request.headers['x-stainless-retry-count']),
    ['0', '1', '2'],
  );
});
