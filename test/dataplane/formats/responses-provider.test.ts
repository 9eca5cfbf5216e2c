// The Responses API's provider side (a server that speaks only the Responses API): requests
// written from Chat Completions and Messages requests, Response objects and event streams read
// back into either client format — recorded streams against golden files
// (test/fixtures/formats/responses-*.sse → expected/; UPDATE_GOLDEN=1 rewrites them), usage with
// its cached and reasoning tokens, stop reasons, failures, and random splits.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  createStreamTranslator,
  TranslationError,
  translateRequest,
  translateResponse,
} from '../../../src/dataplane/ai/formats/index.ts';
import { feed, fixture, parseSse } from './stream-helpers.ts';

test('a Chat Completions request becomes a Responses request', () => {
  const { body, warnings } = translateRequest('completions', 'responses', {
    model: 'o4-mini',
    stream: true,
    max_completion_tokens: 500,
    temperature: 0.3,
    top_p: 0.9,
    stop: ['END'],
    seed: 7,
    reasoning_effort: 'low',
    user: 'u-1',
    service_tier: 'default',
    response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' } } },
    messages: [
      { role: 'developer', content: 'rules' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'high' } },
        ],
      },
      {
        role: 'assistant',
        content: 'calling',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'done' },
    ],
    tools: [{ type: 'function', function: { name: 'f', description: 'does f', parameters: { type: 'object' } } }],
    tool_choice: { type: 'function', function: { name: 'f' } },
    parallel_tool_calls: false,
  });
  assert.deepEqual(body, {
    model: 'o4-mini',
    input: [
      { role: 'developer', content: 'rules' },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'look' },
          { type: 'input_image', image_url: 'data:image/png;base64,AAAA', detail: 'high' },
        ],
      },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'calling', annotations: [] }] },
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{"a":1}' },
      { type: 'function_call_output', call_id: 'c1', output: 'done' },
    ],
    max_output_tokens: 500,
    temperature: 0.3,
    top_p: 0.9,
    stream: true,
    tools: [{ type: 'function', name: 'f', description: 'does f', parameters: { type: 'object' }, strict: false }],
    tool_choice: { type: 'function', name: 'f' },
    parallel_tool_calls: false,
    user: 'u-1',
    text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
    reasoning: { effort: 'low' },
    service_tier: 'default',
    store: false,
    // Reasoning was asked for: its items come encrypted, for the next turn (form/signatures.ts).
    include: ['reasoning.encrypted_content'],
  });
  assert.deepEqual(warnings, [
    { path: 'stop', message: 'no equivalent in the Responses API; dropped' },
    { path: 'seed', message: 'no equivalent in the Responses API; dropped' },
  ]);
});

test('a Messages request becomes a Responses request: system first, tool results, documents', () => {
  const { body, warnings } = translateRequest('messages', 'responses', {
    model: 'o4-mini',
    max_tokens: 1024,
    system: 'be brief',
    stop_sequences: ['###'],
    thinking: { type: 'enabled', budget_tokens: 2048 },
    messages: [
      {
        role: 'user',
        content: [
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBE' }, title: 'r.pdf' },
          { type: 'text', text: 'summarise' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 'sig' },
          { type: 'tool_use', id: 'tu1', name: 'search', input: { q: 'x' } },
        ],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'tu1', content: [{ type: 'text', text: 'found' }] }],
      },
    ],
    tools: [{ name: 'search', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }],
  });
  assert.deepEqual(body, {
    model: 'o4-mini',
    input: [
      { role: 'system', content: 'be brief' },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_file', file_data: 'data:application/pdf;base64,JVBE', filename: 'r.pdf' },
          { type: 'input_text', text: 'summarise' },
        ],
      },
      { type: 'function_call', call_id: 'tu1', name: 'search', arguments: '{"q":"x"}' },
      { type: 'function_call_output', call_id: 'tu1', output: 'found' },
    ],
    max_output_tokens: 1024,
    tools: [
      {
        type: 'function',
        name: 'search',
        parameters: { type: 'object', properties: { q: { type: 'string' } } },
        strict: false,
      },
    ],
    store: false,
  });
  assert.deepEqual(
    warnings?.map((w) => w.path),
    ['messages[1].content[0]', 'stop_sequences', 'thinking'],
  );
});

const RESPONSE = {
  id: 'resp_1',
  object: 'response',
  created_at: 1760000000,
  status: 'completed',
  error: null,
  incomplete_details: null,
  model: 'o4-mini-2025-04-16',
  output: [
    { id: 'rs_0', type: 'reasoning', summary: [{ type: 'summary_text', text: 'considered it' }] },
    {
      id: 'msg_1',
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'It is sunny.', annotations: [] }],
    },
    { id: 'fc_2', type: 'function_call', status: 'completed', call_id: 'call_9', name: 'log', arguments: '{"n":1}' },
    { id: 'ws_3', type: 'web_search_call', status: 'completed' },
  ],
  usage: {
    input_tokens: 1200,
    input_tokens_details: { cached_tokens: 1024 },
    output_tokens: 300,
    output_tokens_details: { reasoning_tokens: 256 },
    total_tokens: 1500,
  },
};

test('a Response read back as a Chat Completion: text, tool calls, usage with cached and reasoning tokens', () => {
  const chat = translateResponse('responses', 'completions', RESPONSE) as {
    id: string;
    model: string;
    choices: { message: Record<string, unknown>; finish_reason: string }[];
    usage: unknown;
  };
  assert.equal(chat.id, 'resp_1');
  assert.equal(chat.model, 'o4-mini-2025-04-16');
  assert.deepEqual(chat.choices[0]!.message, {
    role: 'assistant',
    content: 'It is sunny.',
    refusal: null,
    tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'log', arguments: '{"n":1}' } }],
    // The reasoning summary; without encrypted_content there is no signature.
    reasoning_content: 'considered it',
  });
  assert.equal(chat.choices[0]!.finish_reason, 'tool_calls');
  assert.deepEqual(chat.usage, {
    prompt_tokens: 1200,
    completion_tokens: 300,
    total_tokens: 1500,
    prompt_tokens_details: { cached_tokens: 1024 },
    completion_tokens_details: { reasoning_tokens: 256 },
  });
});

test('a Response read back as a Message: text and tool use, usage split into cache reads', () => {
  const message = translateResponse('responses', 'messages', RESPONSE) as {
    content: Record<string, unknown>[];
    stop_reason: string;
    usage: Record<string, unknown>;
  };
  // The Messages writer keeps a thinking block only with its signature, which an OpenAI summary has not.
  assert.deepEqual(
    message.content.map((block) => block.type),
    ['text', 'tool_use'],
  );
  assert.deepEqual(message.content[1], { type: 'tool_use', id: 'call_9', name: 'log', input: { n: 1 } });
  assert.equal(message.stop_reason, 'tool_use');
  assert.equal(message.usage.input_tokens, 1200 - 1024);
  assert.equal(message.usage.cache_read_input_tokens, 1024);
  assert.equal(message.usage.output_tokens, 300);
});

test('an incomplete Response stops for its reason; a failed or unfinished one is not a response', () => {
  const cut = { ...RESPONSE, status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  const chat = translateResponse('responses', 'completions', { ...cut, output: [RESPONSE.output[1]] }) as {
    choices: { finish_reason: string }[];
  };
  assert.equal(chat.choices[0]!.finish_reason, 'length');
  const filtered = { ...RESPONSE, status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output: [] };
  assert.equal(
    (translateResponse('responses', 'messages', filtered) as { stop_reason: string }).stop_reason,
    'refusal',
  );
  const failed = { ...RESPONSE, status: 'failed', error: { code: 'server_error', message: 'boom' }, output: [] };
  assert.throws(() => translateResponse('responses', 'completions', failed), TranslationError);
  assert.throws(() => translateResponse('responses', 'completions', { ...RESPONSE, status: 'queued' }), /not finished/);
  assert.throws(() => translateResponse('responses', 'completions', { choices: [] }), TranslationError);
});

// The recorded Responses streams (responses-provider-*.sse, responses-incomplete.sse,
// responses-failed.sse) translated to every client format: GOLDEN_CASES of stream-helpers.ts,
// checked by streams-golden.test.ts and fuzzed by streams-fuzz.test.ts.

test('a Responses stream: usage from response.completed, the model, reasoning and text in order', () => {
  const translator = createStreamTranslator('responses', 'completions', { includeUsage: true });
  const events = parseSse(feed(translator, [fixture('responses-provider-text.sse')]));
  assert.deepEqual(translator.usage, {
    inputTokens: 1200,
    outputTokens: 300,
    totalTokens: 1500,
    cachedInputTokens: 1024,
    reasoningTokens: 256,
  });
  assert.equal(translator.model, 'o4-mini-2025-04-16');
  assert.equal(translator.firstTokenSeen, true);
  assert.equal(translator.state, 'complete');
  const chunks = events.slice(0, -1).map((event) => JSON.parse(event.data));
  const text = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
  assert.equal(text, 'Hello, world');
  assert.equal(chunks.find((chunk) => chunk.choices[0]?.finish_reason)?.choices[0].finish_reason, 'stop');
  assert.deepEqual(chunks.at(-1).usage.prompt_tokens_details, { cached_tokens: 1024 });
  assert.deepEqual(chunks.at(-1).usage.completion_tokens_details, { reasoning_tokens: 256 });
  // The reasoning summary reaches a Messages client as a thinking block before the text.
  const messages = parseSse(
    feed(createStreamTranslator('responses', 'messages'), [fixture('responses-provider-text.sse')]),
  );
  const blocks = messages
    .filter((event) => event.event === 'content_block_start')
    .map((event) => JSON.parse(event.data).content_block.type);
  assert.deepEqual(blocks, ['thinking', 'text']);
});

test('a Responses stream: function calls with streamed and unstreamed arguments', () => {
  const events = parseSse(
    feed(createStreamTranslator('responses', 'completions'), [fixture('responses-provider-tools.sse')]),
  );
  const calls = new Map<number, { id?: string; name?: string; args: string }>();
  for (const event of events.slice(0, -1)) {
    for (const call of JSON.parse(event.data).choices[0]?.delta?.tool_calls ?? []) {
      const entry = calls.get(call.index) ?? { args: '' };
      if (call.id) Object.assign(entry, { id: call.id, name: call.function.name });
      entry.args += call.function.arguments ?? '';
      calls.set(call.index, entry);
    }
  }
  assert.deepEqual(
    [...calls.values()],
    [
      { id: 'call_w1', name: 'get_weather', args: '{"city":"Paris"}' },
      { id: 'call_t2', name: 'get_time', args: '{"zone":"CET"}' },
    ],
  );
  const finish = events.map((event) => (event.data === '[DONE]' ? undefined : JSON.parse(event.data)));
  assert.ok(finish.some((chunk) => chunk?.choices[0]?.finish_reason === 'tool_calls'));
});

test('a failed, cut-short or malformed Responses stream ends with an error event', () => {
  const failed = createStreamTranslator('responses', 'messages');
  const events = parseSse(feed(failed, [fixture('responses-failed.sse')]));
  assert.equal(failed.state, 'failed');
  const error = JSON.parse(events.at(-1)!.data);
  assert.deepEqual(error, {
    type: 'error',
    error: { type: 'rate_limit_error', message: 'Rate limit reached for o4-mini.' },
  });
  // The provider's own message is not gw's log text.
  assert.equal(failed.failure, 'The provider reported an error in the stream.');

  const whole = fixture('responses-provider-text.sse');
  const cut = createStreamTranslator('responses', 'completions');
  feed(cut, [whole.subarray(0, Math.floor(whole.length / 2))]);
  assert.equal(cut.state, 'failed');
  assert.match(cut.failure ?? '', /ended before the response was complete/);

  const early = createStreamTranslator('responses', 'completions');
  feed(early, [new TextEncoder().encode('data: {"type":"response.output_text.delta","delta":"x"}\n\n')]);
  assert.match(early.failure ?? '', /before response.created/);

  const errorEvent = createStreamTranslator('responses', 'completions');
  const out = feed(errorEvent, [
    new TextEncoder().encode('event: error\ndata: {"type":"error","code":"server_error","message":"overloaded"}\n\n'),
  ]);
  assert.equal(errorEvent.state, 'failed');
  assert.match(out, /overloaded/);

  // The error nested as in an error body (as gw writes it and the openai SDK reads it): its
  // message and the status its type stands for reach the client.
  const nested = createStreamTranslator('responses', 'messages');
  const nestedOut = feed(nested, [
    new TextEncoder().encode(
      'event: error\ndata: {"type":"error","error":{"type":"requests","message":"slow down","param":null,"code":null},"sequence_number":0}\n\n',
    ),
  ]);
  assert.equal(nested.state, 'failed');
  assert.match(
    nestedOut,
    /event: error\ndata: \{"type":"error","error":\{"type":"rate_limit_error","message":"slow down"\}\}/,
  );
});

test('a Responses stream and Response read back for a Gemini client', () => {
  const translator = createStreamTranslator('responses', 'gemini');
  const chunks = parseSse(feed(translator, [fixture('responses-provider-text.sse')])).map((event) =>
    JSON.parse(event.data),
  );
  const text = chunks
    .flatMap((chunk) => chunk.candidates?.[0]?.content?.parts ?? [])
    .filter((part: { thought?: boolean }) => !part.thought)
    .map((part: { text?: string }) => part.text ?? '')
    .join('');
  assert.equal(text, 'Hello, world');
  assert.equal(chunks.at(-1).candidates[0].finishReason, 'STOP');
  assert.equal(chunks.at(-1).usageMetadata.cachedContentTokenCount, 1024);
  const whole = translateResponse('responses', 'gemini', RESPONSE) as {
    candidates: { content: { parts: Record<string, unknown>[] } }[];
  };
  assert.ok(whole.candidates[0]!.content.parts.some((part) => part.text === 'It is sunny.'));
  assert.ok(
    whole.candidates[0]!.content.parts.some((part) => (part.functionCall as { name?: string })?.name === 'log'),
  );
});
