// Stream processors meet the network: chunks split anywhere, truncated streams, corrupt bytes.
// They must give the same output however the bytes are split, never throw, and always end the
// client's stream with a completion or a well-formed error.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type ChatFormat,
  createStreamObserver,
  createStreamTranslator,
  type StreamProcessor,
} from '../../../src/dataplane/ai/formats/index.ts';
import {
  feed,
  fixture,
  GOLDEN_CASES,
  normalizeCreated,
  parseSse,
  prng,
  randomSplits,
  splitAt,
} from './stream-helpers.ts';

const INPUTS: { name: string; from: ChatFormat }[] = [
  { name: 'messages-text.sse', from: 'messages' },
  { name: 'messages-tools.sse', from: 'messages' },
  { name: 'messages-error.sse', from: 'messages' },
  { name: 'completions-text.sse', from: 'completions' },
  { name: 'completions-tools.sse', from: 'completions' },
  { name: 'completions-no-usage.sse', from: 'completions' },
  { name: 'completions-error.sse', from: 'completions' },
];

function other(format: ChatFormat): ChatFormat {
  return format === 'messages' ? 'completions' : 'messages';
}

/** The client's stream ends with its format's end of response, or with one error event. */
function assertWellEnded(output: string, to: ChatFormat, context: string): void {
  const events = parseSse(output);
  assert.ok(events.length > 0, `${context}: no events`);
  for (const event of events) {
    if (event.data !== '[DONE]') assert.doesNotThrow(() => JSON.parse(event.data), `${context}: ${event.data}`);
  }
  const last = events.at(-1)!;
  const errorCount = events.filter((e) => e.event === 'error' || e.data.startsWith('{"error"')).length;
  assert.ok(errorCount <= 1, `${context}: more than one error`);
  if (to === 'completions') {
    const payload = last.data === '[DONE]' ? undefined : JSON.parse(last.data);
    assert.ok(
      last.data === '[DONE]' || typeof payload?.error?.message === 'string',
      `${context}: ends with ${last.data}`,
    );
  } else {
    const payload = JSON.parse(last.data);
    const ended = last.event === 'message_stop' && payload.type === 'message_stop';
    const failed =
      last.event === 'error' &&
      payload.type === 'error' &&
      payload.error?.type &&
      typeof payload.error.message === 'string';
    assert.ok(ended || failed, `${context}: ends with ${last.event} ${last.data}`);
  }
}

// Every byte offset of the Chat Completions and Messages fixtures between those two formats; the
// other translations are split at seeded random points in streams-fuzz.test.ts (every offset of
// all of them would take seconds).
const EXHAUSTIVE_CASES = GOLDEN_CASES.filter(
  (c) => INPUTS.some((input) => input.name === c.input) && c.to !== 'responses',
);

test('translators give the same output for every split of every fixture', () => {
  for (const c of EXHAUSTIVE_CASES) {
    const bytes = fixture(c.input);
    const whole = normalizeCreated(feed(createStreamTranslator(c.from, c.to, c), [bytes]));
    for (let offset = 0; offset <= bytes.length; offset++) {
      const split = normalizeCreated(feed(createStreamTranslator(c.from, c.to, c), splitAt(bytes, [offset])));
      if (split !== whole) assert.equal(split, whole, `${c.input} split at ${offset}`);
    }
    const random = prng(0x5eed);
    for (let round = 0; round < 100; round++) {
      const pieces = randomSplits(bytes, random, 40);
      assert.equal(
        normalizeCreated(feed(createStreamTranslator(c.from, c.to, c), pieces)),
        whole,
        `${c.input} round ${round}`,
      );
    }
  }
});

test('observers pass every fixture through byte for byte, however it is split', () => {
  for (const { name, from } of INPUTS) {
    const bytes = fixture(name);
    const text = new TextDecoder().decode(bytes);
    const random = prng(42);
    for (let round = 0; round < 200; round++) {
      const observer = createStreamObserver(from);
      assert.equal(feed(observer, randomSplits(bytes, random, 30)), text, `${name} round ${round}`);
    }
  }
});

test('the usage-only chunk gw asked for is dropped, and only that chunk', () => {
  const bytes = fixture('completions-tools.sse');
  const text = new TextDecoder().decode(bytes);
  const usageChunk = text.split('\n\n').find((block) => block.includes('"choices":[]'))!;
  const random = prng(7);
  for (let round = 0; round < 200; round++) {
    const observer = createStreamObserver('completions', { dropUsageOnlyChunk: true });
    assert.equal(feed(observer, randomSplits(bytes, random, 30)), text.replace(`${usageChunk}\n\n`, ''));
    assert.equal(observer.usage?.inputTokens, 4310);
  }
});

test('truncated streams end with a completion or an error, never a silent cut', () => {
  const random = prng(1234);
  for (const { name, from } of INPUTS) {
    const bytes = fixture(name);
    for (let round = 0; round < 150; round++) {
      const cut = bytes.subarray(0, Math.floor(random() * bytes.length));
      const output = feed(createStreamTranslator(from, other(from)), randomSplits(cut, random, 8));
      assertWellEnded(output, other(from), `${name} cut at ${cut.length}`);
      // A cut is reported as a cut, whatever line it fell in (the error fixtures end with the provider's own).
      const last = parseSse(output).at(-1)!.data;
      if (last.includes('"error"') && !name.includes('error'))
        assert.match(last, /ended before the response was complete/, `${name} cut at ${cut.length}`);
    }
  }
});

test('corrupt bytes, invalid JSON and random input never throw and end well', () => {
  const random = prng(0xc0ffee);
  const safely = (processor: StreamProcessor, pieces: Uint8Array[]): string => {
    let out = '';
    for (const piece of pieces) out += processor.write(piece);
    return out + processor.end();
  };
  let cases = 0;
  for (const { name, from } of INPUTS) {
    const bytes = fixture(name);
    for (let round = 0; round < 250; round++) {
      const corrupt = new Uint8Array(bytes);
      const flips = 1 + Math.floor(random() * 4);
      for (let i = 0; i < flips; i++) corrupt[Math.floor(random() * corrupt.length)] = Math.floor(random() * 256);
      const output = safely(createStreamTranslator(from, other(from)), randomSplits(corrupt, random, 10));
      assertWellEnded(output, other(from), `${name} corrupted, round ${round}`);
      safely(createStreamObserver(from, { dropUsageOnlyChunk: true }), randomSplits(corrupt, random, 10));
      cases++;
    }
  }
  for (let round = 0; round < 1000; round++) {
    const noise = new Uint8Array(Math.floor(random() * 300)).map(() => Math.floor(random() * 256));
    // Half of the cases look like SSE, so that parsing gets past the framing.
    const input = round % 2 === 0 ? noise : new TextEncoder().encode(`data: ${new TextDecoder().decode(noise)}\n\n`);
    const from: ChatFormat = round % 4 < 2 ? 'messages' : 'completions';
    assertWellEnded(
      safely(createStreamTranslator(from, other(from)), randomSplits(input, random, 6)),
      other(from),
      `noise ${round}`,
    );
    safely(createStreamObserver(from), randomSplits(input, random, 6));
    safely(createStreamObserver('responses'), randomSplits(input, random, 6));
    cases++;
  }
  assert.ok(cases > 2000);
});

test('an event longer than 1 MiB ends a translation with an error; an observer passes it on', () => {
  const head = new TextEncoder().encode('data: {"id":"x","choices":[{"index":0,"delta":{"content":"');
  const filler = new Uint8Array(64 * 1024).fill(0x61);
  const translator = createStreamTranslator('completions', 'messages');
  let out = translator.write(head);
  for (let i = 0; i < 20; i++) out += translator.write(filler);
  out += translator.end();
  const events = parseSse(out);
  assert.equal(events.length, 1);
  assert.equal(events[0]!.event, 'error');
  assert.match(JSON.parse(events[0]!.data).error.message, /longer than 1048576 characters/);

  const observer = createStreamObserver('completions', { dropUsageOnlyChunk: true });
  const tail = new TextEncoder().encode('"}}]}\n\ndata: [DONE]\n\n');
  let passed = observer.write(head).length;
  for (let i = 0; i < 20; i++) passed += observer.write(filler).length;
  passed += observer.write(tail).length + observer.end().length;
  assert.equal(passed, head.length + 20 * filler.length + tail.length);
});

test('a stream with nothing but [DONE] or message_stop still gives the client a whole response', () => {
  const done = feed(createStreamTranslator('completions', 'messages'), [new TextEncoder().encode('data: [DONE]\n\n')]);
  assert.deepEqual(
    parseSse(done).map((event) => event.event),
    ['message_start', 'message_delta', 'message_stop'],
  );
  const empty = feed(createStreamTranslator('messages', 'completions'), []);
  assertWellEnded(empty, 'completions', 'empty stream');
  assert.match(empty, /ended before the response was complete/);
});

test('a translator says when the client stream is over (complete, or failed and why); an observer never does', () => {
  const encode = (text: string) => new TextEncoder().encode(text);
  const complete = createStreamTranslator('completions', 'messages');
  complete.write(encode('data: {"id":"x","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'));
  assert.equal(complete.state, 'open');
  complete.write(encode('data: [DONE]\n\n'));
  assert.equal(complete.state, 'complete');
  assert.equal(complete.failure, undefined);
  assert.equal(complete.write(encode('data: {"more": true}\n\n')), '', 'later events are ignored');

  const failed = createStreamTranslator('messages', 'completions');
  const out = failed.write(encode('data: {"id":"x","choices":[]}\n\n'));
  assert.equal(failed.state, 'failed');
  assert.equal(failed.failure, 'The provider sent an event without a type.');
  assert.match(out, /^data: \{"error":/);

  // The provider's own error text goes to the client, not to gw's log.
  const reported = createStreamTranslator('messages', 'completions');
  const text = reported.write(
    encode('event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"secret detail"}}\n\n'),
  );
  assert.equal(reported.state, 'failed');
  assert.equal(reported.failure, 'The provider reported an error in the stream.');
  assert.match(text, /secret detail/);

  const observer = createStreamObserver('completions');
  observer.write(encode('data: not json\n\ndata: [DONE]\n\n'));
  assert.equal(observer.state, 'open');
});
