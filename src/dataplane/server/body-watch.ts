// One request body while it arrives, as its listener's watchdog (./stall-watchdog.ts) sees it:
// how far it has come, whether gw is buffering it (then its bytes are in the buffer budget and
// the whole-body deadline applies), and what happens when the client is too slow. It is the
// BodyIntake a reader of the body gets (proxy/body-intake.ts).
//
// A reader that buffers the body answers the client itself, in its own format (an OpenAI error,
// a JSON-RPC error), when the read fails; a body nobody buffers (streamed upstream, or not read
// yet) is answered 408 here while no response has started, and cut once one has. Either way the
// connection (HTTP/1) or the stream (HTTP/2) ends after the answer: the rest of the body is never read.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants, type Http2ServerRequest } from 'node:http2';
import { BodyTimeoutError } from '../proxy/body.ts';
import type { BodyIntake } from '../proxy/body-intake.ts';
import { sendText } from '../proxy/direct-response.ts';
import type { ListenerBudget, Reservation } from './buffer-budget.ts';
import type { DownstreamLimits } from './downstream-limits.ts';

export class BodyWatch implements BodyIntake {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /** The port's share of the buffer budget. */
  private readonly budget: ListenerBudget;
  private readonly arrivedAt: number;
  private readonly http2: Http2ServerRequest | undefined;
  /** HTTP/2: DATA bytes of this stream so far (HTTP/1 reads the connection's count). */
  private received = 0;
  private lastProgress = -1;
  private lastProgressAt: number;
  private fail: ((error: Error) => void) | undefined;
  /** The body's bytes in the buffer budget, while gw buffers it. */
  reservation: Reservation | undefined;
  /** Bytes reserved ahead of their arrival (a declared length) and not arrived yet. */
  private reservedAhead = 0;
  private ended = false;

  constructor(req: IncomingMessage, res: ServerResponse, budget: ListenerBudget, now: number) {
    this.req = req;
    this.res = res;
    this.budget = budget;
    this.arrivedAt = now;
    this.lastProgressAt = now;
    if (req.httpVersionMajor === 2) {
      const request = req as unknown as Http2ServerRequest;
      this.http2 = request;
      // HTTP/2 has no per-stream count of bytes received, and a 'data' listener on the stream
      // would start its flow before node's compatibility layer reads it: the bytes are counted
      // where that layer hands them to the request.
      const push = request.push;
      request.push = (chunk: unknown, encoding?: BufferEncoding) => {
        if (chunk !== null && typeof chunk === 'object') this.received += (chunk as Buffer).length;
        return push.call(request, chunk, encoding);
      };
    }
  }

  beginBuffering(fail: (error: Error) => void): void {
    // A body that arrived whole (or whose request is over) before gw began to read it is in
    // memory already: no budget, no deadline.
    if (this.ended || this.req.complete) return;
    this.fail = fail;
  }

  /** The body's place in the budget, made when gw first buffers bytes of it; none when it is not buffering. */
  private reservationNow(): Reservation | undefined {
    if (this.fail === undefined) return undefined;
    this.reservation ??= this.budget.reserve(() =>
      this.expire(new BodyTimeoutError('the request body stalled while other clients needed the buffer')),
    );
    return this.reservation;
  }

  reserve(count: number): boolean {
    const reservation = this.reservationNow();
    if (!reservation) return true;
    if (!reservation.grow(count)) return false;
    this.reservedAhead += count;
    return true;
  }

  take(length: number): boolean {
    const reservation = this.reservationNow();
    if (!reservation) return true;
    reservation.touch();
    const covered = Math.min(length, this.reservedAhead);
    this.reservedAhead -= covered;
    return covered === length || reservation.grow(length - covered);
  }

  endBuffering(failed = false): void {
    this.fail = undefined;
    this.reservation?.release();
    this.reservation = undefined;
    this.reservedAhead = 0;
    if (failed && !this.ended) {
      this.ended = true;
      this.endTransportAfterAnswer();
    }
  }

  /**
   * The watchdog's look, every interval: false once the body needs no more watching (complete,
   * answered, or cut now for being too slow).
   */
  check(now: number, limits: DownstreamLimits): boolean {
    if (this.ended) return false;
    const { req, res } = this;
    if (req.complete || res.writableEnded || res.destroyed) return this.stopWatching();
    // Once gw has begun answering, the exchange runs both ways (a bidirectional stream): the
    // response deadlines watch it, not these.
    if (res.headersSent && this.fail === undefined) return this.stopWatching();
    const progress = this.progress();
    if (progress !== this.lastProgress || this.unreadBytesWaiting()) {
      this.lastProgress = progress;
      this.lastProgressAt = now;
    }
    if (now - this.lastProgressAt >= limits.requestBodyIdleTimeoutMs) {
      this.expire(new BodyTimeoutError(`no request body bytes arrived for ${limits.requestBodyIdleTimeoutMs} ms`));
      return false;
    }
    if (this.fail !== undefined && now - this.arrivedAt >= limits.requestBodyTimeoutMs) {
      this.expire(new BodyTimeoutError(`the request body did not arrive within ${limits.requestBodyTimeoutMs} ms`));
      return false;
    }
    return true;
  }

  private stopWatching(): false {
    this.ended = true;
    this.endBuffering();
    return false;
  }

  /** Bytes that have arrived on the way to this body. */
  private progress(): number {
    return this.http2 ? this.received : (this.req.socket?.bytesRead ?? 0);
  }

  /** Arrived bytes nobody has read yet: the client is not the one holding the body up. */
  private unreadBytesWaiting(): boolean {
    return this.req.readableLength > 0 || (this.http2 !== undefined && this.http2.stream.readableLength > 0);
  }

  /** The client was too slow: answered (by the reader when one buffers the body) and its connection or stream ended. */
  private expire(error: BodyTimeoutError): void {
    if (this.ended) return;
    this.ended = true;
    const { res } = this;
    const fail = this.fail;
    this.fail = undefined;
    this.endBuffering();
    this.endTransportAfterAnswer();
    if (fail) fail(error);
    else if (!res.headersSent)
      sendText(res, error.status, error.message, this.http2 ? undefined : { connection: 'close' });
    else this.endTransport();
  }

  private endTransportAfterAnswer(): void {
    // HTTP/2: node's compatibility response says 'finish' only once the stream has closed, which a
    // client still owing its body does not do; the stream itself says when the answer is sent.
    const answer = this.http2 ? this.http2.stream : this.res;
    if (answer.writableFinished) this.endTransport();
    else answer.once('finish', () => this.endTransport());
  }

  /**
   * After the answer: the rest of the body will not be read. Whoever streams the body on (an
   * upstream request) sees it fail rather than end; then the HTTP/1 connection or the HTTP/2
   * stream is closed (the client stops sending).
   */
  private endTransport(): void {
    const { req } = this;
    // Destroyed without an error (nobody need listen for one): a reader sees a premature close.
    if (!req.complete && !req.destroyed) req.destroy();
    if (this.http2) {
      const stream = this.http2.stream;
      if (!stream.closed)
        stream.close(this.res.writableFinished ? constants.NGHTTP2_NO_ERROR : constants.NGHTTP2_CANCEL);
      return;
    }
    const socket = req.socket;
    if (socket && !socket.destroyed) socket.destroy();
  }
}
