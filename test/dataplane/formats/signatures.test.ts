// Provider signatures through the chat form (docs/decisions/0025-provider-signatures.md), one
// mapping at a time: Gemini's thoughtSignature on a function call as each client format carries
// it (Chat Completions extra_content, a Messages thinking block, a Responses reasoning item) and
// back onto the functionCall part; Claude's thinking signature and redacted thinking in a
// Responses reasoning item's encrypted_content, whole and streamed, and back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  createStreamTranslator,
  type JsonObject,
  translateRequest,
  translateResponse,
} from '../../../src/dataplane/ai/formats/index.ts';
import { eventFrame } from '../../helpers/bedrock-stand-in.ts';
import { feed, parseSse } from './stream-helpers.ts';

const SIG = 'CiQB0e2Kb2t7Ryh4pVNyb8hYdq1s1AqmlLrmVwqkJX0CA5PNvjo=';
const CALL = { id: 'c1', name: 'get_weather', args: { city: 'Paris' } };

/** A Gemini response: a signed function call, then an unsigned parallel one. */
const GEMINI_RESPONSE = {
  candidates: [
    {
      content: {
        role: 'model',
        parts: [
          { functionCall: CALL, thoughtSignature: SIG },
          { functionCall: { id: 'c2', name: 'get_weather', args: { city: 'Rome' } } },
        ],
      },
      finishReason: 'STOP',
    },
  ],
  modelVersion: 'gemini-3-pro-preview',
  responseId: 'r1',
};

/** The model turn a Gemini request should have for that response, sent back. */
const SIGNED_MODEL_TURN = {
  role: 'model',
  parts: [
    { functionCall: CALL, thoughtSignature: SIG },
    { functionCall: { id: 'c2', name: 'get_weather', args: { city: 'Rome' } } },
  ],
};

function geminiModelTurn(body: JsonObject): unknown {
  return (body.contents as { role: string }[]).find((content) => content.role === 'model');
}

test('Gemini → Chat Completions: the signature is extra_content.google.thought_signature of its tool call', () => {
  const out = translateResponse('gemini', 'completions', GEMINI_RESPONSE);
  const calls = (out.choices as { message: { tool_calls: JsonObject[] } }[])[0]!.message.tool_calls;
  assert.deepEqual(calls[0]!.extra_content, { google: { thought_signature: SIG } });
  assert.equal(calls[1]!.extra_content, undefined, 'an unsigned call has none');
});

/** A Chat Completions conversation with SIGNED_MODEL_TURN's calls as a Gemini-compatible client keeps them. */
const SIGNED_CHAT_CONVERSATION = {
  model: 'gemini-3-pro-preview',
  messages: [
    { role: 'user', content: 'weather?' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'c1',
          type: 'function',
          function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          extra_content: { google: { thought_signature: SIG } },
        },
        { id: 'c2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
    { role: 'tool', tool_call_id: 'c2', content: 'rain' },
  ],
};

test('Chat Completions → Gemini: extra_content.google.thought_signature goes back on the functionCall part', () => {
  const { body, warnings } = translateRequest('completions', 'gemini', SIGNED_CHAT_CONVERSATION);
  assert.equal(warnings, undefined);
  assert.deepEqual(geminiModelTurn(body), SIGNED_MODEL_TURN);
});

test('Gemini → Messages: a thinking block with only the signature before the signed tool_use', () => {
  const out = translateResponse('gemini', 'messages', GEMINI_RESPONSE);
  assert.deepEqual(
    (out.content as JsonObject[]).map((block) => block.type),
    ['thinking', 'tool_use', 'tool_use'],
  );
  assert.deepEqual((out.content as JsonObject[])[0], { type: 'thinking', thinking: '', signature: SIG });
});

test('Messages → Gemini: a thinking block with only a signature right before a tool_use is that call’s signature', () => {
  const { body, warnings } = translateRequest('messages', 'gemini', {
    model: 'gemini-3-pro-preview',
    max_tokens: 100,
    messages: [
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: '', signature: SIG },
          { type: 'tool_use', id: 'c1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'c2', name: 'get_weather', input: { city: 'Rome' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'c1', content: 'sunny' },
          { type: 'tool_result', tool_use_id: 'c2', content: 'rain' },
        ],
      },
    ],
  });
  assert.equal(warnings, undefined);
  assert.deepEqual(geminiModelTurn(body), SIGNED_MODEL_TURN);
});

test('a thought with text keeps its own signature as a thought part (it is not moved onto a call)', () => {
  const { body } = translateRequest('messages', 'gemini', {
    model: 'g',
    max_tokens: 100,
    messages: [
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Paris first.', signature: 'T' },
          { type: 'tool_use', id: 'c1', name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'sunny' }] },
    ],
  });
  assert.deepEqual(geminiModelTurn(body), {
    role: 'model',
    parts: [
      { text: 'Paris first.', thought: true, thoughtSignature: 'T' },
      { functionCall: { id: 'c1', name: 'get_weather', args: { city: 'Paris' } } },
    ],
  });
});

test('Gemini → Responses: a reasoning item with encrypted_content before the signed function_call', () => {
  const out = translateResponse('gemini', 'responses', GEMINI_RESPONSE);
  const output = out.output as JsonObject[];
  assert.deepEqual(
    output.map((item) => item.type),
    ['reasoning', 'function_call', 'function_call'],
  );
  assert.deepEqual(output[0], {
    id: 'rs_0',
    type: 'reasoning',
    summary: [],
    content: [],
    encrypted_content: `gw.signature.v1:${SIG}`,
  });
});

test('Responses → Gemini: the reasoning item read back puts the signature on the call after it', () => {
  const output = translateResponse('gemini', 'responses', GEMINI_RESPONSE).output as JsonObject[];
  const { body, warnings } = translateRequest('responses', 'gemini', {
    model: 'gemini-3-pro-preview',
    include: ['reasoning.encrypted_content'],
    input: [
      { role: 'user', content: 'weather?' },
      ...output,
      { type: 'function_call_output', call_id: 'c1', output: 'sunny' },
      { type: 'function_call_output', call_id: 'c2', output: 'rain' },
    ],
  });
  assert.equal(warnings, undefined, 'include: reasoning.encrypted_content is served, not dropped');
  assert.deepEqual(geminiModelTurn(body), SIGNED_MODEL_TURN);
});

test('Responses → Messages: the thinking text and signature, and redacted thinking, from encrypted_content', () => {
  const { body, warnings } = translateRequest('responses', 'messages', {
    model: 'claude',
    max_output_tokens: 100,
    input: [
      { role: 'user', content: 'weather?' },
      {
        id: 'rs_0',
        type: 'reasoning',
        summary: [],
        content: [{ type: 'reasoning_text', text: 'Paris first.' }],
        encrypted_content: 'gw.signature.v1:T',
      },
      { id: 'rs_1', type: 'reasoning', summary: [], encrypted_content: 'gw.redacted.v1:R' },
      { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'c1', output: 'sunny' },
    ],
  });
  assert.equal(warnings, undefined);
  assert.deepEqual((body.messages as JsonObject[])[1], {
    role: 'assistant',
    content: [
      { type: 'thinking', thinking: 'Paris first.', signature: 'T' },
      { type: 'redacted_thinking', data: 'R' },
      { type: 'tool_use', id: 'c1', name: 'get_weather', input: { city: 'Paris' } },
    ],
  });
});

test('a reasoning item without gw’s encrypted_content (OpenAI’s own, or none) is dropped with a warning naming include', () => {
  const { body, warnings } = translateRequest('responses', 'messages', {
    model: 'claude',
    max_output_tokens: 100,
    input: [
      { role: 'user', content: 'hi' },
      { id: 'rs_0', type: 'reasoning', summary: [], encrypted_content: 'gAAAAopenai' },
      { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'x' }] },
    ],
  });
  assert.equal((body.messages as JsonObject[]).length, 1);
  assert.deepEqual(
    warnings?.map((warning) => warning.path),
    ['input[1]', 'input[2]'],
  );
  assert.match(warnings![0]!.message, /reasoning\.encrypted_content/);
});

test('include values other than reasoning.encrypted_content are still reported as dropped', () => {
  const { warnings } = translateRequest('responses', 'messages', {
    model: 'claude',
    max_output_tokens: 100,
    input: 'hi',
    include: ['reasoning.encrypted_content', 'message.output_text.logprobs'],
  });
  assert.deepEqual(
    warnings?.map((warning) => warning.path),
    ['include'],
  );
});

const CLAUDE_RESPONSE = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude',
  content: [
    { type: 'thinking', thinking: 'Paris first.', signature: 'T' },
    { type: 'redacted_thinking', data: 'R' },
    { type: 'tool_use', id: 'c1', name: 'get_weather', input: { city: 'Paris' } },
  ],
  stop_reason: 'tool_use',
  usage: { input_tokens: 10, output_tokens: 5 },
};

/** CLAUDE_RESPONSE's thinking and redacted thinking as Responses reasoning items. */
const CLAUDE_REASONING_ITEMS = [
  {
    id: 'rs_0',
    type: 'reasoning',
    summary: [],
    content: [{ type: 'reasoning_text', text: 'Paris first.' }],
    encrypted_content: 'gw.signature.v1:T',
  },
  { id: 'rs_1', type: 'reasoning', summary: [], content: [], encrypted_content: 'gw.redacted.v1:R' },
];

test('Messages → Responses: signed thinking and redacted thinking are reasoning items with encrypted_content', () => {
  const output = translateResponse('messages', 'responses', CLAUDE_RESPONSE).output as JsonObject[];
  assert.deepEqual(output.slice(0, 2), CLAUDE_REASONING_ITEMS);
});

test('Converse → Messages: redacted reasoning is a redacted_thinking block of a whole response', () => {
  const out = translateResponse('converse', 'messages', {
    output: {
      message: {
        role: 'assistant',
        content: [
          { reasoningContent: { redactedContent: 'UkVE' } },
          { toolUse: { toolUseId: 'c1', name: 'get_weather', input: { city: 'Paris' } } },
        ],
      },
    },
    stopReason: 'tool_use',
    usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
  });
  assert.deepEqual((out.content as JsonObject[])[0], { type: 'redacted_thinking', data: 'UkVE' });
});

/** A Messages stream of CLAUDE_RESPONSE's blocks. */
function claudeStream(): Uint8Array {
  const events: JsonObject[] = [
    { type: 'message_start', message: { id: 'msg_1', model: 'claude', usage: { input_tokens: 10 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Paris first.' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'T' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'content_block_start', index: 1, content_block: { type: 'redacted_thinking', data: 'R' } },
    { type: 'content_block_stop', index: 1 },
    {
      type: 'content_block_start',
      index: 2,
      content_block: { type: 'tool_use', id: 'c1', name: 'get_weather', input: {} },
    },
    { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"city":"Paris"}' } },
    { type: 'content_block_stop', index: 2 },
    { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 5 } },
    { type: 'message_stop' },
  ];
  const text = events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
  return new TextEncoder().encode(text);
}

test('a Messages stream → Responses: the signature in output_item.done, redacted thinking an item of its own', () => {
  const events = parseSse(feed(createStreamTranslator('messages', 'responses'), [claudeStream()]));
  const done = events
    .filter((event) => event.event === 'response.output_item.done')
    .map((event) => JSON.parse(event.data).item as JsonObject);
  assert.deepEqual(done.slice(0, 2), CLAUDE_REASONING_ITEMS);
  const completed = JSON.parse(events.at(-1)!.data).response as { output: JsonObject[] };
  assert.deepEqual(completed.output.slice(0, 2), done.slice(0, 2));
});

test('a Converse stream → Messages: redacted reasoning is a redacted_thinking block of its own', () => {
  const frames = [
    eventFrame('messageStart', { role: 'assistant' }),
    eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { redactedContent: 'UkVE' } } }),
    eventFrame('contentBlockStop', { contentBlockIndex: 0 }),
    eventFrame('contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'ok' } }),
    eventFrame('contentBlockStop', { contentBlockIndex: 1 }),
    eventFrame('messageStop', { stopReason: 'end_turn' }),
    eventFrame('metadata', { usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } }),
  ];
  const events = parseSse(feed(createStreamTranslator('converse', 'messages'), frames)).map((event) =>
    JSON.parse(event.data),
  );
  assert.deepEqual(events.slice(1, 4), [
    { type: 'content_block_start', index: 0, content_block: { type: 'redacted_thinking', data: 'UkVE' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
  ]);
});

/** A Gemini stream: a signed function call in one chunk, then the finish. */
function geminiStream(): Uint8Array {
  const chunk = (parts: unknown[], last: boolean) =>
    `data: ${JSON.stringify({
      candidates: [{ content: { role: 'model', parts }, ...(last ? { finishReason: 'STOP' } : {}) }],
      modelVersion: 'gemini-3-pro-preview',
      responseId: 'r1',
      ...(last ? { usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 } } : {}),
    })}\r\n\r\n`;
  return new TextEncoder().encode(chunk([{ functionCall: CALL, thoughtSignature: SIG }], false) + chunk([], true));
}

test('a Gemini stream → Chat Completions: extra_content on the first delta of the signed call', () => {
  const events = parseSse(feed(createStreamTranslator('gemini', 'completions'), [geminiStream()]));
  const call = events
    .filter((event) => event.data !== '[DONE]')
    .map((event) => JSON.parse(event.data).choices[0]?.delta?.tool_calls?.[0])
    .find((delta) => delta !== undefined);
  assert.deepEqual(call.extra_content, { google: { thought_signature: SIG } });
});

test('a Gemini stream → Messages: a thinking block with the signature_delta, stopped before the tool_use', () => {
  const events = parseSse(feed(createStreamTranslator('gemini', 'messages'), [geminiStream()]));
  const types = events.map((event) => {
    const data = JSON.parse(event.data);
    return `${data.type}:${data.content_block?.type ?? data.delta?.type ?? ''}`;
  });
  assert.deepEqual(types.slice(0, 7), [
    'message_start:',
    'content_block_start:thinking',
    'content_block_delta:signature_delta',
    'content_block_stop:',
    'content_block_start:tool_use',
    'content_block_delta:input_json_delta',
    'content_block_stop:',
  ]);
});

test('a Gemini stream → Responses: a reasoning item with encrypted_content, added and done, before the function_call', () => {
  const events = parseSse(feed(createStreamTranslator('gemini', 'responses'), [geminiStream()]));
  const items = events
    .filter((event) => event.event === 'response.output_item.added')
    .map((event) => JSON.parse(event.data).item as JsonObject);
  assert.deepEqual(
    items.map((item) => item.type),
    ['reasoning', 'function_call'],
  );
  assert.equal(items[0]!.encrypted_content, `gw.signature.v1:${SIG}`);
});

test('a Gemini client’s signed functionCall → a Chat Completions provider: extra_content (Google’s OpenAI-compatible API)', () => {
  const { body } = translateRequest('gemini', 'completions', {
    contents: [
      { role: 'user', parts: [{ text: 'weather?' }] },
      { role: 'model', parts: [{ functionCall: CALL, thoughtSignature: SIG }] },
      { role: 'user', parts: [{ functionResponse: { id: 'c1', name: 'get_weather', response: { output: 'x' } } }] },
    ],
  });
  const call = ((body.messages as JsonObject[])[1]!.tool_calls as JsonObject[])[0]!;
  assert.deepEqual(call.extra_content, { google: { thought_signature: SIG } });
});

test('a Chat Completions provider’s extra_content → a Gemini client: thoughtSignature on the functionCall part', () => {
  const out = translateResponse('completions', 'gemini', {
    id: 'x',
    model: 'gemini-3-pro-preview',
    choices: [
      {
        index: 0,
        finish_reason: 'tool_calls',
        // The assistant message a Chat Completions provider answered, signed as Google's API signs.
        message: SIGNED_CHAT_CONVERSATION.messages[1],
      },
    ],
  });
  const parts = (out.candidates as { content: { parts: JsonObject[] } }[])[0]!.content.parts;
  assert.deepEqual({ role: 'model', parts }, SIGNED_MODEL_TURN);
});

const RESPONSES_PROVIDER_RESPONSE = {
  id: 'resp_1',
  object: 'response',
  status: 'completed',
  model: 'o4-mini',
  output: [
    { id: 'rs_9', type: 'reasoning', summary: [], encrypted_content: 'gAAAAenc' },
    { id: 'fc_1', type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' },
  ],
  usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
};

test('a Responses provider’s reasoning item → Messages: a thinking block signed with its id and encrypted_content', () => {
  const out = translateResponse('responses', 'messages', RESPONSES_PROVIDER_RESPONSE);
  assert.deepEqual((out.content as JsonObject[])[0], {
    type: 'thinking',
    thinking: '',
    signature: 'openai.reasoning.v1:rs_9:gAAAAenc',
  });
});

test('a Responses provider stream: the reasoning item’s output_item.done signs the reasoning for a Messages client', () => {
  const item = RESPONSES_PROVIDER_RESPONSE.output[0];
  const events: JsonObject[] = [
    { type: 'response.created', response: { id: 'resp_1', model: 'o4-mini' } },
    { type: 'response.output_item.added', output_index: 0, item: { ...item, encrypted_content: null } },
    { type: 'response.reasoning_summary_text.delta', output_index: 0, delta: 'Hmm.' },
    { type: 'response.output_item.done', output_index: 0, item },
    { type: 'response.completed', response: { ...RESPONSES_PROVIDER_RESPONSE, output: [item] } },
  ];
  const text = events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
  const out = parseSse(feed(createStreamTranslator('responses', 'messages'), [new TextEncoder().encode(text)]));
  const deltas = out.map((event) => JSON.parse(event.data).delta).filter((delta) => delta?.type !== undefined);
  assert.deepEqual(deltas.slice(0, 2), [
    { type: 'thinking_delta', thinking: 'Hmm.' },
    { type: 'signature_delta', signature: 'openai.reasoning.v1:rs_9:gAAAAenc' },
  ]);
});

test('Messages → a Responses provider: its own reasoning goes back as the item; another provider’s is dropped; include asked', () => {
  const { body, warnings } = translateRequest('messages', 'responses', {
    model: 'o4-mini',
    max_tokens: 100,
    messages: [
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Hmm.', signature: 'openai.reasoning.v1:rs_9:gAAAAenc' },
          { type: 'thinking', thinking: 'Claude’s.', signature: 'EqQB' },
          { type: 'tool_use', id: 'c1', name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'sunny' }] },
    ],
  });
  assert.deepEqual((body.input as JsonObject[]).slice(1, 3), [
    { type: 'reasoning', id: 'rs_9', summary: [{ type: 'summary_text', text: 'Hmm.' }], encrypted_content: 'gAAAAenc' },
    { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' },
  ]);
  assert.deepEqual(body.include, ['reasoning.encrypted_content']);
  assert.deepEqual(
    warnings?.map((warning) => warning.path),
    ['messages[1].content[1]'],
  );
});

test('a Responses provider is not asked for encrypted reasoning when none was asked for or sent back', () => {
  const { body } = translateRequest('completions', 'responses', {
    model: 'gpt-4.1',
    messages: [{ role: 'user', content: 'hi' }],
  });
  assert.equal(body.include, undefined, 'OpenAI refuses it for a model that does not reason');
});

test('a tool call signature reaching Messages, Converse or a Responses provider is reported as dropped, not sent', () => {
  for (const to of ['messages', 'converse', 'responses'] as const) {
    const { body: written, warnings } = translateRequest('completions', to, SIGNED_CHAT_CONVERSATION);
    assert.deepEqual(
      warnings?.map((warning) => warning.path),
      ['messages[1].tool_calls[0]'],
      to,
    );
    assert.match(warnings![0]!.message, /another provider's signature of a tool call has no \w+ equivalent; dropped/);
    assert.ok(!JSON.stringify(written).includes(SIG), `${to}: the signature is not sent`);
  }
});

test('a Gemini client’s streamed thought, its signature in a part after it, goes to Claude as one signed thinking block', () => {
  const { body } = translateRequest('gemini', 'messages', {
    model: 'claude',
    contents: [
      { role: 'user', parts: [{ text: 'weather?' }] },
      {
        role: 'model',
        parts: [
          { text: 'Paris first.', thought: true },
          { text: '', thought: true, thoughtSignature: 'T' },
          { functionCall: CALL },
        ],
      },
      { role: 'user', parts: [{ functionResponse: { id: 'c1', name: 'get_weather', response: { output: 'x' } } }] },
    ],
  });
  assert.deepEqual((body.messages as { content: unknown[] }[])[1]!.content.slice(0, 2), [
    { type: 'thinking', thinking: 'Paris first.', signature: 'T' },
    { type: 'tool_use', id: 'c1', name: 'get_weather', input: { city: 'Paris' } },
  ]);
});
