// A response body piped to the client, as stream.pipeline() does it for two streams but without
// its cost: pipeline() gives every call an AbortController that it aborts when the pipe ends,
// and aborting builds a DOMException with its stack — 6.5 µs of every forwarded request's CPU
// (a fifth of an HTTP route's), for a signal nobody listens to. This wires the same outcome with
// listeners: done() once, with no error when the destination has finished, else with the error
// (the source's, the destination's, or a close before the end), both ends destroyed with it then.
import type { Readable, Writable } from 'node:stream';
import type { ClientResponse } from './client-response.ts';

/** The events and state of a destination pipeBody reads: a Writable's, which every response has. */
type Destination = Pick<Writable, 'on' | 'off' | 'destroy' | 'writableFinished' | 'destroyed'>;

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
  let settled = false;
  const settle = (error?: Error): void => {
    if (settled) return;
    settled = true;
    // The listeners stay: an end destroyed here (or later) may still emit 'error', which must not
    // go unheard (an uncaught exception); settle() ignores it.
    if (error !== undefined) {
      source.unpipe(to as NodeJS.WritableStream);
      // With the error, as pipeline() does: a destination that captures the body (a buffered
      // response) learns why it ended (a deadline is a 504, a reset a 502).
      source.destroy(error);
      destination.destroy(error);
    }
    done(error);
  };
  // pipe() ends the destination only after the source's end: a destination finished before it was
  // ended by someone else — an HTTP/2 response whose stream was reset emits 'finish' and 'close'.
  const onFinish = (): void => settle(source.readableEnded ? undefined : new PrematureCloseError('destination'));
  // A source that closes without its 'end' was cut (a reset upstream): the destination never ends.
  const onSourceClose = (): void => {
    if (!source.readableEnded) settle(new PrematureCloseError('source'));
  };
  const onDestinationClose = (): void => {
    if (!destination.writableFinished || !source.readableEnded) settle(new PrematureCloseError('destination'));
    else settle();
  };
  source.on('error', settle);
  source.on('close', onSourceClose);
  destination.on('error', settle);
  destination.on('finish', onFinish);
  destination.on('close', onDestinationClose);
  // Ends that are gone already send no event: settle now (a source that has ended is piped: pipe()
  // ends the destination for it).
  if (source.destroyed && !source.readableEnded) settle(new PrematureCloseError('source'));
  else if (destination.destroyed) settle(new PrematureCloseError('destination'));
  else source.pipe(to as NodeJS.WritableStream);
}
