// Header edits on an upstream request whose header names may come in any case.
import { TOKEN } from '../../../util/http-field-syntax.ts';

/** Upstream request headers, as the proxy builds them (lowercase names from Node, or any case). */
export type TargetHeaders = Record<string, string | string[]>;

/**
 * Removes every spelling of `name` and returns its values (joined by `separator`), if any. Runs
 * for each credential header of every upstream request: no key array is made, and only keys of
 * the same length are lower-cased to compare.
 */
export function takeHeader(headers: TargetHeaders, name: string, separator = ', '): string | undefined {
  const lower = name.toLowerCase();
  let first: string | string[] | undefined;
  let more: string[] | undefined;
  for (const key in headers) {
    if (key !== lower && (key.length !== lower.length || key.toLowerCase() !== lower)) continue;
    const value = headers[key]!;
    delete headers[key];
    if (first === undefined) first = value;
    else {
      more ??= ([] as string[]).concat(first);
      more = more.concat(value);
    }
  }
  if (first === undefined) return undefined;
  if (more !== undefined) return more.join(separator);
  return Array.isArray(first) ? first.join(separator) : first;
}

/** Sets `name` (lowercase), replacing every other spelling of it. */
export function setHeader(headers: TargetHeaders, name: string, value: string): void {
  takeHeader(headers, name);
  headers[name.toLowerCase()] = value;
}

/** The first value of an incoming header. */
export function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Whether `name` is an RFC 9110 token (header and cookie names). */
export function isToken(name: string): boolean {
  return TOKEN.test(name);
}

/** Visible ASCII, space and tab: what a header value can carry without being refused or split. */
const HEADER_TEXT = /^[\t\x20-\x7e]*$/;

export function isHeaderText(value: string): boolean {
  return HEADER_TEXT.test(value);
}
