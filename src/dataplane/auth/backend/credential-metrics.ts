// Counts of credential fetches by kind and outcome, scraped as gw_backend_auth_token_fetches_total
// (docs/telemetry.md). Process-wide: token caches live in compiled backends, which come and go
// with configurations, while the counts must keep adding up.

export type FetchOutcome = 'success' | 'failure';

class CredentialMetrics {
  readonly #counts = new Map<string, number>();

  count(kind: string, outcome: FetchOutcome): void {
    const key = `${kind}\0${outcome}`;
    this.#counts.set(key, (this.#counts.get(key) ?? 0) + 1);
  }

  /** Every count so far: [kind, outcome, count]. */
  entries(): [string, FetchOutcome, number][] {
    return [...this.#counts].map(([key, value]) => {
      const [kind, outcome] = key.split('\0') as [string, FetchOutcome];
      return [kind, outcome, value];
    });
  }

  /** The count of one kind and outcome. */
  get(kind: string, outcome: FetchOutcome): number {
    return this.#counts.get(`${kind}\0${outcome}`) ?? 0;
  }
}

export const credentialMetrics = new CredentialMetrics();

/**
 * Where failures nobody waits for are told (a background refresh that failed while the cached
 * credential still serves): the data plane's log once it has one (DataPlane sets it).
 */
export const credentialLog: { warn: (message: string) => void } = { warn: () => {} };
