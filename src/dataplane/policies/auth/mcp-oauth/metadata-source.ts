// The identity provider's authorization server metadata, fetched when an MCP client first asks
// for it and kept in the PolicyRuntime by URL (configuration reloads keep it): used for
// METADATA_TTL_MS, then fetched again while the old document keeps being served; at most one
// fetch in flight; after a failure no new fetch for RETRY_AFTER_MS (clients get the old document,
// or the failure, meanwhile) — a flood of discovery requests cannot turn gw against the provider.
import { systemClock } from '../../../../util/clock.ts';
import { displayUrl, type IdentityProviderClient, IdpUnavailable } from './idp-client.ts';

/** How long a fetched document is served before it is fetched again. */
export const METADATA_TTL_MS = 5 * 60_000;
/** Least time between a failed fetch and the next. */
export const RETRY_AFTER_MS = 5000;

export type MetadataDocument = Readonly<Record<string, unknown>>;

export class AuthorizationServerMetadataSource {
  private readonly urls: readonly string[];
  private readonly client: IdentityProviderClient;
  private readonly ttlMs: number;
  private readonly retryAfterMs: number;
  /** Monotonic milliseconds. */
  private readonly now: () => number;
  private current: { document: MetadataDocument; fetchedAt: number } | undefined;
  private inFlight: Promise<MetadataDocument> | undefined;
  private failedAt = Number.NEGATIVE_INFINITY;
  private lastError = '';

  constructor(
    urls: readonly string[],
    client: IdentityProviderClient,
    options: { ttlMs?: number; retryAfterMs?: number; now?: () => number } = {},
  ) {
    this.urls = urls;
    this.client = client;
    this.ttlMs = options.ttlMs ?? METADATA_TTL_MS;
    this.retryAfterMs = options.retryAfterMs ?? RETRY_AFTER_MS;
    this.now = options.now ?? systemClock.monotonicMs;
  }

  /** The document; rejects with IdpUnavailable when none could be fetched. */
  document(): MetadataDocument | Promise<MetadataDocument> {
    const now = this.now();
    const current = this.current;
    if (current && now - current.fetchedAt < this.ttlMs) return current.document;
    if (this.inFlight) return current?.document ?? this.inFlight;
    if (now - this.failedAt < this.retryAfterMs) {
      if (current) return current.document;
      return Promise.reject(new IdpUnavailable(this.lastError));
    }
    const fetching = this.load().then(
      (document) => {
        this.current = { document, fetchedAt: this.now() };
        this.lastError = '';
        return document;
      },
      (error: unknown) => {
        this.failedAt = this.now();
        this.lastError = (error as Error).message;
        throw error instanceof IdpUnavailable ? error : new IdpUnavailable(this.lastError);
      },
    );
    this.inFlight = fetching;
    void fetching
      .finally(() => {
        this.inFlight = undefined;
      })
      .catch(() => undefined);
    // A stale document is served while the new one is fetched.
    if (current) {
      fetching.catch(() => undefined);
      return current.document;
    }
    return fetching;
  }

  /** Tries each URL in order; a 4xx answer (no document there) moves on to the next. */
  private async load(): Promise<MetadataDocument> {
    if (this.urls.length === 0) throw new IdpUnavailable('no metadata URL can be derived from the issuer');
    const misses: string[] = [];
    for (const url of this.urls) {
      const response = await this.client.call(url, { method: 'GET', headers: { accept: 'application/json' } });
      if (response.status >= 400 && response.status < 500) {
        misses.push(`${displayUrl(url)} answered ${response.status}`);
        continue;
      }
      if (response.status !== 200) throw new IdpUnavailable(`${displayUrl(url)} answered ${response.status}`);
      let document: unknown;
      try {
        document = JSON.parse(response.body.toString('utf8'));
      } catch {
        throw new IdpUnavailable(`${displayUrl(url)} answered something that is not JSON`);
      }
      if (document === null || typeof document !== 'object' || Array.isArray(document))
        throw new IdpUnavailable(`${displayUrl(url)} answered JSON that is not an object`);
      return document as MetadataDocument;
    }
    throw new IdpUnavailable(`no authorization server metadata: ${misses.join('; ')}`);
  }
}
