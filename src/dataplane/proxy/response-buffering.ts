// How a response is read whole before it is written, when something needs it: traffic.buffer
// response (its maxBytes, else the listener's limit) and a response Transform that changes the
// body (at most its own limit; over it 502 — a body cannot be transformed in part).
import type { PolicyExchange } from '../policies/exchange.ts';
import { responseBodyTransformer } from '../policies/http/transformation-state.ts';
import type { ForwardingPolicy } from '../policies/types.ts';
import type { ResponseBuffering } from './http-forward.ts';

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
