import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TranslationError, translateRequest } from '../../../src/dataplane/ai/formats/index.ts';

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  },
};

test('a multi-turn conversation with system, images, tool calls and tool results', () => {
  const { body, warnings } = translateRequest('completions', 'messages', {
    model: 'claude-sonnet-4-5',
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'What is the weather in Paris and Zürich?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Zürich"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '18°C, sunny' },
      { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '9°C, rain' }] },
      { role: 'assistant', content: 'Paris is sunny; Zürich is rainy.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'And these?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'auto' } },
        ],
      },
    ],
    tools: [weatherTool],
    tool_choice: 'required',
    parallel_tool_calls: false,
    max_completion_tokens: 512,
    stop: 'END',
    temperature: 0.2,
    top_p: 0.9,
    user: 'user-42',
    stream: true,
    stream_options: { include_usage: true },
  });
  assert.equal(warnings, undefined);
  assert.deepEqual(body, {
    model: 'claude-sonnet-4-5',
    system: 'You are terse.',
    messages: [
      { role: 'user', content: 'What is the weather in Paris and Zürich?' },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { location: 'Paris' } },
          { type: 'tool_use', id: 'call_2', name: 'get_weather', input: { location: 'Zürich' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '18°C, sunny' },
          { type: 'tool_result', tool_use_id: 'call_2', content: [{ type: 'text', text: '9°C, rain' }] },
        ],
      },
      { role: 'assistant', content: 'Paris is sunny; Zürich is rainy.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'And these?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
        ],
      },
    ],
    max_tokens: 512,
    stop_sequences: ['END'],
    temperature: 0.2,
    top_p: 0.9,
    stream: true,
    tools: [
      {
        name: 'get_weather',
        description: 'Weather for a city',
        input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
      },
    ],
    tool_choice: { type: 'any', disable_parallel_tool_use: true },
    metadata: { user_id: 'user-42' },
  });
});

test('consecutive turns of one role merge, tool results first, so that roles alternate', () => {
  const { body } = translateRequest('completions', 'messages', {
    model: 'm',
    messages: [
      { role: 'user', content: 'one' },
      { role: 'user', content: [{ type: 'text', text: 'two' }] },
      {
        role: 'assistant',
        content: 'a',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '' } }],
      },
      { role: 'user', content: 'interjection' },
      { role: 'tool', tool_call_id: 'c1', content: 'result' },
      { role: 'assistant', content: 'b' },
      { role: 'assistant', content: 'c' },
    ],
  });
  assert.deepEqual(body.messages, [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'one' },
        { type: 'text', text: 'two' },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'a' },
        { type: 'tool_use', id: 'c1', name: 'f', input: {} },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'c1', content: 'result' },
        { type: 'text', text: 'interjection' },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'b' },
        { type: 'text', text: 'c' },
      ],
    },
  ]);
});

test('several system and developer messages become system blocks; a late one is lifted with a warning', () => {
  const { body, warnings } = translateRequest('completions', 'messages', {
    model: 'm',
    messages: [
      { role: 'system', content: 'Rule one.' },
      {
        role: 'developer',
        content: [{ type: 'text', text: 'Rule two.', prompt_cache_breakpoint: { mode: 'explicit' } }],
      },
      { role: 'user', content: 'hi' },
      { role: 'system', content: 'Late rule.' },
    ],
  });
  assert.deepEqual(body.system, [
    { type: 'text', text: 'Rule one.' },
    { type: 'text', text: 'Rule two.', cache_control: { type: 'ephemeral' } },
    { type: 'text', text: 'Late rule.' },
  ]);
  assert.deepEqual(body.messages, [{ role: 'user', content: 'hi' }]);
  assert.deepEqual(
    warnings?.map((w) => w.path),
    ['messages[3]'],
  );
});

test('tool_choice: auto, none, a named function, allowed_tools and legacy function_call', () => {
  const choice = (extra: Record<string, unknown>) =>
    translateRequest('completions', 'messages', { model: 'm', messages: [], tools: [weatherTool], ...extra });
  assert.deepEqual(choice({ tool_choice: 'auto' }).body.tool_choice, { type: 'auto' });
  assert.deepEqual(choice({ tool_choice: 'none' }).body.tool_choice, { type: 'none' });
  assert.deepEqual(choice({ tool_choice: { type: 'function', function: { name: 'get_weather' } } }).body.tool_choice, {
    type: 'tool',
    name: 'get_weather',
  });
  const allowed = choice({ tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [] } } });
  assert.deepEqual(allowed.body.tool_choice, { type: 'any' });
  assert.equal(allowed.warnings?.[0]?.path, 'tool_choice');
  assert.deepEqual(choice({ function_call: { name: 'get_weather' } }).body.tool_choice, {
    type: 'tool',
    name: 'get_weather',
  });
  // Parallelism off without a tool_choice: auto with parallel use disabled; none stays none.
  assert.deepEqual(choice({ parallel_tool_calls: false }).body.tool_choice, {
    type: 'auto',
    disable_parallel_tool_use: true,
  });
  assert.deepEqual(choice({ tool_choice: 'none', parallel_tool_calls: false }).body.tool_choice, { type: 'none' });
  assert.throws(() => choice({ tool_choice: 'sometimes' }), TranslationError);
});

test('legacy functions and function messages become tools, tool_use and tool_result', () => {
  const { body } = translateRequest('completions', 'messages', {
    model: 'm',
    functions: [{ name: 'lookup', parameters: { type: 'object', properties: {} } }],
    messages: [
      { role: 'user', content: 'look it up' },
      { role: 'assistant', content: null, function_call: { name: 'lookup', arguments: '{"q":"x"}' } },
      { role: 'function', name: 'lookup', content: 'found' },
    ],
  });
  assert.deepEqual(body.tools, [{ name: 'lookup', input_schema: { type: 'object', properties: {} } }]);
  assert.deepEqual(body.messages, [
    { role: 'user', content: 'look it up' },
    {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'legacy_function_call_1', name: 'lookup', input: { q: 'x' } }],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'legacy_function_call_1', content: 'found' }] },
  ]);
});

test('stop as an array; max_tokens defaults to 4096, or the option, or legacy max_tokens', () => {
  assert.deepEqual(
    translateRequest('completions', 'messages', { model: 'm', messages: [], stop: ['a', 'b'] }).body.stop_sequences,
    ['a', 'b'],
  );
  assert.equal(translateRequest('completions', 'messages', { model: 'm', messages: [] }).body.max_tokens, 4096);
  assert.equal(
    translateRequest('completions', 'messages', { model: 'm', messages: [] }, { defaultMaxTokens: 900 }).body
      .max_tokens,
    900,
  );
  assert.equal(
    translateRequest('completions', 'messages', { model: 'm', messages: [], max_tokens: 77 }).body.max_tokens,
    77,
  );
  assert.equal(
    translateRequest('completions', 'messages', { model: 'm', messages: [], max_tokens: 77, max_completion_tokens: 88 })
      .body.max_tokens,
    88,
  );
});

test('unknown fields are carried over; known fields without an equivalent are dropped with a warning', () => {
  const { body, warnings } = translateRequest('completions', 'messages', {
    model: 'm',
    messages: [{ role: 'user', content: 'hi' }],
    top_k: 40,
    thinking: { type: 'enabled', budget_tokens: 2048 },
    frequency_penalty: 0.5,
    seed: 7,
    logprobs: true,
    n: 2,
    // Set to values that change nothing: no warning.
    presence_penalty: null,
    store: false,
    modalities: ['text'],
  });
  assert.equal(body.top_k, 40);
  assert.deepEqual(body.thinking, { type: 'enabled', budget_tokens: 2048 });
  for (const dropped of ['frequency_penalty', 'seed', 'logprobs', 'n', 'presence_penalty', 'store', 'modalities']) {
    assert.equal(dropped in body, false, dropped);
  }
  assert.deepEqual(warnings?.map((w) => w.path).sort(), ['frequency_penalty', 'logprobs', 'n', 'seed']);
  assert.match(warnings?.find((w) => w.path === 'seed')?.message ?? '', /no equivalent in the Messages API; dropped/);
});

test('an unknown field that collides with a translated one loses, with a warning', () => {
  const { body, warnings } = translateRequest('completions', 'messages', {
    model: 'm',
    messages: [{ role: 'system', content: 'from messages' }],
    system: 'sent raw',
  });
  assert.equal(body.system, 'from messages');
  assert.deepEqual(warnings, [{ path: 'system', message: 'conflicts with a field gw translated; dropped' }]);
});

test('tool-call arguments that are not a JSON object are sent as {} with a warning', () => {
  const { body, warnings } = translateRequest('completions', 'messages', {
    model: 'm',
    messages: [
      {
        role: 'assistant',
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'f', arguments: '{"unterminated' } },
          { id: 'b', type: 'function', function: { name: 'f', arguments: '[1,2]' } },
        ],
      },
    ],
  });
  const content = (body.messages as { content: { input: unknown }[] }[])[0]!.content;
  assert.deepEqual(
    content.map((block) => block.input),
    [{}, {}],
  );
  assert.deepEqual(
    warnings?.map((w) => w.path),
    ['messages[0].tool_calls[0].function.arguments', 'messages[0].tool_calls[1].function.arguments'],
  );
});

test('structured output, reasoning effort, service tier and safety_identifier', () => {
  const { body, warnings } = translateRequest('completions', 'messages', {
    model: 'm',
    messages: [],
    response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
    reasoning_effort: 'high',
    service_tier: 'default',
    safety_identifier: 'hash-1',
  });
  assert.deepEqual(body.output_config, { format: { type: 'json_schema', schema: { type: 'object' } }, effort: 'high' });
  assert.equal(body.service_tier, 'standard_only');
  assert.deepEqual(body.metadata, { user_id: 'hash-1' });
  assert.equal(warnings, undefined);
  const jsonObject = translateRequest('completions', 'messages', {
    model: 'm',
    messages: [],
    response_format: { type: 'json_object' },
  });
  assert.equal(jsonObject.body.output_config, undefined);
  assert.equal(jsonObject.warnings?.[0]?.path, 'response_format');
});

test('files: an inline PDF becomes a document block; audio and file IDs are dropped with warnings', () => {
  const { body, warnings } = translateRequest('completions', 'messages', {
    model: 'm',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
          { type: 'file', file: { file_id: 'file-abc' } },
          { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
          { type: 'image_url', image_url: { url: 'ftp://example.com/x.png' } },
        ],
      },
    ],
  });
  assert.deepEqual(body.messages, [
    {
      role: 'user',
      content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } }],
    },
  ]);
  assert.deepEqual(
    warnings?.map((w) => w.path),
    ['messages[0].content[1]', 'messages[0].content[2]', 'messages[0].content[3]'],
  );
});

test('malformed requests are TranslationErrors naming the field', () => {
  assert.throws(
    () => translateRequest('completions', 'messages', { model: 'm', messages: 'hi' }),
    /messages: must be an array/,
  );
  assert.throws(
    () => translateRequest('completions', 'messages', { model: 'm', messages: [{ role: 'tool', content: 'x' }] }),
    /messages\[0\]\.tool_call_id: required/,
  );
  assert.throws(
    () => translateRequest('completions', 'messages', { model: 'm', messages: [{ role: 'robot', content: 'x' }] }),
    /messages\[0\]\.role: unknown role "robot"/,
  );
});
