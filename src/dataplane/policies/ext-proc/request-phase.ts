// The request side of external processing, run as the extProc pipeline step: the request
// headers (as they will go upstream) and then the body, per the request body mode, go to the
// processor; its mutations change exchange.forward and exchange.body before anything is sent
// upstream, and an immediate_response answers the client instead.
import { BodyRefusedError, BodyTooLargeError } from '../../proxy/body.ts';
import { bodyIntakeOf } from '../../proxy/body-intake.ts';
import { hasRequestBody } from '../../proxy/http-forward.ts';
import type { PolicyExchange } from '../exchange.ts';
import { unreadBodyAnswer } from '../http/request-body.ts';
import type { LocalResponse } from '../types.ts';
import { failureAnswer, failureReason, immediateAnswer } from './answers.ts';
import { type BodyPrefix, type BodyPump, pumpBody, readPrefix } from './body-stream.ts';
import { applyHeaderMutation, headerMap } from './headers.ts';
import type { CommonResponse, HeaderMutation, ProcessingResponse } from './messages.ts';
import { bodyOf, bufferedBodyResponse, expectAnswer, replaces, streamedChunk } from './processor-answers.ts';
import { ProcessorError } from './processor-stream.ts';
import type { ExtProcSession } from './session.ts';

/**
 * answer: respond with it; continue: go on, processed (the response side follows);
 * unprocessed: go on as if there were no processor (it closed the stream, or failed open).
 */
export type RequestResult =
  | { kind: 'answer'; response: LocalResponse }
  | { kind: 'continue' }
  | { kind: 'unprocessed' };

const CONTINUE: RequestResult = { kind: 'continue' };
const UNPROCESSED: RequestResult = { kind: 'unprocessed' };
/** The pseudo-header a processor may set on a request: the path (and query) sent upstream. */
const REQUEST_PSEUDO = new Set([':path']);

export async function processRequest(session: ExtProcSession): Promise<RequestResult> {
  const { exchange, modes } = session;
  const hasBody = exchange.body !== undefined ? exchange.body.length > 0 : hasRequestBody(exchange.req);
  const sendsHeaders = modes.requestHeaders === 'Send';
  if (!sendsHeaders && (!hasBody || modes.requestBody === 'None')) return CONTINUE;
  let pump: BodyPump | undefined;
  try {
    await session.open();
    if (sendsHeaders) {
      session.send('request', { request_headers: { headers: requestHeaders(exchange), end_of_stream: !hasBody } });
      // A full-duplex processor may hold its answer to the headers until it has the whole body.
      if (hasBody && modes.requestBody === 'FullDuplexStreamed') pump = startPump(session);
      const message = await session.next();
      if (!message) {
        if (pump)
          throw new ProcessorError('protocol', 'the processor closed the stream while the request body streamed');
        return UNPROCESSED;
      }
      if (message.response === 'immediate_response')
        return answer(session, immediateAnswer(message.immediate_response!));
      expectAnswer(message, 'request_headers');
      session.takeDynamicMetadata(message.dynamic_metadata);
      session.applyModeOverride(message.mode_override, 'request', pump !== undefined);
      const common = message.request_headers?.response;
      applyRequestMutation(exchange, common?.header_mutation);
      if (replaces(common)) {
        const body = bodyOf(common?.body_mutation);
        if (body) setRequestBody(exchange, body);
        else if (pump)
          throw new ProcessorError('protocol', 'CONTINUE_AND_REPLACE without a body once the body streamed');
        pump?.stop();
        return CONTINUE;
      }
    }
    if (!hasBody) return CONTINUE;
    switch (modes.requestBody) {
      case 'None':
        return CONTINUE;
      case 'Buffered':
        return await bufferedBody(session);
      case 'BufferedPartial':
        return await partialBody(session);
      case 'FullDuplexStreamed':
        pump ??= startPump(session);
        return await streamedBody(session, pump);
    }
  } catch (error) {
    pump?.stop();
    return failed(session, error);
  }
}

function startPump(session: ExtProcSession): BodyPump {
  const pump = pumpBody(session, 'request', session.exchange.body ?? session.exchange.req);
  // A client that goes away mid-body ends the conversation; the waiting step then fails.
  pump.done.catch(() => session.cancel());
  return pump;
}

/** Buffered: the whole body (over the limit: 413) in one message. */
async function bufferedBody(session: ExtProcSession): Promise<RequestResult> {
  let body: Buffer;
  try {
    body = await session.exchange.readBody(session.exchange.maxBodyBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError) return answer(session, tooLarge(error.limit));
    if (error instanceof BodyRefusedError) return answer(session, unreadBodyAnswer(error));
    throw error;
  }
  return await processWholeBody(session, body);
}

async function processWholeBody(session: ExtProcSession, body: Buffer): Promise<RequestResult> {
  const message = await sendBody(session, body, true);
  if (!message) return UNPROCESSED;
  if (message.response === 'immediate_response') return answer(session, immediateAnswer(message.immediate_response!));
  const common = takeBodyResponse(session, message);
  const replaced = bodyOf(common?.body_mutation);
  if (replaced) setRequestBody(session.exchange, replaced);
  return CONTINUE;
}

/**
 * BufferedPartial: a body within the limit goes whole; a longer one sends its first `limit`
 * bytes, and the (processed) prefix is put back in front of the rest, which streams upstream.
 */
async function partialBody(session: ExtProcSession): Promise<RequestResult> {
  const { exchange } = session;
  if (exchange.body !== undefined) return await processWholeBody(session, exchange.body);
  let prefix: BodyPrefix;
  try {
    prefix = await readPrefix(exchange.req, session.exchange.maxBodyBytes, bodyIntakeOf(exchange.req));
  } catch (error) {
    if (error instanceof BodyRefusedError) return answer(session, unreadBodyAnswer(error));
    throw error;
  }
  if (prefix.complete) {
    exchange.body = prefix.data;
    return await processWholeBody(session, prefix.data);
  }
  const message = await sendBody(session, prefix.data, false);
  let head = prefix.data;
  if (message) {
    if (message.response === 'immediate_response') return answer(session, immediateAnswer(message.immediate_response!));
    head = bodyOf(takeBodyResponse(session, message)?.body_mutation) ?? head;
  }
  exchange.req.unshift(Buffer.concat([head, prefix.overflow]));
  const declared = Number(exchange.forward.headers['content-length']);
  if (head.length !== prefix.data.length && Number.isFinite(declared))
    exchange.forward.headers['content-length'] = String(declared - prefix.data.length + head.length);
  return message ? CONTINUE : UNPROCESSED;
}

/**
 * FullDuplexStreamed: the body streams to the processor while its streamed_response chunks are
 * collected (up to the limit) into the body forwarded upstream. gw buffers this output because
 * a policy hands the body on as a whole (PolicyExchange.body), which both the HTTP forwarder
 * and the AI backends read.
 */
async function streamedBody(session: ExtProcSession, pump: BodyPump): Promise<RequestResult> {
  const limit = session.exchange.maxBodyBytes;
  const chunks: Buffer[] = [];
  let size = 0;
  for (;;) {
    const message = await session.next();
    if (!message) throw new ProcessorError('protocol', 'the processor closed the stream before the request body ended');
    if (message.response === 'immediate_response') {
      pump.stop();
      return answer(session, immediateAnswer(message.immediate_response!));
    }
    if (message.response === 'request_trailers') continue;
    expectAnswer(message, 'request_body');
    session.takeDynamicMetadata(message.dynamic_metadata);
    const part = streamedChunk(message.request_body?.response);
    if (!part) continue;
    size += part.body.length;
    if (size > limit) {
      pump.stop();
      session.cancel();
      return answer(session, tooLarge(limit));
    }
    if (part.body.length > 0) chunks.push(part.body);
    if (part.end) break;
  }
  // The processor said end_of_stream: whatever the client still sends is not part of the body.
  pump.stop();
  setRequestBody(session.exchange, Buffer.concat(chunks, size));
  return CONTINUE;
}

async function sendBody(session: ExtProcSession, body: Buffer, end: boolean): Promise<ProcessingResponse | undefined> {
  session.requestBodyStarted = true;
  session.send('request', { request_body: { body, end_of_stream: end } });
  return await session.next();
}

/** A request_body answer's CommonResponse, its header mutation applied (allowed in buffered modes). */
function takeBodyResponse(session: ExtProcSession, message: ProcessingResponse): CommonResponse | null | undefined {
  const common = bufferedBodyResponse(session, message, 'request_body');
  applyRequestMutation(session.exchange, common?.header_mutation);
  return common;
}

function answer(session: ExtProcSession, response: LocalResponse): RequestResult {
  // Whatever of the body gw has not read is discarded, so the connection can be reused.
  if (!session.exchange.req.readableEnded) session.exchange.req.resume();
  return { kind: 'answer', response };
}

function failed(session: ExtProcSession, error: unknown): RequestResult {
  session.cancel();
  session.exchange.record.error = failureReason(error);
  if (session.settings.failOpen && !session.requestBodyStarted) return UNPROCESSED;
  return answer(session, failureAnswer(error));
}

function tooLarge(limit: number): LocalResponse {
  return {
    status: 413,
    headers: { connection: 'close' },
    body: `the request body is larger than the ${limit}-byte external processing limit (the listener's Frontend http.maxBufferSize raises it)`,
    own: 'refusal',
  };
}

function requestHeaders(exchange: PolicyExchange) {
  const { req, forward, record } = exchange;
  const authority = forward.headers.host ?? req.headers.host ?? record.host;
  return headerMap(
    [
      [':method', req.method ?? 'GET'],
      [':scheme', record.scheme],
      [':authority', String(authority)],
      [':path', forward.query ? `${forward.path}?${forward.query}` : forward.path],
    ],
    forward.headers,
  );
}

function applyRequestMutation(exchange: PolicyExchange, mutation: HeaderMutation | null | undefined): void {
  const pseudo = applyHeaderMutation(exchange.forward.headers, mutation, REQUEST_PSEUDO);
  const path = pseudo?.get(':path');
  if (!path?.startsWith('/')) return;
  const query = path.indexOf('?');
  exchange.forward.path = query === -1 ? path : path.slice(0, query);
  exchange.forward.query = query === -1 ? '' : path.slice(query + 1);
}

function setRequestBody(exchange: PolicyExchange, body: Buffer): void {
  exchange.body = body;
  exchange.forward.headers['content-length'] = String(body.length);
}
