// gw's one log line format (docs/telemetry.md "Log format"), shared by the access log and the
// diagnostics of `gw run` and `gw controller`: every line is a record of a time, a level, a scope,
// a message and fields. `json` (the default) writes it as one JSON object per line, for log
// collectors; `text` as `time LEVEL scope: message name=value ...`, for a terminal. The access log
// builds its lines itself (telemetry/access-log.ts, on the request path) with the encoders here.
// gw's own messages pass the log filter (log-filter.ts: --log-level) on the way; the access log
// does not (its lines are the record of requests, turned on and off per listener by policy).
import { DEFAULT_LOG_FILTER, type LogFilter, type LogModule } from './log-filter.ts';

export type LogFormat = 'json' | 'text';
export const LOG_FORMATS: readonly LogFormat[] = ['json', 'text'];

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** A field's value: a string, a number or a boolean; undefined leaves the field out. */
export type LogValue = string | number | boolean | undefined;

/** Where gw writes a diagnostic: a message, its level (info when unset) and fields. */
export interface LogFunction {
  (message: string, level?: LogLevel, fields?: Readonly<Record<string, LogValue>>): void;
  /** The logger of another module, writing where this one does (loggers made by lineLogger have it). */
  readonly module?: (name: LogModule) => LogFunction;
}

/**
 * The logger of `module` beside `log`: its sibling made by lineLogger, or `log` itself when it is
 * a plain function (a test collecting lines).
 */
export function moduleLog<T extends LogFunction | ((line: string) => void) | undefined>(log: T, module: LogModule): T {
  const make = (log as LogFunction | undefined)?.module;
  return (make ? make(module) : log) as T;
}

/** `--log-format`'s value, or the error to report. */
export function parseLogFormat(text: string | undefined, label = '--log-format'): LogFormat | string {
  if (text === undefined) return 'json';
  if ((LOG_FORMATS as readonly string[]).includes(text)) return text as LogFormat;
  return `${label} must be json or text, not "${text}"`;
}

// Lines written in the same millisecond share one timestamp string.
let lastMillis = 0;
let lastIso = '';
/** The current time in RFC 3339 (UTC, milliseconds). */
export function logTimestamp(): string {
  const now = Date.now();
  if (now !== lastMillis) {
    lastMillis = now;
    lastIso = new Date(now).toISOString();
  }
  return lastIso;
}

/** A JSON string literal; most values need no escaping, which a character scan finds cheaper than JSON.stringify. */
export function jsonString(value: string): string {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    // Control characters, quote, backslash and surrogates (a lone one must be escaped).
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(value);
  }
  return `"${value}"`;
}

/**
 * A string as a text-format value: as it is when it is a plain word, else quoted as JSON (so a
 * space, an `=`, a quote or a control character cannot make one value look like two fields).
 */
export function textString(value: string): string {
  if (value === '') return '""';
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c <= 0x20 || c === 0x22 || c === 0x3d || c === 0x5c || c === 0x7f || (c >= 0xd800 && c <= 0xdfff))
      return JSON.stringify(value);
  }
  return value;
}

/** A value in `format` (strings quoted as that format needs; numbers and booleans as they are). */
export function encodeValue(format: LogFormat, value: string | number | boolean): string {
  if (typeof value !== 'string') return String(value);
  return format === 'json' ? jsonString(value) : textString(value);
}

/** The part of a line before its fields: time, level, scope and message. */
export function lineStart(format: LogFormat, time: string, level: LogLevel, scope: string, message: string): string {
  if (format === 'json')
    return `{"time":"${time}","level":"${level}","scope":${jsonString(scope)},"message":${jsonString(message)}`;
  return `${time} ${level.toUpperCase().padEnd(5)} ${scope}: ${message}`;
}

/** How one field is written after the start: `,"name":value` or ` name=value`. */
export function fieldKey(format: LogFormat, name: string): string {
  return format === 'json' ? `,${JSON.stringify(name)}:` : ` ${textString(name)}=`;
}

/** What ends a line (without the newline). */
export function lineEnd(format: LogFormat): string {
  return format === 'json' ? '}' : '';
}

/** One whole line (without the newline). */
export function formatLogLine(
  format: LogFormat,
  level: LogLevel,
  scope: string,
  message: string,
  fields?: Readonly<Record<string, LogValue>>,
  time: string = logTimestamp(),
): string {
  let line = lineStart(format, time, level, scope, message);
  if (fields)
    for (const name in fields) {
      const value = fields[name];
      if (value !== undefined) line += fieldKey(format, name) + encodeValue(format, value);
    }
  return line + lineEnd(format);
}

/**
 * A LogFunction writing the lines of `module` that `filter` lets through, whole (with their
 * newline), to `write`; `fields` go on every line, also of the modules it makes.
 */
export function lineLogger(
  format: LogFormat,
  module: LogModule,
  write: (text: string) => void,
  filter: LogFilter = DEFAULT_LOG_FILTER,
  fields?: Readonly<Record<string, LogValue>>,
): LogFunction {
  const log = (message: string, level: LogLevel = 'info', more?: Readonly<Record<string, LogValue>>) => {
    if (!filter.enabled(module, level)) return;
    const all = fields && more ? { ...fields, ...more } : (fields ?? more);
    write(`${formatLogLine(format, level, module, message, all)}\n`);
  };
  return Object.assign(log, { module: (name: LogModule) => lineLogger(format, name, write, filter, fields) });
}
