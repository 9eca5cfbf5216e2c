// One OAuth 2.0 token endpoint gw asks for tokens (oauthTokenExchange, both Cross App Access
// hops): resolved once from its endpoint reference (a backendRef or a url, plus `path`), reached
// through an undici pool kept across configurations (with the tcp, tls and http policies of a
// GwBackend it names), and asked with a form-encoded POST carrying the client's authentication.
// Every request has a deadline (the GwBackend's requestTimeout, else 10 s) and its answer is read
// up to 64 KiB. An answer becomes a token or a BackendCredentialError: an OAuth error about the
// token the client presented is the client's 401; anything else (gw's client refused, a 5xx, an
// unreachable endpoint, an answer that is no token) is a 502. The endpoint's answer never reaches
// the client, and the log gets its status and OAuth error code, never a token.
import type { Dispatcher, Pool } from 'undici';
import { undici } from '../../../../util/undici.ts';
import {
  type EndpointReference,
  endpointConnectionSettings,
  type ResolvedEndpoint,
  resolveEndpoint,
} from '../../../policies/endpoint.ts';
import { isProblem } from '../../../policies/types.ts';
import { BackendCredentialError } from '../credential-error.ts';
import { AuthConfigError } from '../errors.ts';
import type { CredentialKindContext } from '../kind.ts';
import type { ClientAuthentication } from './client-auth.ts';

/** Deadline of one token request when the endpoint's GwBackend sets no policies.http.requestTimeout. */
export const TOKEN_REQUEST_DEADLINE_MS = 10_000;
/** The most of a token endpoint's answer gw reads; a larger one is a failure. */
export const MAX_TOKEN_ANSWER_BYTES = 64 * 1024;

/**
 * OAuth error codes (RFC 6749 section 5.2, RFC 8693 section 2.2.2) that refuse the token the client
 * presented or what its identity may have: the client's 401. Every other code — invalid_client
 * (gw's own credentials), invalid_request, unsupported_grant_type... — is gw's failure, a 502.
 */
const CLIENT_TOKEN_ERRORS: ReadonlySet<string> = new Set([
  'invalid_grant',
  'invalid_target',
  'invalid_scope',
  'unauthorized_client',
  'access_denied',
]);

/** RFC 6749 section 5.2: an error code is printable ASCII without `"` and `\`. */
const ERROR_CODE = /^[\x20\x21\x23-\x5b\x5d-\x7e]{1,64}$/;

/** A token endpoint's successful answer (RFC 6749 section 5.1, RFC 8693 section 2.2.1). */
export interface TokenAnswer {
  accessToken: string;
  issuedTokenType: string | undefined;
  tokenType: string | undefined;
  /** Seconds, when the answer says. */
  expiresIn: number | undefined;
}

/** What the token of an answer must be, beside a non-empty access_token. */
export interface AnswerExpectation {
  /** The issued_token_type the answer must carry when it carries one (the requested type). */
  issuedTokenType?: string | undefined;
}

export class TokenEndpoint {
  /** The endpoint and path, for the log. */
  readonly name: string;
  /** Where and how it is reached (path, address, connection policies), for a cache's identity. */
  readonly identity: string;
  readonly #dispatcher: Pick<Dispatcher, 'request'>;
  readonly #path: string;
  readonly #deadlineMs: number;
  readonly #clientAuth: ClientAuthentication | undefined;
  readonly #failure: string;
  readonly #refused: string;

  constructor(
    name: string,
    identity: string,
    dispatcher: Pick<Dispatcher, 'request'>,
    path: string,
    deadlineMs: number,
    clientAuth: ClientAuthentication | undefined,
    kind: string,
  ) {
    this.name = name;
    this.identity = identity;
    this.#dispatcher = dispatcher;
    this.#path = path;
    this.#deadlineMs = deadlineMs;
    this.#clientAuth = clientAuth;
    this.#failure = `gw could not obtain ${kind} credentials for the backend.`;
    this.#refused = `The token endpoint of ${kind} did not accept the request's credentials.`;
  }

  /** Posts `form` (plus the client's authentication); the token, or a BackendCredentialError. */
  async request(form: URLSearchParams, expectation: AnswerExpectation = {}): Promise<TokenAnswer> {
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    };
    this.#clientAuth?.write(form, headers);
    let status: number;
    let text: string;
    try {
      const answer = await this.#dispatcher.request({
        method: 'POST',
        path: this.#path,
        headers,
        body: form.toString(),
        signal: AbortSignal.timeout(this.#deadlineMs),
      });
      status = answer.statusCode;
      text = await readBounded(answer.body);
    } catch (error) {
      throw this.#fail(`${this.name} could not be asked: ${reason(error)}`);
    }
    const json = parseObject(text);
    if (status >= 200 && status < 300) return this.#token(status, json, expectation);
    const code = typeof json?.error === 'string' && ERROR_CODE.test(json.error) ? json.error : undefined;
    const detail = `${this.name} answered ${status}${code ? ` ${code}` : ' without an OAuth error'}`;
    if (code !== undefined && CLIENT_TOKEN_ERRORS.has(code) && status >= 400 && status < 500)
      throw new BackendCredentialError(401, this.#refused, detail);
    throw this.#fail(detail);
  }

  #token(status: number, json: Record<string, unknown> | undefined, expectation: AnswerExpectation): TokenAnswer {
    if (json === undefined) throw this.#fail(`${this.name} answered ${status} with no JSON object`);
    const accessToken = json.access_token;
    if (typeof accessToken !== 'string' || accessToken === '')
      throw this.#fail(`${this.name} answered ${status} without an access_token`);
    const tokenType = optionalString(json.token_type);
    // The token is sent as a bearer credential: a token bound to a key (DPoP, MAC) cannot be.
    // N_A is what RFC 8693 answers for a token that is not an access token (an ID-JAG).
    if (tokenType !== undefined && !/^(bearer|n_a)$/i.test(tokenType))
      throw this.#fail(`${this.name} issued a token of type ${printable(tokenType)}, not a bearer token`);
    const issuedTokenType = optionalString(json.issued_token_type);
    if (
      expectation.issuedTokenType !== undefined &&
      issuedTokenType !== undefined &&
      issuedTokenType !== expectation.issuedTokenType
    )
      throw this.#fail(
        `${this.name} issued a ${printable(issuedTokenType)} token; ${expectation.issuedTokenType} was requested`,
      );
    return { accessToken, issuedTokenType, tokenType, expiresIn: expiresIn(json.expires_in) };
  }

  #fail(detail: string): BackendCredentialError {
    return new BackendCredentialError(502, this.#failure, detail);
  }
}

/** expires_in as seconds: a non-negative number, or its decimal text (some servers send one). */
function expiresIn(value: unknown): number | undefined {
  const seconds = typeof value === 'string' && /^\d{1,12}$/.test(value) ? Number(value) : value;
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** A value from an answer, safe for the log: short, printable, no token-sized text. */
function printable(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}...` : value);
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

class AnswerTooLarge extends Error {
  constructor() {
    super(`the answer is larger than ${MAX_TOKEN_ANSWER_BYTES} bytes`);
  }
}

async function readBounded(body: AsyncIterable<Buffer> & { destroy(error?: Error): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_TOKEN_ANSWER_BYTES) {
      body.destroy();
      throw new AnswerTooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function reason(error: unknown): string {
  if (error instanceof AnswerTooLarge) return error.message;
  if (error instanceof Error) {
    if (error.name === 'TimeoutError' || error.name === 'AbortError') return 'no answer before the deadline';
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}

/** An endpoint reference with the token endpoint's path (OAuthTokenExchange, CrossAppAccessEndpoint). */
export interface TokenEndpointSpec extends EndpointReference {
  path?: string;
}

/**
 * The token endpoint of `spec` (at field path `field`), or an AuthConfigError naming the field
 * when it cannot be resolved here or reached with its GwBackend's policies. The request path is
 * the url's own path followed by `path` ("https://idp.example/oauth2/token" with the default
 * path "/" posts to /oauth2/token).
 */
export function compileTokenEndpoint(
  spec: TokenEndpointSpec,
  clientAuth: ClientAuthentication | undefined,
  context: CredentialKindContext,
  field: string,
  kind: string,
): TokenEndpoint | AuthConfigError {
  if (context.endpoints === undefined)
    return new AuthConfigError(field, 'a token endpoint cannot be resolved here (no backends are in scope)');
  if (spec.url !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(spec.url);
    } catch {
      url = undefined;
    }
    if (url !== undefined && (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== ''))
      return new AuthConfigError(`${field}.url`, 'must not carry a query, a fragment or user information');
  }
  const endpoint = resolveEndpoint(spec, context.endpoints, field, ['tcp', 'tls', 'http', 'tunnel']);
  if (isProblem(endpoint)) return new AuthConfigError(endpoint.field, endpoint.message);
  const path = spec.path ?? '/';
  if (!path.startsWith('/')) return new AuthConfigError(`${field}.path`, 'must start with /');
  if (/[\s?#]/.test(path)) return new AuthConfigError(`${field}.path`, 'must not contain spaces, ? or #');
  const settings = endpointConnectionSettings(spec, endpoint, context.endpoints, context.data, field);
  if (isProblem(settings)) return new AuthConfigError(settings.field, settings.message);
  const pool = context.shared(
    'oauth token endpoint',
    [settings.key],
    (): Pool => new (undici().Pool)(settings.origin, settings.options),
  );
  const requestPath = requestPathOf(endpoint, path);
  return new TokenEndpoint(
    `token endpoint ${endpoint.name}${requestPath}`,
    `${requestPath} ${settings.key}`,
    pool,
    requestPath,
    settings.requestTimeoutMs ?? TOKEN_REQUEST_DEADLINE_MS,
    clientAuth,
    kind,
  );
}

function requestPathOf(endpoint: ResolvedEndpoint, path: string): string {
  const joined = endpoint.basePath + (path === '/' ? '' : path);
  return joined === '' ? '/' : joined;
}
