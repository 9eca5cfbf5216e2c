// The one response path of every backend kind (docs/dataplane.md "The response path"): what the
// client gets is the kind's response after, in this order, the route's and backendRef's
// ResponseHeaderModifier filters, the response phase of external processing (traffic.extProc),
// then the body transformation and response buffering (traffic.transformation, traffic.buffer
// response), and last the response hooks of the traffic policies as the head is written (header
// modifiers, CORS, rate-limit headers, transformation headers: ./response-head.ts).
//
// When nothing works on the body the kind writes straight to the client's response (no cost).
// Otherwise it writes to a capture (./response-capture.ts): its head is held, its body read as a
// stream by the interceptors and the buffering, and the result written to the client with
// backpressure. The client going away destroys the capture (the kind sees a closed response, as
// it would without one); a kind that destroys the capture resets the client.
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { PolicyExchange } from '../policies/exchange.ts';
import { bufferOrStream } from '../policies/forwarding/buffer-or-stream.ts';
import type { ForwardingPolicy } from '../policies/types.ts';
import type { HeaderBag } from '../routing/filters.ts';
import type { RequestRecord } from '../telemetry/request-record.ts';
import { responseCompleted } from './client-response.ts';
import { sendText } from './direct-response.ts';
import { failureOf, sendFailure } from './http-forward.ts';
import { sendOwnFailure } from './own-failure.ts';
import { pipeBody } from './pipe-body.ts';
import { type ResponseBuffering, responseBuffering } from './response-buffering.ts';
import { ResponseCapture } from './response-capture.ts';
import type { ResponseHook } from './response-head.ts';

/** A response before its head is written to the client. */
export interface UpstreamResponse {
  status: number;
  headers: HeaderBag;
  body: Readable;
  /** Set when this is gw's own answer in place of the kind's response: why (the access log's error). */
  error?: string;
}

/**
 * Processes a response before its head is written and gives the one to write instead
 * (traffic.extProc). It does not throw: a failure is an answer it gives, or a body that errors.
 */
export type ResponseInterceptor = (response: UpstreamResponse) => Promise<UpstreamResponse>;

const interceptorsOf = new WeakMap<PolicyExchange, ResponseInterceptor[]>();

/** Hands the response of `exchange`'s request to `interceptor` first; the last one added runs first. */
export function interceptResponse(exchange: PolicyExchange, interceptor: ResponseInterceptor): void {
  const list = interceptorsOf.get(exchange);
  if (list) list.push(interceptor);
  else interceptorsOf.set(exchange, [interceptor]);
}

/**
 * The response path of a request about to be served: undefined when nothing works on its response
 * body (the kind writes to `res`, with `routeHead` hooked on it), else a path whose capture the
 * kind writes to.
 */
export function openResponsePath(
  res: ServerResponse,
  exchange: PolicyExchange | undefined,
  forwarding: ForwardingPolicy,
  routeHead: ResponseHook | undefined,
): ResponsePath | undefined {
  if (exchange === undefined) return undefined;
  const interceptors = interceptorsOf.get(exchange);
  const buffering = responseBuffering(forwarding.responseBuffer, exchange);
  if (interceptors === undefined && buffering === undefined) return undefined;
  return new ResponsePath(res, exchange, interceptors, buffering, routeHead);
}

export class ResponsePath {
  /** What the kind writes to. */
  readonly capture: ResponseCapture;
  readonly #res: ServerResponse;
  readonly #record: RequestRecord;
  /** A HEAD request's response has no body, whatever its Content-Length says. */
  readonly #head: boolean;
  readonly #interceptors: readonly ResponseInterceptor[] | undefined;
  readonly #buffering: ResponseBuffering | undefined;
  readonly #routeHead: ResponseHook | undefined;
  /** gw's reason when the path answered in place of the kind's response. */
  #error: string | undefined;
  /** The kind failed (serve threw): the server answers the client; the path writes nothing more. */
  #detached = false;

  constructor(
    res: ServerResponse,
    exchange: PolicyExchange,
    interceptors: readonly ResponseInterceptor[] | undefined,
    buffering: ResponseBuffering | undefined,
    routeHead: ResponseHook | undefined,
  ) {
    this.#res = res;
    this.#record = exchange.record;
    this.#head = exchange.req.method === 'HEAD';
    this.#interceptors = interceptors;
    this.#buffering = buffering;
    this.#routeHead = routeHead;
    const capture = new ResponseCapture((head) => this.#onHead(head));
    this.capture = capture;
    // The client going away ends the kind's response too (its upstream is aborted).
    res.once('close', () => {
      if (!responseCompleted(res)) capture.destroy();
    });
    // A kind that gives up without a response resets the client rather than leaving it waiting.
    capture.once('close', () => {
      if (!capture.headersSent && !this.#detached && !res.headersSent) res.destroy();
    });
  }

  /**
   * Called when the kind's serve() has settled. A kind that threw leaves the answer to the server
   * (500) and its capture is ended. The path's own reason for an answer it gave (a body over its
   * limit, a processor's failure) wins over what the kind recorded as its response was cut off.
   */
  served(threw: boolean): void {
    if (threw) {
      this.#detached = true;
      this.capture.destroy();
    }
    if (this.#error !== undefined) this.#record.error = this.#error;
  }

  /** The kind committed its head: the route's filters change it, then the rest of the path runs. */
  #onHead(capture: ResponseCapture): void {
    if (this.#detached) return;
    try {
      this.#routeHead?.(capture);
    } catch {
      // a hook adds headers; one failing must not lose the response
    }
    const response: UpstreamResponse = {
      status: capture.statusCode,
      headers: capture.getHeaders() as HeaderBag,
      body: capture,
    };
    this.#respond(response).catch((error: unknown) => {
      const detail = `the response could not be processed: ${(error as Error).message}`;
      this.#fail(detail);
      capture.destroy();
      if (!this.#detached) sendOwnFailure(this.#res, this.#record, detail);
    });
  }

  async #respond(kinds: UpstreamResponse): Promise<void> {
    let response = kinds;
    const interceptors = this.#interceptors;
    if (interceptors) for (let i = interceptors.length - 1; i >= 0; i--) response = await interceptors[i]!(response);
    if (response.error !== undefined) this.#fail(response.error);
    const buffering = this.#buffering;
    if (buffering !== undefined) {
      let body: Buffer | undefined;
      try {
        const declared = this.#head ? undefined : (response.headers['content-length'] as string | number | undefined);
        body = await bufferOrStream(response.body, buffering.maxBytes, declared);
      } catch (error) {
        return this.#cutOff(error);
      }
      if (body !== undefined) return this.#sendWhole(response, body, buffering);
      if (!buffering.failOpen) {
        discard(response.body);
        const error = `the upstream response is larger than the ${buffering.maxBytes}-byte buffer limit`;
        this.#fail(error);
        if (this.#mayWrite()) sendText(this.#res, 502, error);
        return;
      }
      // FailOpen: a response over the limit is streamed as it is, every byte read so far included.
    }
    this.#stream(response);
  }

  /** Whether the client can still be answered by the path (not gone, not answered by anyone else). */
  #mayWrite(): boolean {
    return !this.#detached && !this.#res.headersSent && !this.#res.destroyed;
  }

  #stream(response: UpstreamResponse): void {
    if (!this.#mayWrite()) return void discard(response.body);
    const res = this.#res;
    res.writeHead(response.status, response.headers as OutgoingHttpHeaders);
    if (this.capture.flushRequested) res.flushHeaders();
    // A body that fails midway resets the client (pipeline destroys both ends).
    pipeBody(response.body, res, ignore);
  }

  /** Writes a response read whole, through the buffering's transform when there is one. */
  #sendWhole(response: UpstreamResponse, body: Buffer, buffering: ResponseBuffering): void {
    if (!this.#mayWrite()) return;
    let status = response.status;
    let bytes = body;
    const headers = response.headers;
    if (buffering.transform) ({ status, body: bytes } = buffering.transform({ status, headers, body }));
    else if (headers['content-length'] === undefined && bytes.length > 0) {
      // A response that came chunked (or streamed) goes out with its length, now that it is known.
      delete headers['transfer-encoding'];
      headers['content-length'] = String(bytes.length);
    }
    this.#res.writeHead(status, headers as OutgoingHttpHeaders);
    this.#res.end(bytes);
  }

  /** The body failed before it was read whole: 504 when a deadline cut it off, else 502. */
  #cutOff(error: unknown): void {
    if (!this.#mayWrite()) return;
    const failure = failureOf(error) === 'timeout' ? 'timeout' : 'reset';
    this.#fail(`upstream ${failure}`);
    sendFailure(this.#res, failure);
  }

  #fail(reason: string): void {
    this.#error = reason;
    this.#record.error = reason;
  }
}

/** Drops a body that will not be sent (a capture so dropped shows its kind a closed response). */
function discard(body: Readable): void {
  body.on('error', ignore).destroy();
}

function ignore(): void {}
