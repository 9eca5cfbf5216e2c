// Forwards a request to an HTTP destination through a keep-alive pool and streams the response
// back. Backpressure both ways comes from the streams; the client going away aborts the upstream
// request, and a deadline answers 504 when no response has started. With traffic policies it also
// retries failed attempts (traffic.retry: only the last attempt's response reaches the client) and
// reads the response whole before writing it (traffic.buffer.response, body transformations);
// docs/policies/forwarding.md.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline, type Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher, Pool } from 'undici';
import type { PolicyExchange } from '../policies/exchange.ts';
import { bufferOrStream } from '../policies/forwarding/buffer-or-stream.ts';
import { retriesStatus } from '../policies/forwarding/retry.ts';
import type { RetryPolicy } from '../policies/types.ts';
import type { HeaderBag } from '../routing/filters.ts';
import { sendText } from './direct-response.ts';
import { forwardedResponseHeaders } from './headers.ts';

export interface ForwardOptions {
  pool: Pool;
  method: string;
  /** Path and query as sent upstream. */
  path: string;
  headers: Record<string, string | string[]>;
  /** The body: the client's request stream, a buffer, or none. */
  body: IncomingMessage | Buffer | string | undefined;
  /** Response deadline in ms (route or backend timeout), if any; with `retry`, the whole request's. */
  timeoutMs: number | undefined;
  /** Changes the response headers before they are sent (response filters). */
  onResponseHeaders?: (headers: HeaderBag) => void;
  /** Retry failed attempts (traffic.retry); only for a body that can be sent again (not a stream). */
  retry?: RetryPlan;
  /** Read the whole response before writing it (traffic.buffer.response, response body transformations). */
  responseBuffering?: ResponseBuffering;
}

/** How the attempts of one request are retried. */
export interface RetryPlan {
  policy: RetryPolicy;
  /** The request's policy state: the retry condition's CEL variables. */
  exchange: PolicyExchange;
  /** Deadline of each attempt (HTTPRoute backendRequest, BackendHTTP.requestTimeout), if any. */
  attemptTimeoutMs: number | undefined;
}

/** What the forwarder does with a response body it reads whole before writing it. */
export interface ResponseBuffering {
  /** Most body bytes read. */
  maxBytes: number;
  /** Over maxBytes: stream the response as it is (true) or answer 502 (false). */
  failOpen: boolean;
  /** Changes the whole response before it is written: `headers` in place, the status and body returned. */
  transform?: (response: { status: number; headers: HeaderBag; body: Buffer }) => { status: number; body: Buffer };
}

export interface ForwardOutcome {
  status: number;
  /** Why the exchange failed, when it did ('connect', 'timeout', 'reset', 'aborted'). */
  failure?: 'connect' | 'timeout' | 'reset' | 'aborted';
  /** gw's own reason for an answer it gave instead of the backend's (a response over the buffer limit). */
  error?: string;
  upstreamHeadersMs?: number;
  /** Attempts made after the first (traffic.retry). */
  retries?: number;
}

/** Whether a request method carries a body that should be streamed upstream. */
export function hasRequestBody(req: IncomingMessage): boolean {
  return req.headers['content-length'] !== undefined
    ? req.headers['content-length'] !== '0'
    : req.headers['transfer-encoding'] !== undefined;
}

/**
 * Errors of the TLS handshake: node's own (ERR_TLS_*, ERR_SSL_*, EPROTO) and OpenSSL's certificate
 * verification results (SELF_SIGNED_CERT_IN_CHAIN, UNABLE_TO_VERIFY_LEAF_SIGNATURE, CERT_HAS_EXPIRED...).
 */
const TLS_HANDSHAKE_ERROR =
  /^(ERR_TLS_|ERR_SSL_|EPROTO$)|CERT|^UNABLE_TO_|CRL|^INVALID_(CA|PURPOSE)$|^PATH_LENGTH_EXCEEDED$/;

export function failureOf(error: unknown): ForwardOutcome['failure'] {
  const code = (error as { code?: string }).code ?? '';
  if (
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code === 'UPSTREAM_CONNECT_TIMEOUT' ||
    code === 'ECONNREFUSED' ||
    code === 'ENOTFOUND' ||
    code === 'EHOSTUNREACH'
  )
    return 'connect';
  // A backend whose certificate cannot be verified is one gw cannot connect to (503), not a reset.
  if (TLS_HANDSHAKE_ERROR.test(code)) return 'connect';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UPSTREAM_RESPONSE_TIMEOUT')
    return 'timeout';
  if ((error as Error).name === 'AbortError' || code === 'UND_ERR_ABORTED') return 'aborted';
  return 'reset';
}

export function statusForFailure(failure: ForwardOutcome['failure']): number {
  return failure === 'timeout' ? 504 : failure === 'connect' ? 503 : 502;
}

/** An upstream response before its head is written. */
export interface UpstreamResponse {
  status: number;
  headers: HeaderBag;
  body: Readable;
}

/**
 * Processes an upstream response before its head is written and gives the one to write instead
 * (traffic.extProc). It does not throw: a failure is an answer it gives, or a body that errors.
 */
export type ResponseInterceptor = (response: UpstreamResponse) => Promise<UpstreamResponse>;

const responseInterceptors = new WeakMap<ServerResponse, ResponseInterceptor[]>();

/** Hands the upstream response of `res`'s request to `interceptor` first; the last one added runs first. */
export function interceptResponse(res: ServerResponse, interceptor: ResponseInterceptor): void {
  const list = responseInterceptors.get(res);
  if (list) list.push(interceptor);
  else responseInterceptors.set(res, [interceptor]);
}

async function intercept(list: ResponseInterceptor[], response: UpstreamResponse): Promise<UpstreamResponse> {
  let current = response;
  for (let i = list.length - 1; i >= 0; i--) current = await list[i]!(current);
  return current;
}

export async function forwardHttp(res: ServerResponse, options: ForwardOptions): Promise<ForwardOutcome> {
  const abort = new AbortController();
  let timedOut = false;
  const timer =
    options.timeoutMs !== undefined && options.timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          abort.abort();
        }, options.timeoutMs)
      : undefined;
  const onClientGone = () => {
    if (!res.writableFinished) abort.abort();
  };
  res.once('close', onClientGone);
  const started = performance.now();
  let response: Dispatcher.ResponseData;
  // A retried request's last attempt: its own deadline runs until its response is complete.
  let attempt: Attempt | undefined;
  let retries = 0;
  try {
    if (options.retry !== undefined && replayable(options.body)) {
      const result = await requestWithRetries(options, options.retry, abort.signal);
      attempt = result.attempt;
      retries = result.retries;
      if (result.response === undefined) throw result.error;
      response = result.response;
    } else {
      response = await options.pool.request({
        path: options.path,
        method: options.method as Dispatcher.HttpMethod,
        headers: options.headers,
        body: options.body ?? null,
        signal: abort.signal,
      });
    }
  } catch (error) {
    clearTimeout(timer);
    res.off('close', onClientGone);
    attempt?.end();
    const failure = timedOut || attempt?.timedOut ? 'timeout' : failureOf(error);
    if (failure === 'aborted' && !timedOut) return { status: 499, failure, retries };
    const status = statusForFailure(failure);
    sendText(res, status, failure === 'timeout' ? 'upstream request timeout' : `upstream ${failure} failure`);
    return { status, failure, retries };
  }
  const upstreamHeadersMs = performance.now() - started;
  const headers = forwardedResponseHeaders(response.headers) as HeaderBag;
  options.onResponseHeaders?.(headers);
  const interceptors = responseInterceptors.get(res);
  const final: UpstreamResponse = interceptors
    ? await intercept(interceptors, { status: response.statusCode, headers, body: response.body })
    : { status: response.statusCode, headers, body: response.body };
  if (options.responseBuffering !== undefined) {
    const buffering = options.responseBuffering;
    let body: Buffer | undefined;
    let failure: ForwardOutcome['failure'];
    try {
      body = await bufferOrStream(
        final.body,
        buffering.maxBytes,
        final.headers['content-length'] as string | undefined,
      );
    } catch {
      failure = timedOut || attempt?.timedOut ? 'timeout' : abort.signal.aborted ? 'aborted' : 'reset';
    }
    // The response is complete (or will not be sent): its deadlines no longer apply.
    if (body !== undefined || failure !== undefined || !buffering.failOpen) {
      clearTimeout(timer);
      res.off('close', onClientGone);
      attempt?.end();
    }
    if (failure === 'aborted') return { status: 499, failure, upstreamHeadersMs, retries };
    if (failure !== undefined) {
      const status = statusForFailure(failure);
      sendText(res, status, failure === 'timeout' ? 'upstream request timeout' : `upstream ${failure} failure`);
      return { status, failure, upstreamHeadersMs, retries };
    }
    if (body !== undefined) return sendBuffered(res, final, body, buffering, upstreamHeadersMs, retries);
    if (!buffering.failOpen) {
      // Not read: the connection goes (undici reports the abort on the body, expected here).
      final.body.on('error', ignore).destroy();
      const error = `the upstream response is larger than the ${buffering.maxBytes}-byte buffer limit`;
      sendText(res, 502, error);
      return { status: 502, error, upstreamHeadersMs, retries };
    }
    // FailOpen: a response over the limit is streamed as it is, every byte read so far included.
  }
  res.writeHead(final.status, final.headers as Record<string, string>);
  return await new Promise<ForwardOutcome>((resolve) => {
    pipeline(final.body, res, (error) => {
      clearTimeout(timer);
      res.off('close', onClientGone);
      attempt?.end();
      if (error) {
        res.destroy();
        resolve({
          status: final.status,
          failure: timedOut || attempt?.timedOut ? 'timeout' : 'reset',
          upstreamHeadersMs,
          retries,
        });
      } else {
        resolve({ status: final.status, upstreamHeadersMs, retries });
      }
    });
  });
}

function ignore(): void {}

/** Writes a response read whole, through the buffering's transform when there is one. */
function sendBuffered(
  res: ServerResponse,
  response: UpstreamResponse,
  body: Buffer,
  buffering: ResponseBuffering,
  upstreamHeadersMs: number,
  retries: number,
): ForwardOutcome {
  let status = response.status;
  let bytes = body;
  if (buffering.transform) ({ status, body: bytes } = buffering.transform({ status, headers: response.headers, body }));
  // A response that came chunked goes out with its length, now that it is known.
  else if (response.headers['content-length'] === undefined && bytes.length > 0)
    response.headers['content-length'] = String(bytes.length);
  res.writeHead(status, response.headers as Record<string, string>);
  res.end(bytes);
  return { status, upstreamHeadersMs, retries };
}

/** A body that can be sent again for a retry: none, or bytes (a stream is read once). */
function replayable(body: ForwardOptions['body']): boolean {
  return body === undefined || typeof body === 'string' || Buffer.isBuffer(body);
}

/** Most bytes of a discarded attempt's response read to keep its connection; a larger one is closed. */
const DISCARD_LIMIT = 64 * 1024;

/**
 * One upstream attempt of a retried request: aborted with the whole request (client gone, its
 * deadline) or by its own deadline, which marks it timed out — a failure another attempt may fix.
 */
class Attempt {
  readonly controller = new AbortController();
  timedOut = false;
  readonly #parent: AbortSignal;
  readonly #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #onParentAbort = () => this.controller.abort();

  constructor(parent: AbortSignal, timeoutMs: number | undefined) {
    this.#parent = parent;
    if (parent.aborted) this.controller.abort();
    else parent.addEventListener('abort', this.#onParentAbort, { once: true });
    this.#timer =
      timeoutMs !== undefined && timeoutMs > 0
        ? setTimeout(() => {
            this.timedOut = true;
            this.controller.abort();
          }, timeoutMs)
        : undefined;
  }

  end(): void {
    clearTimeout(this.#timer);
    this.#parent.removeEventListener('abort', this.#onParentAbort);
  }
}

type AttemptsResult = { attempt: Attempt; retries: number } & (
  | { response: Dispatcher.ResponseData; error?: undefined }
  | { response?: undefined; error: unknown }
);

/** Failures another attempt may not meet (agentgateway's retryable errors): connect, reset, an attempt's own deadline. */
function retriesFailure(failure: ForwardOutcome['failure']): boolean {
  return failure === 'connect' || failure === 'reset' || failure === 'timeout';
}

/**
 * Attempts until one gives a response the policy keeps (or a failure it does not retry), the
 * retries run out or the request is aborted (its deadline, the client gone). Only the response
 * returned is the client's; the others are drained and dropped. Retries carry x-retry-attempt.
 */
async function requestWithRetries(
  options: ForwardOptions,
  plan: RetryPlan,
  signal: AbortSignal,
): Promise<AttemptsResult> {
  const { policy, exchange } = plan;
  for (let retries = 0; ; retries++) {
    if (retries > 0) options.headers['x-retry-attempt'] = String(retries);
    const attempt = new Attempt(signal, plan.attemptTimeoutMs);
    const last = retries >= policy.attempts;
    let response: Dispatcher.ResponseData;
    try {
      response = await options.pool.request({
        path: options.path,
        method: options.method as Dispatcher.HttpMethod,
        headers: options.headers,
        body: (options.body as Buffer | string | undefined) ?? null,
        signal: attempt.controller.signal,
      });
    } catch (error) {
      if (last || signal.aborted || !retriesFailure(attempt.timedOut ? 'timeout' : failureOf(error)))
        return { attempt, retries, error };
      attempt.end();
      if (!(await backoff(policy.backoffMs, signal))) return { attempt, retries, error: abortError() };
      continue;
    }
    if (last || signal.aborted || !retriesStatus(policy, exchange, response.statusCode, response.headers))
      return { attempt, retries, response };
    await response.body.dump({ limit: DISCARD_LIMIT, signal: attempt.controller.signal }).catch(() => undefined);
    attempt.end();
    if (!(await backoff(policy.backoffMs, signal))) return { attempt, retries, error: abortError() };
  }
}

/** Waits `ms` before the next attempt; false when the request is aborted first (its deadline, the client). */
async function backoff(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return false;
  if (ms <= 0) return true;
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

function abortError(): Error {
  const error = new Error('the request was aborted between attempts');
  error.name = 'AbortError';
  return error;
}
