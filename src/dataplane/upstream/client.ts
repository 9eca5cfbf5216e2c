// The upstream client the LLM path sends provider requests through: gw's own HTTP/1.1 pool
// (upstream/http1) for HTTP/1.1 destinations, plain or TLS, and undici for HTTP/2 ones. Both give
// the response the same way: status, headers, and a body read whole, streamed or discarded.
import type { Readable } from 'node:stream';
import type { Dispatcher, Pool } from 'undici';
import { readBody } from '../proxy/body.ts';
import type { Http1Request } from './http1/pool.ts';

export interface UpstreamBody extends AsyncIterable<Buffer> {
  /** The whole body; rejects with BodyTooLargeError past `limit` bytes. */
  readAll(limit: number): Promise<Buffer>;
  /** Not wanted: dropped, and the connection closed if the body has not fully arrived. */
  discard(): void;
}

export interface UpstreamResponse {
  statusCode: number;
  /** Lowercased names; a repeated field gives an array. */
  headers: Record<string, string | string[] | undefined>;
  body: UpstreamBody;
}

export interface UpstreamClient {
  request(request: Http1Request): Promise<UpstreamResponse>;
}

/** An undici pool (HTTP/2 destinations) behind the UpstreamClient interface; the pool's owner closes it. */
export class UndiciUpstreamClient implements UpstreamClient {
  readonly #pool: Pool;

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  async request(request: Http1Request): Promise<UpstreamResponse> {
    const response = await this.#pool.request({
      path: request.path,
      method: request.method as Dispatcher.HttpMethod,
      headers: request.headers,
      body: request.body ?? null,
      signal: request.signal,
    });
    return { statusCode: response.statusCode, headers: response.headers, body: new ReadableBody(response.body) };
  }
}

class ReadableBody implements UpstreamBody {
  readonly #stream: Readable;

  constructor(stream: Readable) {
    this.#stream = stream;
  }

  readAll(limit: number): Promise<Buffer> {
    return readBody(this.#stream, limit);
  }

  // HTTP/2 only (gw's own pool serves HTTP/1.1): destroying the body resets its stream, not the
  // connection, and a body still arriving — an endless stream too — is not read on.
  discard(): void {
    if (this.#stream.readableEnded) return;
    this.#stream.on('error', ignore).destroy();
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer> {
    return this.#stream[Symbol.asyncIterator]();
  }
}

function ignore(): void {}
