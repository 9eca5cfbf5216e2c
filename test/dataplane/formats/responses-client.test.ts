// The Responses API as a client format: its requests read into the chat form and written for a
// Messages or Chat Completions provider, and the provider's answers written back as Responses
// objects and event streams, which the openai SDK's responses client must assemble.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import OpenAI from 'openai';
import {
  type ChatFormat,
  createStreamTranslator,
  TranslationError,
  translateRequest,
  translateResponse,
} from '../../../src/dataplane/ai/formats/index.ts';
import { feed, fixture, parseSse, prng, randomSplits } from './stream-helpers.ts';

const conversation = {
  model: 'm',
  instructions: 'Be brief.',
  input: [
    { role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.', annotations: [] }] },
    { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
    { type: 'function_call_output', call_id: 'call_1', output: '18°C' },
    {
      role: 'user',
      content: [
        { type: 'input_text', text: 'And this?' },
        { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
      ],
    },
  ],
  tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: true }],
  tool_choice: 'required',
  max_output_tokens: 300,
  temperature: 0.3,
  text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
  reasoning: { effort: 'high' },
  stream: true,
  store: false,
};

test('a Responses conversation as a Messages request', () => {
  const { body, warnings } = translateRequest('responses', 'messages', conversation);
  assert.equal(warnings, undefined);
  assert.deepEqual(body, {
    model: 'm',
    system: 'Be brief.',
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '18°C' },
          { type: 'text', text: 'And this?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        ],
      },
    ],
    max_tokens: 300,
    temperature: 0.3,
    stream: true,
    tools: [{ name: 'get_weather', input_schema: { type: 'object' }, strict: true }],
    tool_choice: { type: 'any' },
    output_config: { format: { type: 'json_schema', schema: { type: 'object' } }, effort: 'high' },
  });
});

test('a Responses conversation as a Chat Completions request', () => {
  const { body, warnings } = translateRequest('responses', 'completions', conversation);
  assert.equal(warnings, undefined);
  assert.deepEqual(body, {
    model: 'm',
    messages: [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '18°C' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'And this?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      },
    ],
    max_completion_tokens: 300,
    temperature: 0.3,
    stream: true,
    stream_options: { include_usage: true },
    tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' }, strict: true } }],
    tool_choice: 'required',
    response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
    reasoning_effort: 'high',
  });
});

test('what only the Responses API has is refused or dropped with warnings', () => {
  assert.throws(
    () => translateRequest('responses', 'messages', { model: 'm', input: 'hi', previous_response_id: 'resp_1' }),
    (error: unknown) =>
      error instanceof TranslationError && /previous_response_id: not supported here/.test(error.message),
  );
  assert.throws(
    () => translateRequest('responses', 'messages', { model: 'm', input: 'hi', background: true }),
    /background: not supported here/,
  );
  assert.throws(() => translateRequest('responses', 'messages', { model: 'm', input: 7 }), /input: must be a string/);
  const { body, warnings } = translateRequest('responses', 'messages', {
    model: 'm',
    input: [
      { type: 'reasoning', id: 'rs_1', summary: [] },
      { role: 'user', content: 'hi' },
    ],
    tools: [{ type: 'web_search' }],
    text: { verbosity: 'low' },
    store: true,
    metadata: { a: '1' },
  });
  assert.deepEqual(body.messages, [{ role: 'user', content: 'hi' }]);
  assert.equal(body.tools, undefined);
  assert.deepEqual(warnings?.map((w) => w.path).sort(), [
    'input[0]',
    'metadata',
    'store',
    'text.verbosity',
    'tools[0]',
  ]);
});

test('a Messages response as a Response: a message item, a function_call item, usage, status', () => {
  const response = translateResponse('messages', 'responses', {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude',
    content: [
      { type: 'thinking', thinking: 'Paris first.', signature: 'sig' },
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
    ],
    stop_reason: 'tool_use',
    usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 4 },
  });
  assert.equal(response.object, 'response');
  assert.equal(response.id, 'msg_1');
  assert.equal(response.status, 'completed');
  assert.deepEqual(response.output, [
    {
      id: 'rs_0',
      type: 'reasoning',
      summary: [],
      content: [{ type: 'reasoning_text', text: 'Paris first.' }],
      // The thinking signature, which the client sends back with the item (form/signatures.ts).
      encrypted_content: 'gw.signature.v1:sig',
    },
    {
      id: 'msg_1',
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Checking.', annotations: [], logprobs: [] }],
    },
    {
      id: 'fc_2',
      type: 'function_call',
      status: 'completed',
      call_id: 'toolu_1',
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
    },
  ]);
  assert.deepEqual(response.usage, {
    input_tokens: 14,
    input_tokens_details: { cached_tokens: 4 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 19,
  });
  const cut = translateResponse('completions', 'responses', {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: 'gpt',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Once upon' }, finish_reason: 'length' }],
  });
  assert.equal(cut.status, 'incomplete');
  assert.deepEqual(cut.incomplete_details, { reason: 'max_output_tokens' });
});

async function serveStream(name: string, from: ChatFormat, run: (client: OpenAI) => Promise<void>): Promise<void> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const translator = createStreamTranslator(from, 'responses');
      for (const piece of randomSplits(fixture(name), prng(5), 12)) {
        const out = translator.write(piece);
        if (out) response.write(out);
      }
      response.end(translator.end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    await run(new OpenAI({ baseURL, apiKey: 'test', maxRetries: 0 }));
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

for (const [name, from] of [
  ['messages-tools.sse', 'messages'],
  ['completions-tools.sse', 'completions'],
] as const) {
  test(`the openai SDK's responses.stream() assembles a translated ${from} stream`, async () => {
    await serveStream(name, from, async (client) => {
      const stream = client.responses.stream({ model: 'm', input: 'Weather?' });
      const deltas: string[] = [];
      stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
      const response = await stream.finalResponse();
      assert.equal(response.status, 'completed');
      assert.ok(response.output_text.length > 0);
      assert.equal(deltas.join(''), response.output_text);
      const calls = response.output.filter((item) => item.type === 'function_call');
      assert.ok(calls.length >= 2);
      for (const call of calls) {
        assert.equal(call.status, 'completed');
        assert.equal(typeof JSON.parse(call.arguments), 'object');
      }
      assert.ok((response.usage?.input_tokens ?? 0) > 0);
    });
  });
}

test("a failed translated Responses stream ends with the API's error event, numbered, which the openai SDK throws", async () => {
  const events = parseSse(feed(createStreamTranslator('messages', 'responses'), [fixture('messages-error.sse')]));
  const last = events.at(-1)!;
  assert.equal(last.event, 'error');
  assert.deepEqual(JSON.parse(last.data), {
    type: 'error',
    error: { message: 'Overloaded', type: 'server_error', param: null, code: null },
    sequence_number: events.length - 1,
  });
  await serveStream('messages-error.sse', 'messages', async (client) => {
    const stream = await client.responses.create({ model: 'm', input: 'Hi', stream: true });
    await assert.rejects(
      (async () => {
        for await (const _event of stream);
      })(),
      (error: Error) => error instanceof OpenAI.APIError && /Overloaded/.test(error.message),
    );
  });
});

test('a translated Responses stream numbers its events and ends with response.completed', () => {
  const translator = createStreamTranslator('messages', 'responses');
  const events = parseSse(feed(translator, [fixture('messages-tools.sse')]));
  const payloads = events.map((event) => ({ name: event.event, data: JSON.parse(event.data) }));
  assert.deepEqual(
    payloads.map((p) => p.data.sequence_number),
    payloads.map((_, i) => i),
  );
  for (const p of payloads) assert.equal(p.name, p.data.type);
  assert.equal(payloads[0]!.name, 'response.created');
  assert.equal(payloads.at(-1)!.name, 'response.completed');
  assert.equal(translator.state, 'complete');
  assert.equal(translator.firstTokenSeen, true);
  assert.equal(payloads.at(-1)!.data.response.usage.input_tokens, 472 + 3000 + 1200);
});

test('a translated Responses stream ends well however the provider stream is split, cut or corrupted', () => {
  const inputs = [
    ['messages-text.sse', 'messages'],
    ['messages-tools.sse', 'messages'],
    ['messages-error.sse', 'messages'],
    ['completions-text.sse', 'completions'],
    ['completions-tools.sse', 'completions'],
    ['completions-error.sse', 'completions'],
  ] as const;
  const random = prng(31);
  let cases = 0;
  for (const [name, from] of inputs) {
    const whole = fixture(name);
    for (let i = 0; i < 60; i++) {
      let bytes = whole.subarray(0, i % 3 === 0 ? Math.floor(random() * whole.length) : whole.length);
      if (i % 3 === 1) {
        bytes = Uint8Array.from(bytes);
        bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
      }
      const context = `${name} case ${i}`;
      const translator = createStreamTranslator(from, 'responses');
      const output = feed(translator, randomSplits(bytes, random, 10));
      const events = parseSse(output);
      assert.ok(events.length > 0, `${context}: no events`);
      const payloads = events.map((event) => JSON.parse(event.data) as { type?: string; error?: { message?: string } });
      const errors = payloads.filter((payload) => payload.error !== undefined);
      assert.ok(errors.length <= 1, `${context}: more than one error`);
      const last = payloads.at(-1)!;
      const completed = last.type === 'response.completed' || last.type === 'response.incomplete';
      assert.ok(completed || typeof last.error?.message === 'string', `${context}: ends with ${events.at(-1)!.data}`);
      assert.notEqual(translator.state, 'open', context);
      cases++;
    }
  }
  assert.equal(cases, 360);
});
