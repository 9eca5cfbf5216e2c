// How a response is read whole before it is written, when something needs it: traffic.buffer
// response (its maxBytes, else the listener's limit) and a response Transform that changes the
// body (at most its own limit; over it 502 — a body cannot be transformed in part). The response
// path (./response-path.ts) does the reading, for every backend kind.
import type { PolicyExchange } from '../policies/exchange.ts';
import { responseBodyTransformer } from '../policies/http/transformation-state.ts';
import type { ForwardingPolicy } from '../policies/types.ts';
import type { HeaderBag } from '../routing/filters.ts';

/** What the response path does with a response body it reads whole before writing it. */
export interface ResponseBuffering {
  /** Most body bytes read. */
  maxBytes: number;
  /** Over maxBytes: stream the response as it is (true) or answer 502 (false). */
  failOpen: boolean;
  /** Changes the whole response before it is written: `headers` in place, the status and body returned. */
  transform?: (response: { status: number; headers: HeaderBag; body: Buffer }) => { status: number; body: Buffer };
}

export function responseBuffering(
  buffer: ForwardingPolicy['responseBuffer'],
  exchange: PolicyExchange,
): ResponseBuffering | undefined {
  const transformer = responseBodyTransformer(exchange);
  if (transformer === undefined) {
    if (buffer === undefined) return undefined;
    return { maxBytes: buffer.maxBytes ?? exchange.maxBodyBytes, failOpen: buffer.failOpen };
  }
  const bufferLimit = buffer === undefined ? transformer.maxBytes : (buffer.maxBytes ?? exchange.maxBodyBytes);
  return {
    maxBytes: Math.min(bufferLimit, transformer.maxBytes),
    failOpen: false,
    transform: (response) => transformer.apply(response),
  };
}
