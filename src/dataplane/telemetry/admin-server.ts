// The admin port: Prometheus scrapes /metrics, orchestrators probe /healthz/ready (200 once the
// first configuration is serving, 503 before and while draining) and /healthz/live (200 while the
// process answers). Loopback by default; small bounds on connections, headers and time, since
// nothing legitimate sends more than a GET. Every scrape ends with this process's own metrics
// (process-metrics.ts: CPU, memory, file descriptors, event-loop delay). The web UI plugs in as
// more routes (AdminRoutes; src/admin/ui/ui-server.ts), asked first.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { METRICS_CONTENT_TYPE } from './metrics.ts';
import { ProcessMetrics } from './process-metrics.ts';

export interface MetricsSource {
  /** The Prometheus text exposition (a promise when it is gathered from worker processes). */
  render(): string | Promise<string>;
}

/** More paths on the admin port (the web UI): answers the ones it has, reading their bodies itself. */
export interface AdminRoutes {
  /** Whether the request was this one's to answer (it answers it, now or later). */
  handle(request: IncomingMessage, response: ServerResponse, path: string): boolean;
}

export interface AdminServerOptions {
  /** 0 picks a free port (see AdminServer.port). */
  port: number;
  host?: string;
  /** Whether the data plane is ready to serve traffic. */
  ready: () => boolean;
  metrics: MetricsSource;
  /** Routes asked before the admin endpoints (the web UI). */
  routes?: AdminRoutes;
}

export interface AdminServer {
  readonly host: string;
  readonly port: number;
  close(): Promise<void>;
}

const MAX_CONNECTIONS = 64;
const MAX_HEADER_BYTES = 8 * 1024;
const REQUEST_TIMEOUT_MS = 10_000;
const TEXT = 'text/plain; charset=utf-8';

/** The options and what the server keeps for its life. */
interface AdminState extends AdminServerOptions {
  readonly process: ProcessMetrics;
}

export async function startAdminServer(options: AdminServerOptions): Promise<AdminServer> {
  const host = options.host ?? '127.0.0.1';
  const state: AdminState = { ...options, process: new ProcessMetrics() };
  const server = createServer(
    { maxHeaderSize: MAX_HEADER_BYTES, requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: REQUEST_TIMEOUT_MS },
    (request, response) => handle(state, request, response),
  );
  server.maxConnections = MAX_CONNECTIONS;
  server.keepAliveTimeout = 5_000;
  server.on('clientError', (_error, socket) => {
    if (socket.writable && !socket.writableEnded) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    state.process.close();
    throw error;
  }
  const port = (server.address() as AddressInfo).port;
  return {
    host,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        state.process.close();
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

function handle(options: AdminState, request: IncomingMessage, response: ServerResponse): void {
  const url = request.url ?? '/';
  const query = url.indexOf('?');
  const path = query < 0 ? url : url.slice(0, query);
  try {
    if (options.routes?.handle(request, response, path)) return;
  } catch (error) {
    request.resume();
    send(response, request, 500, TEXT, `${(error as Error).message}\n`);
    return;
  }
  // Nothing here reads a body: discard whatever is sent so the connection stays usable.
  request.resume();
  const handler = ROUTES.get(path);
  if (!handler) {
    send(response, request, 404, TEXT, 'not found\n');
    return;
  }
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.setHeader('allow', 'GET, HEAD');
    send(response, request, 405, TEXT, 'method not allowed\n');
    return;
  }
  let answer: Answer | Promise<Answer>;
  try {
    answer = handler(options);
  } catch (error) {
    answer = [500, TEXT, `${(error as Error).message}\n`];
  }
  if (Array.isArray(answer)) {
    send(response, request, ...answer);
    return;
  }
  answer.then(
    (settled) => send(response, request, ...settled),
    (error: Error) => send(response, request, 500, TEXT, `${error.message}\n`),
  );
}

type Answer = [status: number, contentType: string, body: string];
type Handler = (options: AdminState) => Answer | Promise<Answer>;

const ROUTES = new Map<string, Handler>([
  [
    '/metrics',
    (options) => {
      const text = options.metrics.render();
      return typeof text === 'string'
        ? [200, METRICS_CONTENT_TYPE, text + options.process.render()]
        : text.then((body): Answer => [200, METRICS_CONTENT_TYPE, body + options.process.render()]);
    },
  ],
  ['/healthz/ready', (options) => (isReady(options) ? [200, TEXT, 'ready\n'] : [503, TEXT, 'not ready\n'])],
  ['/healthz/live', () => [200, TEXT, 'live\n']],
]);

function isReady(options: AdminServerOptions): boolean {
  try {
    return options.ready() === true;
  } catch {
    return false;
  }
}

function send(
  response: ServerResponse,
  request: IncomingMessage,
  status: number,
  contentType: string,
  body: string,
): void {
  response.statusCode = status;
  response.setHeader('content-type', contentType);
  response.setHeader('content-length', Buffer.byteLength(body));
  response.setHeader('cache-control', 'no-store');
  response.end(request.method === 'HEAD' ? undefined : body);
}
