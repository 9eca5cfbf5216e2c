// The data plane of one process: the compiled configuration of each Gateway it serves and one
// server per listener port. A new configuration is compiled first and then swapped in with one
// assignment per port; a request keeps the compiled port it arrived on, so requests in flight
// finish on the configuration they started with and none fails because of a reload.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DataPlaneConfig } from '../../contract/dataplane-config.ts';
import { type LogFunction, moduleLog } from '../../util/log-line.ts';
import { credentialLog } from '../auth/backend/credential-metrics.ts';
import type { PlacedHealthReport } from '../balancing/health-report.ts';
import { type CompileContext, type CompiledGateway, type CompiledPort, compileGateway } from '../config/compile.ts';
import type { MeshTransport } from '../mesh/transport.ts';
import { PolicyRuntime } from '../policies/runtime.ts';
import { PLAIN_ANSWERS } from '../proxy/answers.ts';
import { responseCompleted } from '../proxy/client-response.ts';
import { sendText } from '../proxy/direct-response.ts';
import { sendOwnFailure } from '../proxy/own-failure.ts';
import { handleRequest, type RequestScope } from '../proxy/request-handler.ts';
import { webSocketUpgradeOf } from '../proxy/websocket-upgrade.ts';
import { RequestRecord } from '../telemetry/request-record.ts';
import { type FrontendTelemetry, Telemetry } from '../telemetry/request-telemetry.ts';
import { type AddressLookup, systemLookup } from '../upstream/address-lookup.ts';
import { UpstreamPools } from '../upstream/pools.ts';
import { BufferBudget } from './buffer-budget.ts';
import { type ConnectDownstream, serveConnect } from './connect.ts';
import { DEFAULT_DOWNSTREAM_LIMITS, type DownstreamLimits } from './downstream-limits.ts';
import { FailureLog } from './failure-log.ts';
import { PortListener } from './port-listener.ts';

export interface DataPlaneOptions {
  /** The address listeners bind (default 127.0.0.1: exposing a gateway is a deliberate choice). */
  address?: string;
  /**
   * Bind listener ports with SO_REUSEPORT, each process its own socket (also in a node:cluster
   * worker), so that several worker processes serve one port and the kernel spreads connections.
   */
  reusePort?: boolean;
  /** Told about anything that cannot be served, one message each. */
  log?: LogFunction;
  /** The clock of the failure log's window (tests). */
  now?: () => number;
  /** Told when a request is finished (after its access log line and metrics). */
  onRequestDone?: (record: RequestRecord) => void;
  /** Access logs and metrics (default: access log to standard output, metrics in memory). */
  telemetry?: Telemetry;
  /** Deadlines and the buffer budget for what clients send (default: DEFAULT_DOWNSTREAM_LIMITS; `gw run` options). */
  limits?: DownstreamLimits;
  /** How often a listener port that could not be bound is tried again (default 5 s). */
  bindRetryMs?: number;
  /** Told when the set of unbound ports changes other than by apply (a port bound on a later try). */
  onUnboundChange?: () => void;
  /** How names learnt per request (a dynamic forward proxy's destinations) resolve (default: the system resolver; tests). */
  resolveHost?: AddressLookup;
  /**
   * The way into Istio's ambient mesh (the mesh environment of a provisioned pod): Services in the
   * mesh are reached over HBONE with its workload certificate. Its owner starts and stops it.
   */
  mesh?: MeshTransport;
}

/** How often a port that could not be bound is tried again, by default. */
const BIND_RETRY_MS = 5000;

/** A listener port the data plane could not bind, and why (for the log and the Gateway's status). */
export interface UnboundPort {
  gateway: string;
  /** Why, naming the port and address: "port 8082 on 127.0.0.1 is in use by another process (EADDRINUSE)". */
  reason: string;
}

interface PortServer {
  listener: PortListener;
  protocol: 'HTTP' | 'HTTPS';
  current: CompiledPort;
  gateway: string;
  listening: Promise<void>;
}

export class DataPlane {
  private readonly options: DataPlaneOptions;
  readonly pools = new UpstreamPools();
  readonly policyRuntime = new PolicyRuntime();
  private readonly gateways = new Map<string, CompiledGateway>();
  private readonly servers = new Map<number, PortServer>();
  /** Ports wanted by the current configurations that could not be bound (tried again at each apply and every bindRetryMs). */
  private readonly unbound = new Map<number, UnboundPort>();
  /** Each port the current configurations serve, and the Gateway that has it. */
  private wanted = new Map<number, { gateway: string; port: CompiledPort }>();
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly context: CompileContext;
  /** State kept for the life of this data plane (CompileContext.lifetime). */
  private readonly lifetimeState = new Map<string, unknown>();
  readonly telemetry: Telemetry;
  /** For requests that never reach a listener (no listener for the host). */
  private readonly portTelemetry: FrontendTelemetry;
  /** gw's own 5xx answers, for the log. */
  private readonly failures: FailureLog | undefined;
  private readonly limits: DownstreamLimits;
  /** Request-body bytes being received, across every port (each port has its share within it). */
  readonly bufferBudget: BufferBudget;

  constructor(options: DataPlaneOptions = {}) {
    this.options = options;
    this.telemetry = options.telemetry ?? new Telemetry();
    this.portTelemetry = this.telemetry.forFrontend(undefined);
    this.failures = options.log && new FailureLog(moduleLog(options.log, 'dataplane::failures'), options.now);
    const log = moduleLog(options.log, 'dataplane::credentials');
    if (log) credentialLog.warn = (message) => log(message, 'warn');
    this.limits = options.limits ?? DEFAULT_DOWNSTREAM_LIMITS;
    this.bufferBudget = new BufferBudget(this.limits.maxBufferedBytes);
    this.context = {
      pools: this.pools,
      policyRuntime: this.policyRuntime,
      telemetry: this.telemetry,
      mesh: options.mesh,
      lifetime: <T>(key: string, create: () => T): T => {
        if (!this.lifetimeState.has(key)) this.lifetimeState.set(key, create());
        return this.lifetimeState.get(key) as T;
      },
      servesPort: (port) => this.servers.has(port),
      resolveHost: options.resolveHost ?? systemLookup,
    };
  }

  /** Listener ports of the current configurations that could not be bound, with why. */
  get unboundPorts(): ReadonlyMap<number, UnboundPort> {
    return this.unbound;
  }

  /**
   * The live state the backends of every Gateway served here keep (model health, evictions,
   * priority groups), where each is used; the first use of a backend object per listener.
   */
  healthReports(): PlacedHealthReport[] {
    const reports: PlacedHealthReport[] = [];
    for (const [gateway, compiled] of this.gateways) {
      for (const port of compiled.ports.values()) {
        for (const listener of port.listeners) {
          const rules = [...listener.rules.values(), ...(listener.modelRule ? [listener.modelRule] : [])];
          for (const rule of rules) {
            rule.backends.items.forEach((ref) => {
              const report = ref.backend.health?.();
              if (!report) return;
              const route = listener.config.routes.find((r) => r.route === rule.route);
              const index = route ? String(route.rules.indexOf(rule.config)) : '';
              reports.push({
                gateway,
                listener: listener.config.name,
                port: port.port,
                route: rule.route,
                rule: rule.config.name ?? index,
                backend: ref.name,
                ...report,
              });
            });
          }
        }
      }
    }
    return reports;
  }

  /** Whether any listener port is bound (or being bound: once apply resolves, only bound ones are left). */
  get serving(): boolean {
    return this.servers.size > 0;
  }

  /**
   * Applies changed and removed Gateway configurations; resolves when every port is listening or
   * has failed to bind (a port that cannot be bound is in `unboundPorts` and logged; each apply
   * tries it again, and so does a timer meanwhile).
   */
  async apply(changed: ReadonlyMap<string, DataPlaneConfig>, removed: Iterable<string> = []): Promise<void> {
    for (const key of removed) this.gateways.delete(key);
    for (const [key, config] of changed) {
      const compiled = compileGateway(key, config, this.context);
      for (const problem of compiled.problems) this.options.log?.(`Gateway ${key}: ${problem}`, 'warn');
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
              'warn',
            );
          continue;
        }
        wanted.set(number, { gateway: key, port });
      }
    }
    this.wanted = wanted;
    const waits: Promise<void>[] = [];
    for (const [number, { gateway, port }] of wanted) {
      const existing = this.servers.get(number);
      if (existing && existing.protocol === port.protocol) {
        existing.gateway = gateway;
        existing.listener.configure(port.connection, port.certificates);
        existing.current = port; // the swap
        continue;
      }
      if (existing) this.closeServer(number, existing);
      const server = this.openServer(number, gateway, port);
      waits.push(server.listening);
    }
    for (const [number, server] of this.servers) if (!wanted.has(number)) this.closeServer(number, server);
    for (const number of this.unbound.keys()) if (!wanted.has(number)) this.unbound.delete(number);
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
    const handlers = {
      request: (req: IncomingMessage, res: ServerResponse) => this.serve(state, req, res),
      connect: (downstream: ConnectDownstream) => this.serveConnect(state, downstream),
      error: (error: Error) =>
        this.options.log?.(`Gateway ${state.gateway}: port ${number}: ${error.message}`, 'error'),
    };
    const listener = new PortListener(
      port.protocol,
      port.connection,
      port.certificates,
      handlers,
      this.limits,
      this.bufferBudget,
    );
    const host = this.options.address ?? '127.0.0.1';
    const state: PortServer = {
      listener,
      protocol: port.protocol,
      current: port,
      gateway,
      listening: listener.listen(number, host, this.options.reusePort === true).then(
        () => {
          this.unbound.delete(number);
        },
        (error: NodeJS.ErrnoException) => {
          const reason = bindFailureText(error, number, host);
          // Said once per port and reason, not at every try.
          if (this.unbound.get(number)?.reason !== reason)
            this.options.log?.(`Gateway ${state.gateway}: cannot listen: ${reason}`, 'error');
          if (this.servers.get(number) === state) this.servers.delete(number);
          this.unbound.set(number, { gateway: state.gateway, reason });
          void listener.close();
          this.scheduleBindRetry();
        },
      ),
    };
    this.servers.set(number, state);
    return state;
  }

  private scheduleBindRetry(): void {
    if (this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.retryUnbound();
    }, this.options.bindRetryMs ?? BIND_RETRY_MS);
    this.retryTimer.unref();
  }

  /** Tries the unbound ports again; a port that binds now is served (and said so). */
  private async retryUnbound(): Promise<void> {
    const tries: Promise<void>[] = [];
    const retried: number[] = [];
    for (const number of this.unbound.keys()) {
      const wanted = this.wanted.get(number);
      if (!wanted || this.servers.has(number)) continue;
      retried.push(number);
      tries.push(this.openServer(number, wanted.gateway, wanted.port).listening);
    }
    await Promise.all(tries);
    const bound = retried.filter((number) => !this.unbound.has(number));
    for (const number of bound)
      this.options.log?.(
        `Gateway ${this.wanted.get(number)?.gateway}: port ${number} is bound now; its listeners are served`,
      );
    if (bound.length > 0) this.options.onUnboundChange?.();
  }

  private closeServer(number: number, state: PortServer): void {
    this.servers.delete(number);
    state.listener.closeGracefully();
  }

  private serve(state: PortServer, req: IncomingMessage, res: ServerResponse): void {
    const port = state.current;
    const scheme = state.protocol === 'HTTPS' ? 'https' : 'http';
    const record = requestRecord(state, req);
    const scope: RequestScope = { telemetry: undefined, exchange: undefined };
    res.once('finish', () => this.finish(record, res, scope));
    res.once('close', () => {
      if (!responseCompleted(res)) this.finish(record, res, scope);
    });
    // A WebSocket session is finished when it closes (the response is detached from its socket).
    webSocketUpgradeOf(req)?.onDone((outcome) => this.finish(record, outcome as ServerResponse, scope));
    // A Tunnel port terminates CONNECT only (what it tunnels is served by the addressed listener).
    if (port.connection.connect === 'Tunnel')
      return void sendText(res, 405, 'this port only takes CONNECT tunnels', { allow: 'CONNECT' });
    handleRequest(req, res, port, scheme, record, scope).catch((error: unknown) => {
      (scope.answers ?? PLAIN_ANSWERS).ownFailure(res, record, `request failed: ${(error as Error).message}`);
    });
  }

  /** A CONNECT request (Frontend.connect); its telemetry is finished when it is answered or its tunnel closes. */
  private serveConnect(state: PortServer, downstream: ConnectDownstream): void {
    const record = requestRecord(state, downstream.req);
    const scope: RequestScope = { telemetry: undefined, exchange: undefined };
    // (finish reads only statusCode, getHeaders(), writableEnded and writableFinished)
    downstream.onDone((outcome) => this.finish(record, outcome as ServerResponse, scope));
    serveConnect(downstream, {
      mode: state.current.connection.connect,
      port: state.current,
      record,
      scope,
      source: { address: record.clientAddress, port: record.clientPort },
      tunnelTarget: (port) => {
        const target = this.servers.get(port);
        return target && ((stream, source) => target.listener.accept(stream, source));
      },
    }).catch((error: unknown) => {
      sendOwnFailure(downstream.res, record, `CONNECT failed: ${(error as Error).message}`);
    });
  }

  private finish(record: RequestRecord, res: ServerResponse, scope: RequestScope): void {
    if (record.endTime !== 0n) return;
    record.status = res.statusCode;
    record.responseHeaders = res.getHeaders();
    if (!responseCompleted(res) && !record.error) record.error = 'client closed the connection';
    (scope.telemetry ?? this.portTelemetry).finish(record);
    if (record.requestId !== '') this.failures?.report(record);
    scope.exchange?.finish();
    this.options.onRequestDone?.(record);
  }

  async close(): Promise<void> {
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    this.wanted = new Map();
    this.unbound.clear();
    const closing = [...this.servers.values()].map((state) => state.listener.close());
    this.servers.clear();
    await Promise.all(closing);
    await Promise.all([this.policyRuntime.close(), this.pools.close(), this.telemetry.close()]);
  }
}

/** Why a port could not be bound, in words naming the port and the address. */
export function bindFailureText(error: NodeJS.ErrnoException, port: number, host: string): string {
  const where = `port ${port} on ${host}`;
  switch (error.code) {
    case 'EADDRINUSE':
      return `${where} is in use by another process (EADDRINUSE)`;
    case 'EACCES':
      return `${where} may not be bound by this user (EACCES; ports below 1024 need privileges)`;
    case 'EADDRNOTAVAIL':
      return `${where}: ${host} is not an address of this machine (EADDRNOTAVAIL)`;
    default:
      return `${where} cannot be bound: ${error.message}`;
  }
}

/** A request's record as it arrives: where from (the PROXY header's client if any), what, how. */
function requestRecord(state: PortServer, req: IncomingMessage): RequestRecord {
  const record = new RequestRecord();
  record.gateway = state.gateway;
  record.modelPrices = state.current.modelPrices;
  record.method = req.method ?? '';
  record.scheme = state.protocol === 'HTTPS' ? 'https' : 'http';
  record.host = req.headers.host ?? '';
  const url = req.url ?? '/';
  const queryStart = url.indexOf('?');
  record.path = queryStart === -1 ? url : url.slice(0, queryStart);
  record.query = queryStart === -1 ? '' : url.slice(queryStart + 1);
  record.httpVersion = req.httpVersion;
  record.requestHeaders = req.headers;
  const source = state.listener.sourceOf(req);
  record.clientAddress = source.address;
  record.clientPort = source.port;
  return record;
}
