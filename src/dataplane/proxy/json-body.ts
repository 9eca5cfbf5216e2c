// A client's JSON body, parsed once and only when every JSON parser would read it the same way
// (docs/decisions/0009-one-parse.md). gw checks the value it parses (model, route, authorization,
// metering) and may forward the client's own bytes, so a body that another parser could read
// differently is refused: a key twice in one object (JSON.parse keeps the last value, other
// parsers the first or an error), bytes that are not UTF-8 (replaced here, kept or re-decoded
// elsewhere), an escaped surrogate without its pair (kept here, replaced or refused elsewhere),
// and nesting deeper than MAX_JSON_NESTING. RFC 7493 (I-JSON) forbids the first three.
//
// One JSON.parse does the parsing; the checks it cannot do cost a walk of the parsed value and a
// scan of the bytes that skips strings (the decision record says how, and what it costs).
import { isUtf8 } from 'node:buffer';

/**
 * The deepest nesting of objects and arrays a client body may have (serde_json's default limit,
 * so agentgateway's too). JSON.parse accepts any depth, but serialising, cloning and translating
 * the body recurse: a body nested thousands deep would overflow the stack there.
 */
export const MAX_JSON_NESTING = 128;

/**
 * The parsed body, or what is wrong with it: a phrase that follows "the body", for the client,
 * and its kind — not JSON at all, nested too deep, or JSON that parsers differ on (ambiguous).
 */
export type JsonBody =
  | { value: unknown; problem?: undefined }
  | { problem: string; kind: 'syntax' | 'nesting' | 'ambiguous' };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;

/** The longest key name an error message quotes. */
const MAX_QUOTED_KEY = 64;

/** Parses `bytes` as JSON that no parser reads differently. */
export function parseJsonBody(bytes: Uint8Array): JsonBody {
  const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  if (!isUtf8(buffer)) return { problem: 'is not valid UTF-8', kind: 'ambiguous' };
  let value: unknown;
  try {
    value = JSON.parse(buffer.toString('utf8'));
  } catch {
    return { problem: 'is not JSON', kind: 'syntax' };
  }
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'string' && !value.isWellFormed()) return unpaired(value);
    return { value };
  }
  const members = membersWithin(value, MAX_JSON_NESTING);
  if (members < 0) return { problem: `is nested more than ${MAX_JSON_NESTING} levels deep`, kind: 'nesting' };
  // Fewer members parsed than written: a key came twice, and JSON.parse kept one of them.
  if (members !== membersWritten(buffer)) return { problem: duplicateKeyProblem(buffer), kind: 'ambiguous' };
  // UTF-8 cannot encode a surrogate: only a \u escape can make one.
  if (buffer.indexOf(UNICODE_ESCAPE) !== -1) {
    const text = illFormedString(value);
    if (text !== undefined) return unpaired(text);
  }
  return { value };
}

const UNICODE_ESCAPE = Buffer.from('\\u');

/**
 * How many members the objects in `value` have, all together; -1 when objects and arrays nest
 * more than `levels` deep (`value` is level 1). Never more than `levels` calls deep.
 */
function membersWithin(value: object, levels: number): number {
  if (levels === 0) return -1;
  let members = 0;
  if (Array.isArray(value)) {
    for (const child of value) {
      if (child === null || typeof child !== 'object') continue;
      const inner = membersWithin(child, levels - 1);
      if (inner < 0) return -1;
      members += inner;
    }
    return members;
  }
  for (const key in value) {
    members++;
    const child = (value as Record<string, unknown>)[key];
    if (child === null || typeof child !== 'object') continue;
    const inner = membersWithin(child, levels - 1);
    if (inner < 0) return -1;
    members += inner;
  }
  return members;
}

/**
 * How many members the objects of a valid JSON text have: a key is always followed by a colon,
 * and a colon outside a string is nothing else.
 */
function membersWritten(bytes: Buffer): number {
  const length = bytes.length;
  let members = 0;
  for (let at = 0; at < length; at++) {
    const byte = bytes[at];
    if (byte === COLON) members++;
    else if (byte === QUOTE) at = closingQuote(bytes, at + 1);
  }
  return members;
}

/** The index of the quote that ends the string whose text starts at `from`. */
function closingQuote(bytes: Buffer, from: number): number {
  const quote = bytes.indexOf(QUOTE, from);
  // No backslash right before the first quote: that is the end (the common case, found natively).
  if (bytes[quote - 1] !== BACKSLASH) return quote;
  // Escapes on the way: byte by byte, an escape skipping the byte after its backslash.
  for (let at = from; ; ) {
    const byte = bytes[at];
    if (byte === QUOTE) return at;
    at += byte === BACKSLASH ? 2 : 1;
  }
}

/** The first string (a key or a value) in `value` that holds a surrogate without its pair. */
function illFormedString(value: unknown): string | undefined {
  if (typeof value === 'string') return value.isWellFormed() ? undefined : value;
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (const child of value) {
      const found = illFormedString(child);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const key in value) {
    if (!key.isWellFormed()) return key;
    const found = illFormedString((value as Record<string, unknown>)[key]);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The problem of a body with `text`, a string holding a surrogate without its pair (named by its code unit). */
function unpaired(text: string): JsonBody {
  let unit = 0;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code < 0xd800 || code > 0xdfff) continue;
    const next = text.charCodeAt(at + 1);
    if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      at++;
      continue;
    }
    unit = code;
    break;
  }
  return { problem: `has an escaped surrogate without its pair (\\u${unit.toString(16)})`, kind: 'ambiguous' };
}

/**
 * The problem of a body whose text has more members than its parsed value: the first key that
 * comes twice in one object, named. Read again from the start (only for a body being refused).
 */
function duplicateKeyProblem(bytes: Buffer): string {
  const objects: (Set<string> | undefined)[] = [];
  const length = bytes.length;
  for (let at = 0; at < length; at++) {
    const byte = bytes[at];
    if (byte === 0x7b) objects.push(new Set());
    else if (byte === 0x5b) objects.push(undefined);
    else if (byte === 0x7d || byte === 0x5d) objects.pop();
    else if (byte === QUOTE) {
      const end = closingQuote(bytes, at + 1);
      const keys = objects.at(-1);
      if (keys !== undefined && nextNonSpace(bytes, end + 1) === COLON) {
        const key = JSON.parse(bytes.toString('utf8', at, end + 1)) as string;
        if (keys.has(key)) return `has the key ${quotedKey(key)} twice in one object`;
        keys.add(key);
      }
      at = end;
    }
  }
  return 'has a key twice in one object';
}

function nextNonSpace(bytes: Buffer, from: number): number | undefined {
  for (let at = from; at < bytes.length; at++) {
    const byte = bytes[at]!;
    if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) return byte;
  }
  return undefined;
}

function quotedKey(key: string): string {
  return JSON.stringify(key.length > MAX_QUOTED_KEY ? `${key.slice(0, MAX_QUOTED_KEY)}…` : key);
}
