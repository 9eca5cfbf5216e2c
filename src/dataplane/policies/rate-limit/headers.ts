// The rate limit headers gw sends, as agentgateway does: x-ratelimit-limit, -remaining and -reset
// (draft-polli-ratelimit-headers-03 names) for the most constrained limit, on allowed responses
// and on 429s; a 429 also carries retry-after. Seconds are rounded up, so a client that waits
// that long finds the limit refilled.
import type { ResponseHead } from '../../proxy/client-response.ts';
import type { LocalResponse } from '../types.ts';

/** One limit as a client sees it. */
export interface LimitStatus {
  /** Most the limit allows at once (a local bucket's capacity, the service's requests per unit). */
  limit: number;
  /** What is left now. */
  remaining: number;
  /** Seconds until the limit next refills or resets. */
  resetSeconds: number;
}

export const LIMIT_HEADER = 'x-ratelimit-limit';
export const REMAINING_HEADER = 'x-ratelimit-remaining';
export const RESET_HEADER = 'x-ratelimit-reset';
const STATUS_HEADERS = [LIMIT_HEADER, REMAINING_HEADER, RESET_HEADER] as const;

/** The limit a client will hit first: the one with the least remaining (the first on a tie). */
export function mostConstrained(a: LimitStatus | undefined, b: LimitStatus | undefined): LimitStatus | undefined {
  if (!a) return b;
  if (!b) return a;
  return b.remaining < a.remaining ? b : a;
}

/** Whole seconds, rounded up, of a time left in milliseconds (0 when none is left). */
export function secondsUntil(ms: number): number {
  return ms > 0 ? Math.ceil(ms / 1000) : 0;
}

/** Sets the x-ratelimit-* headers of `status` unless the response has one of them already. */
export function setStatusHeaders(headers: Record<string, string | string[]>, status: LimitStatus): void {
  if (STATUS_HEADERS.some((name) => headers[name] !== undefined)) return;
  headers[LIMIT_HEADER] = String(Math.floor(status.limit));
  headers[REMAINING_HEADER] = String(Math.max(0, Math.floor(status.remaining)));
  headers[RESET_HEADER] = String(status.resetSeconds);
}

/** The same for a response being written (an upstream's own x-ratelimit-* headers are kept). */
export function setResponseStatusHeaders(res: ResponseHead, status: LimitStatus): void {
  if (STATUS_HEADERS.some((name) => res.hasHeader(name))) return;
  res.setHeader(LIMIT_HEADER, String(Math.floor(status.limit)));
  res.setHeader(REMAINING_HEADER, String(Math.max(0, Math.floor(status.remaining))));
  res.setHeader(RESET_HEADER, String(status.resetSeconds));
}

/**
 * The 429 answer. `headers` (a rate limit service's, lower-case names) come first and win;
 * `status` fills in the x-ratelimit-* headers they lack; retry-after is `retryAfterSeconds`
 * (at least 1) unless `headers` has one or it is unknown.
 */
export function tooManyRequests(
  status: LimitStatus | undefined,
  retryAfterSeconds: number | undefined,
  headers: Record<string, string | string[]> = {},
  body?: Buffer,
): LocalResponse {
  if (status) setStatusHeaders(headers, status);
  if (retryAfterSeconds !== undefined && headers['retry-after'] === undefined)
    headers['retry-after'] = String(Math.max(1, retryAfterSeconds));
  // A rate limit service's own body is relayed as it is; without one, the refusal is gw's.
  return body === undefined
    ? { status: 429, headers, body: 'rate limit exceeded', own: 'refusal' }
    : { status: 429, headers, body };
}
