// Retries of failed upstream attempts (traffic.retry): Gateway API's HTTPRouteRetry (codes,
// attempts, backoff) with agentgateway's precondition and condition expressions. The policy is
// compiled here; the HTTP forwarder runs the attempts (proxy/http-forward.ts) and the request
// handler decides whether a request may be retried at all (precondition, a replayable body).
// Attempts on AI backends are the AI path's own (provider failover), not these.
import type { Retry } from '../../../api/types/traffic.ts';
import { durationMs } from '../../../util/units.ts';
import { type CelVariables, celHeaders } from '../../telemetry/cel-context.ts';
import { compileField } from '../cel-field.ts';
import { conditionHolds } from '../conditional.ts';
import type { PolicyExchange } from '../exchange.ts';
import { withVariables } from '../http/cel-values.ts';
import { isProblem, type PolicyCompiler, type RetryPolicy } from '../types.ts';

/** Retries when `attempts` is unset (agentgateway's default): one. */
export const DEFAULT_RETRY_ATTEMPTS = 1;

export const compileRetry: PolicyCompiler<Retry> = (value, context) => {
  const field = `${context.path}.retry`;
  const policy: RetryPolicy = {
    attempts: value.attempts ?? DEFAULT_RETRY_ATTEMPTS,
    codes: new Set(value.codes ?? []),
    backoffMs: value.backoff !== undefined ? durationMs(value.backoff) : 0,
  };
  if (value.precondition !== undefined) {
    const precondition = compileField(value.precondition, `${field}.precondition`);
    if (isProblem(precondition)) return precondition;
    // A failing expression is "not true": no retries, as agentgateway does.
    policy.precondition = (exchange) => conditionHolds(precondition, exchange.cel());
  }
  if (value.condition !== undefined) {
    const condition = compileField(value.condition, `${field}.condition`);
    if (isProblem(condition)) return condition;
    policy.condition = (exchange, status, headers) =>
      conditionHolds(condition, responseVariables(exchange, status, headers));
  }
  return { forwarding: { retry: policy } };
};

/**
 * The request's CEL variables with `response` set to an attempt's response (code and headers):
 * the response the client has not been sent, which the request's own context cannot show yet.
 */
export function responseVariables(
  exchange: PolicyExchange,
  status: number,
  headers: Record<string, string | string[] | undefined>,
): CelVariables {
  return withVariables(exchange.cel(), { response: { code: BigInt(status), headers: celHeaders(headers) } });
}

/** Whether the attempt that answered `status` is retried: its code is listed, or the condition holds. */
export function retriesStatus(
  policy: RetryPolicy,
  exchange: PolicyExchange,
  status: number,
  headers: Record<string, string | string[] | undefined>,
): boolean {
  return policy.codes.has(status) || (policy.condition?.(exchange, status, headers) ?? false);
}
