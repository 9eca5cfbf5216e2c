// The Streamable HTTP client gw is to a target: POST a message and read the answer (a JSON body,
// or an SSE stream whose other messages are handed on as they arrive), GET the target's stream of
// server-initiated messages, DELETE a session. A POST stream that breaks before its response is
// resumed with GET and Last-Event-ID when the target gave event ids.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { isErrorResponse, isResponse, type JsonRpcId, type JsonRpcMessage, type JsonRpcResponse } from './jsonrpc.ts';
import type { McpTarget } from './targets.ts';
import {
  discard,
  ExchangeDeadline,
  failureReason,
  headerValue,
  LINGER_BYTES,
  MAX_UNREADABLE_EVENTS,
  mediaType,
  readEvents,
  readJsonMessage,
  SETUP_TIMEOUT_MS,
  StreamMessages,
  targetEvents,
  targetRequest,
  type UpstreamContext,
} from './upstream-http.ts';

/** The upstream session a message belongs to: the target's session id and the version agreed with it. */
export interface UpstreamSessionRef {
  sessionId: string | undefined;
  protocolVersion: string | undefined;
}

export type PostOutcome =
  /** The answer; `httpStatus` when it is a JSON-RPC error that came with an HTTP error status. */
  | { kind: 'response'; message: JsonRpcResponse; sessionId: string | undefined; httpStatus?: number }
  | { kind: 'accepted' }
  /** 404 to a request that carried a session id: the target ended the session. */
  | { kind: 'expired' }
  /** `httpStatus`: the target's HTTP error status, when that was the failure. */
  | { kind: 'failed'; reason: string; httpStatus?: number };

/** Messages of a target that are not the awaited response (notifications, its own requests). */
export type OnTargetMessage = (message: JsonRpcMessage) => void;

/** Most times a broken POST stream is resumed. */
const MAX_RESUMES = 3;
/** Longest wait between resumes, whatever the target's retry field asks. */
const MAX_RETRY_MS = 5000;

function transportHeaders(ref: UpstreamSessionRef, accept: string, json: boolean): Record<string, string> {
  const headers: Record<string, string> = { accept };
  if (json) headers['content-type'] = 'application/json';
  if (ref.sessionId !== undefined) headers['mcp-session-id'] = ref.sessionId;
  if (ref.protocolVersion !== undefined) headers['mcp-protocol-version'] = ref.protocolVersion;
  return headers;
}

/**
 * POSTs one message (`body`: its JSON text when the caller has it already, as for a list sent
 * to several targets). For a request, resolves with its response (other messages of the stream
 * go to `onMessage`) within the context's deadline; for a notification or response, with
 * `accepted`.
 */
export async function postMessage(
  target: McpTarget,
  message: JsonRpcMessage,
  ref: UpstreamSessionRef,
  context: UpstreamContext,
  onMessage: OnTargetMessage = ignoreMessage,
  body: string = JSON.stringify(message),
): Promise<PostOutcome> {
  const waitsForResponse = 'id' in message && 'method' in message;
  if (!waitsForResponse) return postOther(target, ref, context, body);
  const deadline = new ExchangeDeadline(context.timeoutMs);
  try {
    return await postRequest(target, (message as { id: JsonRpcId }).id, ref, context, onMessage, body, deadline);
  } finally {
    // An answer read from a stream leaves the rest of it draining, still under the deadline.
    if (!deadline.draining) deadline.done();
  }
}

function ignoreMessage(): void {}

/** A notification or a response: the target accepts it (202) or refuses it. */
async function postOther(
  target: McpTarget,
  ref: UpstreamSessionRef,
  context: UpstreamContext,
  body: string,
): Promise<PostOutcome> {
  const response = await targetRequest(target, 'POST', context, transportHeaders(ref, POST_ACCEPT, true), body);
  if ('failure' in response) return { kind: 'failed', reason: response.failure };
  const { statusCode } = response;
  discard(response.body);
  if (statusCode === 404 && ref.sessionId !== undefined) return { kind: 'expired' };
  if (statusCode < 200 || statusCode >= 300)
    return { kind: 'failed', reason: `HTTP ${statusCode}`, httpStatus: statusCode };
  return { kind: 'accepted' };
}

const POST_ACCEPT = 'application/json, text/event-stream';

async function postRequest(
  target: McpTarget,
  id: JsonRpcId,
  ref: UpstreamSessionRef,
  context: UpstreamContext,
  onMessage: OnTargetMessage,
  body: string,
  deadline: ExchangeDeadline,
): Promise<PostOutcome> {
  const response = await targetRequest(target, 'POST', context, transportHeaders(ref, POST_ACCEPT, true), body);
  if ('failure' in response) return { kind: 'failed', reason: response.failure };
  const { statusCode } = response;
  if (statusCode === 202 || statusCode === 204) {
    discard(response.body);
    return { kind: 'failed', reason: 'no answer to a request (HTTP 202)' };
  }
  if (statusCode === 404 && ref.sessionId !== undefined) {
    discard(response.body);
    return { kind: 'expired' };
  }
  if (statusCode < 200 || statusCode >= 300) {
    // A refusal that says why in JSON-RPC (SDK servers do, for a bad request): the client gets it.
    if (mediaType(response.headers) === 'application/json') {
      deadline.watch(response.body);
      const answer = await readJsonMessage(response.body);
      if (!('failure' in answer) && isErrorResponse(answer))
        return {
          kind: 'response',
          message: { jsonrpc: '2.0', id, error: answer.error },
          sessionId: ref.sessionId,
          httpStatus: statusCode,
        };
    } else discard(response.body);
    return { kind: 'failed', reason: `HTTP ${statusCode}`, httpStatus: statusCode };
  }
  const sessionId = headerValue(response.headers, 'mcp-session-id') ?? ref.sessionId;
  const type = mediaType(response.headers);
  if (type === 'application/json') {
    deadline.watch(response.body);
    const answer = await readJsonMessage(response.body);
    if ('failure' in answer) return { kind: 'failed', reason: answer.failure };
    if (!isResponse(answer) || answer.id !== id)
      return { kind: 'failed', reason: 'a JSON body that is not the answer' };
    return { kind: 'response', message: answer, sessionId };
  }
  if (type !== 'text/event-stream') {
    discard(response.body);
    return { kind: 'failed', reason: `an unexpected content type (${type || 'none'})` };
  }
  let outcome = await readUntilResponse(response, id, onMessage, deadline);
  for (
    let resume = 0;
    outcome.kind === 'broken' && outcome.lastEventId !== undefined && resume < MAX_RESUMES && !deadline.expired;
    resume++
  ) {
    await sleep(Math.min(outcome.retryMs ?? 0, MAX_RETRY_MS, deadline.remaining()), undefined, {
      signal: context.signal,
    }).catch(() => undefined);
    if (context.signal?.aborted) break;
    const again = await targetRequest(
      target,
      'GET',
      context,
      {
        ...transportHeaders({ sessionId, protocolVersion: ref.protocolVersion }, 'text/event-stream', false),
        'last-event-id': outcome.lastEventId,
      },
      undefined,
      target.path,
      deadline.remaining(),
    );
    if ('failure' in again) return { kind: 'failed', reason: again.failure };
    if (again.statusCode !== 200 || mediaType(again.headers) !== 'text/event-stream') {
      discard(again.body);
      return { kind: 'failed', reason: `the stream could not be resumed (HTTP ${again.statusCode})` };
    }
    const next = await readUntilResponse(again, id, onMessage, deadline);
    outcome = next.kind === 'broken' ? { ...next, lastEventId: next.lastEventId ?? outcome.lastEventId } : next;
  }
  if (outcome.kind === 'response') return { kind: 'response', message: outcome.message, sessionId };
  return { kind: 'failed', reason: deadline.expired ? 'timeout' : outcome.reason };
}

type StreamOutcome =
  | { kind: 'response'; message: JsonRpcResponse }
  | { kind: 'broken'; reason: string; lastEventId: string | undefined; retryMs: number | undefined };

/**
 * Reads an SSE response until the answer to `id` arrives; the rest of the stream is drained in
 * the background (to its end, LINGER_BYTES of data or the deadline's linger) so that the
 * connection can be reused. A stream of unreadable events is broken, and not resumed.
 */
function readUntilResponse(
  response: Dispatcher.ResponseData,
  id: JsonRpcId,
  onMessage: OnTargetMessage,
  deadline: ExchangeDeadline,
): Promise<StreamOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    let lastEventId: string | undefined;
    let retryMs: number | undefined;
    let afterAnswer = 0;
    const messages = new StreamMessages();
    deadline.watch(response.body);
    readEvents(
      response.body,
      (event) => {
        if (event.id !== undefined) lastEventId = event.id;
        if (event.retryMs !== undefined) retryMs = event.retryMs;
        if (settled) {
          afterAnswer += event.data?.length ?? 0;
          if (afterAnswer > LINGER_BYTES) throw new Error('the target streamed on after its answer');
        }
        const message = messages.of(event);
        if (messages.broken) throw new UnreadableStream();
        if (message === undefined) return; // one bad event does not end the exchange
        if (!settled && isResponse(message) && message.id === id) {
          settled = true;
          deadline.draining = true;
          deadline.linger();
          resolve({ kind: 'response', message });
        } else if (!isResponse(message) || message.id !== id) {
          onMessage(message);
        }
      },
      (error) => {
        // The stream is over: its deadline with it (when the answer came, postMessage left it running for the drain).
        if (settled) deadline.done();
        if (error !== undefined) response.body.destroy();
        if (settled) return;
        settled = true;
        const unreadable = error instanceof UnreadableStream;
        resolve({
          kind: 'broken',
          reason: unreadable
            ? error.message
            : error === undefined
              ? 'the stream ended before the answer'
              : failureReason(error),
          // Resumed, it would say the same again.
          lastEventId: unreadable ? undefined : lastEventId,
          retryMs,
        });
      },
    );
  });
}

/** A target stream given up for its unreadable events (StreamMessages.broken). */
class UnreadableStream extends Error {
  constructor() {
    super(`more than ${MAX_UNREADABLE_EVENTS} events that are not JSON-RPC messages`);
  }
}

export type ListenOutcome =
  | { kind: 'ended'; lastEventId: string | undefined; retryMs: number | undefined }
  /** 405: the target offers no stream of its own messages. */
  | { kind: 'unsupported' }
  | { kind: 'expired' }
  | { kind: 'failed'; reason: string };

/** Opens the target's stream of server-initiated messages and reads it until it ends or `signal` stops it. */
export async function listen(
  target: McpTarget,
  ref: UpstreamSessionRef,
  context: UpstreamContext,
  lastEventId: string | undefined,
  onMessage: OnTargetMessage,
): Promise<ListenOutcome> {
  const headers = transportHeaders(ref, 'text/event-stream', false);
  if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
  const response = await targetRequest(
    target,
    'GET',
    { ...context, timeoutMs: SETUP_TIMEOUT_MS, streaming: true },
    headers,
  );
  if ('failure' in response) return { kind: 'failed', reason: response.failure };
  if (response.statusCode === 405) {
    discard(response.body);
    return { kind: 'unsupported' };
  }
  if (response.statusCode === 404 && ref.sessionId !== undefined) {
    discard(response.body);
    return { kind: 'expired' };
  }
  if (response.statusCode !== 200 || mediaType(response.headers) !== 'text/event-stream') {
    discard(response.body);
    return { kind: 'failed', reason: `HTTP ${response.statusCode}` };
  }
  let last = lastEventId;
  let retryMs: number | undefined;
  const messages = new StreamMessages();
  try {
    for await (const event of targetEvents(response.body)) {
      if (event.id !== undefined) last = event.id;
      if (event.retryMs !== undefined) retryMs = event.retryMs;
      const message = messages.of(event);
      if (messages.broken) {
        response.body.destroy();
        return { kind: 'failed', reason: new UnreadableStream().message };
      }
      if (message !== undefined) onMessage(message);
    }
  } catch {
    response.body.destroy();
  }
  return { kind: 'ended', lastEventId: last, retryMs };
}

/** Ends an upstream session (best effort: a target may answer 405, or be gone). */
export async function deleteSession(
  target: McpTarget,
  ref: UpstreamSessionRef,
  context: UpstreamContext,
): Promise<void> {
  if (ref.sessionId === undefined) return;
  const response = await targetRequest(
    target,
    'DELETE',
    { ...context, timeoutMs: SETUP_TIMEOUT_MS },
    transportHeaders(ref, 'application/json, text/event-stream', false),
  );
  if (!('failure' in response)) discard(response.body);
}
