// An HTTP CONNECT proxy for tests, on node's http server ('connect' event): for each CONNECT it
// opens a TCP connection to the authority named and relays bytes both ways, recording the
// CONNECT (authority, Host, headers). It can also require a Proxy-Authorization value (407
// otherwise), refuse every CONNECT with a status, never answer, answer with an oversized head,
// and listen over TLS (the fixture certificate for 127.0.0.1).
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';

export interface SeenConnect {
  /** The request target: host:port. */
  authority: string;
  host: string | undefined;
  headers: IncomingMessage['headers'];
  /** Whether the proxy opened the tunnel. */
  served: boolean;
}

export interface ConnectProxyOptions {
  /** Listen over TLS with this key and certificate. */
  tls?: { key: string; cert: string };
  /** The Proxy-Authorization value a CONNECT must carry; 407 otherwise. */
  requireAuthorization?: string;
  /** Answer every CONNECT with this status instead of opening a tunnel. */
  refuseWith?: number;
  /** Take CONNECTs and never answer them. */
  silent?: boolean;
  /** Answer 200 with a header block of this many bytes. */
  headBytes?: number;
}

export interface ConnectProxy {
  readonly port: number;
  /** http://127.0.0.1:<port>, or https:// over TLS */
  readonly url: string;
  readonly connects: SeenConnect[];
  /** The CONNECTs the proxy served (tunnels opened) to `authority`. */
  servedTo(authority: string): number;
  close(): Promise<void>;
}

export async function startConnectProxy(options: ConnectProxyOptions = {}): Promise<ConnectProxy> {
  const connects: SeenConnect[] = [];
  const open = new Set<Duplex>();
  const server: Server = options.tls ? createHttpsServer(options.tls) : createHttpServer();
  server.on('request', (_req, res) => res.writeHead(405).end('CONNECT only'));
  server.on('connect', (req: IncomingMessage, client: Duplex, head: Buffer) => {
    const seen: SeenConnect = { authority: req.url ?? '', host: req.headers.host, headers: req.headers, served: false };
    connects.push(seen);
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    if (options.silent) return;
    if (options.refuseWith !== undefined)
      return void client.end(`HTTP/1.1 ${options.refuseWith} Refused\r\ncontent-length: 0\r\n\r\n`);
    if (
      options.requireAuthorization !== undefined &&
      req.headers['proxy-authorization'] !== options.requireAuthorization
    )
      return void client.end(
        'HTTP/1.1 407 Proxy Authentication Required\r\nproxy-authenticate: Basic realm="test"\r\ncontent-length: 0\r\n\r\n',
      );
    if (options.headBytes !== undefined)
      return void client.write(`HTTP/1.1 200 OK\r\nx-filler: ${'x'.repeat(options.headBytes)}\r\n\r\n`);
    const { hostname, port } = new URL(`http://${req.url}`);
    const upstream: Socket = connect(Number(port), hostname.replace(/^\[|\]$/g, ''), () => {
      seen.served = true;
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    open.add(upstream);
    upstream.on('close', () => {
      open.delete(upstream);
      client.destroy();
    });
    upstream.on('error', () => client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n'));
    client.on('close', () => upstream.destroy());
  });
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `${options.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    connects,
    servedTo: (authority) => connects.filter((seen) => seen.served && seen.authority === authority).length,
    close: async () => {
      for (const stream of open) stream.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
