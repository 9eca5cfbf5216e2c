// Local and global rate limits (traffic.rateLimit): the local token buckets are tried first (no
// network call for a request they refuse), then the rate limit service. An admitted request's
// response carries the x-ratelimit-* headers of the most constrained limit and any headers the
// service asked for. With `conditional`, the first entry whose condition holds applies (a
// condition that fails to evaluate does not hold); when none does, nothing is limited.
import type { RateLimits, RateLimitsOrConditional } from '../../../api/types/traffic.ts';
import { choose, compileChoice } from '../conditional.ts';
import type { PolicyExchange } from '../exchange.ts';
import {
  isProblem,
  type PolicyCompileContext,
  type PolicyCompiler,
  type PolicyProblem,
  type StepResult,
} from '../types.ts';
import { compileGlobalLimit, type GlobalAdmission, type GlobalLimit } from './global.ts';
import { setResponseStatusHeaders } from './headers.ts';
import { compileLocalLimits, type LocalLimits } from './local.ts';

interface CompiledLimits {
  local: LocalLimits | undefined;
  global: GlobalLimit | undefined;
}

function compileLimits(
  value: RateLimits,
  context: PolicyCompileContext,
  field: string,
  place: string,
): CompiledLimits | PolicyProblem {
  const local = value.local ? compileLocalLimits(value.local, context, place) : undefined;
  let global: GlobalLimit | undefined;
  if (value.global) {
    const compiled = compileGlobalLimit(value.global, context, `${field}.global`);
    if (isProblem(compiled)) return compiled;
    global = compiled;
  }
  return { local, global };
}

/** Applies one set of limits to a request: an answer (429, or 500 failing closed) or undefined. */
function enforce(limits: CompiledLimits, exchange: PolicyExchange): StepResult | Promise<StepResult> {
  const admission: GlobalAdmission = { status: undefined, responseHeaders: undefined };
  if (limits.local) {
    const answer = limits.local.admit(exchange, admission);
    if (answer) return answer;
  }
  if (!limits.global) {
    announce(exchange, admission);
    return undefined;
  }
  return limits.global.admit(exchange, admission).then((answer) => {
    if (answer) return answer;
    announce(exchange, admission);
    return undefined;
  });
}

/** Puts the admitted request's rate limit headers on its response, whoever writes it. */
function announce(exchange: PolicyExchange, admission: GlobalAdmission): void {
  const { status, responseHeaders } = admission;
  if (!status && !responseHeaders) return;
  exchange.onResponse((res) => {
    if (responseHeaders) for (const [name, value] of responseHeaders) res.setHeader(name, value);
    if (status) setResponseStatusHeaders(res, status);
  });
}

export const compileRateLimit: PolicyCompiler<RateLimitsOrConditional> = (value, context) => {
  const choice = compileChoice(
    value as RateLimits,
    value.conditional,
    `${context.path}.rateLimit`,
    (limits, field, place) => compileLimits(limits, context, field, place),
  );
  if (isProblem(choice)) return choice;
  return {
    request: (exchange) => {
      const limits = choose(choice, () => exchange.cel());
      return limits ? enforce(limits, exchange) : undefined;
    },
  };
};
