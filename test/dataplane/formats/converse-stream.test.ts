// The ConverseStream reader (AWS event-stream frames into a client's SSE) under hostile input:
// the stand-in's frames split at random points translate to the same client stream as whole;
// truncation anywhere, garbage, a corrupted CRC, an oversized frame and an exception frame each
// end the client's stream with exactly one error event and no exception escapes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createStreamTranslator } from '../../../src/dataplane/ai/formats/index.ts';
import { converseStreamFrames, eventFrame, exceptionFrame } from '../../helpers/bedrock-stand-in.ts';
import { seededRandom } from '../../helpers/random.ts';

const REQUEST = { messages: [{ role: 'user', content: [{ text: 'Hi' }] }] };

function concat(frames: Uint8Array[]): Uint8Array {
  return Buffer.concat(frames.map((frame) => Buffer.from(frame)));
}

function run(pieces: Uint8Array[], to: 'completions' | 'messages' = 'messages'): { out: string; state: string } {
  const stream = createStreamTranslator('converse', to, { model: 'm' });
  let out = '';
  for (const piece of pieces) {
    out += stream.write(piece);
    if (stream.state !== 'open') return { out, state: stream.state };
  }
  out += stream.end();
  return { out, state: stream.state };
}

function errorEvents(out: string): number {
  return out.split('\n').filter((line) => line === 'event: error').length;
}

function randomSplit(bytes: Uint8Array, random: () => number): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  let at = 0;
  while (at < bytes.byteLength) {
    const size = 1 + Math.floor(random() * 40);
    pieces.push(bytes.subarray(at, at + size));
    at += size;
  }
  return pieces;
}

describe('ConverseStream reader', () => {
  const whole = concat(converseStreamFrames('m', REQUEST));

  it('translates the same, whole or split at random', () => {
    const expected = run([whole]);
    assert.equal(expected.state, 'complete');
    assert.match(expected.out, /"text":"Hello from "/);
    assert.match(expected.out, /event: message_stop/);
    const random = seededRandom(20);
    for (let round = 0; round < 200; round++) {
      const split = run(randomSplit(whole, random));
      // Ids are gw's own per stream; the rest is byte for byte.
      assert.equal(split.out.replace(/bedrock-[0-9a-f-]+/g, 'ID'), expected.out.replace(/bedrock-[0-9a-f-]+/g, 'ID'));
    }
  });

  it('ends a stream cut anywhere before messageStop with one error event', () => {
    const frames = converseStreamFrames('m', REQUEST);
    const stopAt = concat(frames.slice(0, -2)).byteLength;
    for (let cut = 0; cut <= stopAt; cut += 7) {
      const { out, state } = run([whole.subarray(0, cut)]);
      assert.equal(state, 'failed', `cut at ${cut}`);
      assert.equal(errorEvents(out), 1, `cut at ${cut}`);
    }
  });

  it('ends garbage, a bad CRC, an oversized frame and an exception with one error event', () => {
    const random = seededRandom(7);
    const garbage = Buffer.from(Array.from({ length: 300 }, () => Math.floor(random() * 256)));
    const corrupted = Buffer.from(whole);
    corrupted[30] = (corrupted[30]! + 1) % 256;
    const oversized = Buffer.alloc(8);
    oversized.writeUInt32BE(64 * 1024 * 1024, 0);
    const frames = converseStreamFrames('m', REQUEST);
    const failing = concat([frames[0]!, frames[1]!, exceptionFrame('throttlingException', 'Too many requests')]);
    for (const [name, input] of [
      ['garbage', garbage],
      ['bad CRC', corrupted],
      ['oversized', oversized],
      ['exception', failing],
      ['text', Buffer.from('data: {"hello": 1}\n\n')],
    ] as const) {
      for (const to of ['messages', 'completions'] as const) {
        const { out, state } = run([input], to);
        assert.equal(state, 'failed', name);
        const count =
          to === 'messages' ? errorEvents(out) : out.split('\n').filter((l) => l.startsWith('data: {"error"')).length;
        assert.equal(count, 1, `${name} to ${to}`);
      }
    }
    const { out } = run([failing]);
    assert.match(out, /Too many requests/);
    assert.match(out, /rate_limit_error/);
  });

  it('the events before an exception in the same chunk reach the client before its error', () => {
    // Bedrock writes the last events and the exception together; they used to be dropped with it.
    const frames = converseStreamFrames('m', REQUEST);
    const failing = concat([...frames.slice(0, 3), exceptionFrame('throttlingException', 'Too many requests')]);
    for (const to of ['messages', 'completions'] as const) {
      const { out, state } = run([failing], to);
      assert.equal(state, 'failed');
      const text = out.indexOf('Hello from ');
      const error = out.indexOf('Too many requests');
      assert.ok(text >= 0 && text < error, `${to}: the text, then the error:\n${out}`);
    }
    // The same when the exception comes in a chunk of its own.
    const { out } = run([concat(frames.slice(0, 3)), exceptionFrame('throttlingException', 'Too many requests')]);
    assert.ok(out.indexOf('Hello from ') < out.indexOf('Too many requests'));
  });

  it("a reasoning signature reaches a Messages client as its thinking block's signature_delta, a Chat Completions client as reasoning_signature", () => {
    // Claude on Bedrock checks the signature when the thinking comes back with a tool result.
    const frames = concat([
      eventFrame('messageStart', { role: 'assistant' }),
      eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'Hmm.' } } }),
      eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { signature: 'sig-1' } } }),
      eventFrame('contentBlockStop', { contentBlockIndex: 0 }),
      eventFrame('messageStop', { stopReason: 'end_turn' }),
    ]);
    const { out, state } = run([frames]);
    assert.equal(state, 'complete');
    const deltas = out
      .split('\n')
      .filter((line) => line.startsWith('data: {"type":"content_block_delta"'))
      .map((line) => JSON.parse(line.slice('data: '.length)).delta);
    assert.deepEqual(deltas, [
      { type: 'thinking_delta', thinking: 'Hmm.' },
      { type: 'signature_delta', signature: 'sig-1' },
    ]);
    // A Chat Completions client gets it as reasoning_signature, in a delta after the reasoning.
    const completions = run([frames], 'completions')
      .out.split('\n')
      .filter((line) => line.startsWith('data: {'))
      .map((line) => JSON.parse(line.slice('data: '.length)).choices[0]?.delta);
    assert.deepEqual(completions.slice(1, 3), [{ reasoning_content: 'Hmm.' }, { reasoning_signature: 'sig-1' }]);
  });

  it('fuzzed frames never throw and end open streams only by end()', () => {
    const random = seededRandom(99);
    for (let round = 0; round < 300; round++) {
      const bytes = Buffer.from(whole);
      const flips = 1 + Math.floor(random() * 4);
      for (let i = 0; i < flips; i++) bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
      const cut = Math.floor(random() * bytes.length);
      const { state } = run(randomSplit(bytes.subarray(0, random() < 0.5 ? cut : bytes.length), random));
      assert.ok(state === 'complete' || state === 'failed');
    }
  });
});
