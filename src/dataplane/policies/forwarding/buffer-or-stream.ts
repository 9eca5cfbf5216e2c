// Reading a body whole when it fits, and giving it back untouched when it does not: what a
// FailOpen buffer (traffic.buffer), the retries' replayable request body and the response buffer
// need. Unlike proxy/body.ts readBody, which discards a body over its limit, the bytes read
// before the limit was passed are pushed back (Readable.unshift) and the stream is left paused
// where it was, so whoever reads it next — the forwarder, undici, another policy — gets every
// byte. At most `limit` bytes plus one chunk are held; a client's body within the budget and
// deadlines of its listener (requestBufferOrStream).
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { BufferBudgetError } from '../../proxy/body.ts';
import { type BodyIntake, bodyIntakeOf } from '../../proxy/body-intake.ts';

/** bufferOrStream of a client's request body, within its listener's budget and deadlines. */
export function requestBufferOrStream(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  return bufferOrStream(req, limit, req.headers['content-length'], bodyIntakeOf(req));
}

/**
 * The whole of `stream` when it is at most `limit` bytes; undefined when it is larger, with the
 * stream as it was (nothing lost, no 'data' listener left, so the next consumer starts it).
 * `declaredLength` (a Content-Length) over the limit answers undefined without reading at all.
 * Rejects when the stream fails, and with an `intake`, when its budget cannot take the bytes
 * (BufferBudgetError) or its deadline ends the read (BodyTimeoutError).
 */
export function bufferOrStream(
  stream: Readable,
  limit: number,
  declaredLength?: string | number,
  intake?: BodyIntake,
): Promise<Buffer | undefined> {
  if (declaredLength !== undefined && Number(declaredLength) > limit) return Promise.resolve(undefined);
  if (stream.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (failed = false) => {
      stream.off('readable', onReadable);
      stream.off('end', onEnd);
      stream.off('error', onError);
      intake?.endBuffering(failed);
    };
    const fail = (error: Error) => {
      stop(true);
      chunks.length = 0;
      reject(error);
    };
    const onReadable = () => {
      for (let chunk: Buffer | null = stream.read(); chunk !== null; chunk = stream.read()) {
        if (intake && !intake.take(chunk.length)) return fail(new BufferBudgetError());
        chunks.push(chunk);
        size += chunk.length;
        if (size > limit) {
          stop();
          // Back in front of what is still unread; the stream is not flowing, so nothing moves
          // until the next consumer reads it.
          stream.unshift(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
          resolve(undefined);
          return;
        }
      }
    };
    const onEnd = () => {
      stop();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = fail;
    intake?.beginBuffering(fail);
    stream.on('readable', onReadable);
    stream.once('end', onEnd);
    stream.once('error', onError);
  });
}
