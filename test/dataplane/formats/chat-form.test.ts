// The chat form between the formats: warnings come in the order of the source body whether the
// reader noted them or the writer dropped them, and a conversation both formats can express
// survives a round trip through the other format unchanged.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { translateRequest, translateResponse } from '../../../src/dataplane/ai/formats/index.ts';

test('warnings follow the source body: reader notes and writer drops interleave in order', () => {
  const { warnings } = translateRequest('completions', 'messages', {
    model: 'm',
    messages: [
      { role: 'user', name: 'ada', content: 'hi' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/a.png', detail: 'low' } }] },
      { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] },
    ],
    seed: 7,
  });
  assert.deepEqual(warnings, [
    { path: 'messages[0].name', message: 'no equivalent in the Messages API; dropped' },
    { path: 'messages[1].content[0].image_url.detail', message: 'no equivalent in the Messages API; dropped' },
    { path: 'messages[2].content[0]', message: 'audio input has no Messages equivalent; dropped' },
    { path: 'seed', message: 'no equivalent in the Messages API; dropped' },
  ]);
});

test('a Messages conversation survives Messages → Chat Completions → Messages', () => {
  const original = {
    model: 'claude-sonnet-4-5',
    system: 'Be brief.',
    max_tokens: 100,
    messages: [
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C' }] },
    ],
    tools: [{ name: 'get_weather', description: 'Weather', input_schema: { type: 'object' } }],
    tool_choice: { type: 'auto' },
    temperature: 0.5,
    stop_sequences: ['END'],
    metadata: { user_id: 'u-1' },
  };
  const there = translateRequest('messages', 'completions', original);
  const back = translateRequest('completions', 'messages', there.body);
  assert.equal(there.warnings, undefined);
  assert.equal(back.warnings, undefined);
  assert.deepEqual(back.body, original);
});

test('a response survives Messages → Chat Completions → Messages, usage and stop reason included', () => {
  const original = {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [
      { type: 'text', text: 'Calling.' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
    ],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 2, cache_read_input_tokens: 3 },
  };
  const completion = translateResponse('messages', 'completions', original);
  assert.deepEqual(translateResponse('completions', 'messages', completion), original);
});
