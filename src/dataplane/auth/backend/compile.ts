// compileBackendAuth: a BackendAuth (spec document 1, Authentication rule 7) checked and turned
// once into what the proxy applies to every upstream request. key, secretRef, passthrough and the
// additional credentials are here; each other kind (jwtSign, cloudone, beta, cloudtwo,
// oauthTokenExchange, crossAppAccess) is a CredentialKindCompiler in its own file, in KINDS below.
// Secrets live only inside closures: not in fields, errors, logs, JSON or util.inspect output.
import type { IncomingHttpHeaders } from 'node:http';
import type { BackendAuth } from '../../../api/types/backend-auth.ts';
import { authKindLabel } from '../../../api/vendors.ts';
import { type Clock, systemClock } from '../../../util/clock.ts';
import type { EndpointScope } from '../../policies/endpoint.ts';
import type { PolicyRuntime } from '../../policies/runtime.ts';
import { compileBeta } from './beta.ts';
import { compileCloudone } from './cloudone/index.ts';
import { compileCloudtwo } from './cloudtwo/cloudtwo.ts';
import { type BackendCredentialError, credentialFailure } from './credential-error.ts';
import { AuthConfigError } from './errors.ts';
import { firstValue, setHeader } from './headers.ts';
import { compileJwtSign } from './jwt-sign.ts';
import type {
  AuthIncoming,
  BackendTarget,
  CredentialKindCompiler,
  CredentialStep,
  OutgoingRequest,
  RequestSigner,
} from './kind.ts';
import {
  type AuthTarget,
  BEARER_LOCATION,
  type CredentialLocation,
  compileLocation,
  headerLocation,
} from './location.ts';
import { compileCrossAppAccess } from './oauth/cross-app-access.ts';
import { compileOAuthTokenExchange } from './oauth/token-exchange.ts';
import { type SecretData, secretValue } from './secret-value.ts';
import { secretKey } from './token-cache.ts';

export type { AuthIncoming } from './kind.ts';

/** The primary credential kinds, at most one of which a BackendAuth sets. */
export type PrimaryKind =
  | 'key'
  | 'secretRef'
  | 'passthrough'
  | 'jwtSign'
  | 'cloudone'
  | 'beta'
  | 'cloudtwo'
  | 'oauthTokenExchange'
  | 'crossAppAccess';

export interface CompiledBackendAuth {
  /** The primary credential: none, an inline key, a Secret's value, the client's own, or a kind's. */
  readonly mode: 'none' | PrimaryKind;
  /** How many additional credentials are written. */
  readonly credentialCount: number;
  /**
   * Whether apply() may set a query parameter. When false the caller may pass NO_QUERY and keep
   * the request's query as it is.
   */
  readonly writesQuery: boolean;
  /**
   * Writes the credentials on the upstream request. The client's own credentials (Authorization,
   * x-api-key, Proxy-Authorization) are removed first: only passthrough forwards them. A promise
   * when a credential must be fetched first (no valid one cached); it rejects with a
   * BackendCredentialError the proxy answers in the client's format.
   */
  apply(target: AuthTarget, incoming: AuthIncoming): void | Promise<void>;
  /**
   * Set when the credential signs the request (cloudone SigV4): called after apply() once the
   * method, path, query, headers and body are final; nothing may change them afterwards.
   */
  readonly sign?: RequestSigner | undefined;
}

export interface BackendAuthOptions {
  /** The provider's key placement when no location is configured; default `bearer`. */
  keyStyle?: KeyStyle;
  /** The clock of token expiry and of jwtSign's iat, nbf and exp; the system's by default. */
  clock?: Clock;
  /** What the backend is: the defaults of audiences, regions and scopes derive from it. */
  target?: BackendTarget;
  /** Where token endpoint references resolve. */
  endpoints?: EndpointScope;
  /** Receives warnings about a configuration gw uses but that will likely be refused. */
  warn?: (message: string) => void;
  /** Where token caches are kept across configurations (and whose clock they read); without it, per compile. */
  runtime?: PolicyRuntime;
}

/** Credentials a client may send that gw never forwards unless told to (passthrough). */
export const CLIENT_CREDENTIAL_HEADERS = [
  'authorization',
  'x-api-key',
  'x-goog-api-key',
  'api-key',
  'proxy-authorization',
] as const;

// biome-ignore lint/suspicious/noExplicitAny: each entry takes its own kind's spec.
type AnyKindCompiler = CredentialKindCompiler<any>;

/** The primary kinds compiled here rather than by a file of their own. */
type StaticKind = 'key' | 'secretRef' | 'passthrough';

/** The credential kinds compiled by their own files. */
const KINDS: Record<Exclude<PrimaryKind, StaticKind>, AnyKindCompiler> = {
  jwtSign: compileJwtSign,
  cloudone: compileCloudone,
  beta: compileBeta,
  cloudtwo: compileCloudtwo,
  oauthTokenExchange: compileOAuthTokenExchange,
  crossAppAccess: compileCrossAppAccess,
};

const PRIMARY_KINDS: readonly PrimaryKind[] = [
  'key',
  'secretRef',
  'passthrough',
  'jwtSign',
  'cloudone',
  'beta',
  'cloudtwo',
  'oauthTokenExchange',
  'crossAppAccess',
];
const MAX_CREDENTIALS = 8;

/**
 * Where a provider expects its key when no location is configured (CompiledProvider.keyStyle):
 * `bearer` (Authorization: Bearer), `x-api-key` (gamma, Anthropic), `x-goog-api-key` (delta, the
 * Gemini API), `api-key` (betaalpha, Azure OpenAI).
 */
export type KeyStyle = 'bearer' | 'x-api-key' | 'x-goog-api-key' | 'api-key';

/** The header of each key style other than bearer. */
const KEY_HEADER_LOCATIONS: Record<Exclude<KeyStyle, 'bearer'>, CredentialLocation> = {
  'x-api-key': headerLocation('x-api-key'),
  'x-goog-api-key': headerLocation('x-goog-api-key'),
  'api-key': headerLocation('api-key'),
};

/**
 * OAuth access tokens go as Bearer tokens even to a provider whose API keys go in a header of
 * its own: Anthropic's start with sk-ant-oat, Google's with ya29., and Microsoft Entra ID's are
 * JWTs (a base64url JSON header, `eyJ`), which no Azure OpenAI key is.
 */
const OAUTH_TOKEN_PREFIXES: Record<Exclude<KeyStyle, 'bearer'>, string> = {
  'x-api-key': 'sk-ant-oat',
  'x-goog-api-key': 'ya29.',
  'api-key': 'eyJ',
};

/** The default location for a credential, by the provider's key style. */
function defaultLocation(style: KeyStyle, credential: string): CredentialLocation {
  if (style === 'bearer' || credential.startsWith(OAUTH_TOKEN_PREFIXES[style])) return BEARER_LOCATION;
  return KEY_HEADER_LOCATIONS[style];
}

/**
 * Removes the client's credentials, every spelling of each, in one pass over the headers (runs on
 * every upstream request: three passes of takeHeader cost more than the rest of most auths).
 */
export function stripClientCredentials(target: AuthTarget): void {
  const headers = target.headers;
  for (const key in headers) {
    // The length rules out most names before any lower-casing.
    if (!CLIENT_CREDENTIAL_LENGTHS.has(key.length)) continue;
    if (CLIENT_CREDENTIAL_NAMES.has(key.toLowerCase())) delete headers[key];
  }
}

const CLIENT_CREDENTIAL_NAMES: ReadonlySet<string> = new Set(CLIENT_CREDENTIAL_HEADERS);
const CLIENT_CREDENTIAL_LENGTHS: ReadonlySet<number> = new Set(CLIENT_CREDENTIAL_HEADERS.map((name) => name.length));

const BEARER_SCHEME = /^bearer\s+/i;

/** The client's token: its Authorization Bearer token, else its x-api-key, x-goog-api-key or api-key. */
function clientToken(headers: IncomingHttpHeaders): string | undefined {
  const authorization = firstValue(headers.authorization);
  if (authorization !== undefined && BEARER_SCHEME.test(authorization)) {
    const token = authorization.replace(BEARER_SCHEME, '').trim();
    if (token !== '') return token;
  }
  const apiKey = (
    firstValue(headers['x-api-key']) ??
    firstValue(headers['x-goog-api-key']) ??
    firstValue(headers['api-key'])
  )?.trim();
  return apiKey === '' ? undefined : apiKey;
}

type Step = CredentialStep;

/** A fixed credential written at its location. */
function fixedStep(location: CredentialLocation, credential: string): Step {
  return (target) => location.write(target, credential);
}

/** Forwards the client's credential; see docs/providers.md, "Backend authentication". */
function passthroughStep(explicit: CredentialLocation | undefined, style: KeyStyle): Step {
  return (target, incoming) => {
    const validated = incoming.credential?.trim();
    if (explicit !== undefined || (validated !== undefined && validated !== '')) {
      const token = validated || clientToken(incoming.headers);
      if (token === undefined) return;
      const location = explicit ?? defaultLocation(style, token);
      // A token of an inbound policy has not been through Node's header parser.
      if (location.problem(token) === undefined) location.write(target, token);
      return;
    }
    // No location and no validated token: the client's headers as they were.
    const authorization = firstValue(incoming.headers.authorization);
    const apiKey = firstValue(incoming.headers['x-api-key']);
    if (apiKey !== undefined) setHeader(target.headers, 'x-api-key', apiKey);
    const googleKey = firstValue(incoming.headers['x-goog-api-key']);
    if (googleKey !== undefined) setHeader(target.headers, 'x-goog-api-key', googleKey);
    const azureKey = firstValue(incoming.headers['api-key']);
    if (azureKey !== undefined) setHeader(target.headers, 'api-key', azureKey);
    if (authorization === undefined) return;
    const token = clientToken({ authorization });
    const ownKey = style === 'x-api-key' ? apiKey : style === 'x-goog-api-key' ? googleKey : azureKey;
    // gamma, delta and betaalpha take API keys only in their own header: a Bearer API key moves there.
    if (style !== 'bearer' && ownKey === undefined && token !== undefined) {
      defaultLocation(style, token).write(target, token);
    } else {
      setHeader(target.headers, 'authorization', authorization);
    }
  };
}

class BackendAuthPlan implements CompiledBackendAuth {
  readonly mode: CompiledBackendAuth['mode'];
  readonly credentialCount: number;
  readonly writesQuery: boolean;
  readonly sign: RequestSigner | undefined;
  readonly #steps: readonly Step[];

  constructor(
    mode: CompiledBackendAuth['mode'],
    credentialCount: number,
    steps: Step[],
    writesQuery: boolean,
    sign?: RequestSigner,
  ) {
    this.mode = mode;
    this.credentialCount = credentialCount;
    this.writesQuery = writesQuery;
    this.#steps = steps;
    this.sign = sign;
  }

  apply(target: AuthTarget, incoming: AuthIncoming): void | Promise<void> {
    stripClientCredentials(target);
    const steps = this.#steps;
    for (let i = 0; i < steps.length; i++) {
      let pending: void | Promise<void>;
      try {
        pending = steps[i]!(target, incoming);
      } catch (error) {
        return Promise.reject(error);
      }
      // A credential being fetched: the remaining steps run once it is written, in order.
      if (pending !== undefined) return this.#finish(pending, i + 1, target, incoming);
    }
  }

  async #finish(pending: Promise<void>, next: number, target: AuthTarget, incoming: AuthIncoming): Promise<void> {
    await pending;
    const steps = this.#steps;
    for (let i = next; i < steps.length; i++) await steps[i]!(target, incoming);
  }
}

function checked(location: CredentialLocation, credential: string, field: string): AuthConfigError | undefined {
  const problem = location.problem(credential);
  return problem === undefined ? undefined : new AuthConfigError(field, `the credential ${problem}`);
}

export function compileBackendAuth(
  auth: BackendAuth | undefined,
  data: SecretData,
  namespace: string,
  options: BackendAuthOptions = {},
): CompiledBackendAuth | AuthConfigError {
  if (auth === undefined) return new BackendAuthPlan('none', 0, [], false);
  const style = options.keyStyle ?? 'bearer';
  const primaries = PRIMARY_KINDS.filter((kind) => auth[kind] !== undefined);
  if (primaries.length > 1) {
    return new AuthConfigError(primaries[1]!, `at most one of ${PRIMARY_KINDS.join(', ')} may be set`);
  }

  let explicit: CredentialLocation | undefined;
  if (auth.location !== undefined) {
    const location = compileLocation(auth.location, 'location');
    if (location instanceof AuthConfigError) return location;
    explicit = location;
  }

  const steps: Step[] = [];
  // Default locations are headers; only a configured query parameter location writes the query.
  let writesQuery = explicit?.inQuery ?? false;
  let mode: CompiledBackendAuth['mode'] = 'none';
  let sign: RequestSigner | undefined;
  if (auth.key !== undefined || auth.secretRef !== undefined) {
    const field = auth.key !== undefined ? 'key' : 'secretRef';
    const credential =
      auth.key !== undefined
        ? auth.key.trim()
        : secretValue(auth.secretRef!, data, namespace, 'secretRef', { stripBearer: true });
    if (credential instanceof AuthConfigError) return credential;
    if (credential === '') return new AuthConfigError('key', 'must not be empty');
    const location = explicit ?? defaultLocation(style, credential);
    const problem = checked(location, credential, field);
    if (problem) return problem;
    steps.push(fixedStep(location, credential));
    mode = field;
  } else if (auth.passthrough !== undefined) {
    steps.push(passthroughStep(explicit, style));
    mode = 'passthrough';
  } else if (primaries.length === 1) {
    const kind = primaries[0] as keyof typeof KINDS;
    const compiled = KINDS[kind](auth[kind], {
      data,
      namespace,
      clock: options.clock ?? options.runtime?.clock ?? systemClock,
      location: explicit,
      target: options.target,
      endpoints: options.endpoints,
      warn: options.warn ?? (() => {}),
      shared: (kind, identity, create) =>
        options.runtime ? options.runtime.use(`backend-auth ${kind} ${secretKey(...identity)}`, create) : create(),
    });
    if (compiled instanceof AuthConfigError) return compiled;
    if (compiled.step) steps.push(compiled.step);
    if (compiled.writesQuery) writesQuery = true;
    sign = compiled.sign;
    mode = kind;
  }

  const credentials = auth.credentials ?? [];
  if (credentials.length > MAX_CREDENTIALS) {
    return new AuthConfigError('credentials', `at most ${MAX_CREDENTIALS} additional credentials are allowed`);
  }
  for (const [index, entry] of credentials.entries()) {
    const field = `credentials[${index}]`;
    const location = compileLocation(entry.location, `${field}.location`);
    if (location instanceof AuthConfigError) return location;
    const credential = secretValue(entry.secretRef, data, namespace, `${field}.secretRef`, { stripBearer: false });
    if (credential instanceof AuthConfigError) return credential;
    const problem = checked(location, credential, `${field}.secretRef`);
    if (problem) return problem;
    steps.push(fixedStep(location, credential));
    if (location.inQuery) writesQuery = true;
  }
  return new BackendAuthPlan(mode, credentials.length, steps, writesQuery, sign);
}

/**
 * The end of a backend authentication on one request: waits for a credential apply() is still
 * fetching, then signs the request when the auth signs (`request` builds what is signed, once the
 * caller has made it final). Undefined when there is nothing to wait for, the usual case;
 * otherwise a promise of the BackendCredentialError to answer, or of undefined when all is written.
 */
export function finishBackendAuth(
  pending: void | Promise<void>,
  auth: CompiledBackendAuth | undefined,
  request: () => OutgoingRequest,
  incoming: AuthIncoming,
): undefined | Promise<BackendCredentialError | undefined> {
  const sign = auth?.sign;
  if (pending === undefined && sign === undefined) return undefined;
  const kind = authKindLabel(auth!.mode);
  if (pending === undefined) {
    // Only a signer, whose credential is usually at hand: it signs synchronously, no promise.
    let signing: void | Promise<void>;
    try {
      signing = sign!(request(), incoming);
    } catch (error) {
      return Promise.resolve(credentialFailure(error, kind));
    }
    if (signing === undefined) return undefined;
    return signing.then(
      () => undefined,
      (error: unknown) => credentialFailure(error, kind),
    );
  }
  return (async () => {
    try {
      await pending;
      await sign?.(request(), incoming);
      return undefined;
    } catch (error) {
      return credentialFailure(error, kind);
    }
  })();
}

/**
 * Fulfils once a credential being fetched is written or has failed: for a caller that must wait
 * before serialising the query, while finishBackendAuth reads the failure.
 */
export function settled(pending: Promise<void>): Promise<void> {
  return pending.then(ignore, ignore);
}

function ignore(): void {}
