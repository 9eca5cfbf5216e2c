// An upstream response as the HTTP forwarder (./http-forward.ts) handles it, whichever client
// carried the exchange: undici's pool (a request body streamed from the client, HTTP/2 and mesh
// destinations, a kind that reads the answer itself) or gw's own HTTP/1.1 client (a body already
// in memory, or none: what most forwarded requests are). The forwarder sees one shape — status,
// headers, and a body it pipes to the client, drains for a retry or drops.
import type { Dispatcher } from 'undici';
import type { UpstreamBody } from '../upstream/client.ts';
import type { ClientResponse } from './client-response.ts';
import { writableOf } from './client-response.ts';
import { pipeBody, pipeUpstreamBody } from './pipe-body.ts';

export interface ForwardedResponse {
  readonly statusCode: number;
  /** Lowercased names; a repeated field gives an array. */
  readonly headers: Record<string, string | string[] | undefined>;
  /** Pipes the body to the client; done once, with the error when either end broke first. */
  pipeTo(res: ClientResponse, done: (error?: Error) => void): void;
  /** Reads and drops the body (a retried attempt's) so its connection is kept; past `limit` bytes it is closed. */
  drain(limit: number, signal: AbortSignal): Promise<void>;
  /** Drops the body; its connection is closed unless the body had fully arrived. */
  discard(): void;
}

/** A response of undici's pool; `data` is undici's own (ForwardOptions.inspect reads it). */
export class UndiciForwardedResponse implements ForwardedResponse {
  readonly data: Dispatcher.ResponseData;

  constructor(data: Dispatcher.ResponseData) {
    this.data = data;
  }

  get statusCode(): number {
    return this.data.statusCode;
  }

  get headers(): Record<string, string | string[] | undefined> {
    return this.data.headers;
  }

  pipeTo(res: ClientResponse, done: (error?: Error) => void): void {
    pipeBody(this.data.body, writableOf(res), done);
  }

  async drain(limit: number, signal: AbortSignal): Promise<void> {
    await this.data.body.dump({ limit, signal }).catch(ignore);
  }

  discard(): void {
    this.data.body.destroy();
  }
}

/**
 * A response of gw's own HTTP/1.1 client. Its body fails with the client's abort error when the
 * exchange's signal aborts; the pipe reports the signal's reason instead when it has a code (a
 * deadline's), so that a response path that captured the body can tell a timeout (504).
 */
export class OwnForwardedResponse implements ForwardedResponse {
  readonly statusCode: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly #body: UpstreamBody;
  readonly #signal: AbortSignal;

  constructor(
    response: { statusCode: number; headers: Record<string, string | string[] | undefined>; body: UpstreamBody },
    signal: AbortSignal,
  ) {
    this.statusCode = response.statusCode;
    this.headers = response.headers;
    this.#body = response.body;
    this.#signal = signal;
  }

  pipeTo(res: ClientResponse, done: (error?: Error) => void): void {
    pipeUpstreamBody(this.#body, writableOf(res), done, () => {
      const reason = this.#signal.aborted ? (this.#signal.reason as { code?: unknown } | undefined) : undefined;
      return reason instanceof Error && typeof reason.code === 'string' ? reason : undefined;
    });
  }

  async drain(limit: number): Promise<void> {
    // Over the limit, readAll gives the connection up; the attempt's signal fails the read when it aborts.
    await this.#body.readAll(limit).catch(ignore);
  }

  discard(): void {
    this.#body.discard();
  }
}

function ignore(): void {}
