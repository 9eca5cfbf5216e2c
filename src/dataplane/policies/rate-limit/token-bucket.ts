// The token bucket of a local rate limit, with agentgateway's semantics: the bucket holds at
// most `capacity` (rate + burst) and starts full; every `intervalMs` (the unit) `refillAmount`
// (the rate) is added at once, up to the capacity. Refills are counted from the bucket's
// creation and applied lazily when the bucket is next used, so an idle bucket costs nothing.
import { systemClock } from '../../../util/clock.ts';

export interface BucketSettings {
  capacity: number;
  refillAmount: number;
  intervalMs: number;
}

export class TokenBucket {
  readonly capacity: number;
  readonly refillAmount: number;
  readonly intervalMs: number;
  /** Monotonic milliseconds. */
  private readonly clock: () => number;
  private available: number;
  /** When the next refill is due, on `clock`. */
  private nextRefill: number;

  constructor(settings: BucketSettings, clock: () => number = systemClock.monotonicMs) {
    this.capacity = settings.capacity;
    this.refillAmount = settings.refillAmount;
    this.intervalMs = settings.intervalMs;
    this.clock = clock;
    this.available = settings.capacity;
    this.nextRefill = clock() + settings.intervalMs;
  }

  /** What the bucket holds now. */
  remaining(): number {
    this.refill(this.clock());
    return this.available;
  }

  /** Takes `amount` if the bucket holds that much (true), else takes nothing (false). */
  take(amount: number): boolean {
    this.refill(this.clock());
    if (this.available < amount) return false;
    this.available -= amount;
    return true;
  }

  /** Takes `amount` after the fact (used tokens): as much as there is, never below empty. */
  charge(amount: number): void {
    this.refill(this.clock());
    this.available = Math.max(0, this.available - amount);
  }

  /** Milliseconds until the next refill. */
  msUntilRefill(): number {
    const now = this.clock();
    this.refill(now);
    return this.nextRefill - now;
  }

  private refill(now: number): void {
    if (now < this.nextRefill) return;
    const intervals = Math.floor((now - this.nextRefill) / this.intervalMs) + 1;
    this.available = Math.min(this.capacity, this.available + intervals * this.refillAmount);
    this.nextRefill += intervals * this.intervalMs;
  }
}
