// The CEL variables of a recorded request (cel-context.ts: exactly what policies and the access
// log see of it), taken whole and written as plain JSON, so that they can cross IPC from a worker
// of gw run --workers and a thread boundary to the playground's evaluation thread, and be shown
// in the browser. CEL values JSON has no room for (ints, timestamps, durations, bytes, maps with
// any keys, non-finite doubles) are written as a tagged object {"$cel": type, "v": ...}; a plain
// object that happens to have a "$cel" key is written as a tagged map, so decoding is exact.
//
// Credentials are not part of what leaves the process: header values of credential headers
// (Authorization, API key headers, cookies, and any header whose name says key, token, secret,
// session, password or auth: isCredentialName, the list the web UI hides spec values by) are
// replaced by "<redacted>" — the playground evaluates against those, so an expression cannot read
// a client's key into the browser.
import { Duration } from '@marcbachmann/cel-js/evaluator';
import { isCredentialName } from '../../api/credentials.ts';
import { celContext } from './cel-context.ts';
import type { RequestRecord } from './request-record.ts';

export type CelJson = null | boolean | number | string | CelJson[] | { [key: string]: CelJson };

/** The variables of a recorded request, as CelJson by name. */
export type RecordedVariables = Record<string, CelJson>;

const TAG = '$cel';
export const REDACTED = '<redacted>';

/** The variables cel-context.ts defines (docs/cel.md). */
const VARIABLES = ['request', 'response', 'source', 'backend', 'llm', 'proxy', 'jwt', 'apiKey'] as const;

/** The request's CEL variables, credentials redacted, as JSON. */
export function recordedVariables(record: RequestRecord): RecordedVariables {
  const context = celContext(record) as Record<string, unknown>;
  const out: RecordedVariables = {};
  for (const name of VARIABLES) {
    const value = context[name];
    if (value === undefined) continue;
    out[name] = encodeCel(name === 'request' || name === 'response' ? redactHeaders(value) : value);
  }
  return out;
}

function redactHeaders(variable: unknown): unknown {
  const headers = (variable as { headers?: Record<string, string> }).headers;
  if (!headers) return variable;
  const redacted: Record<string, string> = {};
  for (const name of Object.keys(headers)) redacted[name] = isCredentialName(name) ? REDACTED : headers[name]!;
  return { ...(variable as object), headers: redacted };
}

/** A CEL value as JSON (see the header comment). */
export function encodeCel(value: unknown): CelJson {
  switch (typeof value) {
    case 'bigint':
      return { [TAG]: 'int', v: value.toString() };
    case 'number':
      return Number.isFinite(value) ? value : { [TAG]: 'double', v: String(value) };
    case 'string':
    case 'boolean':
      return value;
    case 'undefined':
      return null;
  }
  if (value === null) return null;
  if (Array.isArray(value)) return value.map(encodeCel);
  if (value instanceof Date) return { [TAG]: 'timestamp', v: value.getTime() };
  if (value instanceof Duration) return { [TAG]: 'duration', v: [value.seconds.toString(), value.nanos] };
  if (value instanceof Uint8Array) return { [TAG]: 'bytes', v: Buffer.from(value).toString('base64') };
  if (value instanceof Map) return { [TAG]: 'map', v: [...value].map(([k, v]) => [encodeCel(k), encodeCel(v)]) };
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (Object.hasOwn(value, TAG)) return { [TAG]: 'map', v: entries.map(([k, v]) => [k, encodeCel(v)]) };
    const out: Record<string, CelJson> = {};
    for (const [key, item] of entries) out[key] = encodeCel(item);
    return out;
  }
  return String(value);
}

/** The CEL value encodeCel() wrote. */
export function decodeCel(json: CelJson): unknown {
  if (json === null || typeof json !== 'object') return json;
  if (Array.isArray(json)) return json.map(decodeCel);
  const tag = json[TAG];
  if (typeof tag !== 'string') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(json)) out[key] = decodeCel(json[key]!);
    return out;
  }
  const v = json.v as CelJson;
  switch (tag) {
    case 'int':
      return BigInt(v as string);
    case 'double':
      return Number(v);
    case 'timestamp':
      return new Date(v as number);
    case 'duration': {
      const [seconds, nanos] = v as [string, number];
      return new Duration(BigInt(seconds), nanos);
    }
    case 'bytes':
      return new Uint8Array(Buffer.from(v as string, 'base64'));
    case 'map': {
      const pairs = (v as [CelJson, CelJson][]).map(([k, item]) => [decodeCel(k), decodeCel(item)] as const);
      // Keys are strings for the objects CEL gets elsewhere in gw; a Map keeps other key types.
      if (pairs.every(([k]) => typeof k === 'string')) return Object.fromEntries(pairs);
      return new Map(pairs);
    }
  }
  throw new Error(`unknown CEL value type ${JSON.stringify(tag)}`);
}

/** Variables for Expression.evaluate from recorded ones. */
export function decodeVariables(variables: RecordedVariables): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(variables)) out[name] = decodeCel(variables[name]!);
  return out;
}

/**
 * A CEL value as a person reads it in JSON: ints as numbers (as text beyond 2^53), timestamps in
 * RFC 3339, durations as `1.5s`, bytes in base64, maps as objects.
 */
export function displayCel(value: unknown): unknown {
  if (typeof value === 'bigint')
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'invalid timestamp' : value.toISOString();
  if (value instanceof Duration) return value.toString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(displayCel);
  if (value instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of value) out[String(key)] = displayCel(item);
    return out;
  }
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = displayCel(item);
    return out;
  }
  return value ?? null;
}
