// One keep-alive connection to an HTTP/1.1 upstream, carrying one request at a time (no
// pipelining): writes the request in one go, parses the response as it arrives, and gives the
// connection back to its pool once the response is complete and the upstream lets it be reused.
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import {
  UpstreamAbortError,
  UpstreamClosedError,
  UpstreamConnectTimeoutError,
  UpstreamResponseTimeoutError,
} from './errors.ts';
import { type BodySource, ResponseBody } from './response-body.ts';
import {
  type ResponseHead,
  type ResponseHeaders,
  ResponseParser,
  ResponseProtocolError,
  type ResponseSink,
} from './response-parser.ts';

export interface Http1Response {
  statusCode: number;
  headers: ResponseHeaders;
  body: ResponseBody;
}

/** What a connection needs from the pool that owns it. */
export interface ConnectionOwner {
  /** The connection finished a response and may carry another. */
  release(connection: Http1Connection): void;
  /** The connection is closed and must not be handed out again. */
  forget(connection: Http1Connection): void;
}

export interface ConnectionTimeouts {
  connectMs: number;
  /** Longest silence from the upstream while a response is due. */
  responseIdleMs: number;
  /** Longest a connection stays idle in the pool (shortened by the upstream's Keep-Alive hint). */
  keepAliveMs: number;
  /** The clock silence and idleness are measured on (monotonic ms). */
  now: () => number;
}

/** Bodies up to this size are written with the head in one buffer (one send); larger ones after it. */
const COALESCE_BODY_BYTES = 64 * 1024;
/** An idle connection is given up this long before the upstream's announced keep-alive timeout. */
const KEEP_ALIVE_MARGIN_MS = 1000;

/** One request on the connection: its promise, its abort signal, and the body source its reader sees. */
class Exchange implements BodySource {
  readonly connection: Http1Connection;
  readonly resolve: (response: Http1Response) => void;
  readonly reject: (error: Error) => void;
  signal: AbortSignal | undefined;
  body: ResponseBody | undefined;
  paused = false;

  constructor(connection: Http1Connection, resolve: (response: Http1Response) => void, reject: (error: Error) => void) {
    this.connection = connection;
    this.resolve = resolve;
    this.reject = reject;
  }

  /**
   * The abort signal's listener. A function, not this object with handleEvent: measured under
   * load, an object listener had ~2 KiB per request promoted to V8's old generation (a full
   * collection every 200 ms), a function ~0.4 KiB.
   */
  readonly onAbort = (): void => {
    this.connection.failExchange(this, new UpstreamAbortError());
  };

  done(): void {
    this.signal?.removeEventListener('abort', this.onAbort);
  }

  pause(): void {
    if (this.connection.current !== this) return;
    this.paused = true;
    this.connection.socket.pause();
  }

  resume(): void {
    if (this.connection.current !== this || !this.paused) return;
    this.paused = false;
    this.connection.socket.resume();
  }

  abandon(): void {
    if (this.connection.current === this) this.connection.failExchange(this, new UpstreamAbortError());
  }
}

export class Http1Connection implements ResponseSink {
  readonly socket: Socket;
  readonly #owner: ConnectionOwner;
  readonly #parser: ResponseParser;
  readonly #timeouts: ConnectionTimeouts;
  #exchange: Exchange | undefined;
  #connectTimer: NodeJS.Timeout | undefined;
  #reusable = false;
  #closed = false;
  /** Whether the chunk being parsed is the shared read buffer (body bytes are copied out of it). */
  #sharedChunk = false;
  /** The clock's time of the last read or write while busy, or of becoming idle. */
  lastActivity: number;
  /** How long this connection may stay idle: the pool's keep-alive, or less if the upstream says so. */
  idleLimitMs: number;

  /**
   * `connected`: the socket is already open (a tunnel through a CONNECT proxy, its TLS handshake
   * done and its ALPN checked); else its connect (or TLS handshake) is awaited under
   * the connect deadline.
   */
  constructor(
    socket: Socket,
    owner: ConnectionOwner,
    timeouts: ConnectionTimeouts,
    secure: boolean,
    connected = false,
  ) {
    this.socket = socket;
    this.#owner = owner;
    this.#timeouts = timeouts;
    this.lastActivity = timeouts.now();
    this.idleLimitMs = timeouts.keepAliveMs;
    this.#parser = new ResponseParser(this);
    if (!connected) {
      this.#connectTimer = setTimeout(
        () => this.#fail(new UpstreamConnectTimeoutError(timeouts.connectMs)),
        timeouts.connectMs,
      );
      socket.once(secure ? 'secureConnect' : 'connect', () => this.#onConnect(secure));
    }
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('end', () => this.#onEnd());
    socket.on('error', (error: Error) => this.#fail(error));
    socket.on('close', () => this.#end());
  }

  get current(): Exchange | undefined {
    return this.#exchange;
  }

  /** Sends a request (its head already checked and serialised) and resolves with the response head. */
  send(
    head: string,
    body: Buffer | undefined,
    noBody: boolean,
    signal: AbortSignal | undefined,
  ): Promise<Http1Response> {
    return new Promise<Http1Response>((resolve, reject) => {
      const exchange = new Exchange(this, resolve, reject);
      this.#exchange = exchange;
      this.#parser.expect(noBody);
      this.lastActivity = this.#timeouts.now();
      if (signal !== undefined) {
        exchange.signal = signal;
        signal.addEventListener('abort', exchange.onAbort, { once: true });
      }
      this.socket.ref();
      const socket = this.socket;
      if (body === undefined || body.length === 0) socket.write(head, 'latin1');
      else if (body.length <= COALESCE_BODY_BYTES) {
        const bytes = Buffer.allocUnsafe(head.length + body.length);
        bytes.write(head, 0, 'latin1');
        body.copy(bytes, head.length);
        socket.write(bytes);
      } else {
        socket.cork();
        socket.write(head, 'latin1');
        socket.write(body);
        socket.uncork();
      }
    });
  }

  /**
   * A read into the shared buffer (plain TCP connections, direct or through a plain tunnel; TLS
   * ones emit 'data'). Returns false to stop reading while the body's reader is behind; reading
   * starts again with socket.resume() (Exchange.resume), as it stops with socket.pause().
   */
  onRead(bytes: number, buffer: Uint8Array): boolean {
    this.#sharedChunk = true;
    try {
      this.#onData((buffer as Buffer).subarray(0, bytes));
    } finally {
      this.#sharedChunk = false;
    }
    return this.#exchange?.paused !== true;
  }

  /** Called by the pool's sweep: fails a response the upstream has gone silent on. */
  checkResponseTimeout(now: number): void {
    const exchange = this.#exchange;
    // A paused socket waits for the reader, not the upstream.
    if (exchange === undefined || exchange.paused) return;
    if (now - this.lastActivity > this.#timeouts.responseIdleMs)
      this.#fail(new UpstreamResponseTimeoutError(this.#timeouts.responseIdleMs));
  }

  /** Fails `exchange` (if it is still this connection's) and closes the connection. */
  failExchange(exchange: Exchange, error: Error): void {
    if (this.#exchange === exchange) this.#fail(error);
  }

  /** Closes the connection; a request on it fails with `error` (by default UpstreamClosedError). */
  close(error?: Error): void {
    if (error === undefined) this.#end();
    else this.#fail(error);
  }

  // ResponseSink: called by the parser while execute() or finish() runs.

  onHead(head: ResponseHead): void {
    const exchange = this.#exchange!;
    const keepAlive = head.headers['keep-alive'];
    if (keepAlive !== undefined) this.#applyKeepAliveHint(keepAlive);
    const body = new ResponseBody(exchange);
    exchange.body = body;
    exchange.resolve({ statusCode: head.status, headers: head.headers, body });
  }

  onBody(bytes: Buffer): void {
    this.#exchange!.body!.push(this.#sharedChunk ? Buffer.from(bytes) : bytes);
  }

  onComplete(reusable: boolean): void {
    const exchange = this.#exchange!;
    this.#exchange = undefined;
    this.#reusable = reusable && this.idleLimitMs > 0;
    exchange.done();
    if (exchange.paused) this.socket.resume();
    exchange.body!.end();
  }

  #onConnect(secure: boolean): void {
    clearTimeout(this.#connectTimer);
    this.#connectTimer = undefined;
    // Only HTTP/1.1 is spoken here: a TLS upstream that chose another protocol cannot be used.
    const protocol = secure ? (this.socket as TLSSocket).alpnProtocol : false;
    if (protocol && protocol !== 'http/1.1')
      this.#fail(new ResponseProtocolError(`the upstream negotiated ${protocol}; this connection speaks HTTP/1.1`));
  }

  #onData(chunk: Buffer): void {
    if (this.#exchange === undefined) {
      // Bytes on an idle connection answer nothing: it cannot be trusted with a request.
      this.#fail(new ResponseProtocolError('the upstream sent data on an idle connection'));
      return;
    }
    this.lastActivity = this.#timeouts.now();
    try {
      this.#parser.execute(chunk);
    } catch (error) {
      this.#fail(error as Error);
      return;
    }
    if (this.#exchange === undefined) this.#afterResponse();
  }

  #onEnd(): void {
    if (this.#exchange !== undefined) {
      try {
        // Completes a body that runs until the connection closes; throws if a response was cut off.
        this.#parser.finish();
      } catch (error) {
        this.#fail(error as Error);
        return;
      }
    }
    this.#end();
  }

  #afterResponse(): void {
    if (!this.#reusable) {
      this.#shutDown();
      return;
    }
    this.lastActivity = this.#timeouts.now();
    this.socket.unref();
    this.#owner.release(this);
  }

  /** `Keep-Alive: timeout=N`: the upstream closes idle connections after N seconds; give them up before. */
  #applyKeepAliveHint(value: string | string[]): void {
    const match = /timeout\s*=\s*(\d+)/i.exec(Array.isArray(value) ? value.join(',') : value);
    if (match) this.idleLimitMs = Math.min(this.#timeouts.keepAliveMs, Number(match[1]) * 1000 - KEEP_ALIVE_MARGIN_MS);
  }

  #fail(error: Error): void {
    const exchange = this.#exchange;
    this.#exchange = undefined;
    if (exchange !== undefined) {
      exchange.done();
      if (exchange.body === undefined) exchange.reject(error);
      else exchange.body.fail(error);
    }
    this.#shutDown();
  }

  /** Closes the connection; a request still on it fails with UpstreamClosedError (made only then). */
  #end(): void {
    if (this.#exchange !== undefined) this.#fail(new UpstreamClosedError());
    else this.#shutDown();
  }

  #shutDown(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#connectTimer);
    this.socket.destroy();
    this.#owner.forget(this);
  }
}
