import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TranslationError, translateRequest } from '../../../src/dataplane/ai/formats/index.ts';

const weatherSchema = { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] };

test('a multi-turn conversation with system, images, tool use and tool results', () => {
  const { body, warnings } = translateRequest('messages', 'completions', {
    model: 'gpt-4o',
    max_tokens: 1024,
    system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
    messages: [
      { role: 'user', content: 'Weather in Paris and Zürich?' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } },
          { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { location: 'Zürich' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C' },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: [{ type: 'text', text: '9°C' }] },
          { type: 'text', text: 'And these pictures?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
        ],
      },
    ],
    tools: [{ name: 'get_weather', description: 'Weather for a city', input_schema: weatherSchema }],
    tool_choice: { type: 'any', disable_parallel_tool_use: true },
    stop_sequences: ['END'],
    temperature: 0.5,
    top_p: 0.9,
    metadata: { user_id: 'user-42' },
    stream: true,
  });
  assert.equal(warnings, undefined);
  assert.deepEqual(body, {
    model: 'gpt-4o',
    messages: [
      {
        role: 'system',
        content: [{ type: 'text', text: 'You are terse.', prompt_cache_breakpoint: { mode: 'explicit' } }],
      },
      { role: 'user', content: 'Weather in Paris and Zürich?' },
      {
        role: 'assistant',
        content: 'Let me check.',
        tool_calls: [
          { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
          { id: 'toolu_2', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Zürich"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: '18°C' },
      { role: 'tool', tool_call_id: 'toolu_2', content: '9°C' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'And these pictures?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
        ],
      },
    ],
    max_completion_tokens: 1024,
    stop: ['END'],
    temperature: 0.5,
    top_p: 0.9,
    stream: true,
    stream_options: { include_usage: true },
    tools: [
      {
        type: 'function',
        function: { name: 'get_weather', description: 'Weather for a city', parameters: weatherSchema },
      },
    ],
    tool_choice: 'required',
    parallel_tool_calls: false,
    user: 'user-42',
  });
});

test('a plain string system prompt and a string assistant turn', () => {
  const { body } = translateRequest('messages', 'completions', {
    model: 'm',
    max_tokens: 10,
    system: 'Be brief.',
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ],
  });
  assert.deepEqual(body.messages, [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: 'hello' },
  ]);
  assert.equal('stream_options' in body, false);
});

test('tool_choice: auto, none and a named tool', () => {
  const tools = [{ name: 'f', input_schema: { type: 'object' } }];
  const choice = (tool_choice: unknown) =>
    translateRequest('messages', 'completions', { model: 'm', max_tokens: 1, messages: [], tools, tool_choice }).body;
  assert.equal(choice({ type: 'auto' }).tool_choice, 'auto');
  assert.equal(choice({ type: 'none' }).tool_choice, 'none');
  assert.deepEqual(choice({ type: 'tool', name: 'f' }).tool_choice, { type: 'function', function: { name: 'f' } });
  assert.equal('parallel_tool_calls' in choice({ type: 'auto' }), false);
  assert.throws(() => choice({ type: 'whatever' }), TranslationError);
});

test('unknown fields are carried over; known fields without an equivalent are dropped with a warning', () => {
  const { body, warnings } = translateRequest('messages', 'completions', {
    model: 'm',
    max_tokens: 1,
    messages: [{ role: 'user', content: 'hi' }],
    top_k: 40,
    thinking: { type: 'enabled', budget_tokens: 1024 },
    container: 'container_1',
    logit_bias: { '50256': -100 },
    seed: 3,
  });
  assert.deepEqual(body.logit_bias, { '50256': -100 });
  assert.equal(body.seed, 3);
  for (const dropped of ['top_k', 'thinking', 'container']) assert.equal(dropped in body, false, dropped);
  assert.deepEqual(warnings?.map((w) => w.path).sort(), ['container', 'thinking', 'top_k']);
  const disabled = translateRequest('messages', 'completions', {
    model: 'm',
    max_tokens: 1,
    messages: [],
    thinking: { type: 'disabled' },
  });
  assert.equal(disabled.warnings, undefined);
});

test('signed thinking becomes reasoning_content and reasoning_signature; server-tool blocks are dropped with warnings; is_error is reported', () => {
  const { body, warnings } = translateRequest('messages', 'completions', {
    model: 'm',
    max_tokens: 1,
    messages: [
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 'sig' },
          { type: 'tool_use', id: 't1', name: 'f', input: {} },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'boom', is_error: true }] },
    ],
    tools: [
      { name: 'f', input_schema: { type: 'object' } },
      { type: 'web_search_20250305', name: 'web_search' },
    ],
  });
  assert.deepEqual(body.messages, [
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      reasoning_content: 'hmm',
      reasoning_signature: 'sig',
    },
    { role: 'tool', tool_call_id: 't1', content: 'boom' },
  ]);
  assert.equal((body.tools as unknown[]).length, 1);
  assert.deepEqual(
    warnings?.map((w) => w.path),
    ['messages[1].content[0].is_error', 'tools[1]'],
  );
});

test('an image in a tool result moves to a user message after the tool messages', () => {
  const { body, warnings } = translateRequest('messages', 'completions', {
    model: 'm',
    max_tokens: 1,
    messages: [
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 't1',
            content: [
              { type: 'text', text: 'screenshot:' },
              { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/' } },
            ],
          },
        ],
      },
    ],
  });
  assert.deepEqual(body.messages, [
    { role: 'tool', tool_call_id: 't1', content: 'screenshot:' },
    { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/' } }] },
  ]);
  assert.equal(warnings?.length, 1);
});

test('structured output, effort and a PDF document', () => {
  const { body } = translateRequest('messages', 'completions', {
    model: 'm',
    max_tokens: 1,
    output_config: { format: { type: 'json_schema', schema: { type: 'object' } }, effort: 'low' },
    messages: [
      {
        role: 'user',
        content: [
          {
            type: 'document',
            title: 'report.pdf',
            source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' },
          },
        ],
      },
    ],
  });
  assert.deepEqual(body.response_format, {
    type: 'json_schema',
    json_schema: { name: 'response', schema: { type: 'object' }, strict: true },
  });
  assert.equal(body.reasoning_effort, 'low');
  assert.deepEqual(body.messages, [
    {
      role: 'user',
      content: [{ type: 'file', file: { filename: 'report.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } }],
    },
  ]);
});

test('malformed requests are TranslationErrors naming the field', () => {
  assert.throws(
    () => translateRequest('messages', 'completions', { model: 'm', max_tokens: 1 }),
    /messages: must be an array/,
  );
  assert.throws(
    () =>
      translateRequest('messages', 'completions', {
        model: 'm',
        max_tokens: 1,
        messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }],
      }),
    /messages\[0\]\.content\[0\]\.tool_use_id: required/,
  );
});
