// The response side of external processing, run by the response path on the response of any
// backend kind before its head is written (interceptResponse): the status and headers, then the
// body per the response body mode, go to the processor, and the response written to the client is
// the one it returns. A failure here is never failed open (the request body has been sent
// upstream): before the head is written the client gets 500 (504 on a timeout); once the body
// streams, a reset.
import { PassThrough, Readable } from 'node:stream';
import { BodyTooLargeError, readBody } from '../../proxy/body.ts';
import type { ResponseInterceptor, UpstreamResponse } from '../../proxy/response-path.ts';
import type { HeaderBag } from '../../routing/filters.ts';
import type { LocalResponse } from '../types.ts';
import { failureAnswer, failureReason, immediateAnswer } from './answers.ts';
import { type BodyPump, pumpBody, readPrefix } from './body-stream.ts';
import { applyHeaderMutation, headerMap } from './headers.ts';
import type { HeaderMutation, ProcessingResponse } from './messages.ts';
import {
  bodyOf,
  bufferedBodyResponse,
  EMPTY_BODY,
  expectAnswer,
  replaces,
  streamedChunk,
} from './processor-answers.ts';
import { ProcessorError } from './processor-stream.ts';
import type { ExtProcSession } from './session.ts';

/** The pseudo-header a processor may set on a response: the status. */
const RESPONSE_PSEUDO = new Set([':status']);

export function responseInterceptor(session: ExtProcSession): ResponseInterceptor {
  return async (upstream) => {
    try {
      return await processResponse(session, upstream);
    } catch (error) {
      upstream.body.destroy();
      session.cancel();
      return { ...localResponse(failureAnswer(error)), error: failureReason(error) };
    }
  };
}

async function processResponse(session: ExtProcSession, upstream: UpstreamResponse): Promise<UpstreamResponse> {
  const { exchange, modes } = session;
  const headers = upstream.headers;
  let status = upstream.status;
  const hasBody = responseHasBody(exchange.req.method, status, headers);
  const sendsHeaders = modes.responseHeaders === 'Send';
  if (!sendsHeaders && (!hasBody || modes.responseBody === 'None')) {
    session.close();
    return upstream;
  }
  // responseAttributes and metadataContext see the response as the processor will.
  exchange.setVariable('response', { code: BigInt(status), headers: celHeaders(headers) });
  await session.open();
  let pump: BodyPump | undefined;
  if (sendsHeaders) {
    session.send('response', {
      response_headers: { headers: headerMap([[':status', String(status)]], headers), end_of_stream: !hasBody },
    });
    if (hasBody && modes.responseBody === 'FullDuplexStreamed') pump = startPump(session, upstream.body);
    const message = await session.next();
    if (!message) {
      if (pump)
        throw new ProcessorError('protocol', 'the processor closed the stream while the response body streamed');
      return { status, headers, body: upstream.body };
    }
    if (message.response === 'immediate_response') return immediate(session, upstream, message, pump);
    expectAnswer(message, 'response_headers');
    session.takeDynamicMetadata(message.dynamic_metadata);
    session.applyModeOverride(message.mode_override, 'response', pump !== undefined);
    const common = message.response_headers?.response;
    status = applyResponseMutation(headers, common?.header_mutation, status);
    if (replaces(common)) {
      const body = bodyOf(common?.body_mutation);
      if (!body && pump)
        throw new ProcessorError('protocol', 'CONTINUE_AND_REPLACE without a body once the body streamed');
      pump?.stop();
      session.close();
      if (!body) return { status, headers, body: upstream.body };
      upstream.body.destroy();
      return whole(status, headers, body);
    }
  }
  if (!hasBody || modes.responseBody === 'None') {
    session.close();
    return { status, headers, body: upstream.body };
  }
  switch (modes.responseBody) {
    case 'Buffered':
      return await bufferedResponse(session, status, headers, upstream);
    case 'BufferedPartial':
      return await partialResponse(session, status, headers, upstream);
    case 'FullDuplexStreamed':
      pump ??= startPump(session, upstream.body);
      return streamedResponse(session, status, headers, upstream, pump);
  }
}

function startPump(session: ExtProcSession, body: Readable): BodyPump {
  const pump = pumpBody(session, 'response', body);
  // The upstream failing mid-body (or the client leaving) ends the conversation.
  pump.done.catch(() => session.cancel());
  return pump;
}

/** Buffered: the whole body (over the limit: 502) in one message. */
async function bufferedResponse(
  session: ExtProcSession,
  status: number,
  headers: HeaderBag,
  upstream: UpstreamResponse,
): Promise<UpstreamResponse> {
  let body: Buffer;
  try {
    body = await readBody(upstream.body, session.exchange.maxBodyBytes, headers['content-length'] as string);
  } catch (error) {
    if (!(error instanceof BodyTooLargeError)) throw error;
    upstream.body.destroy();
    session.close();
    return localResponse({
      status: 502,
      body: `the response body is larger than the ${error.limit}-byte external processing limit`,
    });
  }
  return await processWholeResponse(session, status, headers, upstream, body);
}

async function processWholeResponse(
  session: ExtProcSession,
  status: number,
  headers: HeaderBag,
  upstream: UpstreamResponse,
  body: Buffer,
): Promise<UpstreamResponse> {
  session.send('response', { response_body: { body, end_of_stream: true } });
  const message = await session.next();
  if (!message) return whole(status, headers, body);
  if (message.response === 'immediate_response') return immediate(session, upstream, message, undefined);
  const common = bufferedBodyResponse(session, message, 'response_body');
  const finalStatus = applyResponseMutation(headers, common?.header_mutation, status);
  session.close();
  return whole(finalStatus, headers, bodyOf(common?.body_mutation) ?? body);
}

/** BufferedPartial: a body within the limit goes whole; a longer one sends its first `limit` bytes. */
async function partialResponse(
  session: ExtProcSession,
  status: number,
  headers: HeaderBag,
  upstream: UpstreamResponse,
): Promise<UpstreamResponse> {
  const prefix = await readPrefix(upstream.body, session.exchange.maxBodyBytes);
  if (prefix.complete) return await processWholeResponse(session, status, headers, upstream, prefix.data);
  session.send('response', { response_body: { body: prefix.data, end_of_stream: false } });
  const message = await session.next();
  let head = prefix.data;
  let finalStatus = status;
  if (message) {
    if (message.response === 'immediate_response') return immediate(session, upstream, message, undefined);
    const common = bufferedBodyResponse(session, message, 'response_body');
    finalStatus = applyResponseMutation(headers, common?.header_mutation, status);
    head = bodyOf(common?.body_mutation) ?? head;
  }
  session.close();
  const declared = Number(headers['content-length']);
  if (head.length !== prefix.data.length && Number.isFinite(declared))
    headers['content-length'] = String(declared - prefix.data.length + head.length);
  return { status: finalStatus, headers, body: Readable.from(concatenated(head, prefix.overflow, upstream.body)) };
}

async function* concatenated(head: Buffer, overflow: Buffer, rest: Readable): AsyncGenerator<Buffer> {
  if (head.length > 0) yield head;
  if (overflow.length > 0) yield overflow;
  yield* rest;
}

/**
 * FullDuplexStreamed: the head is written at once (without content-length) and the body the
 * client gets is the processor's streamed_response chunks, as they come, with backpressure: a
 * slow client stops gw reading the processor, whose flow control stops the upstream body.
 */
function streamedResponse(
  session: ExtProcSession,
  status: number,
  headers: HeaderBag,
  upstream: UpstreamResponse,
  pump: BodyPump,
): UpstreamResponse {
  delete headers['content-length'];
  const out = new PassThrough();
  let finished = false;
  const stopAll = (): void => {
    finished = true;
    pump.stop();
    if (!upstream.body.readableEnded) upstream.body.destroy();
  };
  out.once('close', () => {
    if (finished) return;
    // The client went away (or the write failed) before the body was complete.
    stopAll();
    session.cancel();
  });
  const relay = async (): Promise<void> => {
    for (;;) {
      const message = await session.next();
      if (!message)
        throw new ProcessorError('protocol', 'the processor closed the stream before the response body ended');
      if (message.response === 'response_trailers') continue;
      expectAnswer(message, 'response_body');
      const part = streamedChunk(message.response_body?.response);
      if (!part) continue;
      if (part.body.length > 0 && !out.write(part.body)) await drained(out);
      if (out.destroyed) return;
      if (part.end) break;
    }
    stopAll();
    session.close();
    out.end();
  };
  relay().catch((error: unknown) => {
    if (finished) return;
    stopAll();
    session.cancel();
    session.exchange.record.error = failureReason(error);
    // The head is out: the client sees the body cut off (a reset), not a partial success.
    out.destroy(error as Error);
  });
  return { status, headers, body: out };
}

function drained(stream: PassThrough): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.once('drain', done);
    stream.once('close', done);
  });
}

function immediate(
  session: ExtProcSession,
  upstream: UpstreamResponse,
  message: ProcessingResponse,
  pump: BodyPump | undefined,
): UpstreamResponse {
  pump?.stop();
  upstream.body.destroy();
  session.close();
  return localResponse(immediateAnswer(message.immediate_response!));
}

/** Applies a header mutation to the response headers; returns the status (":status" may change it). */
function applyResponseMutation(
  headers: HeaderBag,
  mutation: HeaderMutation | null | undefined,
  status: number,
): number {
  const pseudo = applyHeaderMutation(headers, mutation, RESPONSE_PSEUDO);
  const value = Number(pseudo?.get(':status'));
  return Number.isInteger(value) && value >= 200 && value <= 599 ? value : status;
}

function responseHasBody(method: string | undefined, status: number, headers: HeaderBag): boolean {
  if (method === 'HEAD' || status === 204 || status === 304 || status < 200) return false;
  return headers['content-length'] === undefined || Number(headers['content-length']) > 0;
}

function whole(status: number, headers: HeaderBag, body: Buffer): UpstreamResponse {
  headers['content-length'] = String(body.length);
  return { status, headers, body: Readable.from(body.length > 0 ? [body] : []) };
}

/** gw's own answer (or a processor's immediate response) in place of the upstream response. */
function localResponse(answer: LocalResponse): UpstreamResponse {
  const text = typeof answer.body === 'string';
  const body =
    answer.body === undefined
      ? EMPTY_BODY
      : text
        ? Buffer.from((answer.body as string).endsWith('\n') ? (answer.body as string) : `${answer.body}\n`)
        : (answer.body as Buffer);
  const headers: HeaderBag = { ...answer.headers };
  if (text) headers['content-type'] = 'text/plain; charset=utf-8';
  return whole(answer.status, headers, body);
}

/** Response headers as CEL sees them: lower-case names, repeated values joined with ", ". */
function celHeaders(headers: HeaderBag): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}
