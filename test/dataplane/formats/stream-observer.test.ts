import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createStreamObserver, createStreamTranslator } from '../../../src/dataplane/ai/formats/index.ts';
import { feed, fixture } from './stream-helpers.ts';

const encode = (text: string) => new TextEncoder().encode(text);

test('a Messages stream: usage from message_start and message_delta, model, first token', () => {
  const observer = createStreamObserver('messages');
  const bytes = fixture('messages-tools.sse');
  // Before any content arrives, no first token.
  const head = bytes.subarray(0, new TextDecoder().decode(bytes).indexOf('event: content_block_delta'));
  observer.write(head);
  assert.equal(observer.firstTokenSeen, false);
  observer.write(bytes.subarray(head.length));
  observer.end();
  assert.equal(observer.firstTokenSeen, true);
  assert.equal(observer.model, 'claude-sonnet-4-5-20250929');
  assert.deepEqual(observer.usage, {
    inputTokens: 4672,
    outputTokens: 89,
    totalTokens: 4761,
    cachedInputTokens: 3000,
    cacheCreationInputTokens: 1200,
  });
});

test('a Chat Completions stream: usage from the usage chunk, kept unless gw asked for it', () => {
  const kept = createStreamObserver('completions');
  const text = feed(kept, [fixture('completions-text.sse')]);
  assert.match(text, /"choices":\[\],"usage":\{"prompt_tokens":19/);
  assert.deepEqual(kept.usage, {
    inputTokens: 19,
    outputTokens: 10,
    totalTokens: 29,
    cachedInputTokens: 0,
    reasoningTokens: 0,
  });
  assert.equal(kept.model, 'gpt-4o-2024-08-06');
  assert.equal(kept.firstTokenSeen, true);
  // The same pair through createStreamTranslator: the client did not ask for usage, so it is dropped.
  const same = createStreamTranslator('completions', 'completions');
  assert.doesNotMatch(feed(same, [fixture('completions-text.sse')]), /"choices":\[\]/);
  assert.equal(same.usage?.totalTokens, 29);
  const asked = createStreamTranslator('completions', 'completions', { includeUsage: true });
  assert.match(feed(asked, [fixture('completions-text.sse')]), /"choices":\[\]/);
});

test('a Responses stream: model from response.created, usage from response.completed, first token from a delta', () => {
  const events = [
    {
      type: 'response.created',
      sequence_number: 0,
      response: { id: 'resp_1', model: 'gpt-5', status: 'in_progress', usage: null },
    },
    { type: 'response.output_item.added', sequence_number: 1, output_index: 0, item: { type: 'message', id: 'msg_1' } },
    {
      type: 'response.output_text.delta',
      sequence_number: 2,
      item_id: 'msg_1',
      output_index: 0,
      content_index: 0,
      delta: 'Hi',
    },
    {
      type: 'response.completed',
      sequence_number: 3,
      response: {
        id: 'resp_1',
        model: 'gpt-5-2025-08-07',
        status: 'completed',
        usage: {
          input_tokens: 36,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 87,
          output_tokens_details: { reasoning_tokens: 64 },
          total_tokens: 123,
        },
      },
    },
  ];
  const sse = events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
  const observer = createStreamObserver('responses');
  observer.write(encode(sse.slice(0, sse.indexOf('event: response.output_text.delta'))));
  assert.equal(observer.firstTokenSeen, false);
  assert.equal(observer.model, 'gpt-5');
  const rest = observer.write(encode(sse.slice(sse.indexOf('event: response.output_text.delta')))) + observer.end();
  assert.ok(sse.endsWith(rest));
  assert.equal(observer.firstTokenSeen, true);
  assert.equal(observer.model, 'gpt-5-2025-08-07');
  assert.deepEqual(observer.usage, {
    inputTokens: 36,
    outputTokens: 87,
    totalTokens: 123,
    cachedInputTokens: 0,
    reasoningTokens: 64,
  });
});

test("a passed-on stream cut short ends with its own format's error event (a Responses one numbered on)", () => {
  const responses = createStreamObserver('responses');
  responses.write(
    encode(
      [0, 1, 2]
        .map(
          (n) =>
            `event: response.in_progress\ndata: ${JSON.stringify({ type: 'response.in_progress', sequence_number: n, response: { id: 'r', model: 'gpt-5' } })}\n\n`,
        )
        .join(''),
    ),
  );
  const event = responses.errorEvent('completions', 502, 'cut');
  assert.match(event, /^event: error\ndata: /);
  const payload = JSON.parse(event.slice(event.indexOf('data: ') + 6));
  assert.deepEqual(payload, {
    type: 'error',
    error: { message: 'cut', type: 'server_error', param: null, code: null },
    sequence_number: 3,
  });
  // Before any event a Detect observer falls back to the client's format; a Messages stream's is Anthropic's.
  assert.equal(
    createStreamObserver('detect').errorEvent('completions', 502, 'cut'),
    `data: ${JSON.stringify({ error: { message: 'cut', type: 'server_error', param: null, code: null } })}\n\n`,
  );
  assert.match(
    createStreamObserver('messages').errorEvent('completions', 502, 'cut'),
    /^event: error\ndata: \{"type":"error"/,
  );
});

test('an observer passes events it cannot read, unread', () => {
  const observer = createStreamObserver('completions', { dropUsageOnlyChunk: true });
  const input = 'data: {not json\n\n: keep-alive\n\ndata: [DONE]\n\n';
  assert.equal(feed(observer, [encode(input)]), input);
  assert.equal(observer.usage, undefined);
});
