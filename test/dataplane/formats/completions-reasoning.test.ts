// Reasoning on Chat Completions assistant messages (src/dataplane/ai/formats/completions/reasoning.ts,
// docs/decisions/0025-provider-signatures.md), one mapping at a time: a provider's signed
// thinking as message.reasoning_content and reasoning_signature (whole) and as reasoning_content
// deltas then a reasoning_signature delta (streamed); those fields on a client's assistant
// message as the thinking block that starts the turn for Messages and Converse; unsigned
// reasoning left out there (as agentgateway does: those providers refuse it) but sent to a Chat
// Completions provider; what one message cannot carry (several signed blocks, redacted thinking);
// a Responses-only provider's reasoning item carried in reasoning_signature and back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  createStreamTranslator,
  type JsonObject,
  TranslationError,
  translateRequest,
  translateResponse,
} from '../../../src/dataplane/ai/formats/index.ts';
import { feed, parseSse } from './stream-helpers.ts';

const THINKING = 'The user wants the weather; call the tool.';
const SIGNATURE = 'EqQBCgIYAhIMsig==';
const CALL = { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };

/** A Chat Completions tool round whose assistant message carries `reasoning`. */
function toolRound(reasoning: JsonObject): JsonObject {
  return {
    model: 'claude-sonnet-4-5',
    messages: [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: null, tool_calls: [CALL], ...reasoning },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny' },
    ],
  };
}

function assistantTurn(body: JsonObject): JsonObject {
  const messages = body.messages as JsonObject[];
  return messages.find((message) => message.role === 'assistant')!;
}

test('a Messages answer with signed thinking: reasoning_content and reasoning_signature on the message', () => {
  const out = translateResponse('messages', 'completions', {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [
      { type: 'thinking', thinking: THINKING, signature: SIGNATURE },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
    ],
    stop_reason: 'tool_use',
    usage: { input_tokens: 5, output_tokens: 9 },
  }) as { choices: { message: JsonObject }[] };
  const message = out.choices[0]!.message;
  assert.equal(message.reasoning_content, THINKING);
  assert.equal(message.reasoning_signature, SIGNATURE);
  assert.equal(message.content, null);
});

test('a Converse answer with reasoningContent: the same fields', () => {
  const out = translateResponse('converse', 'completions', {
    output: {
      message: {
        role: 'assistant',
        content: [{ reasoningContent: { reasoningText: { text: THINKING, signature: SIGNATURE } } }, { text: '4' }],
      },
    },
    stopReason: 'end_turn',
    usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
  }) as { choices: { message: JsonObject }[] };
  assert.deepEqual(out.choices[0]!.message, {
    role: 'assistant',
    content: '4',
    refusal: null,
    reasoning_content: THINKING,
    reasoning_signature: SIGNATURE,
  });
});

test('several thinking blocks or redacted thinking: the texts joined, no signature (one message, one block)', () => {
  const answer = (content: JsonObject[]) =>
    (
      translateResponse('messages', 'completions', {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'm',
        content: [...content, { type: 'text', text: 'done' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 1, output_tokens: 1 },
      }) as { choices: { message: JsonObject }[] }
    ).choices[0]!.message;
  const two = answer([
    { type: 'thinking', thinking: 'one. ', signature: 's1' },
    { type: 'thinking', thinking: 'two.', signature: 's2' },
  ]);
  assert.equal(two.reasoning_content, 'one. two.');
  assert.equal(two.reasoning_signature, undefined);
  const redacted = answer([{ type: 'redacted_thinking', data: 'UkVE' }]);
  assert.equal(redacted.reasoning_content, undefined);
  assert.equal(redacted.reasoning_signature, undefined);
});

test('a Messages stream: reasoning_content deltas, then the signature in a delta of its own, then the call', () => {
  const events = [
    {
      type: 'message_start',
      message: { id: 'msg_1', model: 'claude-sonnet-4-5', usage: { input_tokens: 5, output_tokens: 1 } },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'The user wants ' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'the weather.' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: SIGNATURE } },
    { type: 'content_block_stop', index: 0 },
    { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} } },
    { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{}' } },
    { type: 'content_block_stop', index: 1 },
    { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } },
    { type: 'message_stop' },
  ];
  const sse = events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
  const out = feed(createStreamTranslator('messages', 'completions'), [new TextEncoder().encode(sse)]);
  const deltas = parseSse(out)
    .filter((event) => event.data !== '[DONE]')
    .map((event) => JSON.parse(event.data).choices[0]?.delta as JsonObject | undefined);
  assert.deepEqual(deltas.slice(1, 4), [
    { reasoning_content: 'The user wants ' },
    { reasoning_content: 'the weather.' },
    { reasoning_signature: SIGNATURE },
  ]);
  assert.equal((deltas[4]!.tool_calls as JsonObject[])[0]!.id, 'toolu_1');
});

test('a compatible server (DeepSeek) read: its reasoning_content reaches a Messages stream as thinking', () => {
  const chunks = [
    { id: 'c1', model: 'deepseek-reasoner', choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] },
    { id: 'c1', model: 'deepseek-reasoner', choices: [{ index: 0, delta: { reasoning_content: 'hmm' } }] },
    { id: 'c1', model: 'deepseek-reasoner', choices: [{ index: 0, delta: { content: 'hi' } }] },
    { id: 'c1', model: 'deepseek-reasoner', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
  ];
  const sse = `${chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('')}data: [DONE]\n\n`;
  const out = feed(createStreamTranslator('completions', 'messages'), [new TextEncoder().encode(sse)]);
  const deltas = parseSse(out)
    .map((event) => JSON.parse(event.data))
    .filter((event) => event.type === 'content_block_delta')
    .map((event) => event.delta);
  assert.deepEqual(deltas, [
    { type: 'thinking_delta', thinking: 'hmm' },
    { type: 'text_delta', text: 'hi' },
  ]);
  const whole = translateResponse('completions', 'messages', {
    id: 'c1',
    model: 'deepseek-reasoner',
    choices: [
      { index: 0, message: { role: 'assistant', content: 'hi', reasoning_content: 'hmm', reasoning_signature: 's' } },
    ],
  }) as { content: JsonObject[] };
  assert.deepEqual(whole.content, [
    { type: 'thinking', thinking: 'hmm', signature: 's' },
    { type: 'text', text: 'hi' },
  ]);
});

test('sent back to Messages: the signed thinking block starts the assistant turn, before its tool_use', () => {
  const { body, warnings } = translateRequest(
    'completions',
    'messages',
    toolRound({ reasoning_content: THINKING, reasoning_signature: SIGNATURE }),
  );
  assert.deepEqual(assistantTurn(body).content, [
    { type: 'thinking', thinking: THINKING, signature: SIGNATURE },
    { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
  ]);
  assert.equal(warnings, undefined);
  // A text answer with reasoning: the thinking, then the text.
  const text = translateRequest('completions', 'messages', {
    model: 'm',
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello', reasoning_content: THINKING, reasoning_signature: SIGNATURE },
      { role: 'user', content: 'more' },
    ],
  });
  assert.deepEqual(assistantTurn(text.body).content, [
    { type: 'thinking', thinking: THINKING, signature: SIGNATURE },
    { type: 'text', text: 'hello' },
  ]);
});

test('sent back to Converse: reasoningContent.reasoningText with the signature, first', () => {
  const { body } = translateRequest(
    'completions',
    'converse',
    toolRound({ reasoning_content: THINKING, reasoning_signature: SIGNATURE }),
  );
  assert.deepEqual(assistantTurn(body).content, [
    { reasoningContent: { reasoningText: { text: THINKING, signature: SIGNATURE } } },
    { toolUse: { toolUseId: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } } },
  ]);
});

test('unsigned reasoning: left out for Messages and Converse with a warning, sent to a Chat Completions provider', () => {
  for (const provider of ['messages', 'converse'] as const) {
    const { body, warnings } = translateRequest('completions', provider, toolRound({ reasoning_content: 'no sig' }));
    const content = assistantTurn(body).content as JsonObject[];
    assert.equal(content.length, 1, provider);
    assert.deepEqual(warnings, [
      {
        path: 'messages[1].reasoning_content',
        message: `reasoning without a signature, which ${provider === 'messages' ? 'Anthropic' : 'Bedrock'} refuses; dropped`,
      },
    ]);
  }
  // A Messages client's unsigned thinking to DeepSeek's thinking mode, which wants it back.
  const { body, warnings } = translateRequest('messages', 'completions', {
    model: 'deepseek-reasoner',
    max_tokens: 9,
    messages: [
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hmm', signature: '' },
          { type: 'text', text: 'yo' },
        ],
      },
      { role: 'user', content: 'more' },
    ],
  });
  assert.deepEqual(assistantTurn(body), { role: 'assistant', content: 'yo', reasoning_content: 'hmm' });
  assert.equal(warnings, undefined);
});

test('to a Chat Completions provider: several signed blocks keep one text and lose their signatures, redacted is dropped', () => {
  const { body, warnings } = translateRequest('messages', 'completions', {
    model: 'm',
    max_tokens: 9,
    messages: [
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'a', signature: 's1' },
          { type: 'redacted_thinking', data: 'UkVE' },
          { type: 'thinking', thinking: 'b', signature: 's2' },
          { type: 'text', text: 'yo' },
        ],
      },
      { role: 'user', content: 'more' },
    ],
  });
  assert.deepEqual(assistantTurn(body), { role: 'assistant', content: 'yo', reasoning_content: 'ab' });
  assert.deepEqual(
    warnings?.map((warning) => warning.path),
    ['messages[1].content[0]', 'messages[1].content[1]', 'messages[1].content[2]'],
  );
});

test("a reasoning field that is not a string is refused, naming it; null and '' are none", () => {
  assert.throws(
    () => translateRequest('completions', 'messages', toolRound({ reasoning_signature: 7 })),
    (error: unknown) =>
      error instanceof TranslationError && error.message === 'messages[1].reasoning_signature: must be a string',
  );
  const { body } = translateRequest(
    'completions',
    'messages',
    toolRound({ reasoning_content: null, reasoning_signature: '' }),
  );
  assert.deepEqual(
    (assistantTurn(body).content as JsonObject[]).map((block) => block.type),
    ['tool_use'],
  );
});

test("a Responses-only provider's reasoning item rides in reasoning_signature and goes back as that item", () => {
  const answer = translateResponse('responses', 'completions', {
    id: 'resp_1',
    object: 'response',
    status: 'completed',
    model: 'o4-mini',
    output: [
      {
        id: 'rs_0',
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: 'considered it' }],
        encrypted_content: 'gAAAAopenai',
      },
      { id: 'fc_1', type: 'function_call', status: 'completed', call_id: 'call_1', name: 'f', arguments: '{}' },
    ],
    usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 },
  }) as { choices: { message: JsonObject }[] };
  const message = answer.choices[0]!.message;
  assert.equal(message.reasoning_content, 'considered it');
  assert.equal(message.reasoning_signature, 'openai.reasoning.v1:rs_0:gAAAAopenai');
  const { body, warnings } = translateRequest('completions', 'responses', {
    model: 'o4-mini',
    messages: [{ role: 'user', content: 'go' }, message, { role: 'tool', tool_call_id: 'call_1', content: 'done' }],
  });
  assert.deepEqual((body.input as JsonObject[])[1], {
    type: 'reasoning',
    id: 'rs_0',
    summary: [{ type: 'summary_text', text: 'considered it' }],
    encrypted_content: 'gAAAAopenai',
  });
  assert.equal(warnings, undefined);
});

test("Anthropic's thinking switch on a Chat Completions request: extended thinking for every target that has it", () => {
  const body = {
    model: 'm',
    messages: [{ role: 'user', content: 'hi' }],
    thinking: { type: 'enabled', budget_tokens: 2048 },
  };
  const messages = translateRequest('completions', 'messages', structuredClone(body));
  assert.deepEqual(messages.body.thinking, { type: 'enabled', budget_tokens: 2048 });
  const converse = translateRequest('completions', 'converse', structuredClone(body));
  assert.deepEqual(converse.body.additionalModelRequestFields, { thinking: { type: 'enabled', budget_tokens: 2048 } });
  assert.equal(converse.warnings, undefined);
  const gemini = translateRequest('completions', 'gemini', structuredClone(body));
  assert.deepEqual((gemini.body.generationConfig as JsonObject).thinkingConfig, {
    includeThoughts: true,
    thinkingBudget: 2048,
  });
  // Another shape is an unknown field as before: carried to Messages, reported for Converse.
  const adaptive = { ...body, thinking: { type: 'adaptive' } };
  assert.deepEqual(translateRequest('completions', 'messages', structuredClone(adaptive)).body.thinking, {
    type: 'adaptive',
  });
  assert.deepEqual(translateRequest('completions', 'converse', structuredClone(adaptive)).warnings, [
    { path: 'thinking', message: 'not a field of the Bedrock Converse API; dropped' },
  ]);
});

test("A reasoning effort to Bedrock: Claude's extended thinking with agentgateway's budgets, below max_tokens; other models and sampled requests report it dropped", () => {
  const ask = (extra: JsonObject, model = 'us.anthropic.claude-sonnet-4-20250514-v1:0') =>
    translateRequest(
      'completions',
      'converse',
      { model, messages: [{ role: 'user', content: 'hi' }], ...extra },
      { model },
    );
  for (const [effort, budget] of [
    ['minimal', 1024],
    ['low', 1024],
    ['medium', 2048],
    ['high', 4096],
  ] as const) {
    const converse = ask({ reasoning_effort: effort });
    assert.deepEqual(converse.body.additionalModelRequestFields, {
      thinking: { type: 'enabled', budget_tokens: budget },
    });
    assert.deepEqual(converse.warnings, [
      {
        path: 'reasoning_effort',
        message: `sent as Claude's extended thinking with a budget of ${budget} tokens`,
      },
    ]);
  }
  // Below max_tokens, and at least 1024: otherwise no thinking.
  assert.deepEqual(ask({ reasoning_effort: 'high', max_tokens: 3000 }).body.additionalModelRequestFields, {
    thinking: { type: 'enabled', budget_tokens: 2999 },
  });
  const small = ask({ reasoning_effort: 'low', max_tokens: 1000 });
  assert.equal(small.body.additionalModelRequestFields, undefined);
  assert.match(String(small.warnings?.[0]?.message), /max_tokens 1000 leaves no room/);
  // A temperature other than 1 refuses thinking: the effort is dropped, the temperature kept.
  const sampled = ask({ reasoning_effort: 'high', temperature: 0.2 });
  assert.equal(sampled.body.additionalModelRequestFields, undefined);
  assert.equal((sampled.body.inferenceConfig as JsonObject).temperature, 0.2);
  assert.match(String(sampled.warnings?.[0]?.message), /temperature other than 1/);
  // Another model family, and none.
  const nova = ask({ reasoning_effort: 'high' }, 'amazon.nova-pro-v1:0');
  assert.equal(nova.body.additionalModelRequestFields, undefined);
  assert.deepEqual(
    nova.warnings?.map((warning) => warning.path),
    ['reasoning_effort'],
  );
  const none = ask({ reasoning_effort: 'none' });
  assert.equal(none.body.additionalModelRequestFields, undefined);
  assert.equal(none.warnings, undefined);
});
