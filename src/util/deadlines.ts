// Deadlines in milliseconds, where undefined (and 0) mean none: the shorter of two, what is left
// of one that started earlier, and work given up when one passes.

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

/**
 * `work`, or a rejection with `timedOut()` once `ms` have passed (then `onTimeout` runs first, to
 * abort the work). The timer keeps no stopping process alive and is cleared when `work` settles.
 */
export async function withDeadline<T>(
  work: Promise<T>,
  ms: number,
  timedOut: () => Error,
  onTimeout?: () => void,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout?.();
      reject(timedOut());
    }, ms);
    timer.unref();
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
