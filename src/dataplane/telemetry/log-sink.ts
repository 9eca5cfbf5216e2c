// Where access log lines go: a bounded queue that batches lines and hands them to the output
// with one write in flight at a time, so logging never blocks a request. When the output is
// slower than the traffic, the queue fills to its bound and further lines are dropped and
// counted (gw_access_log_dropped_lines_total) rather than held in memory or waited for.
//
// Lines are encoded straight into one reused byte buffer per batch (no joined string, no new
// Buffer per write), which halves the cost of a line compared with join + Buffer.from.
//
// Standard output goes through fs.write on its file descriptor, not process.stdout: Node writes
// process.stdout synchronously when it is a file or (on Linux) a pipe, which would stall the event
// loop behind a slow reader. fs.write runs on the libuv thread pool and occupies one of its
// threads at most, since batches are written one after another.
import { write as fsWrite } from 'node:fs';
import type { Writable } from 'node:stream';

/**
 * Takes one batch of bytes and calls `done` when it is written (or failed). The bytes belong to
 * the sink again once `done` is called: a writer that keeps them longer must copy them.
 */
export type BatchWriter = (chunk: Buffer, done: (error?: Error | null) => void) => void;

export interface LogSink {
  /** Queues one line (no trailing newline). Never blocks; drops the line when the queue is full. */
  write(line: string): void;
}

export interface BufferedLogSinkOptions {
  /** Most characters queued while the output is busy, the batch in flight included (default 8 Mi). */
  maxBufferedChars?: number;
  /** Bytes per write at most (default 1 Mi); a single longer line is written alone. */
  maxBatchBytes?: number;
}

const NEWLINE = 0x0a;
// A UTF-16 code unit never takes more than 3 bytes of UTF-8.
const MAX_BYTES_PER_CHAR = 3;

export class BufferedLogSink implements LogSink {
  /** Lines dropped because the queue was full. */
  dropped = 0;
  /** Batches the output failed to take; their lines are lost. */
  failedWrites = 0;
  readonly #writer: BatchWriter;
  readonly #maxBuffered: number;
  readonly #batch: Buffer;
  #pending: string[] = [];
  /** Index of the first line not yet taken into a batch. */
  #head = 0;
  #pendingChars = 0;
  /** Characters of the batch being written; -1 when none is. */
  #inFlightChars = -1;
  #scheduled = false;
  #idleWaiters: (() => void)[] = [];

  constructor(writer: BatchWriter, options: BufferedLogSinkOptions = {}) {
    this.#writer = writer;
    this.#maxBuffered = options.maxBufferedChars ?? 8 * 1024 * 1024;
    this.#batch = Buffer.allocUnsafe(options.maxBatchBytes ?? 1024 * 1024);
  }

  /** Characters waiting to be written, the batch in flight included. */
  get bufferedChars(): number {
    return this.#pendingChars + Math.max(this.#inFlightChars, 0);
  }

  write(line: string): void {
    const size = line.length + 1;
    if (this.bufferedChars + size > this.#maxBuffered) {
      this.dropped++;
      return;
    }
    this.#pending.push(line);
    this.#pendingChars += size;
    if (!this.#scheduled && this.#inFlightChars < 0) {
      this.#scheduled = true;
      // Lines of the same event-loop turn go out in one write.
      setImmediate(this.#flush);
    }
  }

  /** Resolves once every line queued so far has been handed to the output. */
  drained(): Promise<void> {
    if (this.bufferedChars === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  readonly #flush = (): void => {
    this.#scheduled = false;
    if (this.#inFlightChars >= 0) return;
    if (this.#head === this.#pending.length) {
      this.#notifyIdle();
      return;
    }
    let chars = 0;
    let chunk: Buffer;
    const first = this.#pending[this.#head] as string;
    if (first.length * MAX_BYTES_PER_CHAR + 1 > this.#batch.length) {
      // One line longer than a batch could be: written on its own.
      chunk = Buffer.from(`${first}\n`, 'utf8');
      chars = first.length + 1;
      this.#head++;
    } else {
      const batch = this.#batch;
      let offset = 0;
      while (this.#head < this.#pending.length) {
        const line = this.#pending[this.#head] as string;
        if (offset + line.length * MAX_BYTES_PER_CHAR + 1 > batch.length) break;
        offset += batch.write(line, offset, 'utf8');
        batch[offset++] = NEWLINE;
        chars += line.length + 1;
        this.#head++;
      }
      chunk = batch.subarray(0, offset);
    }
    if (this.#head === this.#pending.length) {
      this.#pending = [];
      this.#head = 0;
    }
    this.#pendingChars -= chars;
    this.#inFlightChars = chars;
    this.#writer(chunk, this.#written);
  };

  readonly #written = (error?: Error | null): void => {
    if (error) this.failedWrites++;
    this.#inFlightChars = -1;
    this.#flush();
  };

  #notifyIdle(): void {
    const waiters = this.#idleWaiters;
    if (waiters.length === 0) return;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

/**
 * Writes batches to a file descriptor with fs.write: a partial write continues from where it
 * stopped; "try again" (EAGAIN, a non-blocking pipe that is full) is retried after `retryDelayMs`.
 */
export function fileDescriptorWriter(fd: number, retryDelayMs = 10): BatchWriter {
  return (chunk, done) => {
    const writeFrom = (offset: number): void => {
      fsWrite(fd, chunk, offset, chunk.length - offset, null, (error, written) => {
        if (error?.code === 'EAGAIN') {
          setTimeout(writeFrom, retryDelayMs, offset);
          return;
        }
        if (error) return done(error);
        if (offset + written < chunk.length) return writeFrom(offset + written);
        done();
      });
    };
    writeFrom(0);
  };
}

/** Writes batches to a stream (a copy: streams keep chunks), waiting for 'drain' when it is full. */
export function streamWriter(stream: Writable): BatchWriter {
  return (chunk, done) => {
    if (stream.destroyed || stream.writableEnded) return done(new Error('log stream is closed'));
    if (stream.write(Buffer.from(chunk))) return done();
    const onDrain = (): void => {
      stream.off('close', onClose);
      done();
    };
    const onClose = (): void => {
      stream.off('drain', onDrain);
      done(new Error('log stream closed'));
    };
    stream.once('drain', onDrain);
    stream.once('close', onClose);
  };
}

/** The default access log output: standard output, buffered and bounded. */
export function stdoutLogSink(options?: BufferedLogSinkOptions): BufferedLogSink {
  return new BufferedLogSink(fileDescriptorWriter(1), options);
}
