// Fault injection: holds requests before they are sent on (traffic.delay). The duration is a
// duration string ("2s", "1m30s", "250ms") fixed at compile time, or CEL evaluated per request
// giving a CEL duration, a number of milliseconds (int, uint or double) or a duration string;
// zero, negative, or an expression that fails or gives anything else adds no delay
// (agentgateway's rules). A client that goes away ends the wait and the request with it.
import { Duration } from '@marcbachmann/cel-js/evaluator';
import type { Delay } from '../../../api/types/traffic.ts';
import { durationMs } from '../../../util/units.ts';
import type { Expression } from '../../cel/expression.ts';
import { compileField } from '../cel-field.ts';
import type { PolicyExchange } from '../exchange.ts';
import { isProblem, type LocalResponse, type PolicyCompiler } from '../types.ts';

/** The API's Duration format: a literal duration is not CEL (2s does not parse). */
const DURATION_LITERAL = /^([0-9]{1,5}(h|m|s|ms)){1,4}$/;

/** setTimeout's longest wait (about 24.8 days); longer ones would fire at once. */
export const MAX_DELAY_MS = 2_147_483_647;

export const compileDelay: PolicyCompiler<Delay> = (value, context) => {
  const source = value.duration.trim();
  if (DURATION_LITERAL.test(source)) {
    const ms = Math.min(durationMs(source), MAX_DELAY_MS);
    return ms > 0 ? { request: (exchange) => wait(exchange, ms) } : {};
  }
  const expression = compileField(source, `${context.path}.delay.duration`);
  if (isProblem(expression)) return expression;
  return {
    request: (exchange) => {
      const ms = delayMs(expression, exchange);
      return ms > 0 ? wait(exchange, ms) : undefined;
    },
  };
};

/** The delay an expression asks for, in ms (0 for none). */
export function delayMs(expression: Expression, exchange: PolicyExchange): number {
  let value: unknown;
  try {
    value = expression.evaluate(exchange.cel());
  } catch {
    return 0;
  }
  let ms: number;
  if (value instanceof Duration) ms = value.valueOf();
  else if (typeof value === 'number' || typeof value === 'bigint') ms = Number(value);
  else if (typeof value === 'string' && DURATION_LITERAL.test(value)) ms = durationMs(value);
  else if (
    value !== null &&
    typeof value === 'object' &&
    !(value instanceof Date) &&
    typeof value.valueOf() === 'bigint'
  )
    ms = Number(value.valueOf()); // a CEL uint
  else return 0;
  return Number.isFinite(ms) && ms > 0 ? Math.min(ms, MAX_DELAY_MS) : 0;
}

const CLIENT_GONE: LocalResponse = Object.freeze({ status: 499, body: 'client closed the request' });

/** Waits `ms`; resolves early (with an answer that stops the request) when the client goes away. */
function wait(exchange: PolicyExchange, ms: number): Promise<LocalResponse | undefined> {
  const res = exchange.res;
  if (res.destroyed) return Promise.resolve(CLIENT_GONE);
  return new Promise((resolve) => {
    const onClose = () => {
      clearTimeout(timer);
      resolve(CLIENT_GONE);
    };
    const timer = setTimeout(() => {
      res.off('close', onClose);
      resolve(undefined);
    }, ms);
    res.once('close', onClose);
  });
}
