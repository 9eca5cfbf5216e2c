// The last N requests a mock received, oldest first: a ring so a long benchmark cannot grow it.
import type { IncomingHttpHeaders } from 'node:http';

export interface RecordedRequest {
  method: string;
  /** Path without the query string, e.g. "/v1/chat/completions". */
  path: string;
  /** Path and query exactly as received. */
  url: string;
  /** Header names in lower case, as node:http gives them. */
  headers: IncomingHttpHeaders;
  /** The parsed JSON body; the raw text when it is not JSON; undefined when empty or not read (fixed mode). */
  body: unknown;
}

export class RequestLog {
  readonly #limit: number;
  readonly #entries: RecordedRequest[] = [];
  #next = 0;

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`request log limit must be a positive integer`);
    this.#limit = limit;
  }

  add(request: RecordedRequest): void {
    if (this.#entries.length < this.#limit) {
      this.#entries.push(request);
      return;
    }
    this.#entries[this.#next] = request;
    this.#next = (this.#next + 1) % this.#limit;
  }

  /** A copy, oldest first. */
  list(): RecordedRequest[] {
    return [...this.#entries.slice(this.#next), ...this.#entries.slice(0, this.#next)];
  }

  clear(): void {
    this.#entries.length = 0;
    this.#next = 0;
  }
}
