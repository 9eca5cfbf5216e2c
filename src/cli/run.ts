// gw run -f FILE|DIR: serve the Gateways of the files, reloading them on change. An invalid
// file never takes the gateway down: the last good objects keep serving and the problem is
// logged with the file and field path. With --workers N (N > 1) this process is the primary:
// it reads the files and runs the controller, and N worker processes serve the listeners
// (src/run/cluster-primary.ts, docs/dataplane.md "Multi-core").
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import type { ConfigUpdate, Controller } from '../controller/controller.ts';
import { type AdminServer, type MetricsSource, startAdminServer } from '../dataplane/telemetry/admin-server.ts';
import { ClusterGateway } from '../run/cluster-primary.ts';
import { LocalGateway } from '../run/local-gateway.ts';
import type { LoadReport } from '../store/file-store.ts';
import type { Io } from './main.ts';

export const RUN_USAGE = `usage: gw run -f FILE|DIR [-f ...] [-R] [--address ADDR] [--admin-port PORT] [--workers N|auto]
  -f, --filename     resources to serve (files, directories, repeatable)
  -R, --recursive    read directories recursively
  --address          address the listeners bind (default 127.0.0.1; 0.0.0.0 for all interfaces)
  --admin-port       port of the admin endpoints /metrics, /healthz/ready, /healthz/live
                     (default 15000, bound to 127.0.0.1; 0 disables)
  --workers          processes serving the listeners (default 1: everything in this process;
                     auto: one per core). With more than 1, this process reads the files and
                     runs the controller and the admin endpoints, the workers serve traffic
`;

/** More workers than this is a typo, not a machine. */
export const MAX_WORKERS = 256;

export interface RunOptions {
  paths: string[];
  recursive: boolean;
  address: string;
  adminPort: number;
  /** Processes serving the listeners; 1 runs everything in one process. */
  workers: number;
}

/** --workers: a whole number from 1 to MAX_WORKERS, or "auto" (the cores this process may use). */
export function parseWorkers(text: string | undefined, cores: number = availableParallelism()): number | string {
  if (text === undefined) return 1;
  if (text === 'auto') return Math.max(1, Math.min(cores, MAX_WORKERS));
  const workers = Number(text);
  if (!/^\d+$/.test(text) || workers < 1 || workers > MAX_WORKERS)
    return `--workers must be "auto" or a number from 1 to ${MAX_WORKERS}, not "${text}"`;
  return workers;
}

export function parseRunArgs(args: string[]): RunOptions | string {
  try {
    const { values } = parseArgs({
      args,
      options: {
        filename: { type: 'string', short: 'f', multiple: true },
        recursive: { type: 'boolean', short: 'R' },
        address: { type: 'string' },
        'admin-port': { type: 'string' },
        workers: { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    });
    if (!values.filename || values.filename.length === 0) return 'gw run needs -f FILE|DIR';
    const adminPort = Number(values['admin-port'] ?? 15000);
    if (!Number.isInteger(adminPort) || adminPort < 0 || adminPort > 65535)
      return `--admin-port must be a port number, not "${values['admin-port']}"`;
    const workers = parseWorkers(values.workers);
    if (typeof workers === 'string') return workers;
    return {
      paths: values.filename,
      recursive: values.recursive ?? false,
      address: values.address ?? '127.0.0.1',
      adminPort,
      workers,
    };
  } catch (error) {
    return (error as Error).message;
  }
}

/** What the command needs of a gateway, in one process or as the primary of workers. */
interface RunningGateway {
  readonly controller: Controller;
  readonly metrics: MetricsSource;
  /** Beyond the command's own readiness (started, not stopping). */
  ready(): boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
}

interface GatewayCallbacks {
  log: (line: string) => void;
  onLoad: (report: LoadReport) => void;
  onApplied: (update: ConfigUpdate) => void;
}

function createGateway(options: RunOptions, callbacks: GatewayCallbacks): RunningGateway {
  const common = { paths: options.paths, recursive: options.recursive, address: options.address, ...callbacks };
  if (options.workers > 1) {
    const cluster = new ClusterGateway({ ...common, workers: options.workers });
    return {
      controller: cluster.controller,
      metrics: { render: () => cluster.renderMetrics() },
      ready: () => cluster.ready(),
      start: () => cluster.start(),
      stop: () => cluster.stop(),
    };
  }
  const local = new LocalGateway(common);
  return {
    controller: local.controller,
    metrics: local.dataPlane.telemetry.metrics,
    ready: () => true,
    start: () => local.start(),
    stop: () => local.stop(),
  };
}

export async function runCommand(args: string[], io: Io): Promise<number> {
  const options = parseRunArgs(args);
  if (typeof options === 'string') {
    io.stderr(`gw run: ${options}\n${RUN_USAGE}`);
    return 2;
  }
  const log = (line: string) => io.stderr(`${new Date().toISOString()} ${line}\n`);
  let lastProblems = '';
  let ready = false;
  const gateway = createGateway(options, {
    log,
    onLoad: (report) => {
      const text = report.problems.map((problem) => problem.message).join('\n');
      if (text === lastProblems) return;
      lastProblems = text;
      if (text) log(`configuration problems (the last good objects keep serving):\n${text}`);
      else if (report.changes > 0) log('configuration loaded');
    },
    onApplied: (update) => {
      for (const [key, config] of update.changed) {
        const ports = config.listeners.map((listener) => `${listener.name} ${listener.protocol} :${listener.port}`);
        log(`Gateway ${key}: serving ${ports.length > 0 ? ports.join(', ') : 'no listeners'}`);
      }
      for (const key of update.removed) log(`Gateway ${key}: no longer served`);
    },
  });
  try {
    await gateway.start();
  } catch (error) {
    io.stderr(`gw run: ${(error as Error).message}\n`);
    await gateway.stop();
    return 1;
  }
  let admin: AdminServer | undefined;
  if (options.adminPort !== 0) {
    try {
      admin = await startAdminServer({
        port: options.adminPort,
        ready: () => ready && gateway.ready(),
        metrics: gateway.metrics,
      });
      log(`admin endpoints on http://${admin.host}:${admin.port} (/metrics, /healthz/ready, /healthz/live)`);
    } catch (error) {
      log(`admin endpoints not served: ${(error as Error).message}`);
    }
  }
  ready = true;
  if (options.workers > 1) log(`serving with ${options.workers} worker processes`);
  if (gateway.controller.currentConfigs.size === 0)
    log('no Gateway of GatewayClass controllerName gw.dev/gateway-controller in the files: nothing to serve yet');
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  log('stopping');
  ready = false;
  await admin?.close();
  await gateway.stop();
  return 0;
}
