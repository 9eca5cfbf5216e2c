// The server of one listener port and what happens to its connections before HTTP: TCP
// keepalive, the PROXY header, network authorization, the TLS handshake deadline, then HTTP/1.1
// or HTTP/2 (ALPN on HTTPS ports; prior-knowledge h2c on HTTP ports), the HTTP/2 settings and
// pings, and the connection's maximum lifetime. Then the downstream limits (./downstream-limits.ts):
// node keeps the request-header deadline of HTTP/1; the port keeps the first-stream deadline of
// HTTP/2 and the stream and reset limits, and its watchdog (./stall-watchdog.ts) request bodies,
// the buffer budget and stalled writes.
//
// The protocol server listens itself (so node's own connection bookkeeping and timeouts work);
// its 'connection' listeners — node's TLS or HTTP handling — are taken off and called for a
// connection only once the checks above have passed. Settings change in place on reload; a
// connection keeps the settings it was accepted with, except what node reads per request.
import {
  createServer as createHttp1Server,
  type Server as Http1Server,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import {
  createServer as createH2cServer,
  createSecureServer,
  type Http2SecureServer,
  type Http2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { createSecureContext, type SecureContext, type TLSSocket } from 'node:tls';
import { sendText } from '../proxy/direct-response.ts';
import { hasRequestBody } from '../proxy/http-forward.ts';
import { isWebSocketUpgrade, upgradeResponse } from '../proxy/websocket-upgrade.ts';
import { applyKeepalive } from '../transport/tcp-keepalive.ts';
import type { BufferBudget } from './buffer-budget.ts';
import { type ConnectDownstream, http1Connect, http2Connect } from './connect.ts';
import {
  type DownstreamLimits,
  HTTP2_STREAM_RESET_BURST,
  HTTP2_STREAM_RESET_RATE,
  watchIntervalMs,
} from './downstream-limits.ts';
import { adaptHttp2Request, headerListSize } from './http2-request.ts';
import type { ConnectionOptions } from './listener-options.ts';
import { type PeerAddress, readProxyHeader } from './proxy-protocol.ts';
import { StallWatchdog } from './stall-watchdog.ts';
import { selectAlpn } from './tls-options.ts';

export type Certificates = ReadonlyMap<string, { key: string; cert: string }>;

export interface PortHandlers {
  request(req: IncomingMessage, res: ServerResponse): void;
  connect(downstream: ConnectDownstream): void;
  /** The listening socket failed after it was bound (accept errors such as EMFILE). */
  error(error: Error): void;
}

/** The start of the HTTP/2 connection preface (RFC 9113 section 3.4): no HTTP/1 request starts so. */
const H2_PREFACE_START = Buffer.from('PRI ', 'latin1');
/** node's own handshake timer is set out of the way; the configured deadline is gw's (it changes on reload). */
const NODE_HANDSHAKE_TIMEOUT_MS = 2 ** 31 - 1;
/** What node's HTTP/1 parser errors answer (as node's own clientError handling does); others 400. */
const CLIENT_ERROR_STATUS: Readonly<Record<string, string>> = {
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: '413 Content Too Large',
};

/** Per-connection state while Frontend.http.maxConnectionDuration applies. */
interface Lifetime {
  /** Requests in flight on an HTTP/1 connection. */
  active: number;
  expired: boolean;
  timer: NodeJS.Timeout;
  /** The accepted stream, and the socket requests arrive on (a TLSSocket on HTTPS ports) once one has. */
  stream: Duplex;
  requestSocket: Duplex | undefined;
  session: ServerHttp2Session | undefined;
}

/** A connection's identity as every layer above TCP reports it (TLS sockets, HTTP/2 sessions). */
function connectionKey(socket: {
  remoteAddress?: string | undefined;
  remotePort?: number | undefined;
  localAddress?: string | undefined;
}): string | undefined {
  if (socket.remoteAddress === undefined) return undefined;
  return `${socket.remoteAddress}|${socket.remotePort}|${socket.localAddress}`;
}

export class PortListener {
  readonly protocol: 'HTTP' | 'HTTPS';
  /** The listening server: HTTP/1.1 on HTTP ports, HTTP/2 with HTTP/1.1 fallback on HTTPS ports. */
  readonly server: Http1Server | Http2SecureServer;
  /** HTTP ports: the HTTP/2 server connections starting with the h2 preface go to. */
  private readonly h2c: Http2Server | undefined;
  private readonly handlers: PortHandlers;
  /** node's handling of a new connection (TLS or HTTP/1), run once it is admitted. */
  private readonly handOver: ((socket: Duplex) => void)[];
  private options: ConnectionOptions;
  private contexts = new Map<string, SecureContext>();
  private readonly connections = new Set<Duplex>();
  private readonly sessions = new Set<ServerHttp2Session>();
  /** Clients named by a PROXY header (or a tunnel), by connection key. */
  private readonly peers = new Map<string, PeerAddress>();
  /** The same for tunnel streams that are not sockets (they have no address of their own). */
  private readonly streamPeers = new WeakMap<object, PeerAddress>();
  private readonly handshakes = new Map<string, NodeJS.Timeout>();
  private readonly lifetimes = new Map<string, Lifetime>();
  private readonly limits: DownstreamLimits;
  private readonly watchdog: StallWatchdog;

  constructor(
    protocol: 'HTTP' | 'HTTPS',
    options: ConnectionOptions,
    certificates: Certificates,
    handlers: PortHandlers,
    limits: DownstreamLimits,
    budget: BufferBudget,
  ) {
    this.protocol = protocol;
    this.options = options;
    this.handlers = handlers;
    this.limits = limits;
    this.watchdog = new StallWatchdog(limits, budget);
    const http2Limits = { streamResetBurst: HTTP2_STREAM_RESET_BURST, streamResetRate: HTTP2_STREAM_RESET_RATE };
    const onRequest = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) =>
      this.onRequest(req, res);
    const onConnect = (req: IncomingMessage, second: Duplex | Http2ServerResponse, head?: Buffer) =>
      this.handlers.connect(
        Buffer.isBuffer(head)
          ? http1Connect(req, second as Duplex, head)
          : http2Connect(req as unknown as Http2ServerRequest, second as Http2ServerResponse),
      );
    if (protocol === 'HTTPS') {
      this.contexts = secureContexts(certificates, options);
      const server = createSecureServer(
        {
          allowHTTP1: true,
          ...defaultCertificate(certificates),
          ...options.tls.context,
          handshakeTimeout: NODE_HANDSHAKE_TIMEOUT_MS,
          // Clients without SNI get the listener without a hostname (or the first one).
          SNICallback: (servername, callback) => callback(null, this.contextFor(servername)),
          ALPNCallback: ({ protocols }) => selectAlpn(this.options.tls.alpnProtocols, protocols),
          settings: options.http2.settings,
          ...http2Limits,
        },
        onRequest,
      );
      server.on('secureConnection', (socket: TLSSocket) => this.handshakeDone(socket));
      server.on('session', (session: ServerHttp2Session) => this.onSession(session));
      this.server = server;
    } else {
      this.server = createHttp1Server(onRequest);
      this.h2c = createH2cServer({ settings: options.http2.settings, ...http2Limits }, onRequest);
      this.h2c.on('session', (session: ServerHttp2Session) => this.onSession(session));
      this.h2c.on('connect', onConnect);
    }
    this.server.on('connect', onConnect);
    // WebSocket upgrades (and no other) are handed over with their socket, then served like any
    // request (websocket-upgrade.ts); h2c upgrades stay ordinary HTTP/1.1 requests.
    // (node 24's server option, not in its type declarations yet)
    const upgrading = this.server as Http1Server & { shouldUpgradeCallback: (req: IncomingMessage) => boolean };
    upgrading.shouldUpgradeCallback = isWebSocketUpgrade;
    upgrading.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.handlers.request(req, upgradeResponse(req, socket, head)),
    );
    this.server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
      const status = CLIENT_ERROR_STATUS[error.code ?? ''] ?? '400 Bad Request';
      if (socket.writable) socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`);
      else socket.destroy(error);
    });
    const server = this.server as Http1Server;
    server.headersTimeout = limits.requestHeaderTimeoutMs;
    // node looks for requests past their header deadline on this interval (its default is 30 s),
    // read when the server starts listening; HTTP/1 on the HTTPS port (allowHTTP1) too.
    (server as { connectionsCheckingInterval?: number }).connectionsCheckingInterval = watchIntervalMs(limits);
    // node's whole-request deadline would cut long uploads streamed to a backend: the watchdog
    // keeps the body deadlines instead.
    server.requestTimeout = 0;
    this.applyHttp1(options);
    this.handOver = this.server.listeners('connection') as ((socket: Duplex) => void)[];
    this.server.removeAllListeners('connection');
    this.server.on('connection', (socket: Socket) => this.accept(socket, undefined));
  }

  /** Binds the port; rejects when it cannot. */
  listen(port: number, host: string, reusePort: boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      const reuse = reusePort ? { reusePort: true, exclusive: true } : {};
      this.server.listen({ port, host, ...reuse }, () => {
        this.server.off('error', reject);
        this.server.on('error', (error: Error) => this.handlers.error(error));
        resolve();
      });
    });
  }

  /** New settings and certificates: new connections (and requests, for what node reads per request) use them. */
  configure(options: ConnectionOptions, certificates: Certificates): void {
    this.options = options;
    this.applyHttp1(options);
    if (this.protocol === 'HTTPS') {
      this.contexts = secureContexts(certificates, options);
      // Every field is given: setSecureContext keeps an earlier value for a field left out.
      (this.server as Http2SecureServer).setSecureContext({
        ...defaultCertificate(certificates),
        ...options.tls.context,
      });
      (this.server as Http2SecureServer).updateSettings(options.http2.settings);
    } else this.h2c!.updateSettings(options.http2.settings);
  }

  /** The client of a request: the PROXY header's (or the tunnel's) when there was one, else the socket's peer. */
  sourceOf(req: IncomingMessage): PeerAddress {
    const socket = req.socket;
    const named =
      this.streamPeers.get(socket) ?? (this.peers.size > 0 ? this.peers.get(connectionKey(socket) ?? '') : undefined);
    return named ?? { address: socket.remoteAddress ?? '', port: socket.remotePort ?? 0 };
  }

  /** Takes a tunnel (Frontend.connect Tunnel) as a new downstream connection from `source`. */
  accept(stream: Duplex, tunnelSource: PeerAddress | undefined): void {
    const options = this.options;
    this.connections.add(stream);
    stream.once('close', () => this.connections.delete(stream));
    const socket = stream instanceof Socket ? stream : undefined;
    if (tunnelSource !== undefined) return void this.admit(stream, tunnelSource, true);
    const own = { address: socket?.remoteAddress ?? '', port: socket?.remotePort ?? 0 };
    if (socket && options.keepalive) applyKeepalive(socket, options.keepalive);
    if (!options.proxyProtocol) return void this.admit(stream, own, false);
    void readProxyHeader(stream, options.proxyProtocol).then((outcome) => {
      if (outcome.kind === 'refused') return void stream.destroy();
      const source = outcome.kind === 'header' ? outcome.source : undefined;
      this.admit(stream, source ?? own, source !== undefined);
    });
  }

  /** Network authorization, then the bookkeeping of the connection, then TLS or HTTP. */
  private admit(stream: Duplex, source: PeerAddress, named: boolean): void {
    if (stream.destroyed) return;
    const options = this.options;
    if (options.networkAuthorization && !options.networkAuthorization.allows(source)) return void stream.destroy();
    const key = connectionKey(stream as Partial<Socket>);
    if (named) {
      if (key !== undefined) this.peers.set(key, source);
      else this.streamPeers.set(stream, source);
    }
    if (key !== undefined) {
      if (options.maxConnectionDurationMs !== undefined)
        this.startLifetime(key, stream, options.maxConnectionDurationMs);
      if (this.protocol === 'HTTPS') {
        const timer = setTimeout(() => stream.destroy(), options.tls.handshakeTimeoutMs);
        this.handshakes.set(key, timer);
      }
      stream.once('close', () => this.forget(key));
    }
    if (this.protocol === 'HTTPS') this.handOverTo(stream);
    else {
      this.watchdog.watchConnection(stream);
      this.sniffHttp2(stream);
    }
  }

  private handOverTo(stream: Duplex): void {
    for (const listener of this.handOver) listener.call(this.server, stream);
  }

  private forget(key: string): void {
    this.peers.delete(key);
    const handshake = this.handshakes.get(key);
    if (handshake) {
      clearTimeout(handshake);
      this.handshakes.delete(key);
    }
    const lifetime = this.lifetimes.get(key);
    if (lifetime) {
      clearTimeout(lifetime.timer);
      this.lifetimes.delete(key);
    }
  }

  private handshakeDone(socket: TLSSocket): void {
    this.watchdog.watchConnection(socket);
    const key = connectionKey(socket);
    const timer = key === undefined ? undefined : this.handshakes.get(key);
    if (timer) {
      clearTimeout(timer);
      this.handshakes.delete(key!);
    }
  }

  /** Cleartext: a connection that starts with the HTTP/2 preface is h2c (prior knowledge), any other HTTP/1.1. */
  private sniffHttp2(stream: Duplex): void {
    let seen: Buffer = Buffer.alloc(0);
    const decide = (http2: boolean) => {
      clearTimeout(timer);
      stream.off('readable', onReadable);
      stream.off('end', ended);
      stream.off('close', ended);
      if (stream.destroyed) return;
      if (seen.length > 0) stream.unshift(seen);
      if (http2) {
        // Accepted by the HTTP/1 server, which keeps a connection half open when the client ends
        // its side; an HTTP/2 session must see the end (node's own HTTP/2 servers do not keep it),
        // or the streams of a client that went away stay open, and their upstream requests with them.
        (stream as Socket).allowHalfOpen = false;
        this.h2c!.emit('connection', stream);
      } else this.handOverTo(stream);
    };
    const onReadable = () => {
      const chunk = stream.read() as Buffer | null;
      if (chunk === null) return;
      seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
      const length = Math.min(seen.length, H2_PREFACE_START.length);
      if (seen.compare(H2_PREFACE_START, 0, length, 0, length) !== 0) decide(false);
      else if (seen.length >= H2_PREFACE_START.length) decide(true);
    };
    // A connection closed before it sent anything (a TCP health check) is HTTP/1's to close.
    const ended = () => decide(false);
    // One that sends nothing within the request-header deadline is closed, as HTTP/1 would close it.
    const timer = setTimeout(
      () => (seen.length === 0 ? stream.destroy() : ended()),
      this.limits.requestHeaderTimeoutMs,
    );
    stream.on('readable', onReadable);
    stream.once('end', ended);
    stream.once('close', ended);
  }

  private onRequest(req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse): void {
    if (req.httpVersionMajor === 2) {
      const request = req as Http2ServerRequest;
      // node advertises SETTINGS_MAX_HEADER_LIST_SIZE but does not hold requests to it.
      const limit = this.options.http2.settings.maxHeaderListSize;
      if (limit !== undefined && headerListSize(request.rawHeaders) > limit) {
        sendText(res as ServerResponse, 431, 'request header fields too large');
        return;
      }
      adaptHttp2Request(request);
    } else if (this.lifetimes.size > 0) this.countRequest(req as IncomingMessage, res as ServerResponse);
    if (hasRequestBody(req as IncomingMessage)) this.watchdog.watchBody(req as IncomingMessage, res as ServerResponse);
    this.handlers.request(req as IncomingMessage, res as ServerResponse);
  }

  private onSession(session: ServerHttp2Session): void {
    this.sessions.add(session);
    this.watchdog.watchSession(session);
    // The first request's headers must arrive within the deadline HTTP/1 has for them.
    const firstStream = setTimeout(() => session.close(), this.limits.requestHeaderTimeoutMs);
    session.once('stream', () => clearTimeout(firstStream));
    session.on('stream', (stream: ServerHttp2Stream) => this.watchdog.watchStream(stream));
    const http2 = this.options.http2;
    if (http2.connectionWindowSize !== undefined && !session.destroyed)
      session.setLocalWindowSize(http2.connectionWindowSize);
    const pings = http2.keepaliveIntervalMs === undefined ? undefined : keepPinging(session, http2);
    const key = session.socket ? connectionKey(session.socket) : undefined;
    const lifetime = key === undefined ? undefined : this.lifetimes.get(key);
    if (lifetime) {
      lifetime.session = session;
      if (lifetime.expired) session.close();
    }
    session.once('close', () => {
      this.sessions.delete(session);
      clearTimeout(firstStream);
      if (pings) clearInterval(pings);
    });
    session.on('error', () => undefined); // the session closes; its streams report their own errors
  }

  private startLifetime(key: string, stream: Duplex, durationMs: number): void {
    const lifetime: Lifetime = {
      active: 0,
      expired: false,
      stream,
      requestSocket: undefined,
      session: undefined,
      timer: setTimeout(() => {
        lifetime.expired = true;
        // HTTP/2: GOAWAY; streams in flight complete. HTTP/1: close once no request is in flight.
        if (lifetime.session) lifetime.session.close();
        else if (lifetime.active === 0) endConnection(lifetime.requestSocket ?? lifetime.stream);
      }, durationMs),
    };
    lifetime.timer.unref();
    this.lifetimes.set(key, lifetime);
  }

  /** HTTP/1 under maxConnectionDuration: past its lifetime a connection answers with `connection: close`. */
  private countRequest(req: IncomingMessage, res: ServerResponse): void {
    const lifetime = this.lifetimes.get(connectionKey(req.socket) ?? '');
    if (!lifetime) return;
    lifetime.requestSocket = req.socket;
    lifetime.active++;
    if (lifetime.expired) res.setHeader('connection', 'close');
    res.once('close', () => {
      lifetime.active--;
      if (lifetime.expired && lifetime.active === 0) endConnection(req.socket);
    });
  }

  private contextFor(servername: string): SecureContext | undefined {
    const name = servername.toLowerCase();
    const contexts = this.contexts;
    const exact = contexts.get(name);
    if (exact) return exact;
    let best: SecureContext | undefined;
    let bestLength = -1;
    for (const [hostname, context] of contexts) {
      if (hostname.startsWith('*.') && name.endsWith(hostname.slice(1)) && hostname.length > bestLength) {
        best = context;
        bestLength = hostname.length;
      }
    }
    return best ?? contexts.get('') ?? contexts.values().next().value;
  }

  private applyHttp1(options: ConnectionOptions): void {
    const server = this.server as Http1Server;
    server.keepAliveTimeout = options.http1IdleTimeoutMs;
    server.maxHeadersCount = options.http1MaxHeaders;
  }

  /** Stops accepting; idle connections close, requests in flight finish, HTTP/2 connections get GOAWAY. */
  closeGracefully(): void {
    this.server.close(() => this.watchdog.close());
    (this.server as Http1Server).closeIdleConnections();
    for (const session of this.sessions) session.close();
  }

  /** Stops accepting and closes every connection now. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => {
        this.watchdog.close();
        resolve();
      });
      for (const session of this.sessions) session.destroy();
      for (const connection of this.connections) connection.destroy();
    });
  }
}

/** Ends an HTTP/1 connection after what has been written. */
function endConnection(socket: Duplex): void {
  socket.end(() => socket.destroy());
}

/** Sends a PING every interval; a PING unanswered within the timeout closes the session. */
function keepPinging(session: ServerHttp2Session, http2: ConnectionOptions['http2']): NodeJS.Timeout {
  const timer = setInterval(() => {
    if (session.closed || session.destroyed) return;
    const deadline = setTimeout(() => session.destroy(), http2.keepaliveTimeoutMs);
    deadline.unref();
    const sent = session.ping((error) => {
      clearTimeout(deadline);
      if (error && !session.destroyed) session.destroy();
    });
    // Too many PINGs unanswered already: the earliest one's deadline stands.
    if (!sent) clearTimeout(deadline);
  }, http2.keepaliveIntervalMs);
  timer.unref();
  return timer;
}

function defaultCertificate(certificates: Certificates): { key: string; cert: string } | undefined {
  return certificates.get('') ?? certificates.values().next().value;
}

function secureContexts(certificates: Certificates, options: ConnectionOptions): Map<string, SecureContext> {
  const contexts = new Map<string, SecureContext>();
  for (const [hostname, certificate] of certificates)
    contexts.set(hostname, createSecureContext({ ...certificate, ...options.tls.context }));
  return contexts;
}
