// The request line and header section gw writes to an HTTP/1.1 upstream. Everything is checked
// before a byte is written: a field value with CR or LF (from a header modifier, a CEL
// transformation, a client header) must never split into a second request upstream.

import { INVALID_FIELD_VALUE, TOKEN } from '../../../util/http-field-syntax.ts';

/** A request gw cannot write as it stands; nothing was sent. */
export class InvalidUpstreamRequestError extends Error {
  readonly code = 'UPSTREAM_INVALID_REQUEST';
}

export type RequestHeaders = Record<string, string | string[]>;

/** Fields the client frames itself (length, connection management), never taken from the caller. */
export const FRAMING: ReadonlySet<string> = new Set([
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'upgrade',
  'http2-settings',
  'expect',
]);

/** Visible ASCII and obs-text: no space, no control (DEL included). */
const INVALID_TARGET = /[^\x21-\x7e\x80-\xff]/;
/** Methods whose requests carry a body: Content-Length: 0 is sent when there is none. */
const EXPECTS_BODY: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH']);

/**
 * The request head, CRLF CRLF included: request line, Host (the caller's, else `defaultHost`),
 * the caller's fields but framing ones, and Content-Length for `bodyLength`. Latin-1 text: one
 * byte per character. Throws InvalidUpstreamRequestError.
 */
export function requestHead(
  method: string,
  target: string,
  defaultHost: string,
  headers: RequestHeaders,
  bodyLength: number | undefined,
): string {
  if (!TOKEN.test(method)) throw new InvalidUpstreamRequestError(`the method ${JSON.stringify(method)} is not valid`);
  if (target.length === 0 || INVALID_TARGET.test(target))
    throw new InvalidUpstreamRequestError(
      `the request target ${JSON.stringify(target)} has characters HTTP does not allow`,
    );
  let host = defaultHost;
  let fields = '';
  for (const name in headers) {
    // Names are matched whatever their case: a caller's `Content-Length` must not slip past.
    const lower = name.toLowerCase();
    const value = headers[name]!;
    if (lower === 'host') {
      if (typeof value === 'string') host = checkedValue('host', value);
      continue;
    }
    if (FRAMING.has(lower)) continue;
    if (!TOKEN.test(name))
      throw new InvalidUpstreamRequestError(`the header name ${JSON.stringify(name)} is not valid`);
    if (typeof value === 'string') fields += `${name}: ${checkedValue(name, value)}\r\n`;
    else if (Array.isArray(value))
      for (const item of value) fields += `${name}: ${checkedValue(name, String(item))}\r\n`;
    else fields += `${name}: ${checkedValue(name, String(value))}\r\n`;
  }
  const length =
    bodyLength !== undefined
      ? `content-length: ${bodyLength}\r\n`
      : EXPECTS_BODY.has(method)
        ? 'content-length: 0\r\n'
        : '';
  return `${method} ${target} HTTP/1.1\r\nhost: ${host}\r\n${fields}${length}\r\n`;
}

function checkedValue(name: string, value: string): string {
  if (INVALID_FIELD_VALUE.test(value))
    throw new InvalidUpstreamRequestError(
      `the value of header ${name} has a character HTTP does not allow (CR, LF or another control)`,
    );
  return value;
}
