// The messages between the primary of `gw run --workers N` and its worker processes, over the
// node:cluster IPC channel (JSON serialization). Data-plane configurations are plain JSON by
// design, so a configuration update travels as its entries; metrics travel as a snapshot.
import type { DataPlaneConfig } from '../contract/dataplane-config.ts';
import type { PlacedHealthReport } from '../dataplane/balancing/health-report.ts';
import type { UnboundPort } from '../dataplane/server/data-plane.ts';
import { type DownstreamLimits, downstreamLimits } from '../dataplane/server/downstream-limits.ts';
import type { MetricsSnapshot } from '../dataplane/telemetry/metrics.ts';
import { LogFilter } from '../util/log-filter.ts';
import { LOG_FORMATS, type LogFormat } from '../util/log-line.ts';

/** The environment variable that hands a worker its settings (JSON of WorkerSettings). */
export const WORKER_SETTINGS_ENV = 'GW_WORKER_SETTINGS';

export interface WorkerSettings {
  /** The worker's slot, 1..N; a restarted worker keeps the slot of the one it replaces. */
  slot: number;
  /** The address listeners bind. */
  address: string;
  /** Bind listener ports with SO_REUSEPORT (else node:cluster shares the primary's socket). */
  reusePort: boolean;
  /** gw run's deadlines and buffer budget (each worker has the process budget). */
  limits: DownstreamLimits;
  /** gw run --log-format: the worker's access log lines and its own messages. */
  logFormat: LogFormat;
  /** gw run --log-level: the filter of the worker's own messages. */
  logLevel: string;
}

/** Changed configurations and removed Gateway keys, in the order the controller produced them. */
export interface ConfigureMessage {
  type: 'gw:configure';
  /** Increases with every update; a worker acknowledges each one it has applied. */
  generation: number;
  changed: [key: string, config: DataPlaneConfig][];
  removed: string[];
}

export interface MetricsRequestMessage {
  type: 'gw:metrics-request';
  id: number;
}

/** Close the listeners and exit. */
export interface StopMessage {
  type: 'gw:stop';
}

export type PrimaryMessage = ConfigureMessage | MetricsRequestMessage | StopMessage;

/** The worker listens for messages now (sent once, first). */
export interface HelloMessage {
  type: 'gw:hello';
}

export interface AppliedMessage {
  type: 'gw:applied';
  generation: number;
  /** What the data plane logged while applying (configuration problems, ports it cannot bind). */
  problems: string[];
  /** The listener ports the worker could not bind after this update, and why. */
  unbound: [port: number, UnboundPort][];
}

export interface MetricsReplyMessage {
  type: 'gw:metrics';
  id: number;
  snapshot: MetricsSnapshot;
  /** The live state its backends keep (model health, evictions), for the web UI. */
  health: PlacedHealthReport[];
}

export type WorkerMessage = HelloMessage | AppliedMessage | MetricsReplyMessage;

const PRIMARY_TYPES = new Set<string>(['gw:configure', 'gw:metrics-request', 'gw:stop']);
const WORKER_TYPES = new Set<string>(['gw:hello', 'gw:applied', 'gw:metrics']);

function typeOf(message: unknown): string | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const type = (message as { type?: unknown }).type;
  return typeof type === 'string' ? type : undefined;
}

export function isPrimaryMessage(message: unknown): message is PrimaryMessage {
  return PRIMARY_TYPES.has(typeOf(message) ?? '');
}

export function isWorkerMessage(message: unknown): message is WorkerMessage {
  return WORKER_TYPES.has(typeOf(message) ?? '');
}

/** The settings the primary put in the environment; throws when they are missing or malformed. */
export function workerSettingsFromEnv(env: NodeJS.ProcessEnv): WorkerSettings {
  const text = env[WORKER_SETTINGS_ENV];
  if (!text) throw new Error(`${WORKER_SETTINGS_ENV} is not set: this process is started by gw run --workers`);
  const settings = JSON.parse(text) as Partial<WorkerSettings>;
  const limits = typeof settings.limits === 'object' ? downstreamLimits(settings.limits) : 'missing';
  if (
    typeof settings.slot !== 'number' ||
    typeof settings.address !== 'string' ||
    typeof settings.reusePort !== 'boolean' ||
    typeof limits === 'string' ||
    !LOG_FORMATS.includes(settings.logFormat as LogFormat) ||
    typeof settings.logLevel !== 'string' ||
    typeof LogFilter.parse(settings.logLevel) === 'string'
  ) {
    throw new Error(`${WORKER_SETTINGS_ENV} is malformed: ${text}`);
  }
  const { slot, address, reusePort, logFormat, logLevel } = settings as WorkerSettings;
  return { slot, address, reusePort, limits, logFormat, logLevel };
}
