import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import {
  type BatchWriter,
  BufferedLogSink,
  fileDescriptorWriter,
  streamWriter,
} from '../../../src/dataplane/telemetry/log-sink.ts';

/** An output that holds each batch until release() is called. */
function heldOutput() {
  const batches: string[] = [];
  let pending: (() => void) | undefined;
  const writer: BatchWriter = (chunk, done) => {
    batches.push(chunk.toString('utf8'));
    pending = () => done();
  };
  return {
    writer,
    batches,
    release(): void {
      const done = pending;
      pending = undefined;
      done?.();
    },
  };
}

test('lines of one event-loop turn go out together, in order, newline-terminated', async () => {
  const output = heldOutput();
  const sink = new BufferedLogSink(output.writer);
  sink.write('{"a":1}');
  sink.write('{"a":2}');
  assert.equal(output.batches.length, 0, 'nothing is written synchronously');
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(output.batches, ['{"a":1}\n{"a":2}\n']);
  output.release();
  await sink.drained();
  assert.equal(sink.bufferedChars, 0);
});

test('a stuck output never blocks the writer: the buffer stays bounded and extra lines are dropped and counted', async () => {
  const output = heldOutput();
  const sink = new BufferedLogSink(output.writer, { maxBufferedChars: 10_000, maxBatchBytes: 1_000 });
  const line = 'x'.repeat(99); // 100 characters with its newline
  sink.write(line);
  await new Promise((resolve) => setImmediate(resolve)); // the first batch is now in flight, held
  const started = process.hrtime.bigint();
  for (let i = 0; i < 100_000; i++) sink.write(line);
  const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
  assert.ok(elapsedMs < 1_000, `100k writes took ${elapsedMs} ms`);
  assert.ok(sink.bufferedChars <= 10_000, `buffered ${sink.bufferedChars}`);
  assert.equal(sink.dropped, 100_001 - 100, 'everything past 10,000 characters is dropped');

  // Once the output moves again, the kept lines come out in batches of at most 1,000 bytes.
  while (sink.bufferedChars > 0) {
    output.release();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const written = output.batches.join('');
  assert.equal(written.split('\n').length - 1, 100);
  assert.ok(output.batches.every((batch) => batch.length <= 1_000));
  sink.write('after');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(output.batches.at(-1), 'after\n', 'new lines are accepted again');
});

test('a failing output counts its failed writes and keeps going', async () => {
  let calls = 0;
  const sink = new BufferedLogSink((_chunk, done) => {
    calls++;
    done(calls === 1 ? new Error('EIO') : null);
  });
  sink.write('one');
  await sink.drained();
  sink.write('two');
  await sink.drained();
  assert.equal(sink.failedWrites, 1);
  assert.equal(calls, 2);
});

test('streamWriter waits for drain from a slow stream', async () => {
  const received: string[] = [];
  const stream = new Writable({
    highWaterMark: 16,
    write(chunk, _encoding, callback) {
      received.push(String(chunk));
      setTimeout(callback, 5);
    },
  });
  const sink = new BufferedLogSink(streamWriter(stream), { maxBatchBytes: 128 });
  for (let i = 0; i < 20; i++) sink.write(`line ${i} ${'.'.repeat(20)}`);
  await sink.drained();
  assert.equal(sink.dropped, 0);
  const lines = received.join('').split('\n').filter(Boolean);
  assert.equal(lines.length, 20);
  assert.equal(lines[19], `line 19 ${'.'.repeat(20)}`);
});

test('streamWriter reports a closed stream as a failed write', async () => {
  const stream = new Writable({ write: (_c, _e, cb) => cb() });
  stream.destroy();
  const sink = new BufferedLogSink(streamWriter(stream));
  sink.write('lost');
  await sink.drained();
  assert.equal(sink.failedWrites, 1);
});

test('fileDescriptorWriter writes every line to the file, multi-byte text included', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-log-'));
  const file = join(dir, 'access.log');
  const fd = openSync(file, 'w');
  try {
    const sink = new BufferedLogSink(fileDescriptorWriter(fd), { maxBatchBytes: 256 });
    for (let i = 0; i < 50; i++) sink.write(JSON.stringify({ i, text: 'héllo ✓' }));
    await sink.drained();
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    assert.equal(lines.length, 50);
    assert.deepEqual(JSON.parse(lines[49] as string), { i: 49, text: 'héllo ✓' });
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true });
  }
});

test('a line longer than a batch is written on its own, whole', async () => {
  const output = heldOutput();
  const sink = new BufferedLogSink(output.writer, { maxBatchBytes: 64 });
  sink.write('short');
  sink.write('y'.repeat(500));
  sink.write('tail');
  while (output.batches.length < 3) {
    await new Promise((resolve) => setImmediate(resolve));
    output.release();
  }
  assert.deepEqual(output.batches, ['short\n', `${'y'.repeat(500)}\n`, 'tail\n']);
});
