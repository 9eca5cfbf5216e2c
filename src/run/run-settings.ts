// gw run's process settings — how it runs, not what it serves: the address listeners bind, the
// admin endpoints, workers, the log, the limits on what clients may cost. Each is a flag, and each
// is a key of the settings file `gw run --config FILE` reads (YAML or JSON), flags given on the
// command line overriding the file. Provisioning generates that file from GwParameters (rawConfig,
// then the typed fields on top) and checks rawConfig with the same code (checkRunSettings), so a
// key gw run would refuse is refused on the GwParameters instead of crash-looping its pods.
// What gw run serves (-f, --kubeconfig, --cluster, --gateway, the API server) stays on the command
// line. docs/decisions/0043-run-settings-file.md.
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parse, YAMLParseError } from 'yaml';
import {
  DEFAULT_DOWNSTREAM_LIMITS,
  type DownstreamLimits,
  downstreamLimits,
} from '../dataplane/server/downstream-limits.ts';
import { didYouMean } from '../util/did-you-mean.ts';
import { LogFilter } from '../util/log-filter.ts';
import { parseLogFormat } from '../util/log-line.ts';
import { byteSize, durationMs } from '../util/units.ts';

/** More workers than this is a typo, not a machine. */
export const MAX_WORKERS = 256;

/** `text` as a port number, or the problem (`label` names the flag or key). */
export function parsePort(text: string | undefined, fallback: number, label: string): number | string {
  const port = Number(text ?? fallback);
  if (!Number.isInteger(port) || port < 0 || port > 65535 || text === '')
    return `${label} must be a port number, not "${text}"`;
  return port;
}

/** --workers: a whole number from 1 to MAX_WORKERS, or "auto" (the cores this process may use). */
export function parseWorkers(
  text: string | undefined,
  cores: number = availableParallelism(),
  label = '--workers',
): number | string {
  if (text === undefined) return 1;
  if (text === 'auto') return Math.max(1, Math.min(cores, MAX_WORKERS));
  const workers = Number(text);
  if (!/^\d+$/.test(text) || workers < 1 || workers > MAX_WORKERS)
    return `${label} must be "auto" or a number from 1 to ${MAX_WORKERS}, not "${text}"`;
  return workers;
}

/** A duration (10s) or byte size (64Mi) limit above 0, or the problem. */
export function parseLimit(text: string, kind: 'duration' | 'size', label: string): number | string {
  let value: number;
  try {
    value = kind === 'duration' ? durationMs(text) : byteSize(text);
  } catch (error) {
    return `${label}: ${(error as Error).message}`;
  }
  if (value <= 0) return `${label} must be more than 0, not "${text}"`;
  return value;
}

type ValueKind = 'address' | 'port' | 'workers' | 'logFormat' | 'logLevel' | 'duration' | 'size';

export interface RunSetting {
  /** The key path in the settings file. */
  path: string;
  /** The gw run flag (without --). */
  flag: string;
  kind: ValueKind;
  /** For a limit: its field of DownstreamLimits. */
  limit?: keyof DownstreamLimits;
}

/** Every key of the settings file and the flag it stands for. */
export const RUN_SETTINGS: readonly RunSetting[] = [
  { path: 'address', flag: 'address', kind: 'address' },
  { path: 'admin.address', flag: 'admin-address', kind: 'address' },
  { path: 'admin.port', flag: 'admin-port', kind: 'port' },
  { path: 'workers', flag: 'workers', kind: 'workers' },
  { path: 'logging.level', flag: 'log-level', kind: 'logLevel' },
  { path: 'logging.format', flag: 'log-format', kind: 'logFormat' },
  {
    path: 'limits.requestHeaderTimeout',
    flag: 'request-header-timeout',
    kind: 'duration',
    limit: 'requestHeaderTimeoutMs',
  },
  {
    path: 'limits.requestBodyIdleTimeout',
    flag: 'request-body-idle-timeout',
    kind: 'duration',
    limit: 'requestBodyIdleTimeoutMs',
  },
  { path: 'limits.requestBodyTimeout', flag: 'request-body-timeout', kind: 'duration', limit: 'requestBodyTimeoutMs' },
  {
    path: 'limits.responseWriteTimeout',
    flag: 'response-write-timeout',
    kind: 'duration',
    limit: 'responseWriteTimeoutMs',
  },
  { path: 'limits.maxBufferedBytes', flag: 'max-buffered-bytes', kind: 'size', limit: 'maxBufferedBytes' },
  {
    path: 'limits.maxBufferedBytesPerListener',
    flag: 'max-buffered-bytes-per-listener',
    kind: 'size',
    limit: 'maxBufferedBytesPerListener',
  },
];

/** The limits flags given (--request-header-timeout 5s, --max-buffered-bytes 128Mi...) over the defaults. */
export function parseLimits(values: Record<string, string | undefined>): DownstreamLimits | string {
  const overrides: Partial<Record<keyof DownstreamLimits, number>> = {};
  for (const { flag, kind, limit } of RUN_SETTINGS) {
    const text = values[flag];
    if (limit === undefined || text === undefined || (kind !== 'duration' && kind !== 'size')) continue;
    const value = parseLimit(text, kind, `--${flag}`);
    if (typeof value === 'string') return value;
    overrides[limit] = value;
  }
  if (Object.keys(overrides).length === 0) return DEFAULT_DOWNSTREAM_LIMITS;
  return downstreamLimits(overrides);
}

/** What is wrong with one key of a settings document: its path ("" for the document) and why. */
export interface SettingsProblem {
  path: string;
  message: string;
}

/** The problem with a value of `kind` at `path`, or undefined when gw run takes it. */
function valueProblem(kind: ValueKind, text: string, path: string): string | undefined {
  switch (kind) {
    case 'address':
      return text === '' ? `${path} must be an address such as 0.0.0.0, not empty` : undefined;
    case 'port': {
      const port = parsePort(text, 0, path);
      return typeof port === 'string' ? port : undefined;
    }
    case 'workers': {
      const workers = parseWorkers(text, 1, path);
      return typeof workers === 'string' ? workers : undefined;
    }
    case 'logFormat': {
      const format = parseLogFormat(text, path);
      return format === 'json' || format === 'text' ? undefined : format;
    }
    case 'logLevel': {
      const filter = LogFilter.parse(text);
      return typeof filter === 'string' ? `${path} ${filter}` : undefined;
    }
    case 'duration':
    case 'size': {
      const limit = parseLimit(text, kind, path);
      return typeof limit === 'string' ? limit : undefined;
    }
  }
}

/** The JSON types a key takes: numbers where the flag's value is a number (ports, workers, bytes). */
function valueText(kind: ValueKind, value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && (kind === 'port' || kind === 'workers' || kind === 'size')) return String(value);
  return undefined;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Checks a settings document (a parsed YAML/JSON value): every key known, every value one gw run
 * takes. Gives the flags it stands for (flag → value text) and the problems, by key path.
 */
export function checkRunSettings(document: unknown): { flags: Record<string, string>; problems: SettingsProblem[] } {
  const flags: Record<string, string> = {};
  const problems: SettingsProblem[] = [];
  if (document === null || document === undefined) return { flags, problems };
  const walk = (value: unknown, prefix: string) => {
    if (!isObject(value)) {
      problems.push({ path: prefix, message: `${prefix || 'the settings'} must be a mapping of keys` });
      return;
    }
    for (const [key, child] of Object.entries(value)) {
      const path = prefix === '' ? key : `${prefix}.${key}`;
      const setting = RUN_SETTINGS.find((entry) => entry.path === path);
      if (setting) {
        const text = valueText(setting.kind, child);
        const problem =
          text === undefined
            ? `${path} must be a ${setting.kind === 'port' || setting.kind === 'workers' ? 'number or string' : 'string'}, not ${JSON.stringify(child)}`
            : valueProblem(setting.kind, text, path);
        if (problem !== undefined) problems.push({ path, message: problem });
        else flags[setting.flag] = text!;
        continue;
      }
      if (RUN_SETTINGS.some((entry) => entry.path.startsWith(`${path}.`))) {
        walk(child, path);
        continue;
      }
      const siblings = RUN_SETTINGS.filter((entry) => entry.path.startsWith(prefix === '' ? '' : `${prefix}.`)).map(
        (entry) => entry.path.slice(prefix === '' ? 0 : prefix.length + 1).split('.')[0]!,
      );
      const known = [...new Set(siblings)];
      const guess = didYouMean(key, known);
      problems.push({
        path,
        message: `${path}: unknown key${guess ? ` (${guess})` : ''}; the keys here are ${known.join(', ')}`,
      });
    }
  };
  walk(document, '');
  return { flags, problems };
}

/** Reads `--config FILE`: the flags its keys stand for, or one line saying everything wrong with it. */
export function readRunSettingsFile(file: string): Record<string, string> | { problem: string } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { problem: `--config ${file}: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}` };
  }
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    const where = error instanceof YAMLParseError ? error.message.split('\n')[0] : (error as Error).message;
    return { problem: `--config ${file}: not YAML or JSON: ${where}` };
  }
  const { flags, problems } = checkRunSettings(document);
  if (problems.length > 0) return { problem: `--config ${file}: ${problems.map((entry) => entry.message).join('; ')}` };
  return flags;
}
