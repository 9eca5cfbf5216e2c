// Reading a request or response body into memory, bounded: a gateway must never buffer more than
// its configured limit (Frontend.http.maxBufferSize, default 2 MiB) for one request.
import type { Readable } from 'node:stream';

/** Default body buffer limit (spec: Frontend.http.maxBufferSize default 2mb, read as 2 MiB). */
export const DEFAULT_MAX_BUFFER_BYTES = 2 * 1024 * 1024;

export class BodyTooLargeError extends Error {
  readonly limit: number;
  constructor(limit: number) {
    super(`the body exceeds the ${limit}-byte limit`);
    this.limit = limit;
  }
}

/**
 * Reads a stream whole. Past `limit` bytes it rejects with BodyTooLargeError and discards the
 * rest without keeping it (the stream is not destroyed, so a response can still be sent; send it
 * with `connection: close`).
 */
export function readBody(stream: Readable, limit: number, declaredLength?: string | number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (declaredLength !== undefined && Number(declaredLength) > limit) {
      stream.resume();
      reject(new BodyTooLargeError(limit));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        stream.off('data', onData);
        stream.off('end', onEnd);
        stream.resume();
        chunks.length = 0;
        reject(new BodyTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      stream.off('error', onError);
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      stream.off('data', onData);
      reject(error);
    };
    stream.on('data', onData);
    stream.once('end', onEnd);
    stream.once('error', onError);
  });
}
