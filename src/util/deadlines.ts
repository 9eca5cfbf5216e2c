// Deadlines in milliseconds, where undefined (and 0) mean none: the shorter of two, and what is
// left of one that started earlier.

/** The shorter of two deadlines that are set. */
export function shorterTimeout(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined || a <= 0) return b !== undefined && b > 0 ? b : undefined;
  return b !== undefined && b > 0 && b < a ? b : a;
}

/** What is left of a deadline of `timeoutMs` that started at `since` (at least 1 ms: an expired one fires at once). */
export function remainingMs(timeoutMs: number | undefined, since: bigint, now: bigint): number | undefined {
  if (timeoutMs === undefined || timeoutMs <= 0) return undefined;
  return Math.max(1, timeoutMs - Number(now - since) / 1e6);
}
