// Keep-alive HTTP/1.1 connections to one upstream destination, plain or TLS, direct or through a
// CONNECT proxy: a request takes the most recently used idle connection (warm, least likely to
// have been closed by the upstream) or opens a new one; there is no limit on connections beyond
// the requests in flight.
// A sweep every second closes connections idle past their keep-alive and fails responses the
// upstream has gone silent on.
import { connect as netConnect, type Socket } from 'node:net';
import { type ConnectionOptions, connect as tlsConnect } from 'node:tls';
import { systemClock } from '../../../util/clock.ts';
import { applyKeepalive, type TcpKeepalive } from '../../transport/tcp-keepalive.ts';
import { dialThroughProxy, type TunnelProxy } from '../connect-tunnel.ts';
import { type ConnectionOwner, type ConnectionTimeouts, Http1Connection, type Http1Response } from './connection.ts';
import { UpstreamAbortError, UpstreamPoolClosedError } from './errors.ts';
import { type RequestHeaders, requestHead } from './request-head.ts';

export interface Http1PoolOptions {
  host: string;
  port: number;
  /** A Unix domain socket to connect to instead of host:port. */
  socketPath?: string;
  /** The Host header of a request that has none (the origin's host, and port unless default). */
  hostHeader: string;
  /** TLS to originate (server name, CA, client certificate, verification, groups); none for plain HTTP. */
  tls?: ConnectionOptions;
  connectTimeoutMs: number;
  /** TCP keepalive probes (idle time, interval, count); none when undefined. */
  keepalive?: TcpKeepalive | undefined;
  /** Longest an idle connection is kept. */
  keepAliveMs: number;
  /** Longest silence from the upstream while a response is due (default 300 s). */
  responseIdleMs?: number;
  /** The clock idleness and silence are measured on (monotonic ms; the system's by default). */
  now?: () => number;
  /** The CONNECT proxy connections go through (host and port are then the tunnel's destination). */
  tunnel?: TunnelProxy | undefined;
}

export interface Http1Request {
  method: string;
  /** Path and query. */
  path: string;
  headers: RequestHeaders;
  body?: Buffer | undefined;
  signal?: AbortSignal | undefined;
}

/** Outer bound on a silent upstream, as undici's default headers and body timeouts. */
export const DEFAULT_RESPONSE_IDLE_MS = 300_000;
const SWEEP_INTERVAL_MS = 1000;
/**
 * Where plain connections read (direct, or tunnelled through a plain proxy): shared, because a
 * read is parsed before the next one starts (what the parser keeps of it, it copies).
 */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

export class Http1Pool implements ConnectionOwner {
  readonly #options: Http1PoolOptions;
  readonly #timeouts: ConnectionTimeouts;
  /** Idle connections, the most recently used last. */
  readonly #idle: Http1Connection[] = [];
  readonly #connections = new Set<Http1Connection>();
  #sweeper: NodeJS.Timeout | undefined;
  #closing = false;
  /** The promise close() gives every caller, and what settles it. */
  #closed: Promise<void> | undefined;
  #onEmpty: (() => void) | undefined;
  /** The last TLS session the upstream gave, offered on the next connection (an abbreviated handshake). */
  #tlsSession: Buffer | undefined;

  constructor(options: Http1PoolOptions) {
    this.#options = options;
    this.#timeouts = {
      connectMs: options.connectTimeoutMs,
      responseIdleMs: options.responseIdleMs ?? DEFAULT_RESPONSE_IDLE_MS,
      keepAliveMs: options.keepAliveMs,
      now: options.now ?? systemClock.monotonicMs,
    };
  }

  /** Connections open now, idle or busy. */
  get size(): number {
    return this.#connections.size;
  }

  /**
   * Sends a request; resolves with the response head once it has arrived (read the body from it).
   * Rejects with the connection's error, an Upstream*Error, or InvalidUpstreamRequestError
   * (nothing sent) for a request that cannot be written.
   */
  request(request: Http1Request): Promise<Http1Response> {
    if (this.#closing) return Promise.reject(new UpstreamPoolClosedError());
    if (request.signal?.aborted) return Promise.reject(new UpstreamAbortError());
    let head: string;
    try {
      head = requestHead(request.method, request.path, this.#options.hostHeader, request.headers, request.body?.length);
    } catch (error) {
      return Promise.reject(error);
    }
    const idle = this.#takeIdle();
    if (idle === undefined && this.#options.tunnel !== undefined)
      return this.#openTunnelled(this.#options.tunnel, request.signal).then((connection) =>
        connection.send(head, request.body, request.method === 'HEAD', request.signal),
      );
    const connection = idle ?? this.#open();
    return connection.send(head, request.body, request.method === 'HEAD', request.signal);
  }

  /** Stops taking requests; resolves once the requests in flight have finished and every connection is closed. */
  close(): Promise<void> {
    if (this.#closed !== undefined) return this.#closed;
    this.#closing = true;
    this.#closed = new Promise((resolve) => {
      this.#onEmpty = resolve;
    });
    for (const connection of this.#idle.splice(0)) connection.close();
    if (this.#connections.size === 0) this.#emptied();
    return this.#closed;
  }

  /** Closes every connection now; requests in flight fail. */
  destroy(): Promise<void> {
    this.#closing = true;
    this.#idle.length = 0;
    for (const connection of [...this.#connections]) connection.close(new UpstreamPoolClosedError());
    return Promise.resolve();
  }

  release(connection: Http1Connection): void {
    if (this.#closing) connection.close();
    else this.#idle.push(connection);
  }

  forget(connection: Http1Connection): void {
    this.#connections.delete(connection);
    const index = this.#idle.lastIndexOf(connection);
    if (index >= 0) this.#idle.splice(index, 1);
    if (this.#connections.size === 0) this.#emptied();
  }

  #emptied(): void {
    clearInterval(this.#sweeper);
    this.#sweeper = undefined;
    const onEmpty = this.#onEmpty;
    this.#onEmpty = undefined;
    onEmpty?.();
  }

  #takeIdle(): Http1Connection | undefined {
    if (this.#idle.length === 0) return undefined;
    const now = this.#timeouts.now();
    while (this.#idle.length > 0) {
      const connection = this.#idle.pop()!;
      if (now - connection.lastActivity < connection.idleLimitMs && !connection.socket.destroyed) return connection;
      connection.close();
    }
    return undefined;
  }

  #open(): Http1Connection {
    const options = this.#options;
    const address =
      options.socketPath !== undefined ? { path: options.socketPath } : { host: options.host, port: options.port };
    let socket: Socket;
    let connection: Http1Connection;
    if (options.tls !== undefined) {
      socket = tlsConnect({ ...options.tls, ...address, session: this.#tlsSession });
      socket.on('session', (session: Buffer) => {
        this.#tlsSession = session;
      });
    } else {
      // Plain TCP reads straight into one shared buffer (no stream, no allocation per read).
      socket = netConnect({
        ...address,
        onread: { buffer: READ_BUFFER, callback: (bytes, buffer) => connection.onRead(bytes, buffer) },
      });
    }
    socket.setNoDelay(true);
    if (options.keepalive !== undefined) applyKeepalive(socket, options.keepalive);
    connection = new Http1Connection(socket, this, this.#timeouts, options.tls !== undefined);
    this.#connections.add(connection);
    this.#startSweeper();
    return connection;
  }

  /**
   * A connection through the CONNECT proxy: opened (the tunnel, then TLS inside it) before the
   * request is written, under the connect deadline; the request's signal aborts the opening. Plain
   * through a plain proxy, the tunnel reads into the shared buffer as a direct plain connection
   * does (the dialler ignores `onread` otherwise: TLS reads through its stream).
   */
  async #openTunnelled(proxy: TunnelProxy, signal: AbortSignal | undefined): Promise<Http1Connection> {
    const options = this.#options;
    // Assigned as soon as the tunnel is open, before any read can reach it: the proxy's answer is
    // the dialler's (bytes with it are refused), and this function resumes in the microtasks run
    // right after the read that completed the answer, before the next read is delivered.
    let connection: Http1Connection;
    const socket = await dialThroughProxy(
      { host: options.host, port: options.port, tls: options.tls, connectTimeoutMs: options.connectTimeoutMs, proxy },
      {
        speaks: ['http/1.1'],
        session: this.#tlsSession,
        onSession: (session) => {
          this.#tlsSession = session;
        },
        signal,
        onread: { buffer: READ_BUFFER, callback: (bytes, buffer) => connection.onRead(bytes, buffer) },
      },
    );
    if (this.#closing) {
      socket.destroy();
      throw new UpstreamPoolClosedError();
    }
    connection = new Http1Connection(socket, this, this.#timeouts, options.tls !== undefined, true);
    this.#connections.add(connection);
    this.#startSweeper();
    return connection;
  }

  #startSweeper(): void {
    if (this.#sweeper !== undefined) return;
    this.#sweeper = setInterval(() => this.#sweep(), SWEEP_INTERVAL_MS);
    this.#sweeper.unref();
  }

  #sweep(): void {
    const now = this.#timeouts.now();
    for (const connection of this.#connections) {
      if (connection.current !== undefined) connection.checkResponseTimeout(now);
      else if (now - connection.lastActivity >= connection.idleLimitMs) connection.close();
    }
  }
}
