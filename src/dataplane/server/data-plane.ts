// The data plane of one process: the compiled configuration of each Gateway it serves and one
// server per listener port. A new configuration is compiled first and then swapped in with one
// assignment per port; a request keeps the compiled port it arrived on, so requests in flight
// finish on the configuration they started with and none fails because of a reload.
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createSecureContext, type SecureContext } from 'node:tls';
import type { BackendAuth } from '../../api/types/backend-auth.ts';
import type { DataPlaneConfig } from '../../controller/dataplane-config.ts';
import { type AiBackend, compileAiBackend, serveAi } from '../ai/ai-backend.ts';
import { serveModels } from '../ai/models.ts';
import { AuthConfigError, compileBackendAuth } from '../auth/backend/index.ts';
import { type CompileContext, type CompiledGateway, type CompiledPort, compileGateway } from '../config/compile.ts';
import { PolicyRuntime } from '../policies/runtime.ts';
import { sendText } from '../proxy/direct-response.ts';
import { handleRequest, type RequestHandlerHooks, type RequestScope } from '../proxy/request-handler.ts';
import { RequestRecord } from '../telemetry/request-record.ts';
import { type FrontendTelemetry, Telemetry } from '../telemetry/request-telemetry.ts';
import { UpstreamPools } from '../upstream/pools.ts';

export interface DataPlaneOptions {
  /** The address listeners bind (default 127.0.0.1: exposing a gateway is a deliberate choice). */
  address?: string;
  /**
   * Bind listener ports with SO_REUSEPORT, each process its own socket (also in a node:cluster
   * worker), so that several worker processes serve one port and the kernel spreads connections.
   */
  reusePort?: boolean;
  /** Told about anything that cannot be served, one line each. */
  log?: (line: string) => void;
  /** Told when a request is finished (after its access log line and metrics). */
  onRequestDone?: (record: RequestRecord) => void;
  /** Access logs and metrics (default: access log to standard output, metrics in memory). */
  telemetry?: Telemetry;
  hooks?: RequestHandlerHooks;
  /** Extends the compile context (AI backends, backend auth). */
  compile?: Omit<CompileContext, 'pools' | 'policyRuntime'>;
}

interface PortServer {
  server: Server;
  protocol: 'HTTP' | 'HTTPS';
  current: CompiledPort;
  gateway: string;
  contexts: Map<string, SecureContext>;
  listening: Promise<void>;
}

/** Default keep-alive idle time of client connections (spec: http1IdleTimeout default 10 minutes). */
const DEFAULT_IDLE_TIMEOUT_MS = 600_000;
/** Default number of request headers (spec: http1MaxHeaders default 100). */
const DEFAULT_MAX_HEADERS = 100;

export class DataPlane {
  private readonly options: DataPlaneOptions;
  readonly pools = new UpstreamPools();
  readonly policyRuntime = new PolicyRuntime();
  private readonly gateways = new Map<string, CompiledGateway>();
  private readonly servers = new Map<number, PortServer>();
  private readonly context: CompileContext;
  private readonly hooks: RequestHandlerHooks;
  readonly telemetry: Telemetry;
  /** For requests that never reach a listener (no listener for the host). */
  private readonly portTelemetry: FrontendTelemetry;

  constructor(options: DataPlaneOptions = {}) {
    this.options = options;
    this.telemetry = options.telemetry ?? new Telemetry();
    this.portTelemetry = this.telemetry.forFrontend(undefined);
    this.context = {
      compileAiBackend,
      compileBackendAuth: backendAuthApplier,
      ...options.compile,
      pools: this.pools,
      policyRuntime: this.policyRuntime,
      telemetry: this.telemetry,
    };
    this.hooks = {
      ai: (routed) => serveAi(routed, (routed.backend!.handler as { backend: AiBackend }).backend),
      models: (routed) => serveModels(routed, routed.listener.models, routed.rule.models ?? []),
      ...options.hooks,
    };
  }

  /** Applies changed and removed Gateway configurations; resolves when every port is listening. */
  async apply(changed: ReadonlyMap<string, DataPlaneConfig>, removed: Iterable<string> = []): Promise<void> {
    for (const key of removed) this.gateways.delete(key);
    for (const [key, config] of changed) {
      const compiled = compileGateway(key, config, this.context);
      for (const problem of compiled.problems) this.options.log?.(`Gateway ${key}: ${problem}`);
      this.gateways.set(key, compiled);
    }
    // Ports: the first Gateway (by key) that asks for a port gets it.
    const wanted = new Map<number, { gateway: string; port: CompiledPort }>();
    for (const key of [...this.gateways.keys()].sort()) {
      for (const [number, port] of this.gateways.get(key)!.ports) {
        const owner = wanted.get(number);
        if (owner) {
          if (owner.gateway !== key)
            this.options.log?.(
              `Gateway ${key}: port ${number} is already served for Gateway ${owner.gateway}; its listeners there are not served`,
            );
          continue;
        }
        wanted.set(number, { gateway: key, port });
      }
    }
    const waits: Promise<void>[] = [];
    for (const [number, { gateway, port }] of wanted) {
      const existing = this.servers.get(number);
      if (existing && existing.protocol === port.protocol) {
        existing.gateway = gateway;
        if (port.protocol === 'HTTPS') {
          existing.contexts = secureContexts(port);
          const fallback = defaultCertificate(port);
          if (fallback) (existing.server as HttpsServer).setSecureContext(fallback);
        }
        applyConnectionSettings(existing.server, port);
        existing.current = port; // the swap
        continue;
      }
      if (existing) this.closeServer(number, existing);
      const server = this.openServer(number, gateway, port);
      waits.push(server.listening);
    }
    for (const [number, server] of this.servers) if (!wanted.has(number)) this.closeServer(number, server);
    const keep = new Set<string>();
    for (const gateway of this.gateways.values()) for (const key of gateway.poolKeys) keep.add(key);
    this.pools.retainOnly(keep);
    const keepState = new Set<string>();
    for (const gateway of this.gateways.values()) for (const key of gateway.runtimeKeys) keepState.add(key);
    this.policyRuntime.retainOnly(keepState);
    const keepExporters = new Set<string>();
    for (const gateway of this.gateways.values())
      for (const port of gateway.ports.values())
        for (const listener of port.listeners)
          for (const key of listener.telemetry?.exporterKeys ?? []) keepExporters.add(key);
    this.telemetry.retainExporters(keepExporters);
    await Promise.all(waits);
  }

  private openServer(number: number, gateway: string, port: CompiledPort): PortServer {
    const handler = (req: IncomingMessage, res: ServerResponse) => this.serve(state, req, res);
    const server =
      port.protocol === 'HTTPS'
        ? createHttpsServer(
            {
              // Clients without SNI get the listener without a hostname (or the first one).
              ...defaultCertificate(port),
              SNICallback: (servername, callback) => callback(null, contextFor(state, servername)),
            },
            handler,
          )
        : createHttpServer(handler);
    applyConnectionSettings(server, port);
    server.headersTimeout = 60_000;
    server.requestTimeout = 0; // streams may run long; deadlines are per route
    const state: PortServer = {
      server,
      protocol: port.protocol,
      current: port,
      gateway,
      contexts: port.protocol === 'HTTPS' ? secureContexts(port) : new Map(),
      listening: new Promise((resolve, reject) => {
        server.once('error', (error) => {
          this.options.log?.(`Gateway ${gateway}: cannot listen on port ${number}: ${error.message}`);
          this.servers.delete(number);
          reject(error);
        });
        const host = this.options.address ?? '127.0.0.1';
        const reuse = this.options.reusePort ? { reusePort: true, exclusive: true } : {};
        server.listen({ port: number, host, ...reuse }, () => resolve());
      }),
    };
    // Spec: with Frontend.connect unset, a downstream CONNECT is rejected with 405.
    server.on('connect', (_req, socket) => {
      socket.end(
        'HTTP/1.1 405 Method Not Allowed\r\nallow: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS\r\ncontent-length: 0\r\nconnection: close\r\n\r\n',
      );
    });
    server.on('clientError', (error, socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
      else socket.destroy(error);
    });
    this.servers.set(number, state);
    return state;
  }

  private closeServer(number: number, state: PortServer): void {
    this.servers.delete(number);
    state.server.close();
    state.server.closeIdleConnections();
  }

  private serve(state: PortServer, req: IncomingMessage, res: ServerResponse): void {
    const port = state.current;
    const scheme = state.protocol === 'HTTPS' ? 'https' : 'http';
    const record = new RequestRecord();
    record.gateway = state.gateway;
    record.method = req.method ?? '';
    record.scheme = scheme;
    record.host = req.headers.host ?? '';
    const url = req.url ?? '/';
    const queryStart = url.indexOf('?');
    record.path = queryStart === -1 ? url : url.slice(0, queryStart);
    record.query = queryStart === -1 ? '' : url.slice(queryStart + 1);
    record.httpVersion = req.httpVersion;
    record.requestHeaders = req.headers;
    record.clientAddress = req.socket.remoteAddress ?? '';
    record.clientPort = req.socket.remotePort ?? 0;
    const scope: RequestScope = { telemetry: undefined, exchange: undefined };
    res.once('finish', () => this.finish(record, res, scope));
    res.once('close', () => {
      if (!res.writableFinished) this.finish(record, res, scope);
    });
    handleRequest(req, res, port, scheme, record, this.hooks, scope).catch((error: unknown) => {
      record.error = (error as Error).message;
      this.options.log?.(`Gateway ${state.gateway}: request failed: ${(error as Error).message}`);
      sendText(res, 500, 'internal error');
    });
  }

  private finish(record: RequestRecord, res: ServerResponse, scope: RequestScope): void {
    if (record.endTime !== 0n) return;
    record.status = res.statusCode;
    record.responseHeaders = res.getHeaders();
    if (!res.writableFinished && !record.error) record.error = 'client closed the connection';
    (scope.telemetry ?? this.portTelemetry).finish(record);
    scope.exchange?.finish();
    this.options.onRequestDone?.(record);
  }

  async close(): Promise<void> {
    const closing = [...this.servers.values()].map(
      (state) =>
        new Promise<void>((resolve) => {
          state.server.close(() => resolve());
          state.server.closeAllConnections();
        }),
    );
    this.servers.clear();
    await Promise.all(closing);
    this.policyRuntime.close();
    await Promise.all([this.pools.close(), this.telemetry.close()]);
  }
}

/** The backend auth of src/dataplane/auth/backend as the compiler's applier. */
const backendAuthApplier: NonNullable<CompileContext['compileBackendAuth']> = (auth, data, namespace, keyStyle) => {
  const compiled = compileBackendAuth(auth as BackendAuth | undefined, data, namespace, { keyStyle });
  if (compiled instanceof AuthConfigError) return { field: compiled.field, message: compiled.message };
  return compiled;
};

/** Frontend.http connection settings of a port (new connections pick them up). */
function applyConnectionSettings(server: Server, port: CompiledPort): void {
  server.keepAliveTimeout = port.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  server.maxHeadersCount = port.http1MaxHeaders ?? DEFAULT_MAX_HEADERS;
}

function defaultCertificate(port: CompiledPort): { key: string; cert: string } | undefined {
  return port.certificates.get('') ?? port.certificates.values().next().value;
}

function secureContexts(port: CompiledPort): Map<string, SecureContext> {
  const contexts = new Map<string, SecureContext>();
  for (const [hostname, certificate] of port.certificates) contexts.set(hostname, createSecureContext(certificate));
  return contexts;
}

/** The certificate for an SNI name: exact hostname, then the longest wildcard, then the listener without one. */
function contextFor(state: PortServer, servername: string): SecureContext | undefined {
  const name = servername.toLowerCase();
  const contexts = state.contexts;
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
