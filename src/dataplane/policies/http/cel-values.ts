// What the HTTP policies (direct response, transformation, delay) do with CEL beyond compiling
// and evaluating it (src/dataplane/cel/expression.ts): extra variables laid over a request's
// context, and CEL results turned into header values and bodies.

import { INVALID_FIELD_VALUE } from '../../../util/http-field-syntax.ts';
import { type Expression, fromCelValue } from '../../cel/expression.ts';
import type { CelVariables } from '../../telemetry/cel-context.ts';

/**
 * `base` with `overrides` in front. A view, not a copy: the request's context is a class whose
 * variables are getters built on first use (telemetry/cel-context.ts), which a spread would lose.
 */
export function withVariables(base: CelVariables, overrides: Record<string, unknown>): CelVariables {
  return new Proxy(base, {
    get: (target, name) =>
      typeof name === 'string' && Object.hasOwn(overrides, name) ? overrides[name] : Reflect.get(target, name),
    has: (target, name) => (typeof name === 'string' && Object.hasOwn(overrides, name)) || Reflect.has(target, name),
  });
}

/** Whether an expression reads `<variable>.body` (request.body, response.body), so the body must be read first. */
export function readsBody(source: string, variable: 'request' | 'response'): boolean {
  return new RegExp(`\\b${variable}\\s*(\\.\\s*body\\b|\\[\\s*["']body["']\\s*\\])`).test(source);
}

// Node refuses header values with other characters (RFC 9110 field-value, obs-text included).

/**
 * A CEL result as a header value: strings as they are, bytes as Latin-1, numbers and booleans
 * in their text form. Anything else (maps, lists, null, timestamps) or a value with characters a
 * header cannot carry (CR, LF, other controls) is no value: undefined.
 */
export function headerValue(value: unknown): string | undefined {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (value instanceof Uint8Array)
    text = Buffer.from(value.buffer, value.byteOffset, value.length).toString('latin1');
  else if (typeof value === 'bigint' || typeof value === 'boolean') text = String(value);
  else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else if (isUnsignedInt(value)) text = String(value.valueOf());
  else return undefined;
  return INVALID_FIELD_VALUE.test(text) ? undefined : text;
}

/** CEL's uint: an object whose primitive value is a BigInt. */
function isUnsignedInt(value: unknown): value is { valueOf(): bigint } {
  return value !== null && typeof value === 'object' && typeof value.valueOf() === 'bigint';
}

/** Evaluates a header value expression; a failure or an unusable result is undefined. */
export function evaluateHeaderValue(expression: Expression, variables: CelVariables): string | undefined {
  try {
    return headerValue(expression.evaluate(variables));
  } catch {
    return undefined;
  }
}

/** A CEL result as a body: strings as UTF-8, bytes as they are, anything else as JSON. */
export function bodyBytes(value: unknown): Buffer {
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.length);
  return Buffer.from(JSON.stringify(fromCelValue(value) ?? null), 'utf8');
}
