// The deadlines of one listener port that node does not keep itself, checked on one timer: request
// bodies (./body-watch.ts: idle, whole-body for buffered ones, the buffer budget's evictions) and
// writes to clients that stopped reading. One look per interval over what is in flight costs less
// than a timer per request, and a deadline fires at most one interval late.
//
// A write stall is bytes gw has handed to a connection or an HTTP/2 stream of which no write has
// completed for the response write timeout: a client that stopped reading (or withholds HTTP/2 flow
// control) holds them in gw's memory. node completes a write only once all of it is taken, so a
// single large write (a buffered body) must be taken whole within the timeout.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants, type Http2Stream, type ServerHttp2Session } from 'node:http2';
import type { Duplex } from 'node:stream';
import { setBodyIntake } from '../proxy/body-intake.ts';
import { BodyWatch } from './body-watch.ts';
import type { BufferBudget, ListenerBudget, Reservation } from './buffer-budget.ts';
import { type DownstreamLimits, watchIntervalMs } from './downstream-limits.ts';

/** What can stall on its way to a client: its pending bytes and a marker that moves when some are taken. */
interface Writer {
  pending(): boolean;
  marker(): number;
  cut(): void;
  lastMarker: number;
  stalledSince: number | undefined;
}

export class StallWatchdog {
  private readonly limits: DownstreamLimits;
  /** This port's share of the process's buffer budget. */
  readonly budget: ListenerBudget;
  private readonly bodies = new Set<BodyWatch>();
  private readonly writers = new Map<object, Writer>();
  private readonly timer: NodeJS.Timeout;

  constructor(limits: DownstreamLimits, processBudget: BufferBudget) {
    this.limits = limits;
    this.budget = processBudget.forListener(limits.maxBufferedBytesPerListener, () => this.reservations());
    this.timer = setInterval(() => this.sweep(), watchIntervalMs(limits));
    this.timer.unref();
  }

  /**
   * A request with a body. Most bodies have arrived whole by the time the request is handled:
   * such a request costs one small object, and is watched (listed here, until its response
   * closes) only when its body is still coming once what arrived with its head is parsed, or
   * when gw begins to buffer it before it has arrived.
   */
  watchBody(req: IncomingMessage, res: ServerResponse): void {
    const watch = new BodyWatch(req, res, this, performance.now());
    setBodyIntake(req, watch);
    queueMicrotask(() => watch.watchIfIncomplete());
  }

  /** Called by a body that is still coming: it is looked at from now on, until `forget`. */
  list(watch: BodyWatch): void {
    this.bodies.add(watch);
  }

  forget(watch: BodyWatch): void {
    this.bodies.delete(watch);
  }

  private *reservations(): Iterable<Reservation> {
    for (const body of this.bodies) {
      const reservation = body.reservation;
      if (reservation) yield reservation;
    }
  }

  /** An HTTP/1 connection (plain or TLS): a stall destroys it. */
  watchConnection(socket: Duplex): void {
    this.watch(socket, {
      pending: () => socket.writableLength > 0,
      marker: () => socket.writableLength,
      cut: () => socket.destroy(),
    });
  }

  /** An HTTP/2 stream: a stall resets it. */
  watchStream(stream: Http2Stream): void {
    this.watch(stream, {
      pending: () => stream.writableLength > 0,
      marker: () => stream.writableLength,
      cut: () => stream.close(constants.NGHTTP2_CANCEL),
    });
  }

  /**
   * An HTTP/2 connection whose client takes none of its frames: a stall destroys it (its streams
   * cannot even be reset: the reset frames wait behind the rest). The session writes to the
   * socket's handle itself, so what waits is the handle's write queue (or nghttp2's), not the socket's.
   */
  watchSession(session: ServerHttp2Session): void {
    this.watch(session, {
      pending: () => {
        if (session.destroyed) return false;
        const handle = (session.socket as { _handle?: { writeQueueSize?: number } } | undefined)?._handle;
        return (handle?.writeQueueSize ?? 0) > 0 || (session.state.outboundQueueSize ?? 0) > 0;
      },
      marker: () => session.socket?.bytesWritten ?? 0,
      cut: () => session.destroy(),
    });
  }

  private watch(
    target: Duplex | Http2Stream | ServerHttp2Session,
    writer: Omit<Writer, 'lastMarker' | 'stalledSince'>,
  ): void {
    if (target.destroyed) return;
    this.writers.set(target, { ...writer, lastMarker: -1, stalledSince: undefined });
    target.once('close', () => this.writers.delete(target));
  }

  private sweep(): void {
    const now = performance.now();
    for (const body of this.bodies) if (!body.check(now, this.limits)) this.bodies.delete(body);
    const timeout = this.limits.responseWriteTimeoutMs;
    for (const [target, writer] of this.writers) {
      if (!writer.pending()) {
        writer.stalledSince = undefined;
        continue;
      }
      const marker = writer.marker();
      if (writer.stalledSince === undefined || marker !== writer.lastMarker) {
        writer.lastMarker = marker;
        writer.stalledSince = now;
      } else if (now - writer.stalledSince >= timeout) {
        this.writers.delete(target);
        writer.cut();
      }
    }
  }

  /** Stops watching (the port closed); what is in flight is closed by the port. */
  close(): void {
    clearInterval(this.timer);
    for (const body of this.bodies) body.endBuffering();
    this.bodies.clear();
    this.writers.clear();
    this.budget.close();
  }
}
