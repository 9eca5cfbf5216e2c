// Where cloudtwo tokens come from: google-auth-library's clients, built once per configuration
// from a Secret's credentials or from the ambient environment (GoogleAuth's application default
// credentials: GOOGLE_APPLICATION_CREDENTIALS, gcloud's credentials file, the metadata server at
// GCE_METADATA_HOST or its default address). Each fetch asks the library for a new token: gw's
// TokenCache decides when one is needed, so the library's own caching is turned off (every token
// counts as expiring) — it reads the system clock, which gw's refresh and a test's clock do not.
// Failures become BackendCredentialErrors whose detail says what failed (endpoint, HTTP status,
// OAuth error code, network error code) without the library's messages, which may quote answers.
import type { AuthClient, GoogleAuth } from 'google-auth-library';
import { type Clock, systemClock } from '../../../../util/clock.ts';
import { withDeadline } from '../../../../util/deadlines.ts';
import { loadOnFirstUse } from '../../../../util/load-on-first-use.ts';
import { BackendCredentialError } from '../credential-error.ts';
import type { FetchedToken } from '../token-cache.ts';
import { type CloudtwoCredentials, GOOGLE_TOKEN_URL } from './credentials.ts';

const googleAuthLibrary = loadOnFirstUse<typeof import('google-auth-library')>('google-auth-library');

/** The scope of access tokens: every Google Cloud API the credential's roles allow (as agentgateway's Google library). */
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/**
 * GoogleAuth looks for a project ID when it finds ambient credentials (running gcloud, asking the
 * metadata server, Resource Manager for an external account) unless it is given one. gw never
 * reads the project — tokens do not depend on it — so it gives this name, which nothing sends.
 */
const PROJECT_NOT_LOOKED_UP = 'gw-does-not-use-a-project';

/** How long one fetch may take, the library's retries included. */
export const FETCH_TIMEOUT_MS = 10_000;

export type CloudtwoTokenType = 'AccessToken' | 'IdToken';

const KIND_LABEL = 'cloudtwo (Google Cloud)';
const CLIENT_MESSAGE = `gw could not obtain ${KIND_LABEL} credentials for the backend.`;

/** A client that mints tokens: the access-token side every client has, the ID-token side some have. */
type TokenClient = AuthClient & { fetchIdToken?: (audience: string) => Promise<string> };

export interface TokenRequest {
  type: CloudtwoTokenType;
  /** The ID token's audience (IdToken only). */
  audience: string | undefined;
  clock: Clock;
}

/** Fetches one token each call; a rejection is a BackendCredentialError. */
export type TokenFetch = () => Promise<FetchedToken>;

function failure(detail: string): BackendCredentialError {
  return new BackendCredentialError(502, CLIENT_MESSAGE, detail);
}

const OAUTH_ERROR_CODE = /^[A-Za-z0-9_.-]{1,64}$/;

/** What went wrong in a library call, for the log: never its message (it may quote an answer). */
export function failureDetail(error: unknown): string {
  if (error instanceof BackendCredentialError) return error.detail;
  if (typeof error !== 'object' || error === null) return 'failed';
  const { config, response, code, message } = error as {
    config?: { url?: unknown };
    response?: { status?: unknown; data?: unknown };
    code?: unknown;
    message?: unknown;
  };
  let where = '';
  if (config?.url !== undefined) {
    try {
      const url = new URL(String(config.url));
      where = ` from ${url.origin}${url.pathname}`;
    } catch {
      // no URL to name
    }
  }
  if (typeof response?.status === 'number') {
    const data = response.data as { error?: unknown } | undefined;
    const oauthError =
      typeof data === 'object' && data !== null && typeof data.error === 'string' && OAUTH_ERROR_CODE.test(data.error)
        ? ` (${data.error})`
        : '';
    return `token request${where} answered HTTP ${response.status}${oauthError}`;
  }
  if (typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,40}$/.test(code)) return `token request${where} failed: ${code}`;
  const text = typeof message === 'string' ? message : '';
  // The library's own explanations of ambient credentials, which quote nothing.
  if (text.startsWith('Could not load the default credentials'))
    return 'no ambient Google credentials: GOOGLE_APPLICATION_CREDENTIALS is unset, there is no gcloud credentials file and no metadata server answered';
  if (text.startsWith('Unable to read the credential file specified by the GOOGLE_APPLICATION_CREDENTIALS'))
    return 'the file GOOGLE_APPLICATION_CREDENTIALS names cannot be read or is not credentials JSON';
  if (text.startsWith('Invalid response from metadata service'))
    return 'the metadata server answered without the Metadata-Flavor: Google header';
  return `token request${where} failed (${(error as Error).name ?? 'Error'})`;
}

/** `promise`, or a failure once FETCH_TIMEOUT_MS has passed. */
function fetchDeadline<T>(promise: Promise<T>): Promise<T> {
  return withDeadline(promise, FETCH_TIMEOUT_MS, () => failure(`no token within ${FETCH_TIMEOUT_MS / 1000} s`));
}

/** The claims of a JWT's payload, or undefined when it is not one. */
function jwtClaims(token: string): Record<string, unknown> | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    return typeof claims === 'object' && claims !== null ? (claims as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * When a token the library says lives until `wallExpiryMs` (on the system clock) expires on gw's
 * clock: the same time left, counted from now. Equal on the system clock; a test's clock keeps the
 * token's lifetime.
 */
function onClock(clock: Clock, wallExpiryMs: number): number {
  return clock.epochMs() + (wallExpiryMs - systemClock.epochMs());
}

async function fetchFrom(client: TokenClient, request: TokenRequest): Promise<FetchedToken> {
  if (request.type === 'AccessToken') {
    const { token } = await client.getAccessToken();
    if (typeof token !== 'string' || token === '') throw failure('the token endpoint answered without an access token');
    const expiry = client.credentials.expiry_date;
    // Without an expiry the token is used for this request only.
    return { value: token, expiresAtMs: typeof expiry === 'number' ? onClock(request.clock, expiry) : 0 };
  }
  if (typeof client.fetchIdToken !== 'function')
    throw failure('these credentials cannot mint ID tokens (service account, user or metadata server credentials can)');
  const token = await client.fetchIdToken(request.audience!);
  const claims = typeof token === 'string' ? jwtClaims(token) : undefined;
  if (claims === undefined || typeof claims.exp !== 'number')
    throw failure('the token endpoint answered without an ID token (a JWT with exp)');
  // The token's lifetime as its issuer states it (exp - iat), counted from its arrival: a clock of
  // gw's that differs from Google's does not shorten or stretch it.
  const lifetimeMs =
    typeof claims.iat === 'number' && claims.iat <= claims.exp
      ? (claims.exp - claims.iat) * 1000
      : claims.exp * 1000 - systemClock.epochMs();
  return { value: token as string, expiresAtMs: request.clock.epochMs() + lifetimeMs };
}

/** Every token counts as expiring for the library: gw's TokenCache decides when to fetch. */
function uncached<T extends AuthClient>(client: T): T {
  client.eagerRefreshThresholdMillis = Number.POSITIVE_INFINITY;
  return client;
}

/**
 * Tokens from credentials read from a Secret. google-auth-library for Node sends service account
 * token requests to Google's endpoint whatever the JSON's token_uri says; the transporter sends
 * them to token_uri, as Google's libraries for other languages do.
 */
export function secretTokenFetch(credentials: CloudtwoCredentials, request: TokenRequest): TokenFetch {
  const library = googleAuthLibrary();
  const transporter = new library.gaxios.Gaxios({ timeout: FETCH_TIMEOUT_MS });
  const tokenUri = credentials.tokenUri;
  if (tokenUri !== GOOGLE_TOKEN_URL) {
    transporter.interceptors.request.add({
      resolved: async (options) => {
        if (String(options.url) === GOOGLE_TOKEN_URL) options.url = new URL(tokenUri);
        return options;
      },
    });
  }
  // Access tokens carry the cloud-platform scope; an ID token names its audience instead.
  const scopes = request.type === 'AccessToken' ? [CLOUD_PLATFORM_SCOPE] : undefined;
  let client: TokenClient;
  if (credentials.type === 'service_account') {
    const jwt = new library.JWT({ scopes, transporter });
    jwt.fromJSON(credentials.json());
    client = jwt;
  } else {
    const user = new library.UserRefreshClient({ transporter });
    user.fromJSON(credentials.json());
    client = user;
  }
  uncached(client);
  const source = `${credentials.type} credentials of ${credentials.principal}`;
  return () =>
    fetchDeadline(fetchFrom(client, request)).catch((error: unknown) => {
      throw failure(`${source}: ${failureDetail(error)}`);
    });
}

/**
 * Tokens from the ambient credentials GoogleAuth finds. Finding them is remembered once it
 * succeeds; a failure is not (nor gcp-metadata's process-wide verdict that no metadata server
 * answered), so the next request looks again.
 */
export function ambientTokenFetch(request: TokenRequest): TokenFetch {
  let pending: Promise<TokenClient> | undefined;
  const client = () => {
    if (pending === undefined) {
      const library = googleAuthLibrary();
      const auth: GoogleAuth = new library.GoogleAuth({
        ...(request.type === 'AccessToken' ? { scopes: [CLOUD_PLATFORM_SCOPE] } : {}),
        projectId: PROJECT_NOT_LOOKED_UP,
      });
      const found = auth.getClient().then((found) => uncached(found as TokenClient));
      pending = found;
      found.catch(() => {
        if (pending === found) pending = undefined;
        library.gcpMetadata.resetIsAvailableCache();
      });
    }
    return pending;
  };
  return () =>
    fetchDeadline(client().then((found) => fetchFrom(found, request))).catch((error: unknown) => {
      throw failure(`ambient credentials: ${failureDetail(error)}`);
    });
}
