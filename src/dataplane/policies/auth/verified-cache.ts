// The credentials basic authentication has verified recently, so that a client sending the same
// user and password on every request pays the password hash once per TTL_MS rather than every
// time. Only successes enter it, so it never makes a wrong guess cheaper. An entry is a keyed hash
// (HMAC-SHA-256 under a random key of this cache) of the user and password, never the password:
// the digests in memory cannot be brute-forced offline without the key. Bounded: at most
// MAX_ENTRIES, the least recently used dropped first; each entry expires TTL_MS after it was
// verified, used or not. The cache belongs to one compiled policy and goes with it on a reload.
import { createHmac, randomBytes } from 'node:crypto';

export interface VerifiedCacheSettings {
  ttlMs: number;
  maxEntries: number;
  /** Milliseconds on a monotonic clock (tests pass their own). */
  now: () => number;
}

/** A few clients per user of a policy, for a policy of a few hundred users. */
const MAX_ENTRIES = 1024;
const TTL_MS = 5 * 60_000;

export const DEFAULT_VERIFIED_CACHE: VerifiedCacheSettings = {
  ttlMs: TTL_MS,
  maxEntries: MAX_ENTRIES,
  now: () => performance.now(),
};

export class VerifiedCache {
  private readonly settings: VerifiedCacheSettings;
  private readonly hmacKey = randomBytes(32);
  /** Key → when it expires; Map order is least recently used first. */
  private readonly entries = new Map<string, number>();

  constructor(settings: VerifiedCacheSettings = DEFAULT_VERIFIED_CACHE) {
    this.settings = settings;
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
    if (this.settings.now() >= expires) return false;
    this.entries.set(key, expires);
    return true;
  }

  /** Remembers a verified key for TTL_MS, dropping the least recently used entry when full. */
  add(key: string): void {
    this.entries.delete(key);
    this.entries.set(key, this.settings.now() + this.settings.ttlMs);
    if (this.entries.size > this.settings.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }
}
