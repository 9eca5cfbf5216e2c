// Deterministic time and randomness for the balancing tests.
import { fakeClock as movableClock } from '../../helpers/fake-clock.ts';

/** The monotonic scale of a clock the test moves (test/helpers/fake-clock.ts), as balancing reads it. */
export interface FakeClock {
  now: () => number;
  advance(ms: number): void;
}

export function fakeClock(start = 1_000_000): FakeClock {
  const clock = movableClock(undefined, start);
  return { now: clock.monotonicMs, advance: clock.advance };
}

export { seededRandom } from '../../helpers/random.ts';

/** How often each key came out of `draw` in `times` draws, as shares of the total. */
export function shares(times: number, draw: () => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (let i = 0; i < times; i++) {
    const key = draw();
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return new Map([...counts].map(([key, count]) => [key, count / times]));
}

export const UNHEALTHY = { status: 503, unhealthy: true } as const;
export const HEALTHY = { status: 200, latencyMs: 100, unhealthy: false } as const;
