// Where cloudone's AWS credentials come from: a Secret (accessKey, secretKey, optional
// sessionToken), else the AWS SDK's own default chain (fromNodeProviderChain: environment, SSO and
// shared config/credentials files with AWS_PROFILE, credential_process, the web identity token
// file, ECS container credentials, EC2 instance metadata). Ambient credentials are fetched on
// first use and kept in a TokenCache until shortly before they expire; long-term keys never do.
import { fromNodeProviderChain } from '@aws-sdk/credential-providers';
import type { LocalSecretObjectRef } from '../../../../api/types/references.ts';
import type { Clock } from '../../../../util/clock.ts';
import { BackendCredentialError } from '../credential-error.ts';
import { AuthConfigError } from '../errors.ts';
import { isHeaderText } from '../headers.ts';
import { type SecretData, secretValue } from '../secret-value.ts';
import { TokenCache } from '../token-cache.ts';
import type { AwsCredentials } from './sign.ts';

/** The Secret keys of a cloudone secretRef (spec document 2, CloudoneAuth). */
export const ACCESS_KEY = 'accessKey';
export const SECRET_KEY = 'secretKey';
export const SESSION_TOKEN = 'sessionToken';

/** The TokenCache kind (metric label) of every AWS credential fetch. */
export const AWS_KIND = 'aws';

/** The message of every cloudone credential failure gw answers 502 for. */
export const CLOUDONE_FAILURE = 'gw could not obtain cloudone (AWS) credentials for the backend.';

/** How long one credential fetch (the default chain, or STS) may take; agentgateway allows 5 s. */
export const FETCH_TIMEOUT_MS = 5_000;

/**
 * The credentials of a cloudone secretRef, or an AuthConfigError naming `cloudone.secretRef` when
 * the Secret or a required key is missing or empty, or a value cannot go in a header. The
 * controller asks the same question for the object's status (controller/secret-contents.ts).
 */
export function secretCredentials(
  ref: LocalSecretObjectRef,
  data: SecretData,
  namespace: string,
): AwsCredentials | AuthConfigError {
  const field = 'cloudone.secretRef';
  const read = (key: string) => {
    const value = secretValue({ ...ref, key }, data, namespace, field, { stripBearer: false });
    if (value instanceof AuthConfigError || isHeaderText(value)) return value;
    return new AuthConfigError(
      `${field}.key`,
      `key "${key}" of Secret ${namespace}/${ref.name} holds characters a header cannot carry`,
    );
  };
  const accessKeyId = read(ACCESS_KEY);
  if (accessKeyId instanceof AuthConfigError) return accessKeyId;
  const secretAccessKey = read(SECRET_KEY);
  if (secretAccessKey instanceof AuthConfigError) return secretAccessKey;
  const values = data(`Secret ${namespace}/${ref.name}`);
  if (values === undefined || !Object.hasOwn(values, SESSION_TOKEN)) return { accessKeyId, secretAccessKey };
  const sessionToken = read(SESSION_TOKEN);
  if (sessionToken instanceof AuthConfigError) return sessionToken;
  return { accessKeyId, secretAccessKey, sessionToken };
}

/** A failure's first line, bounded: SDK messages name what failed, never a credential. */
export function failureText(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const line = text.split('\n', 1)[0]!;
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

/** Rejects with a 502 naming `what` when `work` takes longer than FETCH_TIMEOUT_MS. */
export async function withTimeout<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new BackendCredentialError(502, CLOUDONE_FAILURE, `${what} timed out after ${FETCH_TIMEOUT_MS} ms`)),
      FETCH_TIMEOUT_MS,
    );
    timer.unref();
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The value a TokenCache keeps for credentials: valid until their expiration, or forever. */
export function cached(credentials: AwsCredentials): { value: AwsCredentials; expiresAtMs: number } {
  return { value: credentials, expiresAtMs: credentials.expiration?.getTime() ?? Number.POSITIVE_INFINITY };
}

/** The ambient credentials of the process, as the AWS SDK's default chain finds them. */
export class AmbientCredentials {
  // Memoized by the SDK; each fetch forces a refresh, since the cache here decides when one is due
  // (on gw's clock).
  readonly #provider = fromNodeProviderChain();
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
