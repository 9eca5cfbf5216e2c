// Connections through an HTTP CONNECT proxy (a backend policy's `tunnel`, decision 0039): gw
// connects to the proxy (TCP, or TLS when the proxy is named by an https url or its GwBackend sets
// tls), asks it for a tunnel to the backend's host:port, and once the proxy answers 2xx speaks to
// the backend through it — plain, or with the backend's own TLS inside (TLS in TLS when the proxy
// is reached over TLS too). One deadline covers it all; the proxy's answer head is bounded. A proxy
// that cannot be reached, refuses (non-2xx) or answers nonsense is a connection gw could not make:
// a TunnelError, which the client sees as any failed connection (503), the log with the detail.
// Plain all the way (plain proxy, plain backend), a caller may have the tunnel read into a buffer
// of its own (net.connect's onread): the proxy's answer is read from it first, then the caller's.
import { type NetConnectOpts, connect as netConnect, type OnReadOpts, type Socket } from 'node:net';
import { type ConnectionOptions, type TLSSocket, connect as tlsConnect } from 'node:tls';
import { applyKeepalive, type TcpKeepalive } from '../transport/tcp-keepalive.ts';
import { UpstreamAbortError, UpstreamConnectTimeoutError } from './http1/errors.ts';

/** The proxy a backend's connections are tunnelled through, as compiled from its BackendTunnel. */
export interface TunnelProxy {
  /** The url's origin or "GwBackend ns/name" / "Service ns/name:port": errors name the proxy by it. */
  readonly name: string;
  readonly host: string;
  readonly port: number;
  /** A Unix domain socket to the proxy instead of host:port (a GwBackend static unixPath). */
  readonly socketPath: string | undefined;
  /** TLS to the proxy itself; undefined for plain TCP. */
  readonly tls: ConnectionOptions | undefined;
  /** Deadline to reach the proxy (TCP, TLS, its answer to CONNECT): its GwBackend's tcp.connectTimeout. */
  readonly connectTimeoutMs: number | undefined;
  /** TCP keepalive of the socket to the proxy — the only TCP connection there is. */
  readonly keepalive: TcpKeepalive | undefined;
  /** Header lines of each CONNECT request (the proxy GwBackend's auth), checked when compiled. */
  readonly headers: readonly (readonly [string, string])[];
  /** What pools through this proxy are keyed by: the proxy, its TLS and TCP settings, its credential's digest. */
  readonly key: string;
}

/** Where a tunnel goes and how: the backend's address, its TLS inside the tunnel, the proxy. */
export interface TunnelTarget {
  host: string;
  port: number;
  /** The backend's TLS (inside the tunnel); undefined for plain HTTP. */
  tls: ConnectionOptions | undefined;
  /** Deadline for the whole: reaching the proxy, its answer, the backend's TLS handshake. */
  connectTimeoutMs: number;
  proxy: TunnelProxy;
}

export interface DialOptions {
  /** ALPN offered to the backend inside the tunnel (TLS only); unset: the TLS options' own. */
  alpn?: readonly string[] | undefined;
  /** Protocols the caller speaks: a backend choosing another by ALPN fails the connection. */
  speaks?: readonly string[] | undefined;
  /** A TLS session to resume with the backend, and where a new one is given. */
  session?: Buffer | undefined;
  onSession?: ((session: Buffer) => void) | undefined;
  signal?: AbortSignal | undefined;
  /**
   * Read the tunnel into this buffer, calling back per read (net.connect's onread: no stream, no
   * 'data' event, no allocation per read) once the proxy has answered — honoured only when both the
   * proxy and the backend are plain TCP, ignored otherwise (a TLS socket reads through its stream).
   * Bytes that come with the proxy's answer are then refused, not put back (there is no putting
   * back into a buffer the next read overwrites, and an HTTP server never speaks first).
   */
  onread?: OnReadOpts | undefined;
}

/** The longest answer head gw reads from a proxy to its CONNECT. */
export const MAX_PROXY_ANSWER_HEAD = 16 * 1024;

/** A tunnel that could not be opened (not a timeout): the proxy unreachable, refusing, or not speaking HTTP. */
export class TunnelError extends Error {
  readonly code = 'UPSTREAM_TUNNEL_FAILED';
  /** The proxy's status when it answered the CONNECT with one that is not 2xx. */
  readonly proxyStatus: number | undefined;
  constructor(message: string, options: { cause?: unknown; proxyStatus?: number } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.proxyStatus = options.proxyStatus;
  }
}

/** host:port as a CONNECT request names it (an IPv6 address in brackets). */
export function tunnelAuthority(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/**
 * Opens a connection to `target` through its proxy. Resolves with the socket to speak HTTP on:
 * the backend's TLS socket, or the tunnel itself — reading with `options.onread` when it is
 * honoured (plain through a plain proxy), else not flowing until read, with any bytes the proxy
 * sent after its answer put back. Rejects with TunnelError, UpstreamConnectTimeoutError,
 * UpstreamAbortError or the backend's TLS error.
 */
export function dialThroughProxy(target: TunnelTarget, options: DialOptions = {}): Promise<Socket> {
  const { proxy } = target;
  const authority = tunnelAuthority(target.host, target.port);
  const onread = proxy.tls === undefined && target.tls === undefined ? options.onread : undefined;
  return new Promise<Socket>((resolve, reject) => {
    const where = proxy.socketPath !== undefined ? { path: proxy.socketPath } : { host: proxy.host, port: proxy.port };
    const answer = new ProxyAnswerHead(proxy, authority);
    /** Whether the proxy opened the tunnel: reads are the caller's from then on. */
    let open = false;
    // CONNECT is an HTTP/1.1 request: that is all a proxy reached over TLS is offered.
    const toProxy: Socket = proxy.tls
      ? tlsConnect({ ...proxy.tls, ...where, ALPNProtocols: ['http/1.1'] })
      : netConnect({
          ...where,
          ...(onread && {
            onread: {
              buffer: onread.buffer,
              callback: (bytes: number, buffer: Uint8Array) =>
                open ? onread.callback(bytes, buffer) : onAnswerRead(bytes, buffer),
            },
          }),
        } as NetConnectOpts);
    let outermost: Socket = toProxy;
    let settled = false;
    const settle = (error: Error | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearTimeout(proxyDeadline);
      options.signal?.removeEventListener('abort', onAbort);
      toProxy.off('error', onProxyError);
      if (error === undefined) return resolve(outermost);
      outermost.destroy();
      toProxy.destroy();
      reject(error);
    };
    const deadline = setTimeout(
      () => settle(new UpstreamConnectTimeoutError(target.connectTimeoutMs)),
      target.connectTimeoutMs,
    );
    const proxyDeadline =
      proxy.connectTimeoutMs === undefined
        ? undefined
        : setTimeout(
            () =>
              settle(
                new TunnelError(`the tunnel proxy ${proxy.name} did not answer within ${proxy.connectTimeoutMs} ms`),
              ),
            proxy.connectTimeoutMs,
          );
    const onAbort = () => settle(new UpstreamAbortError());
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const onProxyError = (error: Error) =>
      settle(
        new TunnelError(`the tunnel proxy ${proxy.name} could not be reached: ${error.message}`, { cause: error }),
      );
    toProxy.on('error', onProxyError);
    toProxy.setNoDelay(true);
    if (proxy.keepalive) applyKeepalive(toProxy, proxy.keepalive);

    // The proxy's answer, read one of two ways: through the stream ('readable' and read(), so that
    // once the listener is gone the socket is as a new one — whoever takes it next starts the flow
    // by listening to 'data', as node's HTTP client and undici do, or reads it through its handle,
    // as TLS inside the tunnel does), or from the caller's buffer (onread), which the next read
    // overwrites: the answer copies what it keeps.
    const onReadable = () => {
      for (let chunk: Buffer | null = toProxy.read(); chunk !== null; chunk = toProxy.read()) {
        const outcome = answer.add(chunk, false);
        if (outcome !== undefined) return onAnswer(outcome);
      }
    };
    const onAnswerRead = (bytes: number, buffer: Uint8Array): boolean => {
      const outcome = answer.add((buffer as Buffer).subarray(0, bytes), true);
      if (outcome !== undefined) onAnswer(outcome);
      return true;
    };
    const onProxyEnd = () => settle(answer.closed());
    toProxy.once(proxy.tls ? 'secureConnect' : 'connect', () => {
      toProxy.write(connectRequest(authority, proxy.headers), 'latin1');
      toProxy.once('end', onProxyEnd);
      if (onread === undefined) toProxy.on('readable', onReadable);
    });

    const onAnswer = (outcome: ProxyAnswer) => {
      toProxy.off('readable', onReadable);
      toProxy.off('end', onProxyEnd);
      if (outcome.error !== undefined) return settle(outcome.error);
      clearTimeout(proxyDeadline);
      const { rest } = outcome;
      if (target.tls !== undefined) {
        if (rest.length > 0)
          return settle(
            new TunnelError(`the tunnel proxy ${proxy.name} sent bytes before the backend's TLS handshake`),
          );
        return startBackendTls(toProxy);
      }
      // Plain HTTP inside: the tunnel is the connection. Bytes after the answer are the backend's,
      // put back for a stream reader; in the caller's buffer there is no putting back, and a
      // backend speaking before gw's request is no HTTP server.
      if (onread !== undefined) {
        if (rest.length > 0)
          return settle(new TunnelError(`the tunnel proxy ${proxy.name} sent bytes before gw's request`));
        open = true;
      } else if (rest.length > 0) toProxy.unshift(rest);
      settle(undefined);
    };

    const startBackendTls = (tunnel: Socket) => {
      const tls = target.tls!;
      const secure = tlsConnect({
        ...tls,
        ...(options.alpn ? { ALPNProtocols: [...options.alpn] } : {}),
        // The name a certificate without SNI (an IP address) is checked against.
        host: target.host,
        socket: tunnel,
        session: options.session,
      });
      outermost = secure;
      // The tunnel's failure is the connection's.
      tunnel.on('error', (error) => secure.destroy(error));
      secure.once('close', () => tunnel.destroy());
      if (options.onSession) secure.on('session', options.onSession);
      const onHandshakeError = (error: Error) => settle(error);
      secure.once('error', onHandshakeError);
      secure.once('secureConnect', () => {
        const chosen = (secure as TLSSocket).alpnProtocol;
        if (chosen && options.speaks && !options.speaks.includes(chosen))
          return settle(
            Object.assign(new Error(`the backend chose ${chosen} by ALPN, which this connection does not speak`), {
              code: 'ERR_TLS_ALPN_NOT_SPOKEN',
            }),
          );
        secure.off('error', onHandshakeError);
        settle(undefined);
      });
    };
  });
}

function connectRequest(authority: string, headers: TunnelProxy['headers']): string {
  let head = `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n`;
  for (const [name, value] of headers) head += `${name}: ${value}\r\n`;
  return `${head}\r\n`;
}

/** The proxy's answer to CONNECT once its head is complete: the tunnel open, with the bytes after the head, or not. */
type ProxyAnswer = { error?: undefined; rest: Buffer } | { error: TunnelError };

/**
 * The proxy's answer head to CONNECT, taken read by read (at most MAX_PROXY_ANSWER_HEAD bytes):
 * what the tunnel's readers share, whichever way they read.
 */
class ProxyAnswerHead {
  readonly #proxy: TunnelProxy;
  readonly #authority: string;
  #received: Buffer = Buffer.alloc(0);

  constructor(proxy: TunnelProxy, authority: string) {
    this.#proxy = proxy;
    this.#authority = authority;
  }

  /**
   * Adds the bytes of a read; undefined while the head is incomplete. `transient`: `chunk` is
   * overwritten by the next read, so what is kept of it is copied.
   */
  add(chunk: Buffer, transient: boolean): ProxyAnswer | undefined {
    const before = this.#received;
    const received = before.length === 0 ? chunk : Buffer.concat([before, chunk]);
    // The blank line can straddle reads: look from just before the new bytes.
    const end = received.indexOf('\r\n\r\n', Math.max(0, before.length - 3));
    if (end === -1) {
      if (received.length > MAX_PROXY_ANSWER_HEAD) return { error: this.#tooLong() };
      this.#received = transient && received === chunk ? Buffer.from(chunk) : received;
      return undefined;
    }
    if (end > MAX_PROXY_ANSWER_HEAD) return { error: this.#tooLong() };
    const proxy = this.#proxy;
    const statusLine = received.toString('latin1', 0, received.indexOf('\r\n'));
    const match = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(statusLine);
    if (!match)
      return { error: new TunnelError(`the tunnel proxy ${proxy.name} did not answer CONNECT with HTTP/1.1`) };
    const status = Number(match[1]);
    // Any 2xx opens the tunnel (RFC 9110 section 9.3.6); its header fields mean nothing more.
    if (status >= 200 && status < 300) return { rest: received.subarray(end + 4) };
    return {
      error: new TunnelError(
        `the tunnel proxy ${proxy.name} refused CONNECT ${this.#authority} with ${status}${status === 407 ? ' (it wants credentials: the proxy GwBackend’s policies.auth)' : ''}`,
        { proxyStatus: status },
      ),
    };
  }

  /** The error for a proxy that closed the connection before its head was complete. */
  closed(): TunnelError {
    return new TunnelError(`the tunnel proxy ${this.#proxy.name} closed the connection before answering CONNECT`);
  }

  #tooLong(): TunnelError {
    return new TunnelError(
      `the tunnel proxy ${this.#proxy.name} answered CONNECT with a head over ${MAX_PROXY_ANSWER_HEAD} bytes`,
    );
  }
}
