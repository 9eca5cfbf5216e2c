// Where cloudone's AWS credentials come from when no Secret gives them (secret.ts): the AWS SDK's
// own default chain (fromNodeProviderChain: environment, SSO and shared config/credentials files
// with AWS_PROFILE, credential_process, the web identity token file, ECS container credentials,
// EC2 instance metadata). Ambient credentials are fetched on
// first use and kept in a TokenCache until shortly before they expire; long-term keys never do.
import type { Clock } from '../../../../util/clock.ts';
import { withDeadline } from '../../../../util/deadlines.ts';
import { BackendCredentialError } from '../credential-error.ts';
import { TokenCache } from '../token-cache.ts';
import { credentialProviders } from './sdk.ts';
import type { AwsCredentials } from './sign.ts';

/** The TokenCache kind (metric label) of every AWS credential fetch. */
export const AWS_KIND = 'aws';

/** The message of every cloudone credential failure gw answers 502 for. */
export const CLOUDONE_FAILURE = 'gw could not obtain cloudone (AWS) credentials for the backend.';

/** How long one credential fetch (the default chain, or STS) may take; agentgateway allows 5 s. */
export const FETCH_TIMEOUT_MS = 5_000;

/** A failure's first line, bounded: SDK messages name what failed, never a credential. */
export function failureText(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const line = text.split('\n', 1)[0]!;
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

/** Rejects with a 502 naming `what` when `work` takes longer than FETCH_TIMEOUT_MS. */
export function withTimeout<T>(work: Promise<T>, what: string): Promise<T> {
  return withDeadline(
    work,
    FETCH_TIMEOUT_MS,
    () => new BackendCredentialError(502, CLOUDONE_FAILURE, `${what} timed out after ${FETCH_TIMEOUT_MS} ms`),
  );
}

/** The value a TokenCache keeps for credentials: valid until their expiration, or forever. */
export function cached(credentials: AwsCredentials): { value: AwsCredentials; expiresAtMs: number } {
  return { value: credentials, expiresAtMs: credentials.expiration?.getTime() ?? Number.POSITIVE_INFINITY };
}

/** The ambient credentials of the process, as the AWS SDK's default chain finds them. */
export class AmbientCredentials {
  // Memoized by the SDK; each fetch forces a refresh, since the cache here decides when one is due
  // (on gw's clock).
  readonly #provider = credentialProviders().fromNodeProviderChain();
  readonly #cache: TokenCache<AwsCredentials>;

  constructor(clock: Clock) {
    this.#cache = new TokenCache<AwsCredentials>({ kind: AWS_KIND, clock });
  }

  /** The cached credentials while valid, else the one fetch under way (a promise). */
  get(): AwsCredentials | Promise<AwsCredentials> {
    return this.#cache.get('', () => this.#fetch());
  }

  async #fetch(): Promise<{ value: AwsCredentials; expiresAtMs: number }> {
    try {
      return cached(await withTimeout(this.#provider({ forceRefresh: true }), 'the AWS default credential chain'));
    } catch (error) {
      if (error instanceof BackendCredentialError) throw error;
      throw new BackendCredentialError(
        502,
        CLOUDONE_FAILURE,
        `the AWS default credential chain: ${failureText(error)}`,
      );
    }
  }
}
