// The credentials basic authentication has verified recently, so that a client sending the same
// user and password on every request pays the password hash once per ttlMs (5 minutes) rather
// than every time. Only successes enter it, so it never makes a wrong guess cheaper. An entry is a keyed hash
// (HMAC-SHA-256 under a random key of this cache) of the user and password, never the password:
// the digests in memory cannot be brute-forced offline without the key. Bounded: at most
// maxEntries (1024), the least recently used dropped first; each entry expires ttlMs after it was
// verified, used or not. The cache belongs to one compiled policy and goes with it on a reload.
import { createHmac, randomBytes } from 'node:crypto';

export interface VerifiedCacheLimits {
  ttlMs: number;
  maxEntries: number;
}

export const VERIFIED_CACHE_LIMITS: VerifiedCacheLimits = {
  ttlMs: 5 * 60_000,
  // A few clients per user of a policy, for a policy of a few hundred users.
  maxEntries: 1024,
};

export class VerifiedCache {
  /** Milliseconds on a monotonic scale (the policy runtime's clock: a test's, in tests). */
  private readonly now: () => number;
  private readonly limits: VerifiedCacheLimits;
  private readonly hmacKey = randomBytes(32);
  /** Key → when it expires; Map order is least recently used first. */
  private readonly entries = new Map<string, number>();

  constructor(now: () => number, limits: VerifiedCacheLimits = VERIFIED_CACHE_LIMITS) {
    this.now = now;
    this.limits = limits;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The entry key of (user, password); the user's length goes first, so no two pairs hash the same bytes. */
  key(user: string, password: Buffer): string {
    return createHmac('sha256', this.hmacKey)
      .update(`${Buffer.byteLength(user)}:${user}`)
      .update(password)
      .digest('base64');
  }

  /** Whether `key` was verified and has not expired; a hit becomes the most recently used. */
  has(key: string): boolean {
    const expires = this.entries.get(key);
    if (expires === undefined) return false;
    this.entries.delete(key);
    if (this.now() >= expires) return false;
    this.entries.set(key, expires);
    return true;
  }

  /** Remembers a verified key for ttlMs, dropping the least recently used entry when full. */
  add(key: string): void {
    this.entries.delete(key);
    this.entries.set(key, this.now() + this.limits.ttlMs);
    if (this.entries.size > this.limits.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }
}
