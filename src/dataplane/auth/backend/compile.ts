// compileBackendAuth: a BackendAuth (spec document 1, Authentication rule 7) checked and turned
// once into what the proxy applies to every upstream request. Supported: key, secretRef,
// passthrough, jwtSign (jwt-sign.ts), location, credentials. The other kinds come with later issues and are refused with
// an AuthConfigError naming the field. Secrets live only inside closures: not in fields, errors,
// logs, JSON or util.inspect output.
import type { IncomingHttpHeaders } from 'node:http';
import type { BackendAuth } from '../../../api/types/backend-auth.ts';
import { authKindLabel } from '../../../api/vendors.ts';
import type { Clock } from '../../../util/clock.ts';
import { AuthConfigError } from './errors.ts';
import { firstValue, setHeader, takeHeader } from './headers.ts';
import { compileJwtSigner } from './jwt-sign.ts';
import {
  type AuthTarget,
  BEARER_LOCATION,
  type CredentialLocation,
  compileLocation,
  headerLocation,
} from './location.ts';
import { type SecretData, secretValue } from './secret-value.ts';

/** Where a provider expects its key when no location is configured (CompiledProvider.keyStyle). */
export type KeyStyle = 'bearer' | 'x-api-key';

export interface AuthIncoming {
  /** The client's request headers. */
  headers: IncomingHttpHeaders;
  /**
   * For passthrough: the token an inbound authentication policy (JWT, API key, basic) validated,
   * which that policy may have removed from the headers.
   */
  credential?: string;
}

export interface CompiledBackendAuth {
  /** The primary credential: none, an inline key, a Secret's value, the client's own, or a JWT gw signs. */
  readonly mode: 'none' | 'key' | 'secretRef' | 'passthrough' | 'jwtSign';
  /** How many additional credentials are written. */
  readonly credentialCount: number;
  /**
   * Whether apply() may set a query parameter. When false the caller may pass NO_QUERY and keep
   * the request's query as it is.
   */
  readonly writesQuery: boolean;
  /**
   * Writes the credentials on the upstream request. The client's own credentials (Authorization,
   * x-api-key, Proxy-Authorization) are removed first: only passthrough forwards them.
   */
  apply(target: AuthTarget, incoming: AuthIncoming): void;
}

export interface BackendAuthOptions {
  /** The provider's key placement when no location is configured; default `bearer`. */
  keyStyle?: KeyStyle;
  /** The clock jwtSign reads for iat, nbf and exp; the system's by default. */
  clock?: Clock;
}

/** Credentials a client may send that gw never forwards unless told to (passthrough). */
export const CLIENT_CREDENTIAL_HEADERS = ['authorization', 'x-api-key', 'proxy-authorization'] as const;

const UNSUPPORTED_KINDS = ['cloudone', 'beta', 'cloudtwo', 'oauthTokenExchange', 'crossAppAccess'] as const;
const PRIMARY_KINDS = ['key', 'secretRef', 'passthrough', 'jwtSign', ...UNSUPPORTED_KINDS] as const;
const MAX_CREDENTIALS = 8;

/** Anthropic OAuth access tokens are sent as Bearer tokens; its API keys go in x-api-key. */
const GAMMA_OAUTH_TOKEN_PREFIX = 'sk-ant-oat';
const X_API_KEY_LOCATION = headerLocation('x-api-key');

/** The default location for a credential, by the provider's key style. */
function defaultLocation(style: KeyStyle, credential: string): CredentialLocation {
  if (style === 'x-api-key' && !credential.startsWith(GAMMA_OAUTH_TOKEN_PREFIX)) return X_API_KEY_LOCATION;
  return BEARER_LOCATION;
}

export function stripClientCredentials(target: AuthTarget): void {
  for (const name of CLIENT_CREDENTIAL_HEADERS) takeHeader(target.headers, name);
}

const BEARER_SCHEME = /^bearer\s+/i;

/** The client's token: its Authorization Bearer token, else its x-api-key. */
function clientToken(headers: IncomingHttpHeaders): string | undefined {
  const authorization = firstValue(headers.authorization);
  if (authorization !== undefined && BEARER_SCHEME.test(authorization)) {
    const token = authorization.replace(BEARER_SCHEME, '').trim();
    if (token !== '') return token;
  }
  const apiKey = firstValue(headers['x-api-key'])?.trim();
  return apiKey === '' ? undefined : apiKey;
}

type Step = (target: AuthTarget, incoming: AuthIncoming) => void;

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
    if (authorization === undefined) return;
    const token = clientToken({ authorization });
    // gamma takes API keys only in x-api-key: a Bearer API key moves there.
    if (style === 'x-api-key' && apiKey === undefined && token !== undefined) {
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
  readonly #steps: readonly Step[];

  constructor(mode: CompiledBackendAuth['mode'], credentialCount: number, steps: Step[], writesQuery: boolean) {
    this.mode = mode;
    this.credentialCount = credentialCount;
    this.writesQuery = writesQuery;
    this.#steps = steps;
  }

  apply(target: AuthTarget, incoming: AuthIncoming): void {
    stripClientCredentials(target);
    for (const step of this.#steps) step(target, incoming);
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
  const unsupported = UNSUPPORTED_KINDS.find((kind) => auth[kind] !== undefined);
  if (unsupported) {
    return new AuthConfigError(
      unsupported,
      `backend authentication ${authKindLabel(unsupported)} is not supported yet`,
    );
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
  } else if (auth.jwtSign !== undefined) {
    // The token's own location, else the auth's; both set would leave one unused.
    if (auth.jwtSign.location !== undefined && explicit !== undefined) {
      return new AuthConfigError('jwtSign.location', 'set either location or jwtSign.location, not both');
    }
    let location = explicit ?? BEARER_LOCATION;
    if (auth.jwtSign.location !== undefined) {
      const own = compileLocation(auth.jwtSign.location, 'jwtSign.location');
      if (own instanceof AuthConfigError) return own;
      location = own;
      writesQuery = own.inQuery;
    }
    const signer = compileJwtSigner(auth.jwtSign, data, namespace, options.clock);
    if (signer instanceof AuthConfigError) return signer;
    // A JWT is base64url text: every location can carry it.
    steps.push((target) => location.write(target, signer()));
    mode = 'jwtSign';
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
  return new BackendAuthPlan(mode, credentials.length, steps, writesQuery);
}
