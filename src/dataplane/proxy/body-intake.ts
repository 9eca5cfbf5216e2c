// What the listener that accepted a request lends whoever buffers the request's body: the body's
// share of the buffer budget and its deadlines (server/body-watch.ts implements it). A request
// without one (no body, or one made by a test) is read with no budget and no deadline.
import type { IncomingMessage } from 'node:http';

export interface BodyIntake {
  /**
   * gw starts reading the body into memory: from now on its bytes count against the budget and
   * the whole-body deadline applies. `fail` ends the read (deadline passed, evicted for another body).
   */
  beginBuffering(fail: (error: Error) => void): void;
  /** Sets `count` bytes aside in the budget before they arrive (a declared length); false when they do not fit. */
  reserve(count: number): boolean;
  /**
   * A chunk of `length` bytes arrived into the buffer: what reserve did not set aside is taken from
   * the budget; false when it does not fit.
   */
  take(length: number): boolean;
  /**
   * The read ended (complete, failed or abandoned): its bytes leave the budget. `failed`: the
   * rest of the body will not be read, so the connection (HTTP/1) or stream (HTTP/2) is ended once
   * the client has its answer.
   */
  endBuffering(failed?: boolean): void;
}

// On the request itself: a weak map's entries cost every garbage collection something, and a
// gateway makes thousands of requests a second.
const INTAKE = Symbol('gw.bodyIntake');

type WithIntake = { [INTAKE]?: BodyIntake };

export function setBodyIntake(req: IncomingMessage, intake: BodyIntake): void {
  (req as WithIntake)[INTAKE] = intake;
}

export function bodyIntakeOf(req: IncomingMessage): BodyIntake | undefined {
  return (req as WithIntake)[INTAKE];
}
