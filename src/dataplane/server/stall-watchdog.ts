// The deadlines of one listener port that node does not keep itself, checked on one timer: request
// bodies (./body-watch.ts: idle, whole-body for buffered ones, the buffer budget's evictions) and
// writes to clients that stopped reading. One look per interval over what is in flight costs less
// than a timer per request, and a deadline fires at most one interval late.
//
// A write stall is bytes gw has handed to a connection or an HTTP/2 stream of which no write has
// completed for the response write timeout: a client that stopped reading (or withholds HTTP/2 flow
// control) holds them in gw's memory. node completes a write only once all of it is taken, so a
// single large write (a buffered body) must be taken whole within the timeout.
//
// What is watched is the channel a request arrives on: an HTTP/1 connection or an HTTP/2 stream,
// each registered once. A request's body is watched on its channel's record (at most one body at
// a time per channel): a request costs no registration of its own, and is let go by the next
// request on its connection or the next look, whichever comes first. (A list of requests kept
// until their responses closed cost a gateway at 20,000 requests/s a tenth of its throughput.)
import type { IncomingMessage, ServerResponse } from 'node:http';
import { constants, type Http2ServerRequest, type Http2Stream, type ServerHttp2Session } from 'node:http2';
import type { Duplex } from 'node:stream';
import { setBodyIntake } from '../proxy/body-intake.ts';
import { BodyWatch } from './body-watch.ts';
import type { BufferBudget, ListenerBudget, Reservation } from './buffer-budget.ts';
import { type DownstreamLimits, watchIntervalMs } from './downstream-limits.ts';

/**
 * A connection or stream on its way to a client: its pending bytes and a marker that moves when
 * some are taken, and the request body arriving on it, if one is being watched.
 */
interface Channel {
  pending(): boolean;
  marker(): number;
  cut(): void;
  lastMarker: number;
  stalledSince: number | undefined;
  body: BodyWatch | undefined;
}

type ChannelTarget = Duplex | Http2Stream | ServerHttp2Session;

export class StallWatchdog {
  private readonly limits: DownstreamLimits;
  /** This port's share of the process's buffer budget. */
  readonly budget: ListenerBudget;
  private readonly channels = new Map<ChannelTarget, Channel>();
  private readonly timer: NodeJS.Timeout;

  constructor(limits: DownstreamLimits, processBudget: BufferBudget) {
    this.limits = limits;
    this.budget = processBudget.forListener(limits.maxBufferedBytesPerListener, () => this.reservations());
    this.timer = setInterval(() => this.sweep(), watchIntervalMs(limits));
    this.timer.unref();
  }

  /**
   * A request with a body: watched on its connection (HTTP/1) or stream (HTTP/2) while it arrives.
   * One that has arrived whole by the next look is let go then, unlooked at.
   */
  watchBody(req: IncomingMessage, res: ServerResponse): void {
    const watch = new BodyWatch(req, res, this.budget, performance.now());
    setBodyIntake(req, watch);
    const http2 = req.httpVersionMajor === 2 ? (req as unknown as Http2ServerRequest).stream : undefined;
    const channel = http2
      ? (this.channels.get(http2) ?? this.watchStream(http2))
      : (this.channels.get(req.socket) ?? this.watchConnection(req.socket));
    if (channel) channel.body = watch;
  }

  private *reservations(): Iterable<Reservation> {
    for (const channel of this.channels.values()) {
      const reservation = channel.body?.reservation;
      if (reservation) yield reservation;
    }
  }

  /** An HTTP/1 connection (plain or TLS): a stall destroys it. */
  watchConnection(socket: Duplex): Channel | undefined {
    return this.watch(socket, {
      pending: () => socket.writableLength > 0,
      marker: () => socket.writableLength,
      cut: () => socket.destroy(),
    });
  }

  /** An HTTP/2 stream: a stall resets it. */
  watchStream(stream: Http2Stream): Channel | undefined {
    return this.watch(stream, {
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

  private watch(target: ChannelTarget, writer: Pick<Channel, 'pending' | 'marker' | 'cut'>): Channel | undefined {
    if (target.destroyed) return undefined;
    // A stream's request may be handled (and its body watched) before its session's 'stream' listeners run.
    const known = this.channels.get(target);
    if (known) return known;
    const channel: Channel = { ...writer, lastMarker: -1, stalledSince: undefined, body: undefined };
    this.channels.set(target, channel);
    target.once('close', () => {
      const body = channel.body;
      channel.body = undefined;
      this.channels.delete(target);
      body?.check(performance.now(), this.limits);
    });
    return channel;
  }

  private sweep(): void {
    const now = performance.now();
    const timeout = this.limits.responseWriteTimeoutMs;
    for (const [target, channel] of this.channels) {
      if (channel.body && !channel.body.check(now, this.limits)) channel.body = undefined;
      if (!channel.pending()) {
        channel.stalledSince = undefined;
        continue;
      }
      const marker = channel.marker();
      if (channel.stalledSince === undefined || marker !== channel.lastMarker) {
        channel.lastMarker = marker;
        channel.stalledSince = now;
      } else if (now - channel.stalledSince >= timeout) {
        this.channels.delete(target);
        channel.cut();
      }
    }
  }

  /** Stops watching (the port closed); what is in flight is closed by the port. */
  close(): void {
    clearInterval(this.timer);
    for (const channel of this.channels.values()) channel.body?.endBuffering();
    this.channels.clear();
    this.budget.close();
  }
}
