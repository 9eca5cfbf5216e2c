// The CEL engine gw uses everywhere (admission rules now, policies on the request path later):
// @marcbachmann/cel-js, chosen over @bufbuild/cel for speed (see docs/benchmarks.md).
// Expressions are parsed once into programs; evaluation never re-parses.
import { Environment } from '@marcbachmann/cel-js';
import { firstLine } from '../util/values.ts';

export type CelProgram = (bindings: Record<string, unknown>) => unknown;

export interface CelCompileError {
  expression: string;
  message: string;
}

/** The environment Kubernetes gives `x-kubernetes-validations` rules: one variable, `self`. */
function createAdmissionEnvironment(): Environment {
  return new Environment({ homogeneousAggregateLiterals: false }).registerVariable('self', 'dyn');
}

const admissionEnvironment = createAdmissionEnvironment();
const admissionPrograms = new Map<string, CelProgram | CelCompileError>();

/**
 * Compiles an admission rule once and caches it; returns an error object when the rule does
 * not parse or type-check (a defect in our schema, reported by the CRD checks).
 */
export function compileAdmissionRule(expression: string): CelProgram | CelCompileError {
  let program = admissionPrograms.get(expression);
  if (program === undefined) {
    try {
      const checked = admissionEnvironment.check(expression);
      if (!checked.valid) {
        program = { expression, message: firstLine(checked.error?.message ?? 'type check failed') };
      } else {
        program = admissionEnvironment.parse(expression) as CelProgram;
      }
    } catch (error) {
      program = { expression, message: firstLine((error as Error).message) };
    }
    admissionPrograms.set(expression, program);
  }
  return program;
}

export function isCompileError(program: CelProgram | CelCompileError): program is CelCompileError {
  return typeof program !== 'function';
}

/**
 * Converts a decoded JSON/YAML value to the values CEL sees, as Kubernetes does when it hands
 * an unstructured object to CEL: whole numbers are `int` (BigInt here), others `double`.
 */
export function toCelValue(value: unknown): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(toCelValue);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) out[key] = toCelValue((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

/** Parses user expressions (policy CEL) for syntax only: their variables are the data plane's. */
const syntaxEnvironment = new Environment({ unlistedVariablesAreDyn: true, homogeneousAggregateLiterals: false });
const syntaxProblems = new Map<string, string | undefined>();

/** A syntax error in a user's CEL expression, or undefined when it parses. Cached per expression. */
export function celSyntaxProblem(expression: string): string | undefined {
  if (syntaxProblems.has(expression)) return syntaxProblems.get(expression);
  let problem: string | undefined;
  try {
    syntaxEnvironment.parse(expression);
  } catch (error) {
    problem = firstLine((error as Error).message);
  }
  if (syntaxProblems.size > 10_000) syntaxProblems.clear();
  syntaxProblems.set(expression, problem);
  return problem;
}
