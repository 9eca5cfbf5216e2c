// JSON Web Key Sets for JWT authentication (traffic.jwtAuthentication providers[].jwks): parsing
// a key set (inline or fetched), and the cache of a remote key set. A remote set is fetched once
// when the policy is compiled, kept in the PolicyRuntime by URL (configuration reloads keep it),
// fetched again every cacheDuration, and on a token naming a key it lacks — at most one fetch in
// flight, and never more than one such unknown-key fetch per interval, so a flood of made-up key
// IDs cannot turn the gateway against the identity provider. A failing endpoint is retried with
// backoff; the last good set stays in use meanwhile.

import type { Readable } from 'node:stream';
import { createLocalJWKSet, type JSONWebKeySet, type JWK, type JWTVerifyGetKey } from 'jose';
import type { Agent } from 'undici';
import { systemClock } from '../../../util/clock.ts';
import { undici } from '../../../util/undici.ts';

/** A parsed key set: the key lookup jose verifies with, and the key IDs it holds. */
export interface KeySet {
  readonly resolve: JWTVerifyGetKey;
  readonly keyIds: ReadonlySet<string>;
}

// Key types that verify signatures with a public key. Symmetric keys ("oct") are refused: a key
// set is published, so a secret in it is no secret.
const ASYMMETRIC_KEY_TYPES = new Set(['RSA', 'EC', 'OKP']);
// Members of a JWK that only a private key has.
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth'] as const;

/** Parses a JWK Set document; a string says what is wrong with it. */
export function parseKeySet(text: string): KeySet | string {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return 'is not JSON';
  }
  const keys = (document as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) return 'is not a JWK Set (an object with a "keys" array)';
  const usable: JWK[] = [];
  for (const [index, key] of keys.entries()) {
    if (typeof key !== 'object' || key === null || Array.isArray(key)) return `key ${index} is not an object`;
    const jwk = key as JWK;
    if (jwk.kty === 'oct') return `key ${index} is a symmetric key (kty oct); only public keys are accepted`;
    if (PRIVATE_MEMBERS.some((member) => member in jwk))
      return `key ${index} is a private key; publish only the public part`;
    // Encryption keys and key types gw does not verify with (ML-DSA...) are skipped, not fatal.
    if (typeof jwk.kty !== 'string' || !ASYMMETRIC_KEY_TYPES.has(jwk.kty)) continue;
    if (jwk.use !== undefined && jwk.use !== 'sig') continue;
    usable.push(jwk);
  }
  if (usable.length === 0) return 'has no public RSA, EC or OKP signing key';
  let resolve: JWTVerifyGetKey;
  try {
    resolve = createLocalJWKSet({ keys: usable } as JSONWebKeySet);
  } catch (error) {
    return `is not a valid JWK Set: ${(error as Error).message}`;
  }
  const keyIds = new Set<string>();
  for (const key of usable) if (typeof key.kid === 'string') keyIds.add(key.kid);
  return { resolve, keyIds };
}

export interface RemoteJwksOptions {
  /** The key set's URL. */
  url: string;
  /** Connect to this Unix socket instead of the URL's host (a GwBackend with unixPath). */
  socketPath?: string;
  /** How long a fetched set is used before it is fetched again (cacheDuration). */
  refreshMs: number;
  /** Least time between two fetches asked for by unknown key IDs. */
  unknownKeyIntervalMs?: number;
  /** First retry delay after a failed fetch; doubled on each further failure. */
  retryBaseMs?: number;
  /** Largest retry delay. */
  retryMaxMs?: number;
  /** A fetch (connect, answer, body) that takes longer fails. */
  timeoutMs?: number;
  /** A larger key set document fails. */
  maxBytes?: number;
  /** Monotonic milliseconds, for the unknown-key interval (the system's clock by default). */
  now?: () => number;
}

/** Unknown key IDs fetch the set again at most this often (per URL). */
export const UNKNOWN_KEY_REFETCH_INTERVAL_MS = 30_000;
const RETRY_BASE_MS = 1000;
const RETRY_MAX_MS = 60_000;
const FETCH_TIMEOUT_MS = 10_000;
/** Largest key set document accepted from an endpoint. */
export const MAX_JWKS_BYTES = 1024 * 1024;

/** A remote key set, shared by every policy naming the same URL (PolicyRuntime state). */
export class RemoteJwks {
  readonly url: string;
  /** The URL without credentials or query, for messages and logs. */
  readonly name: string;
  private readonly refreshMs: number;
  private readonly unknownKeyIntervalMs: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private readonly now: () => number;
  private readonly agent: Agent;
  private current: KeySet | undefined;
  private inFlight: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Failed fetches since the last success; while > 0 the retry timer alone fetches. */
  private failures = 0;
  /** `now()` at the last fetch's start. */
  private lastFetchStart = Number.NEGATIVE_INFINITY;
  private started = false;
  private closed = false;
  /** Why the last fetch failed (without the URL); empty after a success. */
  lastError = '';

  constructor(options: RemoteJwksOptions) {
    this.url = options.url;
    this.name = displayUrl(options.url);
    this.refreshMs = options.refreshMs;
    this.unknownKeyIntervalMs = options.unknownKeyIntervalMs ?? UNKNOWN_KEY_REFETCH_INTERVAL_MS;
    this.retryBaseMs = options.retryBaseMs ?? RETRY_BASE_MS;
    this.retryMaxMs = Math.min(options.retryMaxMs ?? RETRY_MAX_MS, options.refreshMs);
    this.timeoutMs = options.timeoutMs ?? FETCH_TIMEOUT_MS;
    this.maxBytes = options.maxBytes ?? MAX_JWKS_BYTES;
    this.now = options.now ?? systemClock.monotonicMs;
    this.agent = new (undici().Agent)({
      connect: options.socketPath ? { socketPath: options.socketPath } : undefined,
      connections: 1,
      keepAliveTimeout: 1000,
    });
  }

  /** Starts the first fetch (once); later calls do nothing. */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    void this.fetch();
  }

  /**
   * The key set: at once when one has been loaded, else after the fetch in progress (the first
   * requests wait for the initial fetch). undefined while the endpoint cannot give one.
   */
  keySet(): KeySet | undefined | Promise<KeySet | undefined> {
    if (this.current) return this.current;
    this.start();
    const pending = this.inFlight;
    return pending ? pending.then(() => this.current) : undefined;
  }

  /**
   * A token named a key the set lacks: fetch the set again, unless a fetch started less than the
   * unknown-key interval ago or failing fetches are being retried; a fetch in progress is joined.
   */
  async afterUnknownKey(): Promise<KeySet | undefined> {
    if (!this.inFlight) {
      const recent = this.now() - this.lastFetchStart < this.unknownKeyIntervalMs;
      if (recent || this.failures > 0 || this.closed) return this.current;
      void this.fetch();
    }
    await this.inFlight;
    return this.current;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.agent.close().catch(() => undefined);
  }

  /** Fetches the set (joining a fetch in progress) and schedules the next one. */
  private fetch(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    clearTimeout(this.timer);
    this.lastFetchStart = this.now();
    this.inFlight = this.load()
      .then(
        (keySet) => {
          this.current = keySet;
          this.failures = 0;
          this.lastError = '';
          this.schedule(this.refreshMs);
        },
        (error: unknown) => {
          this.failures += 1;
          this.lastError = (error as Error).message;
          this.schedule(Math.min(this.retryBaseMs * 2 ** (this.failures - 1), this.retryMaxMs));
        },
      )
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.fetch(), delayMs);
    // The refresh must not keep a stopping process alive.
    this.timer.unref();
  }

  private async load(): Promise<KeySet> {
    const response = await undici().request(this.url, {
      method: 'GET',
      headers: { accept: 'application/json, application/jwk-set+json' },
      dispatcher: this.agent,
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    if (response.statusCode !== 200) {
      discard(response.body);
      throw new Error(`answered ${response.statusCode}`);
    }
    const declared = Number(response.headers['content-length']);
    if (declared > this.maxBytes) {
      discard(response.body);
      throw new Error(`the key set is larger than ${this.maxBytes} bytes`);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body) {
      size += (chunk as Buffer).length;
      if (size > this.maxBytes) {
        discard(response.body);
        throw new Error(`the key set is larger than ${this.maxBytes} bytes`);
      }
      chunks.push(chunk as Buffer);
    }
    const parsed = parseKeySet(Buffer.concat(chunks).toString('utf8'));
    if (typeof parsed === 'string') throw new Error(`the key set ${parsed}`);
    return parsed;
  }
}

/** A URL as it may be shown: no user info, no query (either could carry a secret). */
function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return 'the configured URL';
  }
}

/** Drops a response body unread (destroying it reports an abort nobody needs to hear). */
function discard(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}
