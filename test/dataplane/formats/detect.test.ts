// Telling a provider answer's format from its shape (the Detect route type): whole bodies, and
// streams through a `detect` observer, which must give the same usage as the observer made for
// the format and pass every byte through.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  createStreamObserver,
  detectedEventFormat,
  detectedResponseFormat,
  type ObservedFormat,
  usageFromResponse,
} from '../../../src/dataplane/ai/formats/index.ts';
import { feed, fixture, prng, randomSplits } from './stream-helpers.ts';

const encode = (text: string) => new TextEncoder().encode(text);

test('whole bodies: each format gw knows, by its type or object, and its usage read as that format', () => {
  const cases: [Record<string, unknown>, string | undefined][] = [
    [
      {
        type: 'message',
        role: 'assistant',
        usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 90, cache_creation_input_tokens: 0 },
      },
      'messages',
    ],
    [{ object: 'response', usage: { input_tokens: 7, output_tokens: 3, total_tokens: 10 } }, 'responses'],
    [{ object: 'chat.completion', usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 } }, 'completions'],
    [{ object: 'text_completion', choices: [] }, 'completions'],
    [{ object: 'list', data: [], usage: { prompt_tokens: 8, total_tokens: 8 } }, 'embeddings'],
    [{ input_tokens: 12 }, 'count_tokens'],
    [{ object: 'response.input_tokens', input_tokens: 12 }, 'count_tokens'],
    // Known usage spellings without a type: OpenAI-compatible servers, the images API, Anthropic-compatible ones.
    [{ choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } }, 'completions'],
    [
      {
        created: 1,
        data: [],
        usage: { input_tokens: 50, output_tokens: 4160, input_tokens_details: { image_tokens: 40 } },
      },
      'responses',
    ],
    [{ id: 'x', usage: { input_tokens: 3, output_tokens: 1, cache_read_input_tokens: 0 } }, 'messages'],
    // Nothing gw can read.
    [{ object: 'list', data: [{ id: 'gpt-4o', object: 'model' }] }, undefined],
    [{ id: 'file-1', object: 'file', bytes: 120 }, undefined],
    [{ usage: { tokens: 3 } }, undefined],
    [{ usage: 'none' }, undefined],
    [{}, undefined],
  ];
  for (const [body, want] of cases) assert.equal(detectedResponseFormat(body), want, JSON.stringify(body));

  const messages = cases[0]![0];
  // Anthropic's input_tokens leaves out the cache reads: summed as for a Messages route.
  assert.deepEqual(usageFromResponse(detectedResponseFormat(messages)!, messages), {
    inputTokens: 100,
    outputTokens: 5,
    totalTokens: 105,
    cachedInputTokens: 90,
    cacheCreationInputTokens: 0,
  });
});

test('stream events: the ones that tell the format, and the ones that do not', () => {
  const cases: [Record<string, unknown>, ObservedFormat | undefined][] = [
    [{ object: 'chat.completion.chunk', choices: [] }, 'completions'],
    [{ id: 'x', choices: [{ delta: { content: 'hi' } }] }, 'completions'],
    [{ type: 'message_start', message: {} }, 'messages'],
    [{ type: 'content_block_delta', index: 0 }, 'messages'],
    [{ type: 'response.created', response: {} }, 'responses'],
    [{ type: 'response.output_text.delta', delta: 'x' }, 'responses'],
    [{ type: 'ping' }, undefined],
    [{ type: 'error', error: { type: 'overloaded_error' } }, undefined],
    [{ error: { message: 'busy' } }, undefined],
    [{ type: 7 }, undefined],
  ];
  for (const [event, want] of cases) assert.equal(detectedEventFormat(event), want, JSON.stringify(event));
});

test('a detect observer reads each fixture stream as the observer for its format does, bytes unchanged', () => {
  const random = prng(7);
  for (const [name, format] of [
    ['messages-tools.sse', 'messages'],
    ['messages-text.sse', 'messages'],
    ['completions-text.sse', 'completions'],
    ['completions-tools.sse', 'completions'],
  ] as const) {
    const bytes = fixture(name);
    const known = createStreamObserver(format);
    const expected = feed(known, [bytes]);
    for (let round = 0; round < 20; round++) {
      const detect = createStreamObserver('detect');
      assert.equal(detect.format, undefined);
      assert.equal(feed(detect, randomSplits(bytes, random, 12)), expected, name);
      assert.equal(detect.format, format, name);
      assert.deepEqual(detect.usage, known.usage, name);
      assert.equal(detect.model, known.model, name);
      assert.equal(detect.firstTokenSeen, known.firstTokenSeen, name);
    }
  }
});

test('a detect observer: a Responses stream, events before the telling one, and a stream of no known format', () => {
  const responses = [
    { type: 'response.created', response: { model: 'gpt-5', usage: null } },
    { type: 'response.output_text.delta', delta: 'Hi' },
    { type: 'response.completed', response: { model: 'gpt-5', usage: { input_tokens: 3, output_tokens: 1 } } },
  ];
  const sse = `: keep-alive\n\nevent: ping\ndata: {"type":"ping"}\n\n${responses
    .map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`)
    .join('')}`;
  const detect = createStreamObserver('detect');
  assert.equal(feed(detect, [encode(sse)]), sse);
  assert.equal(detect.format, 'responses');
  assert.deepEqual(detect.usage, { inputTokens: 3, outputTokens: 1, totalTokens: 4 });
  assert.equal(detect.firstTokenSeen, true);

  const unknown = 'event: progress\ndata: {"percent":50}\n\ndata: not json\n\ndata: [DONE]\n\n';
  const other = createStreamObserver('detect');
  assert.equal(feed(other, [encode(unknown)]), unknown);
  assert.equal(other.format, undefined);
  assert.equal(other.usage, undefined);
  assert.equal(other.firstTokenSeen, false);
});

test('a detect observer never leaves out a Chat Completions usage chunk (the client asked for it)', () => {
  const detect = createStreamObserver('detect', { dropUsageOnlyChunk: true });
  assert.match(feed(detect, [fixture('completions-text.sse')]), /"choices":\[\],"usage":\{"prompt_tokens":19/);
  assert.equal(detect.usage?.totalTokens, 29);
});
