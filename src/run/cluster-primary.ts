// The primary of `gw run --workers N`: the file store and the controller run here, and N worker
// processes (node:cluster, cluster-worker.ts) each run a DataPlane on every listener port. Every
// configuration update goes to every worker over IPC; a worker that starts (or restarts) gets the
// whole current set. Listener ports are bound by each worker with SO_REUSEPORT where the kernel
// spreads connections over such sockets (Linux, FreeBSD); elsewhere node:cluster shares one
// socket of the primary with the workers. docs/dataplane.md ("Multi-core") and
// docs/decisions/0004-multi-core.md explain the choices.
import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import type { ConfigUpdate, Controller } from '../controller/controller.ts';
import { unboundByGateway } from '../controller/port-status.ts';
import type { PlacedHealthReport } from '../dataplane/balancing/health-report.ts';
import type { UnboundPort } from '../dataplane/server/data-plane.ts';
import { DEFAULT_DOWNSTREAM_LIMITS, type DownstreamLimits } from '../dataplane/server/downstream-limits.ts';
import { type MetricsSnapshot, mergeMetricsSnapshots, renderMetricsSnapshot } from '../dataplane/telemetry/metrics.ts';
import { systemClock } from '../util/clock.ts';
import { DEFAULT_LOG_LEVEL, type LogFilter } from '../util/log-filter.ts';
import { type LogFormat, type LogFunction, moduleLog } from '../util/log-line.ts';
import { siblingModule } from '../util/sibling-module.ts';
import { type ConfigSourceKind, type ConfigSourceOptions, createConfigSource } from './config-source.ts';
import {
  type AppliedMessage,
  isWorkerMessage,
  type MetricsReplyMessage,
  type PrimaryMessage,
  WORKER_SETTINGS_ENV,
  type WorkerMessage,
  type WorkerSettings,
} from './ipc.ts';

export interface ClusterGatewayOptions extends ConfigSourceOptions {
  /** The address listeners bind (default 127.0.0.1). */
  address?: string;
  /** Worker processes, at least 1. */
  workers: number;
  /** Bind listener ports with SO_REUSEPORT in each worker (default: where the kernel balances them). */
  reusePort?: boolean;
  /** Each worker's deadlines and buffer budget (default: DEFAULT_DOWNSTREAM_LIMITS). */
  limits?: DownstreamLimits;
  /** The workers' access log and message format (default json). */
  logFormat?: LogFormat;
  /** The workers' log filter (default info). */
  logFilter?: LogFilter;
  log?: LogFunction;
  /**
   * Told once every worker has applied a configuration update (or exited meanwhile), with the
   * listener ports a worker could not bind.
   */
  onApplied?: (update: ConfigUpdate, unbound: ReadonlyMap<number, UnboundPort>) => void;
}

const WORKER_MAIN = fileURLToPath(siblingModule(import.meta.url, 'worker-main'));

/** The first restart of a worker waits this long; each quick exit after it doubles the wait. */
const RESTART_MIN_DELAY_MS = 100;
const RESTART_MAX_DELAY_MS = 10_000;
/** A worker that ran this long before it exited counts as having been fine: its backoff starts over. */
export const STABLE_AFTER_MS = 10_000;

/** Quick exits in a row once a worker that ran `uptimeMs` exited: a stable run starts the count over. */
export function quickExitsAfter(previous: number, uptimeMs: number): number {
  return uptimeMs >= STABLE_AFTER_MS ? 1 : previous + 1;
}

/** How long to wait before starting a worker again after `quickExits` quick exits in a row. */
export function restartDelayMs(quickExits: number): number {
  return Math.min(RESTART_MAX_DELAY_MS, RESTART_MIN_DELAY_MS * 2 ** (quickExits - 1));
}
/** A stopping worker that has not exited after this long is killed. */
const STOP_TIMEOUT_MS = 10_000;
/** A worker that does not answer a metrics request within this is represented by its last answer. */
const METRICS_TIMEOUT_MS = 2_000;
/** Updates whose application is still being reported; beyond this the oldest is reported as it is. */
const MAX_PENDING_REPORTS = 64;

/** Whether the kernel spreads the connections of one port over several SO_REUSEPORT sockets. */
export function kernelBalancesReusePort(platform: NodeJS.Platform = process.platform): boolean {
  return platform === 'linux' || platform === 'freebsd';
}

interface WorkerSlot {
  /** 1..N; a restarted worker takes the slot of the one that exited. */
  readonly id: number;
  worker: Worker | undefined;
  pid: number;
  /** The worker has said hello and has been sent the whole configuration. */
  running: boolean;
  /** The last configuration generation the worker has applied (-1: none yet). */
  acked: number;
  /** When the worker was started (monotonic ms). */
  startedAt: number;
  /** Exits in a row that came soon after the start (for the backoff). */
  quickExits: number;
  restartTimer: NodeJS.Timeout | undefined;
  /** This worker replaces one that exited: its first application is logged. */
  replacement: boolean;
  /** The worker's registry as last received (folded into the retired sum when it exits). */
  lastSnapshot: MetricsSnapshot | undefined;
  /** The worker's backends' live state (model health, evictions) as last received. */
  lastHealth: PlacedHealthReport[];
  metricsWaiters: Map<number, (reply: MetricsReplyMessage | undefined) => void>;
  /** The listener ports the worker could not bind, as of the last update it applied. */
  unbound: [number, UnboundPort][];
}

/** An update being applied: reported (problems once each, then onApplied) when no worker is left to apply it. */
interface PendingReport {
  generation: number;
  update: ConfigUpdate;
  waiting: Set<number>;
  problems: Set<string>;
}

export class ClusterGateway {
  /** The files, or the embedded API server, read by the controller in this process. */
  readonly source: ConfigSourceKind;
  private readonly options: ClusterGatewayOptions;
  private readonly slots: WorkerSlot[];
  private readonly reusePort: boolean;
  private generation = 0;
  private readonly reports: PendingReport[] = [];
  private retired: MetricsSnapshot | undefined;
  private restarts = 0;
  private nextMetricsId = 0;
  private forked = false;
  private started = false;
  private stopping: Promise<void> | undefined;
  private startWaiter: { resolve: () => void; reject: (error: Error) => void } | undefined;

  constructor(options: ClusterGatewayOptions) {
    if (!Number.isInteger(options.workers) || options.workers < 1) throw new Error('workers must be at least 1');
    this.options = options;
    this.reusePort = options.reusePort ?? kernelBalancesReusePort();
    this.slots = Array.from({ length: options.workers }, (_, index) => ({
      id: index + 1,
      worker: undefined,
      pid: 0,
      running: false,
      acked: -1,
      startedAt: 0,
      quickExits: 0,
      restartTimer: undefined,
      replacement: false,
      lastSnapshot: undefined,
      lastHealth: [],
      metricsWaiters: new Map(),
      unbound: [],
    }));
    this.source = createConfigSource(options, (update) => this.publish(update));
  }

  get controller(): Controller {
    return this.source.controller;
  }

  /** Starts the workers, loads the files and resolves when every worker serves the configuration. */
  async start(): Promise<void> {
    cluster.setupPrimary({ exec: WORKER_MAIN, args: [], silent: false, serialization: 'json' });
    this.forked = true;
    // Workers first: the first update then waits for all of them before it is reported.
    for (const slot of this.slots) this.fork(slot, false);
    await this.source.start();
    await new Promise<void>((resolve, reject) => {
      this.startWaiter = { resolve, reject };
      this.checkStarted();
    });
    this.started = true;
  }

  /** Every worker is up and has applied the current configuration. */
  ready(): boolean {
    return this.started && !this.stopping && this.caughtUp();
  }

  /** The process ids of the workers running now, by slot (1..N); 0 for a slot being restarted. */
  workerPids(): number[] {
    return this.slots.map((slot) => (slot.worker ? slot.pid : 0));
  }

  /**
   * The Prometheus exposition of every worker's metrics summed (asked of each worker now), plus
   * the requests each worker served and the restarts. Workers that exited stay in the sums with
   * what they last reported, so the counters only grow.
   */
  async renderMetrics(): Promise<string> {
    await Promise.all(this.slots.map((slot) => this.refreshSnapshot(slot)));
    const snapshots: MetricsSnapshot[] = [];
    if (this.retired) snapshots.push(this.retired);
    for (const slot of this.slots) if (slot.lastSnapshot) snapshots.push(slot.lastSnapshot);
    const lines = [
      '# HELP gw_worker_requests_total HTTP requests completed by each worker process since it started.',
      '# TYPE gw_worker_requests_total counter',
    ];
    for (const slot of this.slots) {
      if (!slot.lastSnapshot) continue;
      let requests = 0;
      for (const series of slot.lastSnapshot.http) requests += series.requests;
      lines.push(`gw_worker_requests_total{worker="${slot.id}"} ${requests}`);
    }
    lines.push(
      '# HELP gw_worker_restarts_total Worker processes started again after one exited.',
      '# TYPE gw_worker_restarts_total counter',
      `gw_worker_restarts_total ${this.restarts}`,
      '',
    );
    return renderMetricsSnapshot(mergeMetricsSnapshots(snapshots)) + lines.join('\n');
  }

  /**
   * The live state of each running worker's backends (model health, evictions, priority groups),
   * asked of each worker now as the metrics are: every worker keeps its own.
   */
  async healthReports(): Promise<{ worker: number; reports: PlacedHealthReport[] }[]> {
    await Promise.all(this.slots.map((slot) => this.refreshSnapshot(slot)));
    return this.slots.filter((slot) => slot.running).map((slot) => ({ worker: slot.id, reports: slot.lastHealth }));
  }

  /** Stops the controller and its source, then each worker (killed if it takes too long). */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (const slot of this.slots) clearTimeout(slot.restartTimer);
      await this.source.stop();
      if (this.forked) await Promise.all(this.slots.map((slot) => this.stopWorker(slot)));
    })();
    return this.stopping;
  }

  private fork(slot: WorkerSlot, replacement: boolean): void {
    const settings: WorkerSettings = {
      slot: slot.id,
      address: this.options.address ?? '127.0.0.1',
      reusePort: this.reusePort,
      limits: this.options.limits ?? DEFAULT_DOWNSTREAM_LIMITS,
      logFormat: this.options.logFormat ?? 'json',
      logLevel: this.options.logFilter?.text ?? DEFAULT_LOG_LEVEL,
    };
    const worker = cluster.fork({ [WORKER_SETTINGS_ENV]: JSON.stringify(settings) });
    slot.worker = worker;
    slot.pid = worker.process.pid ?? 0;
    slot.running = false;
    slot.acked = -1;
    slot.startedAt = systemClock.monotonicMs();
    slot.replacement = replacement;
    this.log(`worker ${slot.id} started (pid ${slot.pid})`);
    worker.on('message', (message: unknown) => {
      if (slot.worker === worker && isWorkerMessage(message)) this.onMessage(slot, worker, message);
    });
    worker.on('error', (error) => this.log(`worker ${slot.id} (pid ${slot.pid}): ${error.message}`));
    worker.once('exit', (code, signal) => {
      if (slot.worker === worker) this.onExit(slot, code, signal);
    });
  }

  private onMessage(slot: WorkerSlot, worker: Worker, message: WorkerMessage): void {
    switch (message.type) {
      case 'gw:hello':
        slot.running = true;
        // A new worker has nothing: it gets every current configuration.
        this.send(worker, {
          type: 'gw:configure',
          generation: this.generation,
          changed: [...this.controller.currentConfigs],
          removed: [],
        });
        break;
      case 'gw:applied':
        this.onApplied(slot, message);
        break;
      case 'gw:metrics':
        slot.metricsWaiters.get(message.id)?.(message);
        break;
    }
  }

  /** A configuration update from the controller: to every worker that is running. */
  private publish(update: ConfigUpdate): void {
    this.generation++;
    const waiting = new Set<number>();
    for (const slot of this.slots) if (slot.worker) waiting.add(slot.id);
    this.reports.push({ generation: this.generation, update, waiting, problems: new Set() });
    if (this.reports.length > MAX_PENDING_REPORTS) this.report(this.reports.shift()!);
    const message: PrimaryMessage = {
      type: 'gw:configure',
      generation: this.generation,
      changed: [...update.changed],
      removed: update.removed,
    };
    for (const slot of this.slots) if (slot.running && slot.worker) this.send(slot.worker, message);
    this.flushReports();
  }

  private onApplied(slot: WorkerSlot, message: AppliedMessage): void {
    slot.acked = message.generation;
    slot.unbound = Array.isArray(message.unbound) ? message.unbound : [];
    // The newest pending update this covers collects the problems; each distinct line is logged once.
    let newest: PendingReport | undefined;
    for (const report of this.reports) {
      if (report.generation > message.generation) break;
      if (report.waiting.delete(slot.id)) newest = report;
    }
    if (newest) for (const problem of message.problems) newest.problems.add(problem);
    else {
      for (const problem of message.problems) this.dataPlaneLog(`worker ${slot.id}: ${problem}`);
      // Not a pending update's report (a port bound on a later try): the statuses follow now.
      this.controller.setUnboundPorts(unboundByGateway(this.unboundPorts()));
    }
    if (slot.replacement) {
      slot.replacement = false;
      this.log(`worker ${slot.id} (pid ${slot.pid}) serves the current configuration`);
    }
    this.flushReports();
    this.checkStarted();
  }

  private onExit(slot: WorkerSlot, code: number | null, signal: string | null): void {
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const pid = slot.pid;
    slot.worker = undefined;
    slot.running = false;
    for (const waiter of [...slot.metricsWaiters.values()]) waiter(undefined);
    if (slot.lastSnapshot) {
      this.retired = mergeMetricsSnapshots(this.retired ? [this.retired, slot.lastSnapshot] : [slot.lastSnapshot]);
      slot.lastSnapshot = undefined;
    }
    slot.lastHealth = [];
    for (const report of this.reports) report.waiting.delete(slot.id);
    this.flushReports();
    if (this.stopping) return;
    if (!this.started) {
      this.startWaiter?.reject(new Error(`worker ${slot.id} (pid ${pid}) ${how} before it served`));
      this.startWaiter = undefined;
      return;
    }
    slot.quickExits = quickExitsAfter(slot.quickExits, systemClock.monotonicMs() - slot.startedAt);
    const delay = restartDelayMs(slot.quickExits);
    this.log(`worker ${slot.id} (pid ${pid}) ${how}; starting another in ${delay} ms`);
    slot.restartTimer = setTimeout(() => {
      slot.restartTimer = undefined;
      if (this.stopping) return;
      this.restarts++;
      this.fork(slot, true);
    }, delay);
  }

  private caughtUp(): boolean {
    return this.slots.every((slot) => slot.worker !== undefined && slot.running && slot.acked === this.generation);
  }

  private checkStarted(): void {
    if (this.startWaiter && this.caughtUp()) {
      this.startWaiter.resolve();
      this.startWaiter = undefined;
    }
  }

  /** Reports, in order, the updates no worker is still applying. */
  private flushReports(): void {
    while (this.reports.length > 0 && this.reports[0]!.waiting.size === 0) this.report(this.reports.shift()!);
  }

  private report(report: PendingReport): void {
    for (const problem of report.problems) this.dataPlaneLog(problem);
    const unbound = this.unboundPorts();
    this.controller.setUnboundPorts(unboundByGateway(unbound));
    this.options.onApplied?.(report.update, unbound);
  }

  /** The listener ports some running worker could not bind (each worker binds every port itself). */
  unboundPorts(): Map<number, UnboundPort> {
    return new Map(this.slots.filter((slot) => slot.running).flatMap((slot) => slot.unbound));
  }

  /** Whether any listener port is served: some port of the configurations that every worker could bind. */
  serving(): boolean {
    const unbound = this.unboundPorts();
    for (const config of this.controller.currentConfigs.values())
      if (config.listeners.some((listener) => !unbound.has(listener.port))) return true;
    return false;
  }

  private refreshSnapshot(slot: WorkerSlot): Promise<void> {
    const worker = slot.worker;
    if (!worker || !slot.running || !worker.isConnected()) return Promise.resolve();
    const id = ++this.nextMetricsId;
    return new Promise((resolve) => {
      const timer = setTimeout(() => finish(undefined), METRICS_TIMEOUT_MS);
      const finish = (reply: MetricsReplyMessage | undefined) => {
        clearTimeout(timer);
        slot.metricsWaiters.delete(id);
        if (reply && slot.worker === worker) {
          slot.lastSnapshot = reply.snapshot;
          slot.lastHealth = reply.health;
        }
        resolve();
      };
      slot.metricsWaiters.set(id, finish);
      this.send(worker, { type: 'gw:metrics-request', id });
    });
  }

  private async stopWorker(slot: WorkerSlot): Promise<void> {
    const worker = slot.worker;
    if (!worker || worker.isDead()) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    // A worker that has not said hello may not hear the message yet; it has nothing to finish.
    if (slot.running && worker.isConnected()) this.send(worker, { type: 'gw:stop' });
    else worker.process.kill('SIGKILL');
    let timer: NodeJS.Timeout | undefined;
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.log(`worker ${slot.id} (pid ${slot.pid}) did not stop within ${STOP_TIMEOUT_MS} ms; killing it`);
        worker.process.kill('SIGKILL');
        resolve();
      }, STOP_TIMEOUT_MS);
    });
    await Promise.race([exited, killed]);
    clearTimeout(timer);
    await exited;
  }

  private send(worker: Worker, message: PrimaryMessage): void {
    // A worker that goes away meanwhile is handled by its 'exit'; the failed send needs nothing.
    if (worker.isConnected()) worker.send(message, undefined, () => {});
  }

  /** The primary's own lines: the workers it starts and restarts. */
  private log(line: string): void {
    moduleLog(this.options.log, 'run::workers')?.(line);
  }

  /** What workers met applying a configuration (problems, ports they cannot bind). */
  private dataPlaneLog(line: string): void {
    moduleLog(this.options.log, 'dataplane')?.(line, 'warn');
  }
}
