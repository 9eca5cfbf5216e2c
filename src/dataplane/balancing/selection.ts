// Pieces shared by every selector in this folder: the per-request attempt sequence, injected
// randomness, weighted random choice and the order in which evicted endpoints are fallen back on.
import type { EndpointHealth } from './endpoint-health.ts';

/** A source of uniform numbers in [0, 1), injected so tests are deterministic (Math.random in production). */
export type Random = () => number;

/**
 * The endpoints to try for one request, best first. Each `next()` gives the next one to try after the
 * previous attempt failed; `undefined` once nothing is left. Health is re-read on every call, so the
 * outcome of an earlier attempt (reported before calling `next()` again) shapes the rest of the order.
 */
export interface AttemptSequence<T> {
  next(): T | undefined;
}

/**
 * Picks one item with probability proportional to its weight. Items whose weights are all zero (or
 * negative) are picked uniformly, so a choice is made whenever the list is non-empty.
 */
export function pickWeighted<T>(items: readonly T[], weightOf: (item: T) => number, random: Random): T | undefined {
  if (items.length === 0) return undefined;
  const weights = items.map((item) => Math.max(0, weightOf(item)));
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  if (total <= 0) return items[Math.min(items.length - 1, Math.floor(random() * items.length))];
  const point = random() * total;
  let reached = 0;
  for (let index = 0; index < items.length; index++) {
    reached += weights[index]!;
    if (point < reached) return items[index];
  }
  // Only reachable through rounding (or a random() that returns 1): the last item with weight.
  for (let index = items.length - 1; index >= 0; index--) if (weights[index]! > 0) return items[index];
  return items[items.length - 1];
}

/**
 * Order among evicted endpoints when selection has to fall back on them: the one whose eviction ends
 * soonest first (it is the least recently or least often failed). An endpoint whose eviction has
 * already ended sorts first of all. Ties keep the caller's order (Array.prototype.sort is stable).
 */
export function soonestRestoredFirst(a: EndpointHealth, b: EndpointHealth): number {
  const aUntil = a.evictedUntil ?? 0;
  const bUntil = b.evictedUntil ?? 0;
  return aUntil === bUntil ? 0 : aUntil < bUntil ? -1 : 1;
}
