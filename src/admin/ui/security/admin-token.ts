// The admin token: what the web UI and its API require when the admin listener is reachable from
// elsewhere than loopback (docs/decisions/0046-web-ui.md). It comes from a file
// (--admin-token-file) or GW_ADMIN_TOKEN; a browser presents it once to log in and then holds a
// session cookie derived from it (HMAC over an expiry and a random nonce, so nothing is kept per
// session and a new token ends every session); scripts may send it as a bearer token instead.
// Every comparison is constant-time.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** Shorter tokens are refused: a token is a secret, not a password to remember. */
export const MIN_TOKEN_LENGTH = 16;

/** How long a login lasts. */
export const SESSION_LIFETIME_MS = 12 * 60 * 60 * 1000;

/** The token's value from --admin-token-file (wins) or GW_ADMIN_TOKEN, or the problem with it. */
export function readAdminToken(
  file: string | undefined,
  env: NodeJS.ProcessEnv,
): { token: string | undefined } | { problem: string } {
  let text: string | undefined;
  let label: string;
  if (file !== undefined) {
    label = `--admin-token-file ${file}`;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      return { problem: `${label}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
    }
  } else {
    label = 'GW_ADMIN_TOKEN';
    text = env.GW_ADMIN_TOKEN;
    if (text === undefined || text === '') return { token: undefined };
  }
  // A file written by an editor or `echo` ends with a newline that is not part of the token.
  const token = text.replace(/\r?\n$/, '');
  if (token.length < MIN_TOKEN_LENGTH || /\s/.test(token))
    return {
      problem: `${label}: the admin token must be at least ${MIN_TOKEN_LENGTH} characters without spaces (e.g. openssl rand -hex 32)`,
    };
  return { token };
}

/** Equal-length digests, compared in constant time: neither length nor content leaks. */
function sameSecret(a: string, b: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(a), digest(b));
}

export class AdminToken {
  readonly #token: string;
  readonly #now: () => number;

  constructor(token: string, now: () => number = Date.now) {
    this.#token = token;
    this.#now = now;
  }

  /** Whether `candidate` is the token. */
  matches(candidate: string): boolean {
    return sameSecret(candidate, this.#token);
  }

  /** A new session's cookie value: expiry, nonce and their HMAC under the token. */
  newSession(): string {
    const expires = this.#now() + SESSION_LIFETIME_MS;
    const claim = `${expires}.${randomBytes(18).toString('base64url')}`;
    return `${claim}.${this.#sign(claim)}`;
  }

  /** Whether a cookie value is a session this token issued and it has not expired. */
  validSession(value: string): boolean {
    const cut = value.lastIndexOf('.');
    if (cut < 0) return false;
    const claim = value.slice(0, cut);
    if (!sameSecret(value.slice(cut + 1), this.#sign(claim))) return false;
    const expires = Number(claim.slice(0, claim.indexOf('.')));
    return Number.isFinite(expires) && expires > this.#now();
  }

  #sign(claim: string): string {
    return createHmac('sha256', this.#token).update(`gw admin session ${claim}`).digest('base64url');
  }
}
