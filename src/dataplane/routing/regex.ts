// Regular expressions of HTTPRoute matches. Gateway API leaves the dialect to the
// implementation; gw accepts the part of RE2 syntax that JavaScript reads the same way, so a
// pattern written for an RE2-based gateway either means the same here or is rejected — never
// silently read differently. Compiled once, anchored for a full match.
//
// Accepted: literals, `.`, classes, groups (capturing, `(?:...)`, named as `(?P<n>...)` or
// `(?<n>...)`), alternation, quantifiers, `^`/`$`, the escapes \d \D \w \W \s \S \b \B \n \r \t
// \f \v \0 \xHH and escaped punctuation, `\A` and `\z` (start and end of text), and leading
// flags `(?i)` / `(?s)`. Rejected: backreferences, lookaround, \p{..}, \Q..\E and other escapes
// RE2 and JavaScript read differently.

const ESCAPE_LETTERS = new Set(['d', 'D', 'w', 'W', 's', 'S', 'b', 'B', 'n', 'r', 't', 'f', 'v', '0']);

function isAsciiAlphanumeric(c: string): boolean {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

function isHex(c: string | undefined): boolean {
  return c !== undefined && /^[0-9a-fA-F]$/.test(c);
}

/** Rewrites RE2 spellings into JavaScript ones; throws an Error naming what is not supported. */
function translate(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[i + 1];
      if (next === undefined) throw new Error('trailing backslash');
      if (isAsciiAlphanumeric(next)) {
        if (!inClass && next === 'A') out += '^';
        else if (!inClass && next === 'z') out += '$';
        else if (next === 'x' && isHex(pattern[i + 2]) && isHex(pattern[i + 3])) {
          out += pattern.slice(i, i + 4);
          i += 2;
        } else if (ESCAPE_LETTERS.has(next)) out += `\\${next}`;
        else if (next >= '1' && next <= '9') throw new Error(`backreference \\${next} is not supported`);
        else throw new Error(`escape \\${next} is not supported`);
      } else {
        out += `\\${next}`;
      }
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      out += c;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += c;
      // RE2 reads a `]` right after `[` or `[^` as a literal; JavaScript would close the class.
      if (pattern[i + 1] === '^') {
        out += '^';
        i++;
      }
      if (pattern[i + 1] === ']') {
        out += '\\]';
        i++;
      }
      continue;
    }
    if (c === '(' && pattern[i + 1] === '?') {
      const kind = pattern[i + 2];
      if (kind === '=' || kind === '!') throw new Error('lookahead is not supported');
      if (kind === '<' && (pattern[i + 3] === '=' || pattern[i + 3] === '!'))
        throw new Error('lookbehind is not supported');
      if (kind === 'P' && pattern[i + 3] === '<') {
        out += '(?<';
        i += 3;
        continue;
      }
    }
    out += c;
  }
  return out;
}

/**
 * A RegExp that holds when the whole input matches `pattern`, or an Error saying why the pattern
 * is not accepted.
 */
export function compileFullMatch(pattern: string): RegExp | Error {
  let body = pattern;
  let flags = '';
  const leading = /^\(\?([a-zA-Z]+)\)/.exec(body);
  if (leading) {
    for (const flag of leading[1]!) {
      if (flag !== 'i' && flag !== 's') return new Error(`flag ${flag} is not supported (only i and s)`);
      if (!flags.includes(flag)) flags += flag;
    }
    body = body.slice(leading[0].length);
  }
  try {
    return new RegExp(`^(?:${translate(body)})$`, flags);
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}
