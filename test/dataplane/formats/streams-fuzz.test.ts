// Every stream reader fuzzed with seeded randomness, for every translation the stream goldens
// cover (Chat Completions, Messages, ConverseStream and Gemini provider streams into Chat
// Completions, Messages, Responses and Gemini clients) and for the observers of the formats gw passes
// through (Chat Completions, Messages, Responses): the recorded streams split at random points,
// truncated at random points, and with garbage injected (random bytes, bytes overwritten, junk
// events, for Converse junk frames). A translator never throws, ends the client's stream cleanly
// (its format's last event or exactly one error event, every event well-formed), and gives the
// same output for the same bytes however they are split; an observer passes the bytes through as
// they came. streams-robustness.test.ts holds the exhaustive single-split and the targeted cases.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type ClientChatFormat,
  createStreamObserver,
  createStreamTranslator,
  type StreamProcessor,
} from '../../../src/dataplane/ai/formats/index.ts';
import { eventFrame } from '../../helpers/bedrock-stand-in.ts';
import {
  feed,
  fixture,
  GOLDEN_CASES,
  type GoldenCase,
  normalizeCreated,
  parseSse,
  prng,
  randomSplits,
} from './stream-helpers.ts';

const SEEDS = 25;

/** What the checks read of an event's JSON. */
type Payload = { type?: string; error?: unknown; candidates?: { finishReason?: string }[] };

/** The client's stream ends with its format's end of response, or with one error event, last. */
function assertEndsCleanly(output: string, to: ClientChatFormat, context: string): void {
  const events = parseSse(output);
  assert.ok(events.length > 0, `${context}: no events`);
  const payloads = events.map((event): Payload | undefined => {
    if (event.data === '[DONE]') return undefined;
    let payload: Payload | undefined;
    assert.doesNotThrow(() => {
      payload = JSON.parse(event.data);
    }, `${context}: an event that is not JSON: ${event.data}`);
    return payload;
  });
  const errors = payloads.filter((payload) => payload?.error !== undefined);
  assert.ok(errors.length <= 1, `${context}: ${errors.length} errors`);
  const last = events.at(-1)!;
  const lastPayload = payloads.at(-1);
  if (errors.length === 1) {
    assert.equal(errors[0], lastPayload, `${context}: the error is not the last event`);
    if (to === 'messages') assert.equal(last.event, 'error', context);
    if (to === 'responses') assert.ok(last.event === 'error' && lastPayload?.type === 'error', context);
    return;
  }
  const ended =
    to === 'completions'
      ? last.data === '[DONE]'
      : to === 'messages'
        ? last.event === 'message_stop'
        : to === 'gemini'
          ? lastPayload?.candidates?.[0]?.finishReason !== undefined
          : last.event === 'response.completed' || last.event === 'response.incomplete';
  assert.ok(ended, `${context}: ends with ${last.event} ${last.data}`);
}

function translator(c: GoldenCase): StreamProcessor {
  return createStreamTranslator(c.from, c.to, { includeUsage: c.includeUsage, model: c.model });
}

/** Feeds the pieces; the processor must not throw, and a translator must be over after end(). */
function run(c: GoldenCase, pieces: Uint8Array[], context: string): string {
  const processor = translator(c);
  let out = '';
  assert.doesNotThrow(() => {
    for (const piece of pieces) out += processor.write(piece);
    out += processor.end();
  }, context);
  assert.notEqual(processor.state, 'open', `${context}: still open after end()`);
  return normalizeCreated(out);
}

/** One of the kinds of garbage, injected at a random point (or several bytes overwritten). */
function withGarbage(bytes: Uint8Array, c: GoldenCase, random: () => number): Uint8Array {
  const at = Math.floor(random() * (bytes.length + 1));
  const junk = (): Uint8Array => {
    switch (Math.floor(random() * 4)) {
      case 0:
        return new Uint8Array(1 + Math.floor(random() * 40)).map(() => Math.floor(random() * 256));
      case 1:
        return new TextEncoder().encode('data: {"not": "closed\n\n');
      case 2:
        return c.from === 'converse'
          ? eventFrame('contentBlockDelta', { contentBlockIndex: 'x', delta: 7 })
          : new TextEncoder().encode('event: surprise\ndata: [1, 2, 3]\n\n');
      default:
        return new Uint8Array(0);
    }
  };
  const extra = junk();
  if (extra.length === 0) {
    const overwritten = Uint8Array.from(bytes);
    for (let i = 0; i < 1 + Math.floor(random() * 4); i++) {
      overwritten[Math.floor(random() * overwritten.length)] = Math.floor(random() * 256);
    }
    return overwritten;
  }
  const out = new Uint8Array(bytes.length + extra.length);
  out.set(bytes.subarray(0, at), 0);
  out.set(extra, at);
  out.set(bytes.subarray(at), at + extra.length);
  return out;
}

for (const c of GOLDEN_CASES) {
  const name = `${c.input} → ${c.to}${c.includeUsage ? ' with usage' : ''}`;

  test(`${name}: split, truncated and with garbage, it ends cleanly and the same however split`, () => {
    const bytes = fixture(c.input);
    const whole = run(c, [bytes], 'whole');
    assertEndsCleanly(whole, c.to, 'whole');
    for (let seed = 1; seed <= SEEDS; seed++) {
      const random = prng(seed * 7919);
      const split = run(c, randomSplits(bytes, random, 40), `seed ${seed} split`);
      assert.equal(split, whole, `seed ${seed}: split differs from whole`);

      const cut = bytes.subarray(0, Math.floor(random() * bytes.length));
      const cutWhole = run(c, [cut], `seed ${seed} cut at ${cut.length}`);
      assertEndsCleanly(cutWhole, c.to, `seed ${seed} cut at ${cut.length}`);
      assert.equal(run(c, randomSplits(cut, random, 20), 'cut, split'), cutWhole, `seed ${seed} cut, split`);

      const garbled = withGarbage(bytes, c, random);
      const garbledWhole = run(c, [garbled], `seed ${seed} garbage`);
      assertEndsCleanly(garbledWhole, c.to, `seed ${seed} garbage`);
      assert.equal(
        run(c, randomSplits(garbled, random, 20), 'garbage, split'),
        garbledWhole,
        `seed ${seed} garbage, split`,
      );
    }
  });
}

const OBSERVED = [
  { from: 'completions', inputs: ['completions-text.sse', 'completions-tools.sse', 'completions-error.sse'] },
  { from: 'messages', inputs: ['messages-text.sse', 'messages-tools.sse', 'messages-error.sse'] },
  { from: 'responses', inputs: ['responses-text.sse', 'responses-tools.sse'] },
] as const;

for (const { from, inputs } of OBSERVED) {
  test(`the ${from} observer passes split, truncated and garbled streams through as they came`, () => {
    const decoder = new TextDecoder();
    for (const input of inputs) {
      const bytes = fixture(input);
      for (let seed = 1; seed <= SEEDS; seed++) {
        const random = prng(seed * 104729);
        const garbled = withGarbage(bytes, { input, from: 'completions', to: 'completions', expected: '' }, random);
        for (const variant of [bytes, bytes.subarray(0, Math.floor(random() * bytes.length)), garbled]) {
          let out = '';
          assert.doesNotThrow(() => {
            out = feed(createStreamObserver(from), randomSplits(variant, random, 30));
          });
          assert.equal(out, decoder.decode(variant), `${input} seed ${seed}`);
        }
      }
    }
  });
}
