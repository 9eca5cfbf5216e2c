// Bearer-token authentication: one token, generated on first start and kept in the data
// directory (mode 0600) next to the kubeconfig that carries it. Requests without it are refused
// (401) — there is no anonymous access but the health endpoints. The comparison takes the same
// time whatever the token's length or how much of it matches.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The token in `file`, created there (readable by its owner only) when the file does not exist. */
export function loadOrCreateToken(file: string): string {
  if (existsSync(file)) {
    const token = readFileSync(file, 'utf8').trim();
    if (token.length >= 16) return token;
  }
  const token = generateToken();
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return token;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Whether an Authorization header carries `token` (compared in constant time). */
export function bearerTokenMatches(header: string | undefined, token: string): boolean {
  if (header === undefined) return false;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) return false;
  // Digests first: equal lengths for timingSafeEqual, and no timing signal about the length.
  return timingSafeEqual(digest(match[1]!), digest(token));
}
