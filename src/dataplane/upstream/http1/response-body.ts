// The body of an upstream response, as its reader wants it: whole (bounded), chunk by chunk (a
// stream, with backpressure on the connection), or not at all. Bytes arrive from the connection
// that reads them; a reader that stops early hands the connection back to be closed.
import { BodyTooLargeError } from '../../proxy/body.ts';

/** The connection behind a body, as the body needs it. */
export interface BodySource {
  /** Stop reading from the socket until resume(): the reader is behind. */
  pause(): void;
  resume(): void;
  /** The reader wants no more: a connection whose response is not complete is closed. */
  abandon(): void;
}

/** Bytes queued for a streaming reader before the socket is paused. */
const HIGH_WATER_BYTES = 64 * 1024;

const Mode = { Unread: 0, Whole: 1, Stream: 2, Discarded: 3 } as const;
type Mode = (typeof Mode)[keyof typeof Mode];

export class ResponseBody implements AsyncIterable<Buffer> {
  readonly #source: BodySource;
  #mode: Mode = Mode.Unread;
  #chunks: Buffer[] = [];
  #queuedBytes = 0;
  #ended = false;
  #error: Error | undefined;
  #paused = false;
  #limit = 0;
  /** The pending readAll() or iterator next(). */
  #waiter: { resolve: (value: never) => void; reject: (error: Error) => void } | undefined;

  constructor(source: BodySource) {
    this.#source = source;
  }

  // The connection's side.

  push(bytes: Buffer): void {
    if (this.#mode === Mode.Discarded) return;
    this.#chunks.push(bytes);
    this.#queuedBytes += bytes.length;
    if (this.#mode === Mode.Whole) {
      if (this.#queuedBytes > this.#limit) this.#tooLarge();
      return;
    }
    if (this.#mode === Mode.Stream && this.#waiter) {
      this.#deliverNext();
      return;
    }
    if (!this.#paused && this.#queuedBytes > HIGH_WATER_BYTES) {
      this.#paused = true;
      this.#source.pause();
    }
  }

  end(): void {
    this.#ended = true;
    if (this.#waiter === undefined) return;
    if (this.#mode === Mode.Whole) this.#resolveWhole();
    else if (this.#mode === Mode.Stream) this.#deliverNext();
  }

  fail(error: Error): void {
    if (this.#ended || this.#error) return;
    this.#error = error;
    this.#chunks = [];
    this.#queuedBytes = 0;
    const waiter = this.#waiter;
    this.#waiter = undefined;
    waiter?.reject(error);
  }

  // The reader's side: one of readAll(), iteration or discard().

  /** The whole body; rejects with BodyTooLargeError past `limit` bytes (the connection is then closed). */
  readAll(limit: number): Promise<Buffer> {
    this.#startReading(Mode.Whole);
    this.#limit = limit;
    if (this.#error) return Promise.reject(this.#error);
    if (this.#queuedBytes > limit) {
      this.#tooLarge();
      return Promise.reject(new BodyTooLargeError(limit));
    }
    if (this.#ended) return Promise.resolve(this.#concat());
    if (this.#paused) {
      this.#paused = false;
      this.#source.resume();
    }
    return new Promise<Buffer>((resolve, reject) => {
      this.#waiter = { resolve: resolve as (value: never) => void, reject };
    });
  }

  /** Drops the body; the connection is kept only if the response was already complete. */
  discard(): void {
    if (this.#mode === Mode.Discarded) return;
    this.#mode = Mode.Discarded;
    this.#chunks = [];
    this.#queuedBytes = 0;
    if (!this.#ended && !this.#error) this.#source.abandon();
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    this.#startReading(Mode.Stream);
    return {
      next: () => {
        if (this.#chunks.length > 0) return Promise.resolve({ done: false, value: this.#shift() });
        if (this.#error) return Promise.reject(this.#error);
        if (this.#ended) return Promise.resolve({ done: true, value: undefined });
        return new Promise((resolve, reject) => {
          this.#waiter = { resolve: resolve as (value: never) => void, reject };
        });
      },
      // A reader that leaves the loop early (break, throw) wants no more.
      return: () => {
        this.discard();
        return Promise.resolve({ done: true, value: undefined });
      },
    };
  }

  #startReading(mode: Mode): void {
    if (this.#mode !== Mode.Unread) throw new Error('the response body is already being read');
    this.#mode = mode;
  }

  #shift(): Buffer {
    const chunk = this.#chunks.shift()!;
    this.#queuedBytes -= chunk.length;
    if (this.#paused && this.#queuedBytes <= HIGH_WATER_BYTES / 2) {
      this.#paused = false;
      this.#source.resume();
    }
    return chunk;
  }

  #deliverNext(): void {
    const waiter = this.#waiter!;
    if (this.#chunks.length > 0) {
      this.#waiter = undefined;
      (waiter.resolve as (value: IteratorResult<Buffer>) => void)({ done: false, value: this.#shift() });
    } else if (this.#ended) {
      this.#waiter = undefined;
      (waiter.resolve as (value: IteratorResult<Buffer>) => void)({ done: true, value: undefined });
    }
  }

  #resolveWhole(): void {
    const waiter = this.#waiter!;
    this.#waiter = undefined;
    (waiter.resolve as (value: Buffer) => void)(this.#concat());
  }

  #concat(): Buffer {
    const chunks = this.#chunks;
    this.#chunks = [];
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.#queuedBytes);
  }

  #tooLarge(): void {
    const waiter = this.#waiter;
    this.#waiter = undefined;
    this.#mode = Mode.Discarded;
    this.#chunks = [];
    this.#queuedBytes = 0;
    if (!this.#ended) this.#source.abandon();
    waiter?.reject(new BodyTooLargeError(this.#limit));
  }
}
