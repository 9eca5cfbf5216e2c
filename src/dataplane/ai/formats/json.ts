// Reading decoded JSON defensively: translators meet bodies written by clients and providers.
import { isPlainObject } from '../../../util/values.ts';
import type { JsonObject } from './types.ts';

export { isPlainObject };

export function stringOr(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function numberOr(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export function objectOr(value: unknown): JsonObject | undefined {
  return isPlainObject(value) ? value : undefined;
}

/** A value that changes something when sent: not absent, not null, not false. */
export function isSet(value: unknown): boolean {
  return value !== undefined && value !== null && value !== false;
}

/** The keys of `source` not in `known`, copied in order: gw carries unknown fields over unchanged. */
export function unknownFields(source: JsonObject, known: ReadonlySet<string>): JsonObject {
  const out: JsonObject = {};
  // for-in rather than Object.entries: no array per field, on every translated request's path.
  for (const key in source) if (!known.has(key)) out[key] = source[key];
  return out;
}

/** The fields of a part or tool outside `known`, copied in order; undefined when there are none. */
export function extraFields(source: JsonObject, known: readonly string[]): JsonObject | undefined {
  let extra: JsonObject | undefined;
  for (const key in source) {
    if (known.includes(key)) continue;
    extra ??= {};
    extra[key] = source[key];
  }
  return extra;
}
