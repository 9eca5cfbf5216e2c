// The OrConditional form of directResponse, transformation, extAuth, extProc and rateLimit:
// either one policy inline, or a list of {condition, policy} tried in order where the first whose
// condition holds applies (a condition that fails to evaluate does not hold) and a last entry
// without condition is the fallback. When nothing applies the request goes on.
import type { Expression } from '../cel/expression.ts';
import type { CelVariables } from '../telemetry/cel-context.ts';
import { compileField } from './cel-field.ts';
import { isProblem, type PolicyProblem } from './types.ts';

export interface ChoiceEntry<T> {
  /** Undefined: always applies (the inline policy, or the fallback entry). */
  readonly condition: Expression | undefined;
  readonly policy: T;
}

export type Choice<T> = readonly ChoiceEntry<T>[];

/**
 * Compiles the inline policy (when `conditional` is unset) or every conditional entry.
 * `compile` gets the entry's policy, its field path and its place ("inline", "conditional 0"),
 * which names state kept across reloads apart; the first problem is returned.
 */
export function compileChoice<I, T>(
  inline: I,
  conditional: readonly { condition?: string; policy: I }[] | undefined,
  field: string,
  compile: (policy: I, field: string, place: string) => T | PolicyProblem,
): Choice<T> | PolicyProblem {
  if (!conditional) {
    const policy = compile(inline, field, 'inline');
    return isProblem(policy) ? policy : [{ condition: undefined, policy }];
  }
  const entries: ChoiceEntry<T>[] = [];
  for (const [index, entry] of conditional.entries()) {
    const entryField = `${field}.conditional[${index}]`;
    let condition: Expression | undefined;
    if (entry.condition !== undefined) {
      const compiled = compileField(entry.condition, `${entryField}.condition`);
      if (isProblem(compiled)) return compiled;
      condition = compiled;
    }
    const policy = compile(entry.policy, `${entryField}.policy`, `conditional ${index}`);
    if (isProblem(policy)) return policy;
    entries.push({ condition, policy });
  }
  return entries;
}

/** The first entry whose condition holds (a failing condition does not), or undefined. */
export function choose<T>(choice: Choice<T>, variables: () => CelVariables): T | undefined {
  for (const entry of choice) {
    if (entry.condition === undefined || conditionHolds(entry.condition, variables())) return entry.policy;
  }
  return undefined;
}

/** A condition holds only when it evaluates to true; an error or any other value does not. */
export function conditionHolds(condition: Expression, variables: CelVariables): boolean {
  try {
    return condition.evaluate(variables) === true;
  } catch {
    return false;
  }
}
