// Where a credential is written on an upstream request (spec document 2, "Credential locations"):
// a header with an optional prefix, a query parameter, or a cookie. Checked once at compile time.
import type { AuthorizationLocation } from '../../../api/types/credential-locations.ts';
import { AuthConfigError } from './errors.ts';
import { isHeaderText, isToken, setHeader, type TargetHeaders, takeHeader } from './headers.ts';

export interface AuthTarget {
  headers: TargetHeaders;
  query: URLSearchParams;
}

/**
 * The query of an upstream request whose credentials go in headers only (CompiledBackendAuth
 * writesQuery false): the proxy then skips parsing and re-serialising the query. Shared, so a
 * write is refused rather than kept.
 */
class NoQuery extends URLSearchParams {
  override append(): void {
    throw new Error('this backend authentication writes no query parameter');
  }
  override set(): void {
    throw new Error('this backend authentication writes no query parameter');
  }
  override delete(): void {
    throw new Error('this backend authentication writes no query parameter');
  }
  override sort(): void {
    throw new Error('this backend authentication writes no query parameter');
  }
}

export const NO_QUERY: URLSearchParams = new NoQuery();

export interface CredentialLocation {
  /** Whether write() sets a query parameter (the others write headers only). */
  readonly inQuery: boolean;
  /** Why `value` cannot be written here (never quoting it), or undefined when it can. */
  problem(value: string): string | undefined;
  write(target: AuthTarget, value: string): void;
}

export function headerLocation(name: string, prefix = ''): CredentialLocation {
  return {
    inQuery: false,
    problem: (value) => (isHeaderText(value) ? undefined : 'contains characters an HTTP header cannot carry'),
    write: (target, value) => setHeader(target.headers, name, `${prefix}${value}`),
  };
}

/** The spec's default location: `Authorization: Bearer <credential>`. */
export const BEARER_LOCATION = headerLocation('authorization', 'Bearer ');

function queryLocation(name: string): CredentialLocation {
  return { inQuery: true, problem: () => undefined, write: (target, value) => target.query.set(name, value) };
}

function cookieName(pair: string): string {
  const equals = pair.indexOf('=');
  return (equals === -1 ? pair : pair.slice(0, equals)).trim();
}

function cookieLocation(name: string): CredentialLocation {
  return {
    inQuery: false,
    problem: (value) =>
      isHeaderText(value) && !value.includes(';') ? undefined : 'contains characters a cookie cannot carry',
    write: (target, value) => {
      // Keep the client's other cookies; replace one of the same name.
      const existing = takeHeader(target.headers, 'cookie', '; ');
      const kept = (existing ?? '')
        .split(';')
        .map((pair) => pair.trim())
        .filter((pair) => pair !== '' && cookieName(pair) !== name);
      kept.push(`${name}=${value}`);
      target.headers.cookie = kept.join('; ');
    },
  };
}

export function compileLocation(location: AuthorizationLocation, field: string): CredentialLocation | AuthConfigError {
  const set = (['header', 'queryParameter', 'cookie'] as const).filter((kind) => location[kind] !== undefined);
  if (set.length !== 1) return new AuthConfigError(field, 'exactly one of header, queryParameter, cookie must be set');
  if (location.header) {
    const { name, prefix } = location.header;
    if (!isToken(name)) return new AuthConfigError(`${field}.header.name`, `"${name}" is not a valid header name`);
    if (prefix !== undefined && !isHeaderText(prefix)) {
      return new AuthConfigError(`${field}.header.prefix`, 'contains characters an HTTP header cannot carry');
    }
    return headerLocation(name, prefix);
  }
  if (location.queryParameter) {
    const { name } = location.queryParameter;
    if (name === '') return new AuthConfigError(`${field}.queryParameter.name`, 'must not be empty');
    return queryLocation(name);
  }
  const { name } = location.cookie!;
  if (!isToken(name)) return new AuthConfigError(`${field}.cookie.name`, `"${name}" is not a valid cookie name`);
  return cookieLocation(name);
}
