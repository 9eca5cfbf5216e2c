import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type SseBlock, SseReader } from '../../../src/dataplane/ai/formats/sse-reader.ts';

function read(text: string, pieceLength = text.length): SseBlock[] {
  const reader = new SseReader();
  const bytes = new TextEncoder().encode(text);
  const blocks: SseBlock[] = [];
  for (let i = 0; i < bytes.length; i += Math.max(1, pieceLength))
    blocks.push(...reader.push(bytes.subarray(i, i + pieceLength)));
  return [...blocks, ...reader.finish()];
}

test('fields, comments, multi-line data and raw text of each block', () => {
  const text = ': hello\n\nevent: ping\ndata: {"a":1}\n\ndata: line one\ndata:line two\nid: 7\nretry: 10\n\n';
  assert.deepEqual(read(text), [
    { raw: ': hello\n\n', event: undefined, data: undefined },
    { raw: 'event: ping\ndata: {"a":1}\n\n', event: 'ping', data: '{"a":1}' },
    { raw: 'data: line one\ndata:line two\nid: 7\nretry: 10\n\n', event: undefined, data: 'line one\nline two' },
  ]);
});

test('CRLF and CR line endings, also when a CRLF is split between chunks', () => {
  const crlf = 'event: a\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n';
  const cr = 'event: a\rdata: 1\r\rdata: 2\r\r';
  for (const text of [crlf, cr]) {
    for (const pieceLength of [1, 2, 3, 5, text.length]) {
      const blocks = read(text, pieceLength);
      assert.deepEqual(
        blocks.map((b) => [b.event, b.data]),
        [
          ['a', '1'],
          [undefined, '2'],
        ],
        `${JSON.stringify(text)} in pieces of ${pieceLength}`,
      );
      assert.equal(blocks.map((b) => b.raw).join(''), text);
    }
  }
});

test('a UTF-8 character split between chunks, and a leading byte order mark kept in raw text', () => {
  const text = '\uFEFFdata: {"t":"ça 🙂"}\n\n';
  const blocks = read(text, 1);
  assert.equal(blocks.length, 1);
  assert.equal(blocks[0]!.data, '{"t":"ça 🙂"}');
  assert.equal(blocks[0]!.raw, text);
});

test('the last block needs no blank line at the end of the stream, and is marked as possibly cut short', () => {
  assert.deepEqual(read('data: [DONE]'), [
    { raw: 'data: [DONE]', event: undefined, data: '[DONE]', unterminated: true },
  ]);
  assert.deepEqual(read('data: x\n'), [{ raw: 'data: x\n', event: undefined, data: 'x', unterminated: true }]);
  assert.deepEqual(read('data: x\n\n'), [{ raw: 'data: x\n\n', event: undefined, data: 'x' }]);
});

test('a block longer than the bound stops the reader; passthrough gives back the buffered text', () => {
  const reader = new SseReader(100);
  assert.deepEqual(reader.push(new TextEncoder().encode(`data: ${'x'.repeat(60)}`)), []);
  assert.equal(reader.overflowed, false);
  reader.push(new TextEncoder().encode('y'.repeat(60)));
  assert.equal(reader.overflowed, true);
  assert.equal(reader.passthrough(), `data: ${'x'.repeat(60)}${'y'.repeat(60)}`);
  assert.deepEqual(reader.push(new TextEncoder().encode('\n\nmore')), [
    { raw: '\n\nmore', event: undefined, data: undefined },
  ]);
});

// A quadratic reader would take hours here; the bound is loose so that a busy machine does not fail it.
test('reading is linear: a 1 MiB line in one-byte pieces and 20,000 tiny events are fast', () => {
  const started = performance.now();
  const reader = new SseReader(2 * 1024 * 1024);
  const byte = new Uint8Array([0x61]);
  reader.push(new TextEncoder().encode('data: '));
  for (let i = 0; i < 1024 * 1024; i++) reader.push(byte);
  assert.equal(reader.push(new TextEncoder().encode('\n\n'))[0]!.data!.length, 1024 * 1024);
  assert.equal(read('data: 1\n\n'.repeat(20_000)).length, 20_000);
  assert.ok(performance.now() - started < 5000, `took ${performance.now() - started} ms`);
});
