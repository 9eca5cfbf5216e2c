// The request body for policies that read or replace it (a transformation's body, a direct
// response's bodyExpression, `request.body` in their CEL).
import { BodyTooLargeError, bodyFailure, DEFAULT_MAX_BUFFER_BYTES } from '../../proxy/body.ts';
import type { HeaderBag } from '../../routing/filters.ts';
import type { PolicyExchange } from '../exchange.ts';
import type { LocalResponse } from '../types.ts';

/** Most bytes of a response body these policies buffer (the proxy-wide default, 2 MiB). */
export const POLICY_BODY_LIMIT = DEFAULT_MAX_BUFFER_BYTES;

/**
 * The whole request body (read once per request, at most the listener's Frontend.http
 * maxBufferSize), or the 413 answer when it is too large.
 */
export async function requestBody(exchange: PolicyExchange): Promise<Buffer | LocalResponse> {
  try {
    return await exchange.readBody();
  } catch (error) {
    if (error instanceof BodyTooLargeError)
      return unreadBodyAnswer(
        error,
        `the request body exceeds the ${error.limit}-byte limit (the listener's Frontend http.maxBufferSize raises it)`,
      );
    return unreadBodyAnswer(error);
  }
}

/**
 * The answer to a request whose body gw could not read whole: the refusal's status (413 too
 * large, 408 too slow, 503 no buffer to spare) or 400 (the client broke off). The rest of the body
 * is discarded unread, so the connection is not reused.
 */
export function unreadBodyAnswer(error: unknown, message?: string): LocalResponse {
  const failure = bodyFailure(error);
  return {
    status: failure.status,
    headers: { connection: 'close' },
    body: message ?? failure.message,
    own: failure.status === 503 ? 'overloaded' : 'refusal',
  };
}

/** Sends `body` upstream instead of the client's, with the matching Content-Length. */
export function replaceRequestBody(exchange: PolicyExchange, body: Buffer): void {
  exchange.body = body;
  const headers: HeaderBag = exchange.forward.headers;
  delete headers['transfer-encoding'];
  headers['content-length'] = String(body.length);
}
