// A clock the test moves by hand (src/util/clock.ts): both of its scales advance together, and
// nothing happens between two reads unless the test says so.
import type { Clock } from '../../src/util/clock.ts';

export interface FakeClock extends Clock {
  /** Moves both scales `ms` forward. */
  advance(ms: number): void;
}

/** 2030-01-01T00:00:00Z: far from the real date, so a test cannot pass by reading the system clock. */
export const FAKE_EPOCH_START_MS = Date.UTC(2030, 0, 1);

/** A clock at `epochMs` on the epoch scale and `monotonicMs` on the monotonic one. */
export function fakeClock(epochMs = FAKE_EPOCH_START_MS, monotonicMs = 1_000_000): FakeClock {
  let elapsed = 0;
  return {
    epochMs: () => epochMs + elapsed,
    monotonicMs: () => monotonicMs + elapsed,
    advance: (ms) => {
      elapsed += ms;
    },
  };
}
