// A worker process of `gw run --workers N`: one DataPlane serving every listener port (each port
// bound with SO_REUSEPORT, so the kernel spreads connections over the workers), configured only
// by the primary over IPC. It applies updates in the order they arrive and acknowledges each,
// answers metrics requests with a snapshot of its registry, and stops when the primary says so
// or goes away. Access log lines go to standard output like a single process's.
import type { DataPlaneConfig } from '../contract/dataplane-config.ts';
import { type MeshTransport, meshTransportFromEnv } from '../dataplane/mesh/transport.ts';
import { DataPlane } from '../dataplane/server/data-plane.ts';
import { BufferedLogSink, stdoutLogSink } from '../dataplane/telemetry/log-sink.ts';
import { Telemetry } from '../dataplane/telemetry/request-telemetry.ts';
import { LogFilter } from '../util/log-filter.ts';
import { type LogFunction, type LogLevel, type LogValue, lineLogger } from '../util/log-line.ts';
import { isPrimaryMessage, type PrimaryMessage, type WorkerMessage, type WorkerSettings } from './ipc.ts';

/**
 * Bytes per access log write at most. Every worker writes to the same standard output; a pipe
 * takes a write of up to PIPE_BUF (4096 bytes on Linux) whole, so lines of different workers
 * never interleave mid-line (a single line longer than that is written alone and may).
 */
const LOG_BATCH_BYTES = 4096;
/** How long a stopping worker waits for its access log lines to be written. */
const LOG_DRAIN_TIMEOUT_MS = 2_000;

export class ClusterWorker {
  private readonly dataPlane: DataPlane;
  private readonly logger: LogFunction;
  /** This worker's way into the ambient mesh, from the environment it inherits (checked by the primary). */
  private readonly mesh: MeshTransport | undefined;
  private applying: Promise<void> = Promise.resolve();
  /** Lines the data plane logs while an update is applied; they go back to the primary. */
  private collecting: string[] | undefined;
  private stopping: Promise<void> | undefined;
  /** The last configuration generation applied (-1: none yet). */
  private generation = -1;

  constructor(settings: WorkerSettings) {
    // Checked by workerSettingsFromEnv.
    const filter = LogFilter.parse(settings.logLevel) as LogFilter;
    const write = (text: string) => process.stderr.write(text);
    this.logger = lineLogger(settings.logFormat, 'dataplane', write, filter, {
      worker: settings.slot,
      pid: process.pid,
    });
    const logger = this.logger;
    const mesh = meshTransportFromEnv(process.env, { log: (level, message) => this.log(message, level) });
    if (typeof mesh === 'string') throw new Error(`mesh: ${mesh}`);
    this.mesh = mesh;
    this.dataPlane = new DataPlane({
      mesh,
      address: settings.address,
      reusePort: settings.reusePort,
      limits: settings.limits,
      telemetry: new Telemetry({
        sink: stdoutLogSink({ maxBatchBytes: LOG_BATCH_BYTES }),
        logFormat: settings.logFormat,
      }),
      // The data plane's own lines (its failure log and credentials have modules of their own).
      log: Object.assign(
        (line: string, level?: LogLevel, fields?: Readonly<Record<string, LogValue>>) => this.log(line, level, fields),
        { module: logger.module },
      ),
      // A port bound on a later try: the primary hears it as the same generation applied again.
      onUnboundChange: () =>
        this.send({
          type: 'gw:applied',
          generation: this.generation,
          problems: [],
          unbound: [...this.dataPlane.unboundPorts],
        }),
    });
  }

  /** Listens to the primary and says hello; resolves when the worker has stopped. */
  run(): Promise<void> {
    let stopped!: () => void;
    const done = new Promise<void>((resolve) => {
      stopped = resolve;
    });
    this.mesh?.start();
    process.on('message', (message: unknown) => {
      if (isPrimaryMessage(message)) this.handle(message, stopped);
    });
    // The primary is gone (it crashed or was killed): nothing will configure or stop this worker.
    process.on('disconnect', () => this.stop().then(stopped));
    // A terminal's Ctrl-C reaches the whole process group and a service manager may signal every
    // process: the primary coordinates the stop, so the workers wait for it.
    process.on('SIGINT', () => {});
    process.on('SIGTERM', () => {});
    this.send({ type: 'gw:hello' });
    return done;
  }

  private handle(message: PrimaryMessage, stopped: () => void): void {
    switch (message.type) {
      case 'gw:configure':
        this.applying = this.applying.then(() => this.apply(message.generation, message.changed, message.removed));
        break;
      case 'gw:metrics-request':
        this.send({
          type: 'gw:metrics',
          id: message.id,
          snapshot: this.dataPlane.telemetry.metrics.snapshot(),
          health: this.dataPlane.healthReports(),
        });
        break;
      case 'gw:stop':
        this.stop().then(stopped);
        break;
    }
  }

  private async apply(generation: number, changed: [string, DataPlaneConfig][], removed: string[]): Promise<void> {
    if (this.stopping) return;
    const problems: string[] = [];
    this.collecting = problems;
    try {
      await this.dataPlane.apply(new Map(changed), removed);
    } catch (error) {
      problems.push(`applying configuration: ${(error as Error).message}`);
    } finally {
      this.collecting = undefined;
    }
    this.generation = generation;
    this.send({ type: 'gw:applied', generation, problems, unbound: [...this.dataPlane.unboundPorts] });
  }

  private stop(): Promise<void> {
    this.stopping ??= (async () => {
      await this.applying;
      await this.dataPlane.close();
      this.mesh?.stop();
      const sink = this.dataPlane.telemetry.sink;
      if (sink instanceof BufferedLogSink) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          sink.drained(),
          new Promise<void>((resolve) => {
            timer = setTimeout(resolve, LOG_DRAIN_TIMEOUT_MS);
          }),
        ]);
        clearTimeout(timer);
      }
    })();
    return this.stopping;
  }

  /** While an update is applied, the lines go to the primary, which logs them once for every worker. */
  private log(line: string, level: LogLevel = 'info', fields?: Readonly<Record<string, LogValue>>): void {
    if (this.collecting) this.collecting.push(line);
    else this.logger(line, level, fields);
  }

  private send(message: WorkerMessage): void {
    // A channel that closes meanwhile is handled by 'disconnect'; the failed send needs nothing.
    if (process.connected) process.send?.(message, undefined, {}, () => {});
  }
}
