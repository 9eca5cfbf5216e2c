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
  failureReason,
  headerValue,
  mediaType,
  parseMessage,
  readJsonMessage,
  SETUP_TIMEOUT_MS,
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
 * POSTs one message. For a request, resolves with its response (other messages of the stream go
 * to `onMessage`); for a notification or response, with `accepted`.
 */
export async function postMessage(
  target: McpTarget,
  message: JsonRpcMessage,
  ref: UpstreamSessionRef,
  context: UpstreamContext,
  onMessage: OnTargetMessage = () => undefined,
): Promise<PostOutcome> {
  const response = await targetRequest(
    target,
    'POST',
    context,
    transportHeaders(ref, 'application/json, text/event-stream', true),
    JSON.stringify(message),
  );
  if ('failure' in response) return { kind: 'failed', reason: response.failure };
  const { statusCode, body } = response;
  const waitsForResponse = 'id' in message && 'method' in message;
  if (statusCode === 202 || statusCode === 204) {
    discard(body);
    return waitsForResponse ? { kind: 'failed', reason: 'no answer to a request (HTTP 202)' } : { kind: 'accepted' };
  }
  if (statusCode === 404 && ref.sessionId !== undefined) {
    discard(body);
    return { kind: 'expired' };
  }
  if (statusCode < 200 || statusCode >= 300) {
    // A refusal that says why in JSON-RPC (SDK servers do, for a bad request): the client gets it.
    if (waitsForResponse && mediaType(response.headers) === 'application/json') {
      const answer = await readJsonMessage(body);
      if (!('failure' in answer) && isErrorResponse(answer))
        return {
          kind: 'response',
          message: { jsonrpc: '2.0', id: (message as { id: JsonRpcId }).id, error: answer.error },
          sessionId: ref.sessionId,
          httpStatus: statusCode,
        };
    } else discard(body);
    return { kind: 'failed', reason: `HTTP ${statusCode}`, httpStatus: statusCode };
  }
  const sessionId = headerValue(response.headers, 'mcp-session-id') ?? ref.sessionId;
  if (!waitsForResponse) {
    discard(body);
    return { kind: 'accepted' };
  }
  const id = (message as { id: JsonRpcId }).id;
  const type = mediaType(response.headers);
  if (type === 'application/json') {
    const answer = await readJsonMessage(body);
    if ('failure' in answer) return { kind: 'failed', reason: answer.failure };
    if (!isResponse(answer) || answer.id !== id)
      return { kind: 'failed', reason: 'a JSON body that is not the answer' };
    return { kind: 'response', message: answer, sessionId };
  }
  if (type !== 'text/event-stream') {
    discard(body);
    return { kind: 'failed', reason: `an unexpected content type (${type || 'none'})` };
  }
  let outcome = await readUntilResponse(response, id, onMessage);
  for (
    let resume = 0;
    outcome.kind === 'broken' && outcome.lastEventId !== undefined && resume < MAX_RESUMES;
    resume++
  ) {
    await sleep(Math.min(outcome.retryMs ?? 0, MAX_RETRY_MS), undefined, { signal: context.signal }).catch(
      () => undefined,
    );
    if (context.signal?.aborted) break;
    const again = await targetRequest(target, 'GET', context, {
      ...transportHeaders({ sessionId, protocolVersion: ref.protocolVersion }, 'text/event-stream', false),
      'last-event-id': outcome.lastEventId,
    });
    if ('failure' in again) return { kind: 'failed', reason: again.failure };
    if (again.statusCode !== 200 || mediaType(again.headers) !== 'text/event-stream') {
      discard(again.body);
      return { kind: 'failed', reason: `the stream could not be resumed (HTTP ${again.statusCode})` };
    }
    const next = await readUntilResponse(again, id, onMessage);
    outcome = next.kind === 'broken' ? { ...next, lastEventId: next.lastEventId ?? outcome.lastEventId } : next;
  }
  if (outcome.kind === 'response') return { kind: 'response', message: outcome.message, sessionId };
  return { kind: 'failed', reason: outcome.reason };
}

type StreamOutcome =
  | { kind: 'response'; message: JsonRpcResponse }
  | { kind: 'broken'; reason: string; lastEventId: string | undefined; retryMs: number | undefined };

/**
 * Reads an SSE response until the answer to `id` arrives; the rest of the stream is drained in
 * the background (to its end or the deadline) so the connection can be reused.
 */
function readUntilResponse(
  response: Dispatcher.ResponseData,
  id: JsonRpcId,
  onMessage: OnTargetMessage,
): Promise<StreamOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    let lastEventId: string | undefined;
    let retryMs: number | undefined;
    const read = async () => {
      try {
        for await (const event of targetEvents(response.body)) {
          if (event.id !== undefined) lastEventId = event.id;
          if (event.retryMs !== undefined) retryMs = event.retryMs;
          if (event.data === undefined || event.data === '' || (event.event && event.event !== 'message')) continue;
          const message = parseMessage(event.data);
          if ('failure' in message) continue; // one bad event does not end the exchange
          if (!settled && isResponse(message) && message.id === id) {
            settled = true;
            resolve({ kind: 'response', message });
          } else if (!isResponse(message) || message.id !== id) {
            onMessage(message);
          }
        }
        if (!settled) resolve({ kind: 'broken', reason: 'the stream ended before the answer', lastEventId, retryMs });
      } catch (error) {
        response.body.destroy();
        if (!settled) resolve({ kind: 'broken', reason: failureReason(error), lastEventId, retryMs });
      }
      settled = true;
    };
    void read();
  });
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
  try {
    for await (const event of targetEvents(response.body)) {
      if (event.id !== undefined) last = event.id;
      if (event.retryMs !== undefined) retryMs = event.retryMs;
      if (event.data === undefined || event.data === '' || (event.event && event.event !== 'message')) continue;
      const message = parseMessage(event.data);
      if (!('failure' in message)) onMessage(message);
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
