// The response a backend kind writes to when the response path must work on the body before the
// client gets it (./response-path.ts): a ClientResponse whose head is held — handed to the
// response path when the kind commits it (writeHead, or the first write) — and whose body flows
// through it as a stream (a PassThrough: what the kind writes is what the response path reads,
// with backpressure both ways). Destroying it from either side ends it for both: a kind that
// gives up cuts off the reader, a reader that is done with it (the client went away, a body over
// its limit, a processor's own answer) shows the kind a closed response, as a client leaving would.
import type { OutgoingHttpHeader, OutgoingHttpHeaders } from 'node:http';
import { PassThrough } from 'node:stream';
import { type ClientResponse, setHeadHeaders } from './client-response.ts';

type HeaderValue = number | string | string[];

export class ResponseCapture extends PassThrough implements ClientResponse {
  statusCode = 200;
  /** The kind asked for the head to go out at once (a stream). */
  flushRequested = false;
  readonly #headers: Record<string, HeaderValue> = Object.create(null);
  #headersSent = false;
  readonly #onHead: (capture: ResponseCapture) => void;

  /** `onHead` runs once, when the kind commits the head; the body follows through the stream. */
  constructor(onHead: (capture: ResponseCapture) => void) {
    super();
    this.#onHead = onHead;
    // An error reaches whoever reads the body; the kinds watch 'close', as they do on a ServerResponse.
    this.on('error', ignore);
  }

  get headersSent(): boolean {
    return this.#headersSent;
  }

  setHeader(name: string, value: number | string | readonly string[]): this {
    if (this.#headersSent) throw headersSent('set a header');
    this.#headers[name.toLowerCase()] = typeof value === 'object' ? [...value] : value;
    return this;
  }

  getHeader(name: string): HeaderValue | undefined {
    return this.#headers[name.toLowerCase()];
  }

  getHeaders(): OutgoingHttpHeaders {
    const copy: OutgoingHttpHeaders = Object.create(null);
    for (const name in this.#headers) copy[name] = this.#headers[name];
    return copy;
  }

  hasHeader(name: string): boolean {
    return this.#headers[name.toLowerCase()] !== undefined;
  }

  removeHeader(name: string): void {
    if (this.#headersSent) throw headersSent('remove a header');
    delete this.#headers[name.toLowerCase()];
  }

  writeHead(statusCode: number, headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this;
  writeHead(statusCode: number, statusMessage: string, headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this;
  writeHead(
    statusCode: number,
    messageOrHeaders?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    maybeHeaders?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this {
    if (this.#headersSent) throw headersSent('write the head');
    // A reason phrase is not kept: the status may change on the way, and HTTP/2 has none.
    const headers = typeof messageOrHeaders === 'string' ? maybeHeaders : messageOrHeaders;
    this.statusCode = statusCode;
    setHeadHeaders(this, headers);
    this.#commit();
    return this;
  }

  flushHeaders(): void {
    this.flushRequested = true;
    if (!this.#headersSent) this.#commit();
  }

  // biome-ignore lint/suspicious/noExplicitAny: Writable's own signature, which this keeps
  override write(chunk: any, encoding?: any, callback?: any): boolean {
    if (!this.#headersSent && !this.destroyed) this.#commit();
    return super.write(chunk, encoding, callback);
  }

  // biome-ignore lint/suspicious/noExplicitAny: Writable's own signature, which this keeps
  override end(chunk?: any, encoding?: any, callback?: any): this {
    if (!this.#headersSent && !this.destroyed) this.#commit();
    return super.end(chunk, encoding, callback);
  }

  /**
   * Destroyed before its reader had the whole body, the body fails (premature close) rather than
   * seeming to end: a reader must never take a cut-off body for a complete one.
   */
  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    callback(error ?? (this.readableEnded ? null : cutOff()));
  }

  /** The head is the kind's from here: `onHead` sees it (and may still change it) first. */
  #commit(): void {
    this.#onHead(this);
    this.#headersSent = true;
  }
}

function ignore(): void {}

function headersSent(what: string): Error {
  return Object.assign(new Error(`Cannot ${what} after the response head was written`), {
    code: 'ERR_HTTP_HEADERS_SENT',
  });
}

function cutOff(): Error {
  return Object.assign(new Error('the response was closed before it was complete'), {
    code: 'ERR_STREAM_PREMATURE_CLOSE',
  });
}
