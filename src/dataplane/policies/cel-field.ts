// CEL expressions of a policy's configuration compiled once, when the configuration arrives: an
// expression that does not compile refuses the rule with a problem naming its field.
import { compileExpression, type Expression, ExpressionError } from '../cel/expression.ts';
import { isProblem, type PolicyProblem } from './types.ts';

/** name → expression, in the configuration's order. */
export type NamedExpressions = readonly (readonly [string, Expression])[];

/** Compiles one CEL field, or the problem naming it. */
export function compileField(source: string, field: string): Expression | PolicyProblem {
  const compiled = compileExpression(source);
  return compiled instanceof ExpressionError ? { field, message: `is not valid CEL: ${compiled.message}` } : compiled;
}

/** Compiles a map of name → CEL (field: the map's path; a problem names `<field>.<name>`). */
export function compileFields(entries: Record<string, string>, field: string): NamedExpressions | PolicyProblem {
  const out: [string, Expression][] = [];
  for (const [name, source] of Object.entries(entries)) {
    const expression = compileField(source, `${field}.${name}`);
    if (isProblem(expression)) return expression;
    out.push([name, expression]);
  }
  return out;
}
