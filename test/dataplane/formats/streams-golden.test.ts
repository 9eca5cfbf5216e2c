// Recorded provider streams (test/fixtures/formats/*.sse) translated to the other format, compared
// with the expected client streams (test/fixtures/formats/expected/): every provider format (Chat
// Completions, Messages, ConverseStream, Gemini) into every client format it is translated to
// (Chat Completions, Messages, Responses); the same format on both sides is passed through, not
// translated. UPDATE_GOLDEN=1 rewrites them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createStreamTranslator } from '../../../src/dataplane/ai/formats/index.ts';
import { feed, fixture, GOLDEN_CASES, golden, normalizeCreated, parseSse } from './stream-helpers.ts';

for (const c of GOLDEN_CASES) {
  test(`${c.input} → ${c.to}${c.includeUsage ? ' with usage' : ''}`, () => {
    const translator = createStreamTranslator(c.from, c.to, { includeUsage: c.includeUsage, model: c.model });
    const actual = normalizeCreated(feed(translator, [fixture(c.input)]));
    assert.equal(actual, golden(c.expected, actual));
  });
}

test('Messages → Completions: usage from message_start and message_delta, model, first token', () => {
  const translator = createStreamTranslator('messages', 'completions', { includeUsage: true });
  const events = parseSse(feed(translator, [fixture('messages-tools.sse')]));
  assert.deepEqual(translator.usage, {
    inputTokens: 472 + 3000 + 1200,
    outputTokens: 89,
    totalTokens: 472 + 3000 + 1200 + 89,
    cachedInputTokens: 3000,
    cacheCreationInputTokens: 1200,
  });
  assert.equal(translator.model, 'claude-sonnet-4-5-20250929');
  assert.equal(translator.firstTokenSeen, true);
  const usageChunk = JSON.parse(events.at(-2)!.data);
  assert.deepEqual(usageChunk.choices, []);
  assert.deepEqual(usageChunk.usage, {
    prompt_tokens: 4672,
    completion_tokens: 89,
    total_tokens: 4761,
    prompt_tokens_details: { cached_tokens: 3000, cache_write_tokens: 1200 },
  });
  assert.equal(events.at(-1)!.data, '[DONE]');
  // Without include_usage there is no usage chunk, and chunks carry no usage field.
  const plain = parseSse(feed(createStreamTranslator('messages', 'completions'), [fixture('messages-tools.sse')]));
  assert.ok(plain.slice(0, -1).every((event) => !('usage' in JSON.parse(event.data))));
});

test('Messages → Completions: tool call indices, ids and names on the first chunk of each call', () => {
  const events = parseSse(feed(createStreamTranslator('messages', 'completions'), [fixture('messages-tools.sse')]));
  const calls = events.slice(0, -1).flatMap((event) => JSON.parse(event.data).choices[0]?.delta.tool_calls ?? []) as {
    index: number;
    id?: string;
    function: { name?: string; arguments: string };
  }[];
  const assembled = new Map<number, { id?: string; name?: string; args: string }>();
  for (const call of calls) {
    const entry = assembled.get(call.index) ?? { args: '' };
    if (call.id) {
      assert.equal(entry.id, undefined, 'the id comes once, first');
      entry.id = call.id;
      entry.name = call.function.name;
    }
    entry.args += call.function.arguments;
    assembled.set(call.index, entry);
  }
  assert.deepEqual(
    [...assembled.entries()].map(([index, call]) => [index, call.name, JSON.parse(call.args)]),
    [
      [0, 'get_weather', { location: 'San Francisco, CA', unit: 'celsius' }],
      [1, 'get_weather', { location: 'Zürich' }],
      [2, 'get_time', {}],
    ],
  );
});

test('Completions → Messages: block indices in order, each block stopped before the next starts', () => {
  const translator = createStreamTranslator('completions', 'messages');
  const events = parseSse(feed(translator, [fixture('completions-tools.sse')])).map((event) => JSON.parse(event.data));
  let open: number | undefined;
  let next = 0;
  for (const event of events) {
    if (event.type === 'content_block_start') {
      assert.equal(open, undefined);
      assert.equal(event.index, next++);
      open = event.index;
    } else if (event.type === 'content_block_delta') {
      assert.equal(event.index, open);
    } else if (event.type === 'content_block_stop') {
      assert.equal(event.index, open);
      open = undefined;
    }
  }
  assert.equal(next, 4);
  assert.deepEqual(events.map((event) => event.type).slice(-2), ['message_delta', 'message_stop']);
  assert.deepEqual(translator.usage, {
    inputTokens: 4310,
    outputTokens: 57,
    totalTokens: 4367,
    cachedInputTokens: 3072,
    reasoningTokens: 0,
  });
  assert.equal(translator.model, 'gpt-4o-2024-08-06');
});

test('the client-facing model replaces the provider model in translated events', () => {
  const toCompletions = feed(createStreamTranslator('messages', 'completions', { model: 'alias' }), [
    fixture('messages-text.sse'),
  ]);
  assert.ok(
    parseSse(toCompletions)
      .slice(0, -1)
      .every((event) => JSON.parse(event.data).model === 'alias'),
  );
  const toMessages = feed(createStreamTranslator('completions', 'messages', { model: 'alias' }), [
    fixture('completions-text.sse'),
  ]);
  assert.equal(JSON.parse(parseSse(toMessages)[0]!.data).message.model, 'alias');
});

test('Completions → Messages: a usage chunk without a choices field still completes the message', () => {
  const sse = [
    'data: {"id":"c1","model":"m","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}',
    'data: {"id":"c1","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
    'data: {"id":"c1","model":"m","usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}',
    'data: [DONE]',
  ].join('\n\n');
  const translator = createStreamTranslator('completions', 'messages');
  const events = parseSse(feed(translator, [new TextEncoder().encode(`${sse}\n\n`)]));
  const delta = JSON.parse(events.at(-2)!.data);
  assert.deepEqual(delta.usage, {
    input_tokens: 3,
    output_tokens: 1,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  });
  assert.equal(events.at(-1)!.event, 'message_stop');
});
