// Whole-body buffering of requests and responses (traffic.buffer). The request side is a pipeline
// step: it reads the body before the request is sent on, so the backend gets it in one piece
// (and retries can replay it). The response side is the response path's (ForwardingPolicy
// responseBuffer, proxy/response-path.ts): it reads the whole response of any backend kind
// before writing any of it. Limits are BufferBody.maxBytes, else the listener's
// Frontend.http.maxBufferSize (2 MiB unless changed).
import type { Buffer as BufferSpec } from '../../../api/types/traffic.ts';
import { byteSize } from '../../../util/units.ts';
import { BodyTooLargeError } from '../../proxy/body.ts';
import { hasRequestBody } from '../../proxy/http-forward.ts';
import type { PolicyExchange } from '../exchange.ts';
import { unreadBodyAnswer } from '../http/request-body.ts';
import type { CompiledPolicy, LocalResponse, PolicyCompiler, StepResult } from '../types.ts';
import { requestBufferOrStream } from './buffer-or-stream.ts';

export const compileBuffer: PolicyCompiler<BufferSpec> = (value) => {
  const compiled: CompiledPolicy = {};
  if (value.request) {
    const maxBytes = value.request.maxBytes !== undefined ? byteSize(value.request.maxBytes) : undefined;
    const failOpen = value.request.failureMode === 'FailOpen';
    // The 413 names the field that sets the limit, so that whoever meets it knows what raises it.
    const field =
      maxBytes !== undefined ? 'traffic.buffer.request.maxBytes' : "the listener's Frontend http.maxBufferSize";
    compiled.request = (exchange) => bufferRequest(exchange, maxBytes ?? exchange.maxBodyBytes, failOpen, field);
  }
  if (value.response) {
    compiled.forwarding = {
      responseBuffer: {
        maxBytes: value.response.maxBytes !== undefined ? byteSize(value.response.maxBytes) : undefined,
        failOpen: value.response.failureMode === 'FailOpen',
      },
    };
  }
  return compiled;
};

/**
 * Reads the request body whole (PolicyExchange.body), at most `limit` bytes. Over the limit:
 * FailClosed answers 413 and closes the connection (the rest of the body is discarded);
 * FailOpen sends the body on as a stream, unbuffered — every byte of it, including those read
 * before the limit was passed.
 */
export async function bufferRequest(
  exchange: PolicyExchange,
  limit: number,
  failOpen: boolean,
  field: string,
): Promise<StepResult> {
  const body = exchange.body;
  if (body !== undefined) return body.length > limit && !failOpen ? tooLarge(limit, field) : undefined;
  const req = exchange.req;
  if (!hasRequestBody(req)) return undefined;
  if (!failOpen) {
    try {
      await exchange.readBody(limit);
      return undefined;
    } catch (error) {
      if (error instanceof BodyTooLargeError) return tooLarge(limit, field);
      return unreadBodyAnswer(error);
    }
  }
  let buffered: Buffer | undefined;
  try {
    buffered = await requestBufferOrStream(req, limit);
  } catch (error) {
    return unreadBodyAnswer(error);
  }
  if (buffered !== undefined) exchange.body = buffered;
  return undefined;
}

function tooLarge(limit: number, field: string): LocalResponse {
  return {
    status: 413,
    headers: { connection: 'close' },
    body: `the request body is larger than the ${limit}-byte buffer limit (${field} raises it)`,
    own: 'refusal',
  };
}
