// An incremental Server-Sent Events reader over raw bytes. Chunks may split anywhere, inside a
// UTF-8 character or a line. Each block (the lines up to a blank line) comes back with its raw
// text, so that an observer can pass it on byte for byte or leave it out; eventsource-parser
// gives the fields but not the raw text, hence this reader.
//
// Linear time: a chunk is scanned once, and the pieces of an unfinished line are joined only
// when the line ends. Bounded: a block longer than maxBlockLength characters stops the reader.

/** One SSE block. `data` is undefined for a block without data lines (comments, a lone event:). */
export interface SseBlock {
  raw: string;
  event: string | undefined;
  data: string | undefined;
  /** The stream ended inside this block (no blank line after it): it may be cut short. */
  unterminated?: true;
}

/** The largest block gw buffers while waiting for its end (characters, about bytes for JSON). */
export const MAX_SSE_BLOCK_LENGTH = 1024 * 1024;

const CR = 13;
const LF = 10;
const COLON = 58;
const SPACE = 32;
const BOM = 0xfeff;

export class SseReader {
  readonly #maxBlockLength: number;
  // ignoreBOM keeps a leading byte order mark in the text, so that raw text stays byte for byte.
  readonly #decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  // The unfinished line: its pieces, in order, not yet joined.
  #pieces: string[] = [];
  #piecesLength = 0;
  // The unfinished block: its raw lines (with their terminators), fields so far.
  #rawLines: string[] = [];
  #rawLength = 0;
  #dataLines: string[] = [];
  #event: string | undefined;
  #firstLine = true;
  #overflowed = false;
  #passthrough = false;

  constructor(maxBlockLength = MAX_SSE_BLOCK_LENGTH) {
    this.#maxBlockLength = maxBlockLength;
  }

  /** A block grew past the bound; the reader ignores input until passthrough() is called. */
  get overflowed(): boolean {
    return this.#overflowed;
  }

  /** The blocks completed by this chunk. */
  push(chunk: Uint8Array): SseBlock[] {
    const text = this.#decoder.decode(chunk, { stream: true });
    return this.#take(text, false);
  }

  /** The blocks completed at the end of the stream: the last block needs no blank line. */
  finish(): SseBlock[] {
    const blocks = this.#take(this.#decoder.decode(), true);
    if (this.#passthrough || this.#overflowed) return blocks;
    if (this.#piecesLength > 0) {
      const raw = this.#joinPieces('');
      this.#line(raw.charCodeAt(raw.length - 1) === CR ? raw.slice(0, -1) : raw, raw, blocks);
    }
    if (this.#rawLines.length > 0) blocks.push({ ...this.#dispatch(), unterminated: true });
    return blocks;
  }

  /**
   * Stops parsing: returns the raw text buffered so far, and from now on push() returns all text
   * as one data-less block. For an observer that would rather pass a stream on than parse it.
   */
  passthrough(): string {
    const pending = this.#rawLines.join('') + this.#pieces.join('');
    this.#rawLines = [];
    this.#pieces = [];
    this.#passthrough = true;
    return pending;
  }

  #take(text: string, final: boolean): SseBlock[] {
    if (this.#passthrough) return text === '' ? [] : [{ raw: text, event: undefined, data: undefined }];
    if (this.#overflowed || text === '') return [];
    const blocks: SseBlock[] = [];
    let pos = 0;
    // A line that ended in CR at the end of the previous chunk: a LF here belongs to it.
    if (this.#pendingCR()) {
      const crlf = text.charCodeAt(0) === LF;
      const line = this.#joinPieces('');
      this.#line(line.slice(0, -1), crlf ? `${line}\n` : line, blocks);
      pos = crlf ? 1 : 0;
    }
    let nextCR = text.indexOf('\r', pos);
    let nextLF = text.indexOf('\n', pos);
    while (nextCR !== -1 || nextLF !== -1) {
      let end: number;
      let after: number;
      if (nextLF !== -1 && (nextCR === -1 || nextLF < nextCR)) {
        end = nextLF;
        after = nextLF + 1;
      } else {
        // A CR last in the text may be the first half of a CRLF: wait for the next chunk.
        if (nextCR === text.length - 1 && !final) break;
        end = nextCR;
        after = text.charCodeAt(nextCR + 1) === LF ? nextCR + 2 : nextCR + 1;
      }
      const line = this.#joinPieces(text.slice(pos, end));
      this.#line(line, line + text.slice(end, after), blocks);
      pos = after;
      if (nextCR !== -1 && nextCR < pos) nextCR = text.indexOf('\r', pos);
      if (nextLF !== -1 && nextLF < pos) nextLF = text.indexOf('\n', pos);
    }
    if (pos < text.length) {
      const rest = text.slice(pos);
      this.#pieces.push(rest);
      this.#piecesLength += rest.length;
    }
    if (this.#rawLength + this.#piecesLength > this.#maxBlockLength) this.#overflowed = true;
    return blocks;
  }

  #pendingCR(): boolean {
    const last = this.#pieces.at(-1);
    return last !== undefined && last.charCodeAt(last.length - 1) === CR;
  }

  #joinPieces(tail: string): string {
    if (this.#pieces.length === 0) return tail;
    const line = this.#pieces.join('') + tail;
    this.#pieces = [];
    this.#piecesLength = 0;
    return line;
  }

  #line(line: string, raw: string, blocks: SseBlock[]): void {
    this.#rawLines.push(raw);
    this.#rawLength += raw.length;
    let text = line;
    if (this.#firstLine) {
      this.#firstLine = false;
      if (text.charCodeAt(0) === BOM) text = text.slice(1);
    }
    if (text === '') {
      blocks.push(this.#dispatch());
      return;
    }
    if (text.charCodeAt(0) === COLON) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.charCodeAt(0) === SPACE) value = value.slice(1);
    if (field === 'data') this.#dataLines.push(value);
    else if (field === 'event') this.#event = value === '' ? undefined : value;
  }

  #dispatch(): SseBlock {
    const block: SseBlock = {
      raw: this.#rawLines.join(''),
      event: this.#event,
      data: this.#dataLines.length > 0 ? this.#dataLines.join('\n') : undefined,
    };
    this.#rawLines = [];
    this.#rawLength = 0;
    this.#dataLines = [];
    this.#event = undefined;
    return block;
  }
}
