// A response body piped to the client, as stream.pipeline() does it for two streams but without
// its cost: pipeline() gives every call an AbortController that it aborts when the pipe ends,
// and aborting builds a DOMException with its stack — 6.5 µs of every forwarded request's CPU
// (a fifth of an HTTP route's), for a signal nobody listens to. This wires the same outcome with
// listeners: done() once, with no error when the destination has finished, else with the error
// (the source's, the destination's, or a close before the end), both ends destroyed with it then.
import type { Readable, Writable } from 'node:stream';
import type { UpstreamBody } from '../upstream/client.ts';
import type { ClientResponse } from './client-response.ts';

/** The events and state of a destination pipeBody reads: a Writable's, which every response has. */
type Destination = Pick<Writable, 'on' | 'off' | 'once' | 'destroy' | 'writableFinished' | 'destroyed'>;

/** The error of a pipe whose source or destination closed before the body's end. */
export class PrematureCloseError extends Error {
  readonly code = 'ERR_STREAM_PREMATURE_CLOSE';
  constructor(which: 'source' | 'destination') {
    super(`the ${which} closed before the body's end`);
  }
}

export function pipeBody(
  source: Readable,
  to: Writable | ClientResponse | NodeJS.WritableStream,
  done: (error?: Error) => void,
): void {
  // An HTTP/1 ServerResponse is a Writable, an HTTP/2 one emits the same events and has the same state.
  const destination = to as unknown as Destination;
  const settle = settleOnce(done, (error) => {
    source.unpipe(to as NodeJS.WritableStream);
    // With the error, as pipeline() does: a destination that captures the body (a buffered
    // response) learns why it ended (a deadline is a 504, a reset a 502).
    source.destroy(error);
    destination.destroy(error);
  });
  watchDestination(destination, () => source.readableEnded, settle);
  // A source that closes without its 'end' was cut (a reset upstream): the destination never ends.
  const onSourceClose = (): void => {
    if (!source.readableEnded) settle(new PrematureCloseError('source'));
  };
  source.on('error', settle);
  source.on('close', onSourceClose);
  // Ends that are gone already send no event: settle now (a source that has ended is piped: pipe()
  // ends the destination for it).
  if (source.destroyed && !source.readableEnded) settle(new PrematureCloseError('source'));
  else if (destination.destroyed) settle(new PrematureCloseError('destination'));
  else source.pipe(to as NodeJS.WritableStream);
}

/**
 * A body of gw's own upstream client (upstream/client.ts) piped to the client the same way: chunk
 * by chunk, waiting for 'drain' while the client is behind (the body pauses its connection in the
 * meantime), done() once with the same outcomes as pipeBody's. `reasonOf` may name a better error
 * than the body's own when it breaks (why its exchange was aborted).
 */
export function pipeUpstreamBody(
  source: UpstreamBody,
  to: Writable | ClientResponse | NodeJS.WritableStream,
  done: (error?: Error) => void,
  reasonOf?: () => Error | undefined,
): void {
  const destination = to as unknown as Destination & Pick<Writable, 'write' | 'end'>;
  let ended = false;
  /** Wakes the copy loop waiting for 'drain' when the pipe settles instead. */
  let wake: (() => void) | undefined;
  const settle = settleOnce(done, (error) => {
    source.discard();
    destination.destroy(error);
  });
  const settleAndWake = (error?: Error): void => {
    settle(error);
    wake?.();
  };
  watchDestination(destination, () => ended, settleAndWake);
  if (destination.destroyed) {
    settle(new PrematureCloseError('destination'));
    return;
  }
  const drained = (): Promise<void> =>
    new Promise((resolve) => {
      const onDrain = (): void => {
        wake = undefined;
        resolve();
      };
      wake = () => {
        destination.off('drain', onDrain);
        onDrain();
      };
      destination.once('drain', onDrain);
    });
  void (async () => {
    try {
      for await (const chunk of source) {
        if (settle.settled) return;
        if (!destination.write(chunk)) await drained();
        if (settle.settled) return;
      }
      ended = true;
      if (!settle.settled) destination.end();
    } catch (error) {
      settle(reasonOf?.() ?? (error as Error));
    }
  })();
}

/** done() at most once; `fail` runs first when it is with an error. */
function settleOnce(
  done: (error?: Error) => void,
  fail: (error: Error) => void,
): ((error?: Error) => void) & { settled: boolean } {
  const settle = ((error?: Error): void => {
    if (settle.settled) return;
    settle.settled = true;
    // The listeners stay: an end destroyed here (or later) may still emit 'error', which must not
    // go unheard (an uncaught exception); settle() ignores it.
    if (error !== undefined) fail(error);
    done(error);
  }) as ((error?: Error) => void) & { settled: boolean };
  settle.settled = false;
  return settle;
}

/** The destination's side of a pipe: its error, its finish (early unless the source ended), its close. */
function watchDestination(destination: Destination, sourceEnded: () => boolean, settle: (error?: Error) => void): void {
  // pipe() ends the destination only after the source's end: a destination finished before it was
  // ended by someone else — an HTTP/2 response whose stream was reset emits 'finish' and 'close'.
  const onFinish = (): void => settle(sourceEnded() ? undefined : new PrematureCloseError('destination'));
  const onClose = (): void => {
    if (!destination.writableFinished || !sourceEnded()) settle(new PrematureCloseError('destination'));
    else settle();
  };
  destination.on('error', settle);
  destination.on('finish', onFinish);
  destination.on('close', onClose);
}
