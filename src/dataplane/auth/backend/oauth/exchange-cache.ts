// The cache of exchanged tokens (spec document 2, OAuthTokenCache): a TokenCache keyed by the
// digest of every per-request input of an exchange (the subject token, the actor token, the
// evaluated additionalParams), at most maxEntries tokens (default 8192; 0 keeps none, so every
// request exchanges), kept until the answer's expires_in, or defaultTtl (default 300s) when the
// answer has none — and never past the subject token's own exp when it is a JWT that has one: a
// client whose token expired does not keep the token it was exchanged for.
import type { OAuthTokenCache } from '../../../../api/types/backend-auth.ts';
import { durationMs } from '../../../../util/units.ts';
import { AuthConfigError } from '../errors.ts';
import type { CredentialKindContext } from '../kind.ts';
import { TokenCache } from '../token-cache.ts';
import { jwtPayload } from './may-act.ts';
import type { TokenAnswer } from './token-endpoint.ts';

export const DEFAULT_MAX_ENTRIES = 8192;
export const DEFAULT_TTL = '300s';

export interface ExchangeCache {
  readonly tokens: TokenCache;
  /** When the token of `answer`, obtained for `subjectToken`, stops being used (epoch ms). */
  expiresAtMs(answer: TokenAnswer, subjectToken: string): number;
}

/**
 * The cache of a token exchange kind (`kind`: the metric label), kept across configurations under
 * `identity` (everything the exchanged tokens depend on), or an AuthConfigError naming `<field>.cache`.
 */
export function compileExchangeCache(
  cache: OAuthTokenCache | undefined,
  kind: string,
  context: CredentialKindContext,
  identity: readonly string[],
  field: string,
): ExchangeCache | AuthConfigError {
  const maxEntries = cache?.inMemory?.maxEntries ?? DEFAULT_MAX_ENTRIES;
  if (!Number.isInteger(maxEntries) || maxEntries < 0)
    return new AuthConfigError(`${field}.cache.inMemory.maxEntries`, 'must be a whole number, 0 or more');
  let defaultTtlMs: number;
  try {
    defaultTtlMs = durationMs(cache?.inMemory?.defaultTtl ?? DEFAULT_TTL);
  } catch (error) {
    return new AuthConfigError(`${field}.cache.inMemory.defaultTtl`, (error as Error).message);
  }
  if (defaultTtlMs < 1000) return new AuthConfigError(`${field}.cache.inMemory.defaultTtl`, 'must be at least 1s');
  const clock = context.clock;
  const tokens = context.shared(
    kind,
    [String(maxEntries), String(defaultTtlMs), ...identity],
    () => new TokenCache({ kind, maxEntries, clock }),
  );
  return {
    tokens,
    expiresAtMs: (answer, subjectToken) => {
      const now = clock.epochMs();
      const expiry = now + (answer.expiresIn !== undefined ? answer.expiresIn * 1000 : defaultTtlMs);
      const subjectExp = jwtPayload(subjectToken)?.exp;
      return typeof subjectExp === 'number' && Number.isFinite(subjectExp)
        ? Math.min(expiry, subjectExp * 1000)
        : expiry;
    },
  };
}
