// Query parameters for routing: the first value of a parameter, found by scanning the raw query
// string (no parsing of the whole query per request). Names compare exactly (case-sensitive);
// names and values are decoded as application/x-www-form-urlencoded (`+` is a space), and a
// malformed escape leaves the text as it is.

function decodeComponent(text: string): string {
  if (text.indexOf('%') === -1 && text.indexOf('+') === -1) return text;
  const spaced = text.replaceAll('+', ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

function hasEscape(query: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = query.charCodeAt(i);
    if (c === 37 /* % */ || c === 43 /* + */) return true;
  }
  return false;
}

/**
 * The decoded value of the first `name` parameter in `query` (with or without its leading `?`):
 * '' for a parameter without `=`, undefined when absent.
 */
export function firstQueryValue(query: string, name: string): string | undefined {
  const length = query.length;
  let start = query.charCodeAt(0) === 63 /* ? */ ? 1 : 0;
  while (start < length) {
    let end = query.indexOf('&', start);
    if (end === -1) end = length;
    let equals = query.indexOf('=', start);
    if (equals === -1 || equals > end) equals = end;
    const found =
      (equals - start === name.length && query.startsWith(name, start)) ||
      (hasEscape(query, start, equals) && decodeComponent(query.slice(start, equals)) === name);
    if (found) return equals === end ? '' : decodeComponent(query.slice(equals + 1, end));
    start = end + 1;
  }
  return undefined;
}
