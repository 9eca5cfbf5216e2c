// Servers the HTTP/1.1 upstream client tests talk to, all on 127.0.0.1 port 0 (or a Unix socket),
// each counting the connections it accepted and closed by the test that started it.
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer, type RequestListener } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TunnelProxy } from '../../../src/dataplane/upstream/connect-tunnel.ts';
import { Http1Pool, type Http1PoolOptions } from '../../../src/dataplane/upstream/http1/pool.ts';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/tls/${name}`, import.meta.url), 'utf8');
export const TEST_CA = fixture('ca.crt');
/** The fixture certificate of the HTTPS backend (backend.example.test, IP 127.0.0.1), signed by TEST_CA. */
export const BACKEND_CERT = { cert: fixture('backend.crt'), key: fixture('backend.key') };

/** A client gw opens from connection settings, by protocol and TLS. */
export interface ConnectionKind {
  name: string;
  tls: boolean;
  http2: boolean;
  /** gw's own HTTP/1.1 pool (UpstreamPools.client), or an undici pool (UpstreamPools.get). */
  client: 'gw' | 'undici';
}

/** Every client gw opens from connection settings. */
export const CONNECTION_KINDS: readonly ConnectionKind[] = [
  { name: "gw's HTTP/1.1 client, plain", tls: false, http2: false, client: 'gw' },
  { name: "gw's HTTP/1.1 client, TLS", tls: true, http2: false, client: 'gw' },
  { name: 'undici HTTP/1.1, plain', tls: false, http2: false, client: 'undici' },
  { name: 'undici HTTP/1.1, TLS', tls: true, http2: false, client: 'undici' },
  { name: 'undici HTTP/2, prior knowledge (h2c)', tls: false, http2: true, client: 'undici' },
  { name: 'undici HTTP/2, TLS (ALPN)', tls: true, http2: true, client: 'undici' },
  { name: 'an HTTP/2 provider (undici behind the provider client)', tls: true, http2: true, client: 'gw' },
];

export interface Listening<S> {
  server: S;
  port: number;
  /** Every connection accepted, in order. */
  sockets: Socket[];
  /** Connections accepted so far. */
  readonly accepted: number;
  /** Accepted connections that are closed now. */
  readonly closed: number;
}

/** Listens on 127.0.0.1:0 (or `path`), counts connections, and closes everything after the test. */
export async function listenServer<S extends NetServer>(
  t: TestContext,
  server: S,
  path?: string,
): Promise<Listening<S>> {
  const sockets: Socket[] = [];
  server.on('connection', (socket: Socket) => {
    sockets.push(socket);
    // A peer that goes away mid-write must not crash the test process.
    socket.on('error', () => undefined);
  });
  if (path === undefined) server.listen(0, '127.0.0.1');
  else server.listen(path);
  await once(server, 'listening');
  t.after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const address = server.address();
  return {
    server,
    port: typeof address === 'object' && address !== null ? (address as AddressInfo).port : 0,
    sockets,
    get accepted() {
      return sockets.length;
    },
    get closed() {
      return sockets.filter((socket) => socket.destroyed).length;
    },
  };
}

/** A node:http server (well-formed HTTP/1.1), on a Unix socket when `path` is given. */
export function httpServer(
  t: TestContext,
  handler: RequestListener,
  configure?: (server: HttpServer) => void,
  path?: string,
): Promise<Listening<HttpServer>> {
  const server = createHttpServer(handler);
  configure?.(server);
  return listenServer(t, server, path);
}

/** A node:https server with the fixture backend certificate. */
export function httpsServer(t: TestContext, handler: RequestListener): Promise<Listening<HttpServer>> {
  return listenServer(t, createHttpsServer(BACKEND_CERT, handler) as unknown as HttpServer);
}

/** A raw TCP server: `onSocket` writes whatever bytes the test needs (or nothing at all). */
export function rawServer(t: TestContext, onSocket: (socket: Socket) => void): Promise<Listening<NetServer>> {
  return listenServer(t, createNetServer(onSocket));
}

/** A raw server answering each request with `total` random bytes, as fast as its client takes them. */
export async function largeBodyServer(t: TestContext, total: number) {
  const block = 64 * 1024;
  let written = 0;
  let blockedWrites = 0;
  const sent = createHash('sha256');
  const server = await rawServer(t, (socket) =>
    onRequestHeads(socket, () => {
      socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${total}\r\n\r\n`);
      const pump = () => {
        while (written < total) {
          const bytes = randomBytes(block);
          sent.update(bytes);
          written += block;
          if (!socket.write(bytes)) {
            blockedWrites++;
            socket.once('drain', pump);
            return;
          }
        }
      };
      pump();
    }),
  );
  return {
    port: server.port,
    /** Body bytes written so far. */
    get written() {
      return written;
    },
    /** How often write() returned false (the client not taking more). */
    get blockedWrites() {
      return blockedWrites;
    },
    /** The SHA-256 of the body (once all of it is written). */
    digest: () => sent.digest('hex'),
  };
}

/** A peer that reads everything and never answers. */
export function silent(socket: Socket): void {
  socket.resume();
}

/** Calls `respond` with each complete request head (up to CRLF CRLF) the client sends on `socket`. */
export function onRequestHeads(socket: Socket, respond: (head: string, index: number) => void): void {
  let buffered = '';
  let index = 0;
  socket.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('latin1');
    for (let end = buffered.indexOf('\r\n\r\n'); end >= 0; end = buffered.indexOf('\r\n\r\n')) {
      const head = buffered.slice(0, end);
      buffered = buffered.slice(end + 4);
      respond(head, index++);
    }
  });
}

/** A pool to 127.0.0.1:`port`, destroyed after the test. */
export function poolFor(t: TestContext, port: number, options: Partial<Http1PoolOptions> = {}): Http1Pool {
  const pool = new Http1Pool({
    host: '127.0.0.1',
    port,
    hostHeader: `127.0.0.1:${port}`,
    connectTimeoutMs: 2000,
    keepAliveMs: 10_000,
    ...options,
  });
  t.after(() => pool.destroy());
  return pool;
}

/** A plain CONNECT proxy on 127.0.0.1:`port`, as a backend policy's tunnel compiles to. */
export function tunnelProxyAt(port: number, more: Partial<TunnelProxy> = {}): TunnelProxy {
  return {
    name: `http://127.0.0.1:${port}`,
    host: '127.0.0.1',
    port,
    socketPath: undefined,
    tls: undefined,
    connectTimeoutMs: undefined,
    keepalive: undefined,
    headers: [],
    key: String(port),
    ...more,
  };
}

/** Polls `condition` until it holds; fails after `timeoutMs`. */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 2000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** The error a promise rejects with (fails if it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected a rejection, the promise resolved');
}
