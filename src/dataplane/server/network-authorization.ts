// Frontend.networkAuthorization: one CEL authorization rule on each downstream connection,
// decided once when it is accepted (after its PROXY header, before TLS or HTTP), from where it
// comes: `source.address` and `source.port`. A denied connection is closed without an answer.
import type { Authorization } from '../../api/types/inbound-auth.ts';
import { compileExpression, type Expression, ExpressionError } from '../cel/expression.ts';
import type { PeerAddress } from './proxy-protocol.ts';

export interface NetworkAuthorization {
  /** Whether a connection from `source` may be served. */
  allows(source: PeerAddress): boolean;
}

/**
 * Compiles the rule, or says why it cannot be used. The rule matches when every expression is
 * true (an expression that fails or gives anything but true does not match). Allow and Require
 * admit only connections the rule matches; Deny refuses those it matches, so an expression that
 * fails never denies.
 */
export function compileNetworkAuthorization(rule: Authorization): NetworkAuthorization | string {
  const expressions: Expression[] = [];
  for (const [index, source] of rule.policy.matchExpressions.entries()) {
    const compiled = compileExpression(source);
    if (compiled instanceof ExpressionError)
      return `policy.matchExpressions[${index}] does not compile: ${compiled.message}`;
    expressions.push(compiled);
  }
  const deny = rule.action === 'Deny';
  return {
    allows(source) {
      const variables = { source: { address: source.address, port: BigInt(source.port) } };
      let matched = true;
      for (const expression of expressions) {
        let value: unknown;
        try {
          value = expression.evaluate(variables);
        } catch {
          value = false;
        }
        if (value !== true) {
          matched = false;
          break;
        }
      }
      return deny ? !matched : matched;
    },
  };
}
