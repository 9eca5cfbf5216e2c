// Reading a request or response body into memory, bounded: a gateway must never buffer more than
// its configured limit (Frontend.http.maxBufferSize, default 2 MiB) for one request. A client's
// request body is also read within the budget and deadlines of the listener that accepted it
// (./body-intake.ts): readRequestBody.
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { type BodyIntake, bodyIntakeOf } from './body-intake.ts';

/** Default body buffer limit (spec: Frontend.http.maxBufferSize default 2mb, read as 2 MiB). */
export const DEFAULT_MAX_BUFFER_BYTES = 2 * 1024 * 1024;

/** A body gw will not take, with the status that says why (413, 408, 503) and a message for the client. */
export class BodyRefusedError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export class BodyTooLargeError extends BodyRefusedError {
  readonly limit: number;
  constructor(limit: number) {
    super(413, `the body exceeds the ${limit}-byte limit`);
    this.limit = limit;
  }
}

/** The client was too slow: silent too long, or the whole body late (408). */
export class BodyTimeoutError extends BodyRefusedError {
  constructor(message: string) {
    super(408, message);
  }
}

/** gw's budget of bytes buffered from clients is spent: try again shortly (503). */
export class BufferBudgetError extends BodyRefusedError {
  constructor() {
    super(503, 'the gateway is buffering too many request bodies; try again shortly');
  }
}

/** The status and client message for a failed read of a request body (400 when the client left or broke it). */
export function bodyFailure(error: unknown): { status: number; message: string } {
  if (error instanceof BodyRefusedError) return { status: error.status, message: error.message };
  return { status: 400, message: 'the request body could not be read' };
}

/** A client's request body, whole, within `limit` and the budget and deadlines of its listener. */
export function readRequestBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return readBody(req, limit, req.headers['content-length'], bodyIntakeOf(req));
}

/**
 * Reads a stream whole. Past `limit` bytes it rejects with BodyTooLargeError and discards the
 * rest without keeping it (the stream is not destroyed, so a response can still be sent; send it
 * with `connection: close`). With an `intake`, the body is read within its budget (rejects with
 * BufferBudgetError when it does not fit: a declared length is reserved whole at the first chunk,
 * so a refused body costs one chunk read) and its deadlines can end the read (BodyTimeoutError).
 * A body whose first chunk is all of it is in memory already and takes nothing from the budget.
 */
export function readBody(
  stream: Readable,
  limit: number,
  declaredLength?: string | number,
  intake?: BodyIntake,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = declaredLength === undefined ? undefined : Number(declaredLength);
    if (declared !== undefined && declared > limit) {
      stream.resume();
      reject(new BodyTooLargeError(limit));
      return;
    }
    const declaredBytes = declared !== undefined && Number.isSafeInteger(declared) ? declared : 0;
    const body = new BodyBytes(declaredBytes);
    const stop = (error: Error | undefined) => {
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('error', onError);
      intake?.endBuffering(error !== undefined);
      if (error === undefined) return;
      body.discard();
      // Too large: what is still coming is read and discarded, so that the client, which may not
      // read before it has sent everything, gets the answer. Too slow or no room: nothing more is
      // read (reading is what the budget protects); the connection ends after the answer.
      if (!stream.destroyed) {
        if (error instanceof BodyTooLargeError) stream.resume();
        else stream.pause();
      }
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      if (body.size + chunk.length > limit) return stop(new BodyTooLargeError(limit));
      const first = body.size === 0;
      if (intake && !(first && chunk.length === declaredBytes)) {
        if (first && declaredBytes > 0 && !intake.reserve(declaredBytes)) return stop(new BufferBudgetError());
        if (!intake.take(chunk.length)) return stop(new BufferBudgetError());
      }
      body.add(chunk);
    };
    const onEnd = () => {
      const whole = body.take();
      stop(undefined);
      resolve(whole);
    };
    const onError = (error: Error) => stop(error);
    intake?.beginBuffering(stop);
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
  });
}

/**
 * A body's bytes as they arrive. One that comes in a single chunk is that chunk. One of declared
 * length that comes in pieces is copied into one buffer of that length: a single large
 * allocation, which the system allocator maps on its own and unmaps when it is freed — and which
 * a failed read frees at once — rather than many chunks that stay in the process's heap after
 * the request (docs/security.md). Others are kept in pieces and joined at the end.
 */
class BodyBytes {
  size = 0;
  private readonly declared: number;
  private chunks: Buffer[] = [];
  private whole: Buffer | undefined;

  constructor(declared: number) {
    this.declared = declared;
  }

  add(chunk: Buffer): void {
    const offset = this.size;
    this.size += chunk.length;
    const whole = this.whole;
    if (whole !== undefined && this.size <= whole.length) {
      chunk.copy(whole, offset);
      return;
    }
    if (offset === 0 && this.size < this.declared) {
      this.whole = Buffer.allocUnsafeSlow(this.declared);
      chunk.copy(this.whole, 0);
      return;
    }
    // A single chunk, or more than was declared (kept in pieces from here on).
    if (whole !== undefined) this.chunks.push(whole.subarray(0, offset));
    this.whole = undefined;
    this.chunks.push(chunk);
  }

  take(): Buffer {
    if (this.whole !== undefined) return this.whole.subarray(0, this.size);
    return this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
  }

  /** Frees what was read: the buffer gw allocated at once, the chunks when they are collected. */
  discard(): void {
    if (this.whole !== undefined) (this.whole.buffer as ArrayBuffer).transfer(0);
    this.whole = undefined;
    this.chunks = [];
  }
}
