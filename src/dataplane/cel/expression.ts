// CEL on the request path: user expressions (policy conditions, transformations, log and metric
// attributes) compiled once when a configuration is loaded, then evaluated per request against
// plain objects. Every variable is dynamic: which ones an expression may use is documented in
// docs/cel.md, and a missing one is an evaluation error the caller handles (an attribute omitted,
// a label "unknown", a condition false) — never a crash.
import { Environment } from '@marcbachmann/cel-js';
import { toCelValue } from '../../cel/environment.ts';
import { firstLine } from '../../util/values.ts';
import { registerNetworkFunctions } from './network.ts';

export { toCelValue };

const environment = new Environment({
  unlistedVariablesAreDyn: true,
  enableOptionalTypes: true,
  homogeneousAggregateLiterals: false,
  // Expressions come from users; bound what one can make the proxy do per request.
  limits: { maxAstNodes: 4096, maxDepth: 64, maxListElements: 1000, maxMapEntries: 1000, maxCallArguments: 32 },
});
// cidr()/ip() for rules on addresses (source.address), e.g. Frontend.networkAuthorization.
registerNetworkFunctions(environment);

export interface Expression {
  readonly source: string;
  /** Evaluates against the variables; throws on a missing variable, a type error or a bad call. */
  evaluate(variables: Record<string, unknown>): unknown;
}

export class ExpressionError extends Error {
  readonly source: string;
  constructor(source: string, message: string) {
    super(message);
    this.source = source;
  }
}

/** Compiled programs by source: the same expression in many policies is parsed once. */
const compiled = new Map<string, Expression | ExpressionError>();
const MAX_CACHED = 10_000;

/** Compiles a user expression, or returns why it does not compile (never throws). */
export function compileExpression(source: string): Expression | ExpressionError {
  let result = compiled.get(source);
  if (result) return result;
  try {
    const program = environment.parse(source) as (variables: Record<string, unknown>) => unknown;
    result = { source, evaluate: program };
  } catch (error) {
    result = new ExpressionError(source, firstLine((error as Error).message));
  }
  if (compiled.size >= MAX_CACHED) compiled.clear();
  compiled.set(source, result);
  return result;
}

/** Evaluates, giving `fallback` when the expression fails (the spec's "a failing expression..." rules). */
export function evaluateOr<T>(expression: Expression, variables: Record<string, unknown>, fallback: T): unknown | T {
  try {
    return expression.evaluate(variables);
  } catch {
    return fallback;
  }
}

/** A CEL result as JSON: ints (BigInt) become numbers, Maps become objects. */
export function fromCelValue(value: unknown): unknown {
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(fromCelValue);
  if (value instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of value) out[String(key)] = fromCelValue(item);
    return out;
  }
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = fromCelValue(item);
    return out;
  }
  return value;
}
