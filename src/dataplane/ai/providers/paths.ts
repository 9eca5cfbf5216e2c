// Request paths: the configured `path`, `pathPrefix` and custom format paths, checked once at
// compile time and split into a path and the query parameters written in it.
import { ProviderConfigError } from './errors.ts';

/** A request path as configured: the path, and the query parameters written after a `?`. */
export interface ConfiguredPath {
  path: string;
  query: readonly (readonly [string, string])[];
}

const NO_QUERY: readonly (readonly [string, string])[] = Object.freeze([]);

/** A configured path (`path`, `custom.formats[i].path`), or why it cannot be used. */
export function configuredPath(value: string, field: string): ConfiguredPath | ProviderConfigError {
  if (!value.startsWith('/')) return new ProviderConfigError(field, `must start with "/" (got "${value}")`);
  const mark = value.indexOf('?');
  if (mark === -1) return { path: value, query: NO_QUERY };
  const query = Object.freeze([...new URLSearchParams(value.slice(mark + 1))].map((pair) => Object.freeze(pair)));
  return { path: value.slice(0, mark) || '/', query };
}

/** A `pathPrefix` without its trailing slashes ("/" becomes ""), or why it cannot be used. */
export function pathPrefix(value: string, field: string): string | ProviderConfigError {
  if (!value.startsWith('/')) return new ProviderConfigError(field, `must start with "/" (got "${value}")`);
  if (value.includes('?')) return new ProviderConfigError(field, 'must not contain a query');
  return value.replace(/\/+$/, '');
}

export function plainPath(path: string): ConfiguredPath {
  return { path, query: NO_QUERY };
}

/**
 * The path of a Passthrough or Detect request: the client's, with the family's `/v1` base replaced
 * by the prefix when the path starts with it (at a segment boundary), else the prefix put in front.
 */
export function prefixedClientPath(clientPath: string, prefix: string | undefined, base: string): string {
  if (prefix === undefined) return clientPath;
  const rest = clientPath === base || clientPath.startsWith(`${base}/`) ? clientPath.slice(base.length) : clientPath;
  return `${prefix}${rest}` || '/';
}
