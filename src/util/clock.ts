// The clock gw reads wherever time decides what is still valid: caches, windows, evictions
// (docs/security.md, "Time and expiry"). The system's by default; a test hands in one it moves, so
// that every expiry can be shown to happen at its bound and not before.

export interface Clock {
  /** Milliseconds since the Unix epoch (Date.now): for times someone else sets, such as a token's exp. */
  readonly epochMs: () => number;
  /** Milliseconds on a monotonic scale (performance.now): for intervals gw measures itself, which a step of the system clock must not stretch or cut. */
  readonly monotonicMs: () => number;
}

export const systemClock: Clock = {
  epochMs: Date.now,
  monotonicMs: () => performance.now(),
};
