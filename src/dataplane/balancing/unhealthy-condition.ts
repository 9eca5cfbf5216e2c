// Health.unhealthyCondition compiled once: a CEL expression over the observed response
// (`response.code`) and `connectionFailed`; true means unhealthy. An expression that fails at run
// time falls back to the spec's default (any 5xx or a connection failure).
import type { Health } from '../../api/types/backend-connection.ts';
import { compileExpression, ExpressionError } from '../cel/expression.ts';
import { defaultUnhealthyCondition, type UnhealthyCondition } from './endpoint-health.ts';

/** The condition of `health` (the default without one), or the compile error of its expression. */
export function compileUnhealthyCondition(health: Health | undefined): UnhealthyCondition | ExpressionError {
  if (!health?.unhealthyCondition) return defaultUnhealthyCondition;
  const expression = compileExpression(health.unhealthyCondition);
  if (expression instanceof ExpressionError) return expression;
  return (response) => {
    try {
      return (
        expression.evaluate({
          response: { code: BigInt(response.status ?? 0) },
          connectionFailed: response.connectionFailed === true,
        }) === true
      );
    } catch {
      return defaultUnhealthyCondition(response);
    }
  };
}
