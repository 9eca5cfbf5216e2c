// How gw keeps routing information in what the client sees when several targets hide behind one
// endpoint (docs/mcp.md "Names"): tool and prompt names as `<target>_<name>`, resource URIs as
// `<target>+<uri>`, ids of server-to-client requests and progress tokens as `gw_<target>_<n|s>_<id>`,
// list cursors as one opaque token holding each target's cursor. Target names are Gateway API
// section names (lower-case letters, digits, '-' and '.'), so the first '_' or '+' always ends one.

import type { JsonRpcId } from './jsonrpc.ts';
import type { McpPrefixMode } from './targets.ts';

export const NAME_SEPARATOR = '_';
export const URI_SEPARATOR = '+';

/** Whether names and URIs carry targets, and whether tool and prompt names do. */
export interface Naming {
  /** Resource URIs, server request ids and cursors carry targets (false: one target, passed through). */
  readonly multiplexed: boolean;
  /** Tool and prompt names carry `<target>_` (false with prefixMode Never or one target). */
  readonly prefixNames: boolean;
}

/** prefixMode with the number of targets: Conditional prefixes only when there are several. */
export function namingFor(prefixMode: McpPrefixMode, targetCount: number): Naming {
  if (prefixMode === 'Always') return { multiplexed: true, prefixNames: true };
  if (targetCount <= 1) return { multiplexed: false, prefixNames: false };
  return { multiplexed: true, prefixNames: prefixMode === 'Conditional' };
}

export function prefixedName(target: string, name: string): string {
  return `${target}${NAME_SEPARATOR}${name}`;
}

/** `<target>_<name>` split, when the prefix names one of `targets`. */
export function splitPrefixedName(
  name: string,
  targets: ReadonlySet<string>,
): { target: string; name: string } | undefined {
  const at = name.indexOf(NAME_SEPARATOR);
  if (at <= 0) return undefined;
  const target = name.slice(0, at);
  return targets.has(target) ? { target, name: name.slice(at + 1) } : undefined;
}

/** RFC 3986 scheme: a letter, then letters, digits, '+', '-', '.', up to ':'. */
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/** `<target>+<uri>` for a URI with a scheme; a scheme-less reference is left as it is (it cannot route). */
export function prefixedUri(target: string, uri: string): string {
  return SCHEME.test(uri) ? `${target}${URI_SEPARATOR}${uri}` : uri;
}

/** `<target>+<uri>` split, when the prefix names one of `targets` and the rest is a URI. */
export function splitPrefixedUri(
  uri: string,
  targets: ReadonlySet<string>,
): { target: string; uri: string } | undefined {
  const at = uri.indexOf(URI_SEPARATOR);
  if (at <= 0) return undefined;
  const target = uri.slice(0, at);
  const rest = uri.slice(at + 1);
  return targets.has(target) && SCHEME.test(rest) ? { target, uri: rest } : undefined;
}

const SERVER_REQUEST_PREFIX = `gw${NAME_SEPARATOR}`;

/**
 * A target's own id (of a request it sends the client, or a progress token gw gave it) as the
 * client sees it: unique across targets, and carrying the target, so that the client's answer can
 * be routed back by any replica without shared state.
 */
export function tagId(target: string, id: JsonRpcId): string {
  return `${SERVER_REQUEST_PREFIX}${target}${NAME_SEPARATOR}${typeof id === 'number' ? 'n' : 's'}${NAME_SEPARATOR}${id}`;
}

/** The target and original id of a tagged id, or undefined when gw did not make it. */
export function untagId(tagged: JsonRpcId): { target: string; id: JsonRpcId } | undefined {
  if (typeof tagged !== 'string' || !tagged.startsWith(SERVER_REQUEST_PREFIX)) return undefined;
  const rest = tagged.slice(SERVER_REQUEST_PREFIX.length);
  const at = rest.indexOf(NAME_SEPARATOR);
  if (at <= 0 || rest[at + 2] !== NAME_SEPARATOR) return undefined;
  const target = rest.slice(0, at);
  const payload = rest.slice(at + 3);
  const kind = rest[at + 1];
  if (kind === 's') return { target, id: payload };
  if (kind !== 'n' || !/^-?\d+$/.test(payload)) return undefined;
  const id = Number(payload);
  return Number.isSafeInteger(id) ? { target, id } : undefined;
}

const CURSOR_PREFIX = 'gw1.';
/** Longest cursor gw reads: each target's cursor, for at most 128 targets. */
export const MAX_CURSOR_LENGTH = 64 * 1024;

/** One cursor for the targets that have more pages: `[target, their cursor]` pairs, opaque to the client. */
export function encodeCursor(pages: readonly (readonly [string, string])[]): string | undefined {
  if (pages.length === 0) return undefined;
  return CURSOR_PREFIX + Buffer.from(JSON.stringify(pages)).toString('base64url');
}

/** The targets' cursors in a gw cursor, or undefined when it is not one gw made for these targets. */
export function decodeCursor(cursor: string, targets: ReadonlySet<string>): Map<string, string> | undefined {
  if (!cursor.startsWith(CURSOR_PREFIX) || cursor.length > MAX_CURSOR_LENGTH) return undefined;
  let pages: unknown;
  try {
    pages = JSON.parse(Buffer.from(cursor.slice(CURSOR_PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(pages) || pages.length === 0) return undefined;
  const out = new Map<string, string>();
  for (const page of pages) {
    if (!Array.isArray(page) || page.length !== 2) return undefined;
    const [target, next] = page as unknown[];
    if (typeof target !== 'string' || typeof next !== 'string' || !targets.has(target) || out.has(target))
      return undefined;
    out.set(target, next);
  }
  return out;
}
