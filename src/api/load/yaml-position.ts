// Where a YAML syntax error is, for a person: the yaml parser reports the offset at which it could
// no longer read the text, which for an unclosed quote or bracket is the end of the document (or
// of the file). The line to fix is the one that opened it, so that opener is looked up in the
// concrete syntax tree and reported instead.
import { Parser } from 'yaml';

/** What was opened and not closed, and at which offset. */
export interface UnclosedOpener {
  offset: number;
  /** The character the text is missing ("\"", "'", "]" or "}"). */
  missing: string;
}

interface Token {
  type?: string;
  offset?: number;
  source?: string;
  start?: unknown;
  end?: unknown;
}

/** The innermost quote or flow collection opened before `errorOffset` and never closed, if any. */
export function unclosedOpenerBefore(text: string, errorOffset: number): UnclosedOpener | undefined {
  let found: UnclosedOpener | undefined;
  const consider = (token: Token) => {
    if (typeof token.offset !== 'number' || token.offset >= errorOffset) return;
    if (found && found.offset > token.offset) return;
    const missing = missingCloser(token);
    if (missing) found = { offset: token.offset, missing };
  };
  // The CST is a tree of plain objects and arrays; bounded by the text's size (at most 8 MiB).
  const stack: unknown[] = [...new Parser().parse(text)];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    consider(node as Token);
    for (const [key, value] of Object.entries(node))
      if (key !== 'source' && typeof value === 'object') stack.push(value);
  }
  return found;
}

function missingCloser(token: Token): string | undefined {
  const source = token.source ?? '';
  if (token.type === 'double-quoted-scalar')
    return source.length < 2 || !source.endsWith('"') || escapedEnd(source) ? '"' : undefined;
  if (token.type === 'single-quoted-scalar') return source.length < 2 || !source.endsWith("'") ? "'" : undefined;
  if (token.type === 'flow-collection') {
    const start = token.start as { source?: string } | undefined;
    const closer = start?.source === '[' ? ']' : '}';
    const end = Array.isArray(token.end) ? (token.end as Token[]) : [];
    return end.some((part) => part.type === 'flow-seq-end' || part.type === 'flow-map-end') ? undefined : closer;
  }
  return undefined;
}

/** Whether the last character of a double-quoted scalar is escaped (an odd run of backslashes before it). */
function escapedEnd(source: string): boolean {
  let backslashes = 0;
  for (let index = source.length - 2; index > 0 && source[index] === '\\'; index--) backslashes++;
  return backslashes % 2 === 1;
}
