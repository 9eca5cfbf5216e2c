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
import type { ListenerBudget } from './buffer-budget.ts';
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
  private readonly budget: ListenerBudget;
  private readonly bodies = new Set<BodyWatch>();
  private readonly writers = new Map<object, Writer>();
  private readonly timer: NodeJS.Timeout;

  constructor(limits: DownstreamLimits, budget: ListenerBudget) {
    this.limits = limits;
    this.budget = budget;
    this.timer = setInterval(() => this.sweep(), watchIntervalMs(limits));
    this.timer.unref();
  }

  /** A request whose body is still to come. */
  watchBody(req: IncomingMessage, res: ServerResponse): void {
    const watch = new BodyWatch(req, res, this.budget, performance.now());
    setBodyIntake(req, watch);
    this.bodies.add(watch);
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

  /** An HTTP/2 connection whose frames are not being taken at all: a stall destroys it. */
  watchSession(session: ServerHttp2Session): void {
    this.watch(session, {
      pending: () =>
        !session.destroyed && session.state.outboundQueueSize !== undefined && session.state.outboundQueueSize > 0,
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
  }
}
