// Incremental parser of HTTP/1.1 responses (RFC 9112) for gw's upstream client: the status line
// and header section, then the body framed by Content-Length, chunked transfer coding or the end
// of the connection. Strict where leniency lets a response be read two ways (duplicate lengths,
// folded or malformed header lines, bad chunk sizes); every buffer it keeps is bounded.

import { INVALID_FIELD_VALUE, TOKEN } from '../../../util/http-field-syntax.ts';

/** Largest header section (status line and fields) read; a bigger one is a protocol error. */
export const MAX_HEAD_BYTES = 64 * 1024;
/** Largest chunk-size line (with extensions) and trailer section read. */
const MAX_CHUNK_LINE_BYTES = 4 * 1024;
const MAX_TRAILER_BYTES = 16 * 1024;

export type ResponseHeaders = Record<string, string | string[]>;

export interface ResponseHead {
  status: number;
  /** Field names lowercased; a field that appears more than once gives an array, in order. */
  headers: ResponseHeaders;
}

/** What the parser reports, in order: one head, body bytes, then complete (or an error thrown). */
export interface ResponseSink {
  onHead(head: ResponseHead): void;
  /** Body bytes as they arrive: views into the chunk given to execute(), valid while it is. */
  onBody(bytes: Buffer): void;
  /** The response is complete; `reusable` says whether the connection may carry another request. */
  onComplete(reusable: boolean): void;
}

/** A response that cannot be read safely; the connection must be closed. */
export class ResponseProtocolError extends Error {
  readonly code = 'UPSTREAM_PROTOCOL_ERROR';
}

// Parser states (numbers: a plain object of constants, which type stripping allows).
const State = {
  Idle: 0,
  Head: 1,
  FixedBody: 2,
  ChunkSize: 3,
  ChunkData: 4,
  ChunkDataEnd: 5,
  Trailers: 6,
  UntilClose: 7,
  Done: 8,
} as const;
type State = (typeof State)[keyof typeof State];

const CRLF_CRLF = Buffer.from('\r\n\r\n');
const DIGITS = /^[0-9]+$/;
const HEX = /^[0-9A-Fa-f]{1,15}$/;

export class ResponseParser {
  readonly #sink: ResponseSink;
  #state: State = State.Idle;
  #noBody = false;
  #reusable = true;
  /**
   * Bytes of a head, chunk line or trailer line split across chunks, kept (copied: the caller may
   * reuse its chunk) in a buffer that doubles as it fills, so a head trickled in byte by byte
   * costs linear time.
   */
  #pending: Buffer | undefined;
  #pendingLength = 0;
  /** Body bytes still expected: of the whole body (Content-Length) or of the current chunk. */
  #remaining = 0;
  #trailerBytes = 0;

  constructor(sink: ResponseSink) {
    this.#sink = sink;
  }

  /** Prepares for the response to the request just sent; `noBody` for a HEAD request. */
  expect(noBody: boolean): void {
    this.#state = State.Head;
    this.#noBody = noBody;
    this.#reusable = true;
    this.#pendingLength = 0;
    this.#trailerBytes = 0;
  }

  /** Whether a response has been asked for and is not complete yet. */
  get busy(): boolean {
    return this.#state !== State.Idle && this.#state !== State.Done;
  }

  /** Feeds bytes read from the connection. Throws ResponseProtocolError. */
  execute(chunk: Buffer): void {
    let offset = 0;
    while (offset < chunk.length) {
      switch (this.#state) {
        case State.Head:
          offset = this.#readHead(chunk, offset);
          break;
        case State.FixedBody:
          offset = this.#readBody(chunk, offset);
          if (this.#remaining === 0) this.#complete();
          break;
        case State.ChunkSize:
          offset = this.#readChunkSize(chunk, offset);
          break;
        case State.ChunkData:
          offset = this.#readBody(chunk, offset);
          if (this.#remaining === 0) this.#state = State.ChunkDataEnd;
          break;
        case State.ChunkDataEnd:
          offset = this.#readChunkDataEnd(chunk, offset);
          break;
        case State.Trailers:
          offset = this.#readTrailers(chunk, offset);
          break;
        case State.UntilClose:
          this.#sink.onBody(offset === 0 ? chunk : chunk.subarray(offset));
          offset = chunk.length;
          break;
        default:
          // Bytes nobody asked for (before a request, or after its complete response).
          throw new ResponseProtocolError('the upstream sent data that answers no request');
      }
    }
  }

  /** The connection's input ended. Completes a body read until close; otherwise throws if a response was due. */
  finish(): void {
    if (this.#state === State.UntilClose) {
      this.#reusable = false;
      this.#complete();
      return;
    }
    if (this.busy)
      throw new ResponseProtocolError('the upstream closed the connection before the response was complete');
  }

  #readHead(chunk: Buffer, offset: number): number {
    if (this.#pendingLength === 0) {
      // The usual case: the whole head in this chunk.
      const end = chunk.indexOf(CRLF_CRLF, offset);
      if (end >= 0) {
        if (end - offset > MAX_HEAD_BYTES) throw headTooLarge();
        this.#onHead(chunk.toString('latin1', offset, end));
        return end + 4;
      }
      if (chunk.length - offset - 3 > MAX_HEAD_BYTES) throw headTooLarge();
      this.#keep(chunk, offset, chunk.length);
      return chunk.length;
    }
    const before = this.#pendingLength;
    this.#keep(chunk, offset, chunk.length);
    const pending = this.#pending!.subarray(0, this.#pendingLength);
    // The end may straddle the old bytes and the new: search from just before the new ones.
    const end = pending.indexOf(CRLF_CRLF, Math.max(0, before - 3));
    // (Without the end, the head is at least 3 bytes shorter than what is kept.)
    if (end < 0 ? pending.length - 3 > MAX_HEAD_BYTES : end > MAX_HEAD_BYTES) throw headTooLarge();
    if (end < 0) return chunk.length;
    this.#releasePending();
    this.#onHead(pending.toString('latin1', 0, end));
    return offset + end + 4 - before;
  }

  #onHead(text: string): void {
    const lines = text.split('\r\n');
    const statusLine = lines[0]!;
    // HTTP/1.x SP 3DIGIT [SP reason]
    if (
      statusLine.length < 12 ||
      !statusLine.startsWith('HTTP/1.') ||
      (statusLine[7] !== '1' && statusLine[7] !== '0') ||
      statusLine[8] !== ' ' ||
      !(statusLine.length === 12 || statusLine[12] === ' ') ||
      !DIGITS.test(statusLine.slice(9, 12)) ||
      // The reason phrase: no controls (a bare LF would hide the next field from this parser only).
      INVALID_FIELD_VALUE.test(statusLine)
    )
      throw new ResponseProtocolError(
        `the upstream status line is malformed: ${JSON.stringify(statusLine.slice(0, 64))}`,
      );
    const http10 = statusLine[7] === '0';
    const status = Number(statusLine.slice(9, 12));
    const headers: ResponseHeaders = {};
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(':');
      const name = colon > 0 ? line.slice(0, colon) : '';
      // Also rejects obs-fold (a line starting with a space or tab) and whitespace before the colon.
      if (!TOKEN.test(name))
        throw new ResponseProtocolError(
          `the upstream sent a malformed header line: ${JSON.stringify(line.slice(0, 64))}`,
        );
      const value = trimOws(line, colon + 1);
      if (INVALID_FIELD_VALUE.test(value))
        throw new ResponseProtocolError(`the upstream header ${name} has a control character in its value`);
      const key = name.toLowerCase();
      const existing = headers[key];
      if (existing === undefined) headers[key] = value;
      else if (typeof existing === 'string') headers[key] = [existing, value];
      else existing.push(value);
    }
    if (status < 200) {
      // 1xx: an interim response (100 Continue, 103 Early Hints); the final one follows. 101 would
      // switch protocols, which gw never asks for.
      if (status === 101) throw new ResponseProtocolError('the upstream switched protocols unasked');
      if (status < 100) throw new ResponseProtocolError(`the upstream status ${status} is not valid`);
      return;
    }
    // The body's framing is decided (a malformed Content-Length throws) before the head is
    // reported: a response gw cannot read is never half-delivered.
    let next: State = State.Done;
    if (!keepsAlive(headers.connection, http10)) this.#reusable = false;
    if (!this.#noBody && status !== 204 && status !== 304) {
      const transferEncoding = headers['transfer-encoding'];
      if (transferEncoding !== undefined) {
        // With Transfer-Encoding, a Content-Length is ignored, and the connection not trusted after.
        if (headers['content-length'] !== undefined) this.#reusable = false;
        next = lastCoding(transferEncoding) === 'chunked' ? State.ChunkSize : State.UntilClose;
      } else {
        const length = contentLength(headers['content-length']);
        if (length === undefined) next = State.UntilClose;
        else if (length > 0) {
          next = State.FixedBody;
          this.#remaining = length;
        }
      }
      if (next === State.UntilClose) this.#reusable = false;
    }
    this.#sink.onHead({ status, headers });
    if (next === State.Done) this.#complete();
    else this.#state = next;
  }

  /** Up to #remaining body bytes from the chunk to the sink; the offset after them. */
  #readBody(chunk: Buffer, offset: number): number {
    const take = Math.min(this.#remaining, chunk.length - offset);
    this.#remaining -= take;
    this.#sink.onBody(offset === 0 && take === chunk.length ? chunk : chunk.subarray(offset, offset + take));
    return offset + take;
  }

  #readChunkSize(chunk: Buffer, offset: number): number {
    const line = this.#readLine(chunk, offset, MAX_CHUNK_LINE_BYTES, 'chunk-size line');
    if (line === undefined) return chunk.length;
    const semicolon = line.text.indexOf(';');
    const size = trimOws(semicolon < 0 ? line.text : line.text.slice(0, semicolon), 0);
    if (!HEX.test(size))
      throw new ResponseProtocolError(`the upstream chunk size ${JSON.stringify(size.slice(0, 20))} is not valid`);
    this.#remaining = Number.parseInt(size, 16);
    this.#state = this.#remaining === 0 ? State.Trailers : State.ChunkData;
    return line.next;
  }

  #readChunkDataEnd(chunk: Buffer, offset: number): number {
    const line = this.#readLine(chunk, offset, 2, 'chunk');
    if (line === undefined) return chunk.length;
    if (line.text !== '') throw new ResponseProtocolError('the upstream chunk is longer than its size');
    this.#state = State.ChunkSize;
    return line.next;
  }

  #readTrailers(chunk: Buffer, offset: number): number {
    const line = this.#readLine(chunk, offset, MAX_TRAILER_BYTES - this.#trailerBytes, 'trailer section');
    if (line === undefined) return chunk.length;
    // Trailer fields are read (bounded) and dropped: nothing gw forwards uses them.
    this.#trailerBytes += line.text.length + 2;
    if (line.text === '') this.#complete();
    return line.next;
  }

  /** One CRLF-terminated line, possibly across chunks; undefined while its end has not arrived. */
  #readLine(chunk: Buffer, offset: number, limit: number, what: string): { text: string; next: number } | undefined {
    const newline = chunk.indexOf(10, offset);
    if (newline < 0) {
      // Room for the CR of a line exactly `limit` long.
      if (this.#pendingLength + chunk.length - offset > limit + 1)
        throw new ResponseProtocolError(`the upstream ${what} is too long`);
      this.#keep(chunk, offset, chunk.length);
      return undefined;
    }
    let bytes = chunk.subarray(offset, newline + 1);
    if (this.#pendingLength > 0) {
      this.#keep(chunk, offset, newline + 1);
      bytes = this.#pending!.subarray(0, this.#pendingLength);
      this.#releasePending();
    }
    if (bytes.length - 2 > limit) throw new ResponseProtocolError(`the upstream ${what} is too long`);
    if (bytes.length < 2 || bytes[bytes.length - 2] !== 13)
      throw new ResponseProtocolError(`the upstream ${what} does not end in CRLF`);
    return { text: bytes.toString('latin1', 0, bytes.length - 2), next: newline + 1 };
  }

  /** Appends chunk[from, to) to the pending bytes. */
  #keep(chunk: Buffer, from: number, to: number): void {
    const needed = this.#pendingLength + to - from;
    if (this.#pending === undefined || needed > this.#pending.length) {
      const grown = Buffer.allocUnsafe(Math.max(needed, 2 * (this.#pending?.length ?? 0), 256));
      this.#pending?.copy(grown, 0, 0, this.#pendingLength);
      this.#pending = grown;
    }
    chunk.copy(this.#pending, this.#pendingLength, from, to);
    this.#pendingLength = needed;
  }

  /**
   * The pending bytes are used up (their view stays valid until the next #keep). A buffer grown
   * large by a big head is not kept for the connection's life.
   */
  #releasePending(): void {
    this.#pendingLength = 0;
    if (this.#pending !== undefined && this.#pending.length > 4096) this.#pending = undefined;
  }

  #complete(): void {
    this.#state = State.Done;
    this.#sink.onComplete(this.#reusable);
  }
}

function headTooLarge(): ResponseProtocolError {
  return new ResponseProtocolError(`the upstream response head is larger than ${MAX_HEAD_BYTES} bytes`);
}

/** A field value without the optional whitespace around it (spaces and tabs only). */
function trimOws(text: string, from: number): string {
  let start = from;
  let end = text.length;
  while (start < end && (text.charCodeAt(start) === 32 || text.charCodeAt(start) === 9)) start++;
  while (end > start && (text.charCodeAt(end - 1) === 32 || text.charCodeAt(end - 1) === 9)) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

function keepsAlive(connection: string | string[] | undefined, http10: boolean): boolean {
  if (connection === undefined) return !http10;
  const tokens = (Array.isArray(connection) ? connection.join(',') : connection).toLowerCase();
  if (tokens === 'keep-alive') return true;
  if (tokens === 'close') return false;
  const list = tokens.split(',').map((token) => token.trim());
  if (list.includes('close')) return false;
  return !http10 || list.includes('keep-alive');
}

function lastCoding(value: string | string[]): string {
  const text = Array.isArray(value) ? value.join(',') : value;
  const codings = text.split(',');
  return codings[codings.length - 1]!.trim().toLowerCase();
}

/** The body length a Content-Length gives; several must agree. Throws on a malformed one. */
function contentLength(value: string | string[] | undefined): number | undefined {
  if (value === undefined) return undefined;
  let length: number | undefined;
  for (const part of (Array.isArray(value) ? value.join(',') : value).split(',')) {
    const text = part.trim();
    if (!DIGITS.test(text) || text.length > 15)
      throw new ResponseProtocolError(`the upstream Content-Length ${JSON.stringify(text.slice(0, 20))} is not valid`);
    const parsed = Number(text);
    if (length !== undefined && parsed !== length)
      throw new ResponseProtocolError('the upstream sent Content-Length values that differ');
    length = parsed;
  }
  return length;
}
