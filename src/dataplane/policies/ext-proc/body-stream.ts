// Moving a body to the processor: streamed chunk by chunk as it arrives (FullDuplexStreamed), or
// read up to the buffer limit leaving the rest unread (BufferedPartial).
import type { Readable } from 'node:stream';
import { BufferBudgetError } from '../../proxy/body.ts';
import type { BodyIntake } from '../../proxy/body-intake.ts';
import type { Direction, ExtProcSession } from './session.ts';

const EMPTY = Buffer.alloc(0);

export interface BodyPump {
  /** Resolves once the whole body (and its end_of_stream) went to the processor. */
  readonly done: Promise<void>;
  /** Stops sending; the source is left to drain (a request) or is destroyed by the caller. */
  stop(): void;
}

/**
 * Streams `source` to the processor as body messages, with backpressure both ways (a full gRPC
 * buffer pauses the source), then an empty message with end_of_stream. While it runs the
 * processor's answers are not timed: it may hold the chunks until the body is complete.
 */
export function pumpBody(session: ExtProcSession, direction: Direction, source: Readable | Buffer): BodyPump {
  const stream = session.stream;
  const key = direction === 'request' ? 'request_body' : 'response_body';
  const send = (body: Buffer, end: boolean): boolean => {
    if (direction === 'request') session.requestBodyStarted = true;
    return session.send(direction, { [key]: { body, end_of_stream: end } });
  };
  stream.setInputOpen(true);
  if (Buffer.isBuffer(source)) {
    if (source.length > 0) send(source, false);
    send(EMPTY, true);
    stream.setInputOpen(false);
    return { done: Promise.resolve(), stop: () => undefined };
  }
  let stopped = false;
  let cleanup = (): void => undefined;
  const done = new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      if (stopped) return;
      if (!send(chunk, false)) {
        source.pause();
        stream.onDrain(() => {
          if (!stopped) source.resume();
        });
      }
    };
    const onEnd = (): void => {
      cleanup();
      if (stopped) {
        resolve();
        return;
      }
      send(EMPTY, true);
      stream.setInputOpen(false);
      resolve();
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(error);
    };
    const onClose = (): void => {
      cleanup();
      if (!stopped) reject(new Error(`the ${direction} body ended before it was complete`));
    };
    cleanup = () => {
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      source.off('close', onClose);
    };
    source.on('data', onData);
    source.once('end', onEnd);
    source.once('error', onError);
    source.once('close', onClose);
  });
  // The caller learns of a failed source through `done`; never an unhandled rejection.
  done.catch(() => undefined);
  return {
    done,
    stop: () => {
      if (stopped) return;
      stopped = true;
      cleanup();
      stream.setInputOpen(false);
    },
  };
}

export interface BodyPrefix {
  /** The whole body when complete, else its first `limit` bytes. */
  data: Buffer;
  complete: boolean;
  /** Bytes read past the limit (empty when complete); the source is paused after them. */
  overflow: Buffer;
}

/**
 * Reads `source` up to `limit` bytes; past it, stops reading (paused) with the rest unread. With
 * an `intake` (a client's request body), within its budget and deadlines.
 */
export function readPrefix(source: Readable, limit: number, intake?: BodyIntake): Promise<BodyPrefix> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (failed = false): void => {
      source.off('data', onData);
      source.off('end', onEnd);
      source.off('error', onError);
      source.off('close', onClose);
      intake?.endBuffering(failed);
    };
    const onData = (chunk: Buffer): void => {
      if (intake && !intake.take(chunk.length)) {
        onError(new BufferBudgetError());
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
      if (size <= limit) return;
      cleanup();
      source.pause();
      const all = Buffer.concat(chunks, size);
      resolve({ data: all.subarray(0, limit), complete: false, overflow: all.subarray(limit) });
    };
    const onEnd = (): void => {
      cleanup();
      resolve({ data: Buffer.concat(chunks, size), complete: true, overflow: EMPTY });
    };
    const onError = (error: Error): void => {
      cleanup(true);
      reject(error);
    };
    const onClose = (): void => {
      cleanup();
      reject(new Error('the body ended before it was complete'));
    };
    intake?.beginBuffering(onError);
    source.on('data', onData);
    source.once('end', onEnd);
    source.once('error', onError);
    source.once('close', onClose);
  });
}
