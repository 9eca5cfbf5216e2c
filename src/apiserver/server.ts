// The HTTPS server of the embedded API: authentication, then the route — discovery, /version,
// OpenAPI, health, or a resource verb (rest-handler.ts). Every error is a meta/v1 Status.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { ApiStore } from './api-store.ts';
import { bearerTokenMatches } from './authentication.ts';
import {
  AGGREGATED_DISCOVERY,
  aggregatedDiscovery,
  apiGroup,
  coreVersions,
  groupList,
  resourceList,
  versionInfo,
} from './discovery.ts';
import { ApiError, internalError, methodNotAllowed, pathNotFound, unauthorized } from './errors.ts';
import { negotiate } from './media-types.ts';
import { openApiDocuments, openApiRoot } from './openapi.ts';
import { type Route, routeOf } from './request-info.ts';
import { RestHandler, type RestSettings, sendError, sendJson } from './rest-handler.ts';

export interface ApiServerOptions {
  store: ApiStore;
  /** Address to bind (default 127.0.0.1). */
  address?: string;
  /** Port to bind; 0 picks a free one. */
  port: number;
  tls: { cert: string; key: string };
  /** The bearer token every request but health checks must carry. */
  token: string;
  /** gw's version, reported in /version. */
  gwVersion?: string;
  settings?: Partial<RestSettings>;
  log?: (line: string) => void;
}

const DEFAULT_SETTINGS: RestSettings = {
  maxBodyBytes: 3 * 1024 * 1024,
  watch: { bufferBytes: 8 * 1024 * 1024, bookmarkIntervalMs: 60_000 },
  defaultWatchTimeoutMs: 30 * 60_000,
};

export class ApiServer {
  private readonly options: ApiServerOptions;
  private readonly server: Server;
  private readonly rest: RestHandler;
  private bound: AddressInfo | undefined;
  /** Every open TCP connection, also those still in the TLS handshake (the HTTP layer does not know those yet). */
  private readonly sockets = new Set<Socket>();

  constructor(options: ApiServerOptions) {
    this.options = options;
    const settings = { ...DEFAULT_SETTINGS, ...options.settings };
    this.rest = new RestHandler(options.store, settings);
    this.server = createServer({ cert: options.tls.cert, key: options.tls.key }, (request, response) => {
      this.handle(request, response).catch((error: Error) => this.fail(response, error));
    });
    // A watch stays open for its timeout; node's default request timeout would cut it.
    this.server.requestTimeout = 0;
    this.server.headersTimeout = 60_000;
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /** Binds the port; resolves with the address bound. */
  listen(): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port, this.options.address ?? '127.0.0.1', () => {
        this.server.off('error', reject);
        this.bound = this.server.address() as AddressInfo;
        resolve(this.bound);
      });
    });
  }

  get address(): AddressInfo {
    if (!this.bound) throw new Error('the API server is not listening');
    return this.bound;
  }

  /** Stops accepting requests and ends open ones (watches included). */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      // closeAllConnections() would miss a connection still in its TLS handshake, whose request
      // (a watch) would then keep the server open.
      for (const socket of this.sockets) socket.destroy();
    });
  }

  private fail(response: ServerResponse, error: Error): void {
    if (response.headersSent) {
      response.destroy();
      return;
    }
    if (error instanceof ApiError) {
      sendError(response, error);
      return;
    }
    this.options.log?.(`API server: ${error.stack ?? error.message}`);
    sendError(response, internalError(error));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'https://localhost');
    const route = routeOf(url.pathname);
    if (route.type === 'health') {
      response.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      response.end('ok');
      return;
    }
    if (!bearerTokenMatches(request.headers.authorization, this.options.token)) throw unauthorized();
    if (route.type === 'resource') return this.rest.handle(request, response, route, url.searchParams);
    if (request.method !== 'GET' && request.method !== 'HEAD') throw methodNotAllowed();
    this.serveDocument(request, response, route, url.searchParams);
  }

  private serveDocument(
    request: IncomingMessage,
    response: ServerResponse,
    route: Route,
    query: URLSearchParams,
  ): void {
    switch (route.type) {
      case 'core-versions':
      case 'group-list': {
        const chosen = negotiate(request.headers.accept, [AGGREGATED_DISCOVERY]);
        if (chosen !== undefined && chosen !== 'plain') {
          const body = JSON.stringify(
            aggregatedDiscovery(route.type === 'core-versions' ? 'core' : 'groups', chosen.version),
          );
          response.writeHead(200, {
            'Content-Type': `application/json;g=apidiscovery.k8s.io;v=${chosen.version};as=APIGroupDiscoveryList`,
            'Content-Length': String(Buffer.byteLength(body)),
          });
          response.end(body);
          return;
        }
        const { address, port } = this.address;
        const serverAddress = `${address.includes(':') ? `[${address}]` : address}:${port}`;
        sendJson(response, 200, route.type === 'core-versions' ? coreVersions(serverAddress) : groupList());
        return;
      }
      case 'group': {
        const body = apiGroup(route.group);
        if (!body) throw pathNotFound();
        sendJson(response, 200, body);
        return;
      }
      case 'resource-list': {
        const body = resourceList(route.group, route.version);
        if (!body) throw pathNotFound();
        sendJson(response, 200, body);
        return;
      }
      case 'version':
        sendJson(response, 200, versionInfo(this.options.gwVersion ?? '0.0.0'));
        return;
      case 'openapi-root':
        sendJson(response, 200, openApiRoot());
        return;
      case 'openapi-document': {
        const document = openApiDocuments().get(route.path);
        if (!document) throw pathNotFound();
        const pinned = query.get('hash') === document.hash;
        response.writeHead(200, {
          'Content-Type': 'application/json',
          'Content-Length': String(Buffer.byteLength(document.text)),
          ETag: `"${document.hash}"`,
          'Cache-Control': pinned ? 'public, immutable' : 'no-cache, private',
        });
        response.end(document.text);
        return;
      }
      default:
        throw pathNotFound();
    }
  }
}
