// Forwards a request to an HTTP destination through a keep-alive pool and streams the response
// back. Backpressure both ways comes from the streams; the client going away aborts the upstream
// request, and a deadline answers 504 when no response has started.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline, type Readable } from 'node:stream';
import type { Dispatcher, Pool } from 'undici';
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
  /** Response deadline in ms (route or backend timeout), if any. */
  timeoutMs: number | undefined;
  /** Changes the response headers before they are sent (response filters). */
  onResponseHeaders?: (headers: HeaderBag) => void;
}

export interface ForwardOutcome {
  status: number;
  /** Why the exchange failed, when it did ('connect', 'timeout', 'reset', 'aborted'). */
  failure?: 'connect' | 'timeout' | 'reset' | 'aborted';
  upstreamHeadersMs?: number;
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
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EHOSTUNREACH')
    return 'connect';
  // A backend whose certificate cannot be verified is one gw cannot connect to (503), not a reset.
  if (TLS_HANDSHAKE_ERROR.test(code)) return 'connect';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return 'timeout';
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
  try {
    response = await options.pool.request({
      path: options.path,
      method: options.method as Dispatcher.HttpMethod,
      headers: options.headers,
      body: options.body ?? null,
      signal: abort.signal,
    });
  } catch (error) {
    clearTimeout(timer);
    res.off('close', onClientGone);
    const failure = timedOut ? 'timeout' : failureOf(error);
    if (failure === 'aborted' && !timedOut) return { status: 499, failure };
    const status = statusForFailure(failure);
    sendText(res, status, failure === 'timeout' ? 'upstream request timeout' : `upstream ${failure} failure`);
    return { status, failure };
  }
  const upstreamHeadersMs = performance.now() - started;
  const headers = forwardedResponseHeaders(response.headers) as HeaderBag;
  options.onResponseHeaders?.(headers);
  const interceptors = responseInterceptors.get(res);
  const final: UpstreamResponse = interceptors
    ? await intercept(interceptors, { status: response.statusCode, headers, body: response.body })
    : { status: response.statusCode, headers, body: response.body };
  res.writeHead(final.status, final.headers as Record<string, string>);
  return await new Promise<ForwardOutcome>((resolve) => {
    pipeline(final.body, res, (error) => {
      clearTimeout(timer);
      res.off('close', onClientGone);
      if (error) {
        res.destroy();
        resolve({ status: final.status, failure: timedOut ? 'timeout' : 'reset', upstreamHeadersMs });
      } else {
        resolve({ status: final.status, upstreamHeadersMs });
      }
    });
  });
}
