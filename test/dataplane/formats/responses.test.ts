import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TranslationError, translateResponse } from '../../../src/dataplane/ai/formats/index.ts';

function messageBody(content: unknown[], stop_reason: string, usage?: Record<string, unknown>) {
  return {
    id: 'msg_01',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content,
    stop_reason,
    stop_sequence: null,
    usage: usage ?? { input_tokens: 10, output_tokens: 5 },
  };
}

function completionBody(message: Record<string, unknown>, finish_reason: string, usage?: Record<string, unknown>) {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1741570283,
    model: 'gpt-4o',
    choices: [{ index: 0, message: { role: 'assistant', refusal: null, ...message }, logprobs: null, finish_reason }],
    usage: usage ?? { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

test('Messages → Completions: text, tool calls, signed thinking, usage with cache reads and writes', () => {
  const out = translateResponse(
    'messages',
    'completions',
    messageBody(
      [
        { type: 'thinking', thinking: 'hidden', signature: 's' },
        { type: 'text', text: 'Checking ' },
        { type: 'text', text: 'now.' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } },
      ],
      'tool_use',
      { input_tokens: 100, cache_read_input_tokens: 300, cache_creation_input_tokens: 50, output_tokens: 20 },
    ),
  );
  assert.equal(typeof out.created, 'number');
  delete out.created;
  assert.deepEqual(out, {
    id: 'msg_01',
    object: 'chat.completion',
    model: 'claude-sonnet-4-5',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Checking now.',
          refusal: null,
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
          ],
          reasoning_content: 'hidden',
          reasoning_signature: 's',
        },
        logprobs: null,
        finish_reason: 'tool_calls',
      },
    ],
    usage: {
      prompt_tokens: 450,
      completion_tokens: 20,
      total_tokens: 470,
      prompt_tokens_details: { cached_tokens: 300, cache_write_tokens: 50 },
    },
  });
});

test('Messages → Completions: every stop reason, and the client-facing model', () => {
  const cases: [string, string][] = [
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    ['pause_turn', 'stop'],
    ['model_context_window_exceeded', 'length'],
  ];
  for (const [stop, finish] of cases) {
    const out = translateResponse('messages', 'completions', messageBody([{ type: 'text', text: 'x' }], stop));
    assert.equal((out.choices as { finish_reason: string }[])[0]!.finish_reason, finish, stop);
  }
  const aliased = translateResponse('messages', 'completions', messageBody([], 'end_turn'), { model: 'my-alias' });
  assert.equal(aliased.model, 'my-alias');
  assert.equal((aliased.choices as { message: { content: unknown } }[])[0]!.message.content, '');
});

test('Completions → Messages: text, refusal, tool calls, usage with cached tokens', () => {
  const out = translateResponse(
    'completions',
    'messages',
    completionBody(
      {
        content: 'Checking.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: 'not json' } },
        ],
      },
      'tool_calls',
      {
        prompt_tokens: 450,
        completion_tokens: 20,
        total_tokens: 470,
        prompt_tokens_details: { cached_tokens: 300 },
        completion_tokens_details: { reasoning_tokens: 8 },
      },
    ),
  );
  assert.deepEqual(out, {
    id: 'chatcmpl-1',
    type: 'message',
    role: 'assistant',
    model: 'gpt-4o',
    content: [
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { location: 'Paris' } },
      { type: 'tool_use', id: 'call_2', name: 'get_time', input: {} },
    ],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: {
      input_tokens: 150,
      output_tokens: 20,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 300,
      output_tokens_details: { thinking_tokens: 8 },
    },
  });
});

test('Completions → Messages: every finish reason', () => {
  const cases: [string, string][] = [
    ['stop', 'end_turn'],
    ['length', 'max_tokens'],
    ['tool_calls', 'tool_use'],
    ['function_call', 'tool_use'],
    ['content_filter', 'refusal'],
  ];
  for (const [finish, stop] of cases) {
    assert.equal(
      translateResponse('completions', 'messages', completionBody({ content: 'x' }, finish)).stop_reason,
      stop,
      finish,
    );
  }
  const refusal = translateResponse(
    'completions',
    'messages',
    completionBody({ content: null, refusal: 'I cannot.' }, 'stop'),
  );
  assert.deepEqual(refusal.content, [{ type: 'text', text: 'I cannot.' }]);
});

test('usage survives a round trip through both shapes', () => {
  const anthropicUsage = {
    input_tokens: 100,
    cache_read_input_tokens: 300,
    cache_creation_input_tokens: 50,
    output_tokens: 20,
  };
  const asCompletion = translateResponse(
    'messages',
    'completions',
    messageBody([{ type: 'text', text: 'x' }], 'end_turn', anthropicUsage),
  );
  const back = translateResponse('completions', 'messages', asCompletion);
  assert.deepEqual(back.usage, anthropicUsage);
});

test('bodies that are not responses of their format are TranslationErrors', () => {
  assert.throws(() => translateResponse('messages', 'completions', { id: 'x' }), TranslationError);
  assert.throws(() => translateResponse('completions', 'messages', { choices: [] }), TranslationError);
});
