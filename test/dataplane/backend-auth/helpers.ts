// Shared by the backend auth tests.
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import type { BackendAuth } from '../../../src/api/types/backend-auth.ts';
import {
  AuthConfigError,
  type AuthTarget,
  type BackendAuthOptions,
  type CompiledBackendAuth,
  compileBackendAuth,
  finishBackendAuth,
} from '../../../src/dataplane/auth/backend/index.ts';

/** A provider key no message, log or serialisation may ever contain. */
export const SECRET = 'sk-test-9f8e7d6c5b4a';

export const SECRETS: Record<string, Record<string, string>> = {
  'Secret llm/openai': { Authorization: `Bearer ${SECRET}` },
  'Secret llm/plain': { Authorization: `  ${SECRET}\n` },
  'Secret llm/custom-key': { token: `Bearer ${SECRET}`, other: 'second-credential' },
  'Secret llm/empty': { Authorization: 'Bearer ', blank: '   ' },
  'Secret llm/broken': { Authorization: `${SECRET}\nX-Injected: 1`, semicolon: `${SECRET};evil=1` },
};

export const data = (ref: string) => SECRETS[ref];

export function compiledAuth(auth: BackendAuth | undefined, options?: BackendAuthOptions): CompiledBackendAuth {
  const result = compileBackendAuth(auth, data, 'llm', options);
  if (result instanceof AuthConfigError) assert.fail(`unexpected auth error: ${result.message}`);
  return result;
}

export function authError(auth: BackendAuth, options?: BackendAuthOptions): AuthConfigError {
  const result = compileBackendAuth(auth, data, 'llm', options);
  assert.ok(result instanceof AuthConfigError, 'expected an AuthConfigError');
  return result;
}

/** Applies `auth` to a request built from the client's headers, as the proxy does. */
export function applied(
  auth: CompiledBackendAuth,
  clientHeaders: IncomingHttpHeaders = {},
  options: { query?: string; credential?: string } = {},
): AuthTarget {
  const target: AuthTarget = {
    headers: Object.fromEntries(
      Object.entries(clientHeaders).filter((entry): entry is [string, string | string[]] => entry[1] !== undefined),
    ),
    query: new URLSearchParams(options.query ?? ''),
  };
  const incoming =
    options.credential === undefined
      ? { headers: clientHeaders }
      : { headers: clientHeaders, credential: options.credential };
  auth.apply(target, incoming);
  return target;
}

/**
 * The Bearer token a fetching kind wrote on a fresh request, once its fetch is done, and whether
 * the request had to wait for one; rejects with the BackendCredentialError the proxy would answer.
 */
export async function fetchedBearer(auth: CompiledBackendAuth): Promise<{ token: string; waited: boolean }> {
  const request: AuthTarget = { headers: {}, query: new URLSearchParams() };
  const pending = auth.apply(request, { headers: {} });
  const failed = await finishBackendAuth(pending, auth, () => assert.fail('the kind does not sign'), { headers: {} });
  if (failed) throw failed;
  const header = String(request.headers.authorization ?? '');
  assert.match(header, /^Bearer \S+$/);
  return { token: header.slice('Bearer '.length), waited: pending !== undefined };
}
