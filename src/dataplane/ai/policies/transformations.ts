// BackendAI.transformations / finalTransformations (and a GwModel's policies of the same names):
// a top-level body field set to the value of a CEL expression. Every expression of one list sees
// the same body — the one the list is applied to — as `llmRequest`, next to the request
// variables the proxy passes (request, jwt, ...); so no transformation sees another's result and
// the order of the list does not matter (for the same field the later entry wins). A failing
// expression, or a result that is not JSON, removes the field and records a warning: the
// request goes on, as in agentgateway.
import type { FieldTransformation } from '../../../api/types/ai.ts';
import { firstLine } from '../../../util/values.ts';
import { compileExpression, type Expression, ExpressionError, fromCelValue, toCelValue } from '../../cel/expression.ts';
import type { JsonObject } from '../formats/types.ts';
import { setField } from './body-fields.ts';
import type { AiPolicyError, AiPolicyWarning } from './types.ts';

/** The CEL variable that holds the request body (agentgateway's name). */
export const BODY_VARIABLE = 'llmRequest';

/** One transformation with where it was configured (for errors and warnings). */
export interface TransformationEntry {
  field: string;
  expression: string;
  /** The expression's configuration path, such as `ai.transformations[2].expression`. */
  path: string;
}

/** The entries of a configured list, each with its configuration path. */
export function transformationEntries(
  list: FieldTransformation[] | undefined,
  listPath: string,
): TransformationEntry[] {
  return (list ?? []).map((item, index) => ({
    field: item.field,
    expression: item.expression,
    path: `${listPath}[${index}].expression`,
  }));
}

export interface CompiledTransformations {
  /** Writes the results into `body` (which the caller owns); failures go to `warnings`. */
  apply(body: JsonObject, variables: Record<string, unknown>, warnings: AiPolicyWarning[]): void;
}

interface Compiled {
  field: string;
  path: string;
  expression: Expression;
}

/**
 * Compiles the backend-level and the model-level entries into one list; every syntax error is
 * pushed to `errors` with its path (also in an entry that the other list replaces). For the
 * same field the model's entry replaces the backend's (the model is the more specific target);
 * other fields of both are kept.
 */
export function compileTransformations(
  backend: TransformationEntry[],
  model: TransformationEntry[],
  errors: AiPolicyError[],
): CompiledTransformations | undefined {
  const byField = new Map<string, Compiled>();
  for (const entry of [...backend, ...model]) {
    const expression = compileExpression(entry.expression);
    if (expression instanceof ExpressionError) {
      errors.push({ path: entry.path, message: expression.message });
    } else {
      byField.set(entry.field, { field: entry.field, path: entry.path, expression });
    }
  }
  const compiled = [...byField.values()];
  if (compiled.length === 0) return undefined;
  return {
    apply(body, variables, warnings) {
      const scope = withBodyVariable(variables, toCelValue(body));
      // Evaluate all first: every expression sees the same body.
      const results = compiled.map((item) => evaluate(item, scope));
      for (let i = 0; i < compiled.length; i++) {
        const { field, path } = compiled[i];
        const result = results[i];
        if (result.ok) {
          setField(body, field, result.value);
        } else {
          delete body[field];
          warnings.push({ path, field, message: result.message });
        }
      }
    },
  };
}

/**
 * The proxy's variables with `llmRequest` added. They are not copied: the request's variables
 * are getters of a class, built on first use (telemetry/cel-context.ts), which a spread would
 * drop — `request.headers` would be missing.
 */
function withBodyVariable(variables: Record<string, unknown>, body: unknown): Record<string, unknown> {
  return new Proxy(variables, {
    get: (target, name) => (name === BODY_VARIABLE ? body : Reflect.get(target, name)),
  });
}

type Evaluation = { ok: true; value: unknown } | { ok: false; message: string };

function evaluate(item: Compiled, scope: Record<string, unknown>): Evaluation {
  let value: unknown;
  try {
    value = item.expression.evaluate(scope);
  } catch (error) {
    return { ok: false, message: firstLineOf(error) };
  }
  const problem = notJson(value);
  if (problem) return { ok: false, message: `the result is ${problem}, not a JSON value` };
  return { ok: true, value: fromCelValue(value) };
}

/**
 * What in a CEL result has no JSON form (a timestamp, a duration, a type, an unsigned int, a
 * non-finite double), or undefined. Such values would otherwise turn into `{}` or `null`.
 */
function notJson(value: unknown): string | undefined {
  if (value === null || typeof value === 'string' || typeof value === 'boolean' || typeof value === 'bigint') {
    return undefined;
  }
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : String(value);
  if (Array.isArray(value)) {
    for (const item of value) {
      const problem = notJson(item);
      if (problem) return problem;
    }
    return undefined;
  }
  if (value instanceof Uint8Array) return undefined;
  if (value instanceof Map) {
    for (const item of value.values()) {
      const problem = notJson(item);
      if (problem) return problem;
    }
    return undefined;
  }
  if (typeof value === 'object') {
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null) {
      return value instanceof Date ? 'a timestamp' : `a ${(value as object).constructor?.name ?? 'CEL value'}`;
    }
    for (const item of Object.values(value)) {
      const problem = notJson(item);
      if (problem) return problem;
    }
    return undefined;
  }
  return `a ${typeof value}`;
}

function firstLineOf(error: unknown): string {
  return firstLine(error instanceof Error ? error.message : String(error));
}
