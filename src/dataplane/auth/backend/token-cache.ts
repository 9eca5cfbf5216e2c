// Tokens gw fetched for backends (cloud access tokens, exchanged OAuth tokens, STS credentials),
// kept until shortly before they expire. A request finds a valid token without waiting; the
// first request past the refresh point starts one refresh in the background and still uses the
// token it has; a request that finds none (or an expired one) waits for the single fetch every
// concurrent request shares. A failed fetch fails the requests waiting for it and is not
// remembered: the next request tries again. docs/backend-auth.md, "Token caching".
import { hash } from 'node:crypto';
import type { Clock } from '../../../util/clock.ts';
import { systemClock } from '../../../util/clock.ts';
import { type BackendCredentialError, credentialFailure } from './credential-error.ts';
import { credentialLog, credentialMetrics } from './credential-metrics.ts';

/** What a fetch yields: the secret and when it stops being valid (epoch ms; Infinity: never). */
export interface FetchedToken<T = string> {
  value: T;
  expiresAtMs: number;
}

/** Refresh this long before expiry at most; a short-lived token is refreshed at half its life. */
export const REFRESH_MARGIN_MS = 5 * 60_000;
/** After a background refresh failed, the cached token is used this long before the next try. */
export const REFRESH_RETRY_MS = 1_000;
/** A cache logs its failed background refreshes at most once per this many milliseconds. */
export const REFRESH_FAILURE_LOG_MS = 60_000;

interface Entry<T> {
  value: T;
  expiresAtMs: number;
  refreshAtMs: number;
  /** Epoch ms before which no background refresh starts (set after one failed). */
  retryAtMs: number;
  inFlight?: Promise<T> | undefined;
}

export interface TokenCacheOptions {
  /** The metric label of what is fetched: `aws`, `azure`, `gcp`, `oauth_token_exchange`... */
  kind: string;
  /** Most tokens kept (least recently used dropped first); 0 keeps none: every request fetches. */
  maxEntries?: number;
  clock?: Clock;
  /** Where a failed background refresh is reported (it fails no request); default: the data plane's log, at most once a minute. */
  onBackgroundFailure?: (error: BackendCredentialError) => void;
}

/**
 * Tokens by key (a subject token's digest; '' for a backend's one token). `get` answers
 * synchronously when a valid token is cached, so that a cached credential costs a Map look-up.
 */
export class TokenCache<T = string> {
  readonly kind: string;
  readonly #maxEntries: number;
  readonly #clock: Clock;
  readonly #entries = new Map<string, Entry<T>>();
  /** Fetches under way for keys with no usable token (and every fetch when maxEntries is 0). */
  readonly #pending = new Map<string, Promise<T>>();
  readonly #onBackgroundFailure: (error: BackendCredentialError) => void;
  #lastFailureLogMs = Number.NEGATIVE_INFINITY;
  #unloggedFailures = 0;

  constructor(options: TokenCacheOptions) {
    this.kind = options.kind;
    this.#maxEntries = options.maxEntries ?? 1;
    this.#clock = options.clock ?? systemClock;
    this.#onBackgroundFailure = options.onBackgroundFailure ?? ((error) => this.#logFailure(error));
  }

  /** How many tokens are kept. */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * The token for `key`: the cached one while it is valid (a value), else the shared fetch (a
   * promise that rejects with a BackendCredentialError).
   */
  get(key: string, fetch: () => Promise<FetchedToken<T>>): T | Promise<T> {
    const entry = this.#entries.get(key);
    const now = this.#clock.epochMs();
    if (entry !== undefined) {
      if (now < entry.expiresAtMs) {
        if (now >= entry.refreshAtMs && now >= entry.retryAtMs && entry.inFlight === undefined)
          this.#refreshInBackground(key, entry, fetch);
        if (this.#entries.size > 1) {
          // Most recently used last: eviction takes the first.
          this.#entries.delete(key);
          this.#entries.set(key, entry);
        }
        return entry.value;
      }
      this.#entries.delete(key);
    }
    const pending = this.#pending.get(key);
    if (pending !== undefined) return pending;
    const started = this.#fetch(key, fetch).finally(() => this.#pending.delete(key));
    this.#pending.set(key, started);
    return started;
  }

  /** Forgets every token (a configuration change does not: the cache belongs to one compiled auth). */
  clear(): void {
    this.#entries.clear();
  }

  async #fetch(key: string, fetch: () => Promise<FetchedToken<T>>): Promise<T> {
    let token: FetchedToken<T>;
    try {
      token = await fetch();
    } catch (error) {
      credentialMetrics.count(this.kind, 'failure');
      throw credentialFailure(error, this.kind);
    }
    credentialMetrics.count(this.kind, 'success');
    this.#store(key, token);
    return token.value;
  }

  #refreshInBackground(key: string, entry: Entry<T>, fetch: () => Promise<FetchedToken<T>>): void {
    entry.inFlight = this.#fetch(key, fetch);
    entry.inFlight.then(
      () => {
        entry.inFlight = undefined;
      },
      (error: BackendCredentialError) => {
        entry.inFlight = undefined;
        entry.retryAtMs = this.#clock.epochMs() + REFRESH_RETRY_MS;
        this.#onBackgroundFailure(error);
      },
    );
  }

  #logFailure(error: BackendCredentialError): void {
    const now = this.#clock.monotonicMs();
    if (now - this.#lastFailureLogMs < REFRESH_FAILURE_LOG_MS) {
      this.#unloggedFailures++;
      return;
    }
    const more = this.#unloggedFailures > 0 ? ` (and ${this.#unloggedFailures} more since the last line)` : '';
    this.#lastFailureLogMs = now;
    this.#unloggedFailures = 0;
    credentialLog.warn(
      `backend credentials (${this.kind}): a refresh before expiry failed; the cached credential serves until it expires: ${error.logText}${more}`,
    );
  }

  #store(key: string, token: FetchedToken<T>): void {
    if (this.#maxEntries === 0) return;
    const now = this.#clock.epochMs();
    if (!(token.expiresAtMs > now)) return;
    const lifetime = token.expiresAtMs - now;
    const margin = Math.min(REFRESH_MARGIN_MS, lifetime / 2);
    this.#entries.delete(key);
    this.#entries.set(key, {
      value: token.value,
      expiresAtMs: token.expiresAtMs,
      refreshAtMs: token.expiresAtMs - margin,
      retryAtMs: 0,
    });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
  }
}

/**
 * A cache key for a secret the client sent (a subject token): its digest, so that the cache holds
 * no client token and a key has a bounded size whatever the token's length.
 */
export function secretKey(...parts: string[]): string {
  // Each part length-prefixed, so that no two lists of parts give the same input (a token may hold
  // any character a query parameter can); one-shot hashing: a Hash object costs more than the digest.
  let input = '';
  for (const part of parts) input += `${part.length}:${part}`;
  return hash('sha256', input, 'base64url');
}
