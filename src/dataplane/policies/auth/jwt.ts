// JWT authentication (traffic.jwtAuthentication; spec document 1 "Authentication" rule 3). The
// bearer token's iss picks the provider; the token must be signed by a key of that provider's
// key set with an asymmetric algorithm, carry exp, be within exp/nbf (60 s of clock skew), and
// name one of the provider's audiences when it lists any. A verified token's claims become CEL
// `jwt.*` and the token is removed from the request as it goes upstream (as agentgateway does).
// Strict requires a valid token, Optional checks one when sent, Permissive never rejects.
// With `mcp` set, the 401 points MCP clients at the protected resource metadata
// (WWW-Authenticate resource_metadata); the MCP OAuth endpoints themselves are served before
// routing: mcp-oauth/ and docs/policies/mcp-oauth.md.
import { decodeJwt, errors, type JWTPayload, jwtVerify } from 'jose';
import type { JWKS, JWTAuthentication, JWTProvider } from '../../../api/types/inbound-auth.ts';
import { durationMs } from '../../../util/units.ts';
import { resolveEndpoint } from '../endpoint.ts';
import type { PolicyExchange } from '../exchange.ts';
import {
  isProblem,
  type LocalResponse,
  type PolicyCompileContext,
  type PolicyCompiler,
  type PolicyProblem,
} from '../types.ts';
import { compileCredentialLocation } from './credential-location.ts';
import { type KeySet, parseKeySet, RemoteJwks } from './jwks.ts';
import { type ChallengedRequest, compileChallenge } from './mcp-oauth/protected-resource.ts';
import { jwtMcpSettings } from './mcp-oauth/settings.ts';

/** Longer tokens are refused before any decoding (real access tokens are a few KiB). */
export const MAX_TOKEN_LENGTH = 16 * 1024;
/** Seconds of clock difference allowed on exp and nbf (agentgateway's leeway). */
const CLOCK_TOLERANCE_S = 60;
/**
 * Signature algorithms accepted: asymmetric only. Which of them a key allows follows from the key
 * (its alg, or its kty and curve); an HMAC token is never checked against a public key.
 */
const ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
];
/** Verified tokens remembered per policy (see VerifiedTokens). */
export const MAX_VERIFIED_TOKENS = 10_000;
// base64url header.payload.signature: anything else (a JWE, garbage) is malformed without decoding.
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** Where a provider's keys come from: a set parsed at compile time, or a remote set's cache. */
interface KeySource {
  keySet(): KeySet | undefined | Promise<KeySet | undefined>;
  /** After a token named a key the set lacks: the set, fetched again when that is allowed. */
  afterUnknownKey(): Promise<KeySet | undefined>;
  /** Why no key set is available (for the access log's error). */
  unavailable(): string;
}

interface Provider {
  issuer: string;
  audiences: string[] | undefined;
  keys: KeySource;
}

/** Why a token was refused: `reason` goes to the client, `detail` (no token in it) to the access log. */
class TokenRejection {
  readonly reason: string;
  readonly detail: string;
  constructor(reason: string, detail = reason) {
    this.reason = reason;
    this.detail = detail;
  }
}

export const compileJwtAuthentication: PolicyCompiler<JWTAuthentication> = (value, context) => {
  const path = `${context.path}.jwtAuthentication`;
  const location = compileCredentialLocation(value.location, 'Bearer', `${path}.location`);
  if (isProblem(location)) return location;
  const byIssuer = new Map<string, Provider[]>();
  for (const [index, config] of value.providers.entries()) {
    const provider = compileProvider(config, context, `${path}.providers[${index}]`);
    if (isProblem(provider)) return provider;
    const list = byIssuer.get(provider.issuer);
    if (list) list.push(provider);
    else byIssuer.set(provider.issuer, [provider]);
  }
  const mcp = jwtMcpSettings(value, path);
  if (isProblem(mcp)) return mcp;
  const challenge = mcp ? compileChallenge(mcp) : bearerChallenge;
  const mode = value.mode ?? 'Strict';
  // Token times (exp, nbf) are seconds since the epoch: the cache and the check read the same clock.
  const now = context.runtime.clock.epochMs;
  const verified = new VerifiedTokens(now);
  return {
    request: async (exchange) => {
      const token = location.read(exchange);
      if (token === undefined) return mode === 'Strict' ? missingToken(exchange, challenge) : undefined;
      const result = verified.get(token) ?? (await verifyToken(token, byIssuer, verified, now));
      if (result instanceof TokenRejection)
        return mode === 'Permissive' ? undefined : invalidToken(exchange, result, challenge);
      exchange.setJwtClaims(result);
      location.remove(exchange);
      return undefined;
    },
  };
};

function compileProvider(config: JWTProvider, context: PolicyCompileContext, path: string): Provider | PolicyProblem {
  const keys = compileKeySource(config.jwks, context, `${path}.jwks`);
  if (isProblem(keys)) return keys;
  return { issuer: config.issuer, audiences: config.audiences, keys };
}

function compileKeySource(jwks: JWKS, context: PolicyCompileContext, path: string): KeySource | PolicyProblem {
  if (jwks.inline !== undefined) {
    const keySet = parseKeySet(jwks.inline);
    if (typeof keySet === 'string') return { field: `${path}.inline`, message: `the key set ${keySet}` };
    return {
      keySet: () => keySet,
      afterUnknownKey: () => Promise.resolve(keySet),
      unavailable: () => '',
    };
  }
  const remote = jwks.remote;
  if (!remote) return { field: path, message: 'set inline or remote' };
  const endpoint = resolveEndpoint(remote, context, `${path}.remote`);
  if (isProblem(endpoint)) return endpoint;
  let url = remote.url;
  if (url === undefined) {
    const jwksPath = remote.jwksPath ?? '';
    url = `${endpoint.origin}${jwksPath.startsWith('/') ? '' : '/'}${jwksPath}`;
  }
  const refreshMs = durationMs(remote.cacheDuration ?? '5m');
  const socketPath = endpoint.socketPath;
  // One cache per URL (and refresh period): policies naming the same set share it, reloads keep it.
  const key = `jwks ${url}${socketPath ? ` via ${socketPath}` : ''} every ${refreshMs}ms`;
  const now = context.runtime.clock.monotonicMs;
  const cache = context.runtime.use(key, () => new RemoteJwks({ url, socketPath, refreshMs, now }));
  // Fetched now, in the background, so that the first request does not wait for it.
  cache.start();
  return {
    keySet: () => cache.keySet(),
    afterUnknownKey: () => cache.afterUnknownKey(),
    unavailable: () => `the key set at ${cache.name} is not available${cache.lastError ? `: ${cache.lastError}` : ''}`,
  };
}

/**
 * Tokens this policy has verified, so that a client sending the same token request after request
 * pays one signature check, not one per request (an RS256 check through jose costs about 55 µs).
 * An entry is used only while the token is unexpired (the same clock tolerance as the check) and
 * its provider still has the very key set that verified it: a refreshed set (a rotation) means a
 * new check. At most MAX_VERIFIED_TOKENS entries; the oldest goes first. Only successes are kept.
 */
class VerifiedTokens {
  private readonly now: () => number;
  private readonly entries = new Map<
    string,
    { claims: JWTPayload; expiresAtMs: number; provider: Provider; keySet: KeySet }
  >();

  /** `now`: milliseconds since the epoch, the clock the tokens are checked against. */
  constructor(now: () => number) {
    this.now = now;
  }

  get(token: string): JWTPayload | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    if (this.now() >= entry.expiresAtMs || entry.provider.keys.keySet() !== entry.keySet) {
      this.entries.delete(token);
      return undefined;
    }
    return entry.claims;
  }

  remember(token: string, claims: JWTPayload, provider: Provider, keySet: KeySet): void {
    if (typeof claims.exp !== 'number') return;
    if (this.entries.size >= MAX_VERIFIED_TOKENS) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(token, { claims, expiresAtMs: (claims.exp + CLOCK_TOLERANCE_S) * 1000, provider, keySet });
  }
}

/** The verified token's claims, or why it was refused; `now` is milliseconds since the epoch. */
async function verifyToken(
  token: string,
  byIssuer: Map<string, Provider[]>,
  verified: VerifiedTokens,
  now: () => number,
): Promise<JWTPayload | TokenRejection> {
  if (token.length > MAX_TOKEN_LENGTH) return new TokenRejection('token too large');
  if (!COMPACT_JWS.test(token)) return new TokenRejection('malformed token');
  let issuer: unknown;
  try {
    issuer = decodeJwt(token).iss;
  } catch {
    return new TokenRejection('malformed token');
  }
  const providers = typeof issuer === 'string' ? byIssuer.get(issuer) : undefined;
  if (!providers) return new TokenRejection('issuer not accepted');
  let rejection: TokenRejection | undefined;
  // Several providers may share an issuer (different audiences or key sets): the first that
  // accepts the token wins.
  for (const provider of providers) {
    const result = await verifyWithProvider(token, provider, now);
    if (!(result instanceof TokenRejection)) {
      verified.remember(token, result.claims, provider, result.keySet);
      return result.claims;
    }
    rejection = result;
  }
  return rejection!;
}

async function verifyWithProvider(
  token: string,
  provider: Provider,
  now: () => number,
): Promise<{ claims: JWTPayload; keySet: KeySet } | TokenRejection> {
  let keySet = provider.keys.keySet();
  if (keySet instanceof Promise) keySet = await keySet;
  if (!keySet) return new TokenRejection('signing keys unavailable', provider.keys.unavailable());
  const options = {
    issuer: provider.issuer,
    audience: provider.audiences,
    algorithms: ALGORITHMS,
    requiredClaims: ['exp'],
    clockTolerance: CLOCK_TOLERANCE_S,
    currentDate: new Date(now()),
  };
  try {
    return { claims: (await jwtVerify(token, keySet.resolve, options)).payload, keySet };
  } catch (error) {
    if (!(error instanceof errors.JWKSNoMatchingKey)) return rejectionOf(error);
  }
  // A key the set lacks: the provider may have rotated its keys since the set was fetched.
  const refreshed = await provider.keys.afterUnknownKey();
  if (!refreshed || refreshed === keySet) return new TokenRejection('signing key not found');
  try {
    return { claims: (await jwtVerify(token, refreshed.resolve, options)).payload, keySet: refreshed };
  } catch (error) {
    return rejectionOf(error);
  }
}

function rejectionOf(error: unknown): TokenRejection {
  if (error instanceof errors.JWTExpired) return new TokenRejection('token expired');
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'nbf') return new TokenRejection('token not yet valid');
    if (error.claim === 'aud') return new TokenRejection('audience not accepted');
    if (error.claim === 'iss') return new TokenRejection('issuer not accepted');
    if (error.reason === 'missing') return new TokenRejection(`claim ${error.claim} missing`);
    return new TokenRejection(`claim ${error.claim} invalid`);
  }
  if (error instanceof errors.JOSEAlgNotAllowed || error instanceof errors.JOSENotSupported)
    return new TokenRejection('algorithm not accepted');
  if (error instanceof errors.JWKSNoMatchingKey) return new TokenRejection('signing key not found');
  // A token without kid that several keys could verify: trying each would let one request cost
  // as many verifications as the set has keys.
  if (error instanceof errors.JWKSMultipleMatchingKeys) return new TokenRejection('key id required');
  if (error instanceof errors.JWSSignatureVerificationFailed) return new TokenRejection('invalid signature');
  return new TokenRejection('malformed token');
}

/** The WWW-Authenticate challenge of a 401 before any error parameter: "Bearer", or with mcp its resource_metadata. */
type Challenge = (request: ChallengedRequest) => string;

const bearerChallenge: Challenge = () => 'Bearer';

function missingToken(exchange: PolicyExchange, challenge: Challenge): LocalResponse {
  exchange.record.error = 'jwt: token missing';
  return {
    status: 401,
    headers: { 'www-authenticate': challenge(exchange) },
    body: 'JWT authentication required',
    own: 'refusal',
  };
}

function invalidToken(exchange: PolicyExchange, rejection: TokenRejection, challenge: Challenge): LocalResponse {
  exchange.record.error = `jwt: ${rejection.detail}`;
  const scheme = challenge(exchange);
  // The reasons are fixed phrases: nothing from the token or the configuration is echoed.
  const error = `error="invalid_token", error_description="${rejection.reason}"`;
  return {
    status: 401,
    headers: { 'www-authenticate': scheme === 'Bearer' ? `Bearer ${error}` : `${scheme}, ${error}` },
    body: `invalid JWT: ${rejection.reason}`,
    own: 'refusal',
  };
}
