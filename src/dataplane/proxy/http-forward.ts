// Forwards a request to an HTTP destination through a keep-alive pool — gw's own HTTP/1.1 client
// for a body in memory or none, undici's for a streamed one (./forwarded-response.ts) — and
// streams the response back. Backpressure both ways comes from the streams; the client going
// away aborts the upstream request, and a deadline answers 504 when no response has started.
// With traffic policies it also retries failed attempts (traffic.retry: only the last attempt's
// response reaches the client); what happens to the response after that (external processing,
// transformations, buffering) is the response path's, as for every backend kind
// (./response-path.ts). docs/policies/forwarding.md.
import type { IncomingMessage } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher, Pool } from 'undici';
import type { PolicyExchange } from '../policies/exchange.ts';
import { retriesStatus } from '../policies/forwarding/retry.ts';
import type { RetryPolicy } from '../policies/types.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { type ClientResponse, responseCompleted } from './client-response.ts';
import { sendText } from './direct-response.ts';
import { type ForwardedResponse, OwnForwardedResponse, UndiciForwardedResponse } from './forwarded-response.ts';
import { forwardedResponseHeaders } from './headers.ts';

export interface ForwardOptions {
  /** undici's pool to the destination: a body streamed from the client, and `inspect`, go through it. */
  pool: Pool;
  /**
   * gw's own HTTP/1.1 client to the destination (an HTTP/1.1 one): a request whose body is in
   * memory, or that has none, goes through it — fewer allocations and events a request than
   * undici's. Unset: everything goes through `pool`.
   */
  client?: UpstreamClient | undefined;
  method: string;
  /** Path and query as sent upstream. */
  path: string;
  headers: Record<string, string | string[]>;
  /** The body: the client's request stream, a buffer, or none. */
  body: IncomingMessage | Buffer | string | undefined;
  /** Response deadline in ms (route or backend timeout), if any; with `retry`, the whole request's. */
  timeoutMs: number | undefined;
  /** Retry failed attempts (traffic.retry); only for a body that can be sent again (not a stream). */
  retry?: RetryPlan;
  /** How a failed exchange is answered (a protocol's error shape); plain text (sendFailure) unless given. */
  answerFailure?: (res: ClientResponse, failure: UpstreamFailure) => void;
  /**
   * A kind's reading of the upstream response before the client gets any of it (an API whose
   * error answers mean something else to the client: AgentCore's). Unset or undefined: passed
   * through as it is.
   */
  inspect?: (response: Dispatcher.ResponseData) => ResponseVerdict | Promise<ResponseVerdict>;
}

/**
 * What ForwardOptions.inspect makes of a response: passed through (undefined), passed through with
 * another status, or answered by gw itself (`answer` writes the client's response and returns its
 * status; the upstream body is discarded).
 */
export type ResponseVerdict = undefined | { status: number } | { answer: (res: ClientResponse) => number };

/** How the attempts of one request are retried. */
export interface RetryPlan {
  policy: RetryPolicy;
  /** The request's policy state: the retry condition's CEL variables. */
  exchange: PolicyExchange;
  /** Deadline of each attempt (HTTPRoute backendRequest, BackendHTTP.requestTimeout), if any. */
  attemptTimeoutMs: number | undefined;
}

/** Why an upstream exchange failed. */
export type UpstreamFailure = 'connect' | 'timeout' | 'reset' | 'aborted';

export interface ForwardOutcome {
  status: number;
  /** Why the exchange failed, when it did. */
  failure?: UpstreamFailure;
  upstreamHeadersMs?: number;
  /** Attempts made after the first (traffic.retry). */
  retries?: number;
  /** What the log may say about the failure beyond its kind (failureDetail); never the client. */
  detail?: string;
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

export function failureOf(error: unknown): UpstreamFailure {
  const code = (error as { code?: string }).code ?? '';
  if (
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code === 'UPSTREAM_CONNECT_TIMEOUT' ||
    // A CONNECT proxy unreachable or refusing the tunnel (upstream/connect-tunnel.ts).
    code === 'UPSTREAM_TUNNEL_FAILED' ||
    code === 'ECONNREFUSED' ||
    code === 'ENOTFOUND' ||
    code === 'EHOSTUNREACH' ||
    // No HBONE tunnel to a mesh destination (no ready pod, no workload certificate, identity refused).
    code === 'ERR_HBONE'
  )
    return 'connect';
  // A backend whose certificate cannot be verified is one gw cannot connect to (503), not a reset.
  if (TLS_HANDSHAKE_ERROR.test(code)) return 'connect';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UPSTREAM_RESPONSE_TIMEOUT')
    return 'timeout';
  if ((error as Error).name === 'AbortError' || code === 'UND_ERR_ABORTED') return 'aborted';
  return 'reset';
}

/**
 * The detail of a failure worth a log line beyond its kind: what a tunnel's CONNECT proxy did (it
 * could not be reached, refused with a status, answered nonsense). The client is never told: a
 * proxy's address and answers are the operator's business.
 */
export function failureDetail(error: unknown): string | undefined {
  return (error as { code?: string }).code === 'UPSTREAM_TUNNEL_FAILED' ? (error as Error).message : undefined;
}

export function statusForFailure(failure: ForwardOutcome['failure']): number {
  return failure === 'timeout' ? 504 : failure === 'connect' ? 503 : 502;
}

/** What gw tells the client about an upstream exchange that failed. */
export function failureMessage(failure: UpstreamFailure): string {
  return failure === 'timeout' ? 'upstream request timeout' : `upstream ${failure} failure`;
}

/** gw's answer for an upstream exchange that failed before the client got a response. */
export function sendFailure(res: ClientResponse, failure: UpstreamFailure): void {
  sendText(res, statusForFailure(failure), failureMessage(failure));
}

/**
 * Why a deadline aborted an upstream exchange: the abort's reason, which undici gives the response
 * body as its error, so that whoever reads the body (the response path) can tell a timeout (504).
 */
class DeadlineError extends Error {
  readonly code = 'UPSTREAM_RESPONSE_TIMEOUT';
  constructor() {
    super('the request deadline passed');
  }
}

export async function forwardHttp(res: ClientResponse, options: ForwardOptions): Promise<ForwardOutcome> {
  const abort = new AbortController();
  let timedOut = false;
  const timer =
    options.timeoutMs !== undefined && options.timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          abort.abort(new DeadlineError());
        }, options.timeoutMs)
      : undefined;
  const onClientGone = () => {
    if (!responseCompleted(res)) abort.abort();
  };
  res.once('close', onClientGone);
  const started = performance.now();
  let response: ForwardedResponse;
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
      response = await send(options, abort.signal);
    }
  } catch (error) {
    clearTimeout(timer);
    res.off('close', onClientGone);
    attempt?.end();
    const failure = timedOut || attempt?.timedOut ? 'timeout' : failureOf(error);
    if (failure === 'aborted' && !timedOut) return { status: 499, failure, retries };
    (options.answerFailure ?? sendFailure)(res, failure);
    const detail = failureDetail(error);
    return { status: statusForFailure(failure), failure, retries, ...(detail !== undefined ? { detail } : {}) };
  }
  const upstreamHeadersMs = performance.now() - started;
  const finish = () => {
    clearTimeout(timer);
    res.off('close', onClientGone);
    attempt?.end();
  };
  let status = response.statusCode;
  if (options.inspect !== undefined) {
    let verdict: ResponseVerdict;
    try {
      // send() takes undici's pool when there is an inspect.
      verdict = await options.inspect((response as UndiciForwardedResponse).data);
    } catch (error) {
      // Reading what the upstream said failed (its deadline, a reset): nothing reached the client yet.
      finish();
      response.discard();
      const failure = timedOut || attempt?.timedOut ? 'timeout' : failureOf(error);
      if (failure === 'aborted' && !timedOut) return { status: 499, failure, retries };
      sendFailure(res, failure);
      return { status: statusForFailure(failure), failure, upstreamHeadersMs, retries };
    }
    if (verdict !== undefined && 'answer' in verdict) {
      finish();
      response.discard();
      return { status: verdict.answer(res), upstreamHeadersMs, retries };
    }
    if (verdict !== undefined) status = verdict.status;
  }
  res.writeHead(status, forwardedResponseHeaders(response.headers) as Record<string, string>);
  return await new Promise<ForwardOutcome>((resolve) => {
    response.pipeTo(res, (error) => {
      finish();
      if (error) {
        res.destroy();
        resolve({ status, failure: timedOut || attempt?.timedOut ? 'timeout' : 'reset', upstreamHeadersMs, retries });
      } else {
        resolve({ status, upstreamHeadersMs, retries });
      }
    });
  });
}

/**
 * One upstream exchange: through gw's own client when there is one and the body is in memory (or
 * there is none) and nobody inspects the answer; through undici's pool otherwise.
 */
async function send(options: ForwardOptions, signal: AbortSignal): Promise<ForwardedResponse> {
  const { body, client } = options;
  if (client !== undefined && options.inspect === undefined && !isStream(body)) {
    const response = await client.request({
      method: options.method,
      path: options.path,
      headers: options.headers,
      body: typeof body === 'string' ? Buffer.from(body) : body,
      signal,
    });
    return new OwnForwardedResponse(response, signal);
  }
  const response = await options.pool.request({
    path: options.path,
    method: options.method as Dispatcher.HttpMethod,
    headers: options.headers,
    body: body ?? null,
    signal,
  });
  return new UndiciForwardedResponse(response);
}

/** A body that can be sent again for a retry: none, or bytes (a stream is read once). */
function replayable(body: ForwardOptions['body']): boolean {
  return !isStream(body);
}

function isStream(body: ForwardOptions['body']): body is IncomingMessage {
  return body !== undefined && typeof body !== 'string' && !Buffer.isBuffer(body);
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
  readonly #onParentAbort = () => this.controller.abort(this.#parent.reason);

  constructor(parent: AbortSignal, timeoutMs: number | undefined) {
    this.#parent = parent;
    if (parent.aborted) this.controller.abort(parent.reason);
    else parent.addEventListener('abort', this.#onParentAbort, { once: true });
    this.#timer =
      timeoutMs !== undefined && timeoutMs > 0
        ? setTimeout(() => {
            this.timedOut = true;
            this.controller.abort(new DeadlineError());
          }, timeoutMs)
        : undefined;
  }

  end(): void {
    clearTimeout(this.#timer);
    this.#parent.removeEventListener('abort', this.#onParentAbort);
  }
}

type AttemptsResult = { attempt: Attempt; retries: number } & (
  | { response: ForwardedResponse; error?: undefined }
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
    let response: ForwardedResponse;
    try {
      response = await send(options, attempt.controller.signal);
    } catch (error) {
      if (last || signal.aborted || !retriesFailure(attempt.timedOut ? 'timeout' : failureOf(error)))
        return { attempt, retries, error };
      attempt.end();
      if (!(await backoff(policy.backoffMs, signal))) return { attempt, retries, error: abortError() };
      continue;
    }
    if (last || signal.aborted || !retriesStatus(policy, exchange, response.statusCode, response.headers))
      return { attempt, retries, response };
    await response.drain(DISCARD_LIMIT, attempt.controller.signal);
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
