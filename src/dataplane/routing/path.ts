// The request path that routing sees: RFC 3986 normalisation applied once, so that equivalent
// spellings of one path cannot reach different routes (`/public/../admin`, `//admin`, `/%61dmin`
// all route as `/admin`). Percent-escapes of unreserved characters are decoded, other escapes are
// kept with upper-case hex (so `%2F` stays data, never a separator), repeated slashes merge, and
// dot-segments are removed. The result is also what should be forwarded, so the backend sees
// the path that was routed.

const SLASH = 47;
const DOT = 46;
const PERCENT = 37;

/** Whether the path may change under normalisation: it has an escape, `//` or a `/.` segment start. */
function needsNormalising(path: string): boolean {
  for (let i = 0; i < path.length; i++) {
    const c = path.charCodeAt(i);
    if (c === PERCENT) return true;
    if (c === SLASH) {
      const next = path.charCodeAt(i + 1);
      if (next === SLASH || next === DOT) return true;
    }
  }
  return false;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 65 && c <= 70) return c - 55;
  if (c >= 97 && c <= 102) return c - 87;
  return -1;
}

/** RFC 3986 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~". */
function isUnreserved(c: number): boolean {
  return (
    (c >= 65 && c <= 90) ||
    (c >= 97 && c <= 122) ||
    (c >= 48 && c <= 57) ||
    c === 45 ||
    c === 46 ||
    c === 95 ||
    c === 126
  );
}

/** Decodes escapes of unreserved characters and upper-cases the others; undefined on a malformed escape. */
function normaliseEscapes(path: string): string | undefined {
  if (path.indexOf('%') === -1) return path;
  let out = '';
  let from = 0;
  for (let i = path.indexOf('%'); i !== -1; i = path.indexOf('%', i)) {
    const high = hexValue(path.charCodeAt(i + 1));
    const low = hexValue(path.charCodeAt(i + 2));
    if (high < 0 || low < 0) return undefined;
    const byte = high * 16 + low;
    out += path.slice(from, i);
    out += isUnreserved(byte) ? String.fromCharCode(byte) : `%${path.slice(i + 1, i + 3).toUpperCase()}`;
    i += 3;
    from = i;
  }
  return out + path.slice(from);
}

/** Merges empty segments and removes `.` and `..` (never above the root); a trailing slash stays. */
function removeDotSegments(path: string): string {
  const segments = path.split('/');
  const out: string[] = [];
  const last = segments.length - 1;
  for (let i = 1; i <= last; i++) {
    const segment = segments[i]!;
    if (segment === '..') out.pop();
    if (segment === '' || segment === '.' || segment === '..') {
      if (i === last) out.push('');
      continue;
    }
    out.push(segment);
  }
  return `/${out.join('/')}`;
}

/**
 * The normalised form of an origin-form request path (no query), or undefined when the path
 * cannot be routed: it does not start with `/` or has a malformed percent-escape (answer 400).
 * Already-normal paths are returned as they are, without allocating.
 */
export function normalizePath(path: string): string | undefined {
  if (path.charCodeAt(0) !== SLASH) return undefined;
  if (!needsNormalising(path)) return path;
  const unescaped = normaliseEscapes(path);
  return unescaped === undefined ? undefined : removeDotSegments(unescaped);
}
