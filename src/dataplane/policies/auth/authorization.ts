// CEL authorization rules (traffic.authorization; spec document 1, "Authentication" rule 6).
// Policies merge per field, so at one place there is exactly one rule: its matchExpressions all
// true make it match. An expression that fails (a missing variable, a type error) or yields
// anything but true counts as not true, so the rule does not match:
//   Allow   — a match allows; no match is 403 (an Allow rule exists, so unmatched requests are denied).
//   Require — the same with a single rule: a match goes on, no match is 403.
//   Deny    — a match is 403; no match goes on. A failing expression therefore fails to deny,
//             which is why the spec discourages Deny rules.
// The expressions run in order and stop at the first that is not true.
import type { Authorization } from '../../../api/types/inbound-auth.ts';
import { compileExpression, type Expression, ExpressionError } from '../../cel/expression.ts';
import type { CelVariables } from '../../telemetry/cel-context.ts';
import { isProblem, type LocalResponse, type PolicyCompiler, type PolicyProblem } from '../types.ts';

const FORBIDDEN: LocalResponse = {
  status: 403,
  body: 'the request is not allowed by the authorization policy',
  own: 'refusal',
};

/** True when every expression evaluates to true; a failure or another value is not true. */
function allTrue(expressions: readonly Expression[], variables: CelVariables): boolean {
  for (const expression of expressions) {
    try {
      if (expression.evaluate(variables) !== true) return false;
    } catch {
      return false;
    }
  }
  return true;
}

/** A compiled Authorization: whether it lets a request, given its CEL variables, go on. */
export interface AuthorizationRule {
  /** Allow and Require: the rule matched; Deny: it did not. */
  allows(variables: CelVariables): boolean;
}

/**
 * Compiles an Authorization once; `field` is its path for problems ("traffic.authorization").
 * The MCP backend's per-item authorization (src/dataplane/mcp/policies) evaluates the same rule.
 */
export function compileAuthorizationRule(value: Authorization, field: string): AuthorizationRule | PolicyProblem {
  const expressionsField = `${field}.policy.matchExpressions`;
  const expressions: Expression[] = [];
  for (const [index, source] of value.policy.matchExpressions.entries()) {
    const expression = compileExpression(source);
    if (expression instanceof ExpressionError)
      return {
        field: `${expressionsField}[${index}]`,
        message: `the CEL expression does not compile: ${expression.message}`,
      };
    expressions.push(expression);
  }
  const denyOnMatch = (value.action ?? 'Allow') === 'Deny';
  return { allows: (variables) => allTrue(expressions, variables) !== denyOnMatch };
}

export const compileAuthorization: PolicyCompiler<Authorization> = (value, context) => {
  const rule = compileAuthorizationRule(value, `${context.path}.authorization`);
  if (isProblem(rule)) return rule;
  return { request: (exchange) => (rule.allows(exchange.cel()) ? undefined : FORBIDDEN) };
};
