// HTTP to MCP targets, shared by both upstream transports: the headers a target gets (the
// client's, less what belongs to the MCP transport, plus the target's backend auth), one request
// through the target's pool with a deadline, a bounded body read, and a bounded SSE reader that
// yields JSON-RPC messages with their event ids.
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { SseReader } from '../ai/formats/sse-reader.ts';
import { BodyTooLargeError, readBody } from '../proxy/body.ts';
import { isInvalid, type JsonRpcMessage, toMessage } from './jsonrpc.ts';
import type { McpTarget } from './targets.ts';

/** Largest JSON-RPC message gw reads from a target (a JSON body or one SSE event). */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** Deadline of gw's own steps with a target: initialize, initialized, DELETE, opening a stream. */
export const SETUP_TIMEOUT_MS = 30_000;
/** Deadline of a forwarded request when neither the route nor the target's policy sets one. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 300_000;

/** Client headers a target never gets from the client: the MCP transport's own, and the body's framing. */
const TRANSPORT_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'content-encoding',
  'accept',
  'accept-encoding',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
  'expect',
]);

/** The client's request headers as targets get them (agentgateway passes them on too; docs/mcp.md). */
export function clientHeadersForTargets(headers: Record<string, string | string[]>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name of Object.keys(headers)) if (!TRANSPORT_HEADERS.has(name)) out[name] = headers[name]!;
  return out;
}

/** What a call to a target carries besides the message: the client's headers and a deadline. */
export interface UpstreamContext {
  /** Client headers to pass on (clientHeadersForTargets). */
  headers: Record<string, string | string[]>;
  /** The client's own headers, for backend auth that passes a client credential on. */
  incoming: IncomingHttpHeaders;
  /** Deadline of the whole exchange; for a long-lived stream, of its response headers only. */
  timeoutMs: number;
  /** Ends the call early (the session closed, gw shutting down). */
  signal?: AbortSignal;
  /** A long-lived stream (a GET stream, an SSE connection): no deadline once the headers are in. */
  streaming?: boolean;
}

export type UpstreamFailure = { failure: string };

/** One HTTP exchange with a target: the response, or why there is none ('timeout', 'connect'...). */
export async function targetRequest(
  target: McpTarget,
  method: 'GET' | 'POST' | 'DELETE',
  context: UpstreamContext,
  transportHeaders: Record<string, string>,
  body?: string,
  path: string = target.path,
): Promise<Dispatcher.ResponseData | UpstreamFailure> {
  const headers: Record<string, string | string[]> = { ...context.headers, ...transportHeaders };
  let requestPath = path;
  if (target.auth) {
    const at = path.indexOf('?');
    const query = new URLSearchParams(at === -1 ? '' : path.slice(at + 1));
    target.auth.apply({ headers, query }, { headers: context.incoming });
    const search = query.toString();
    requestPath = (at === -1 ? path : path.slice(0, at)) + (search ? `?${search}` : '');
  }
  const deadline = context.streaming ? undefined : AbortSignal.timeout(context.timeoutMs);
  const signal =
    deadline && context.signal ? AbortSignal.any([deadline, context.signal]) : (deadline ?? context.signal);
  try {
    return await target.pool().request({
      method,
      path: requestPath,
      headers,
      body,
      signal,
      headersTimeout: context.timeoutMs,
      bodyTimeout: context.streaming ? 0 : context.timeoutMs,
    });
  } catch (error) {
    return { failure: failureReason(error, deadline) };
  }
}

/** A short reason for a failed exchange: never the target's own text, which may hold anything. */
export function failureReason(error: unknown, deadline?: AbortSignal): string {
  if (deadline?.aborted || (error as Error).name === 'TimeoutError') return 'timeout';
  const code = (error as { code?: string }).code ?? '';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return 'timeout';
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ECONNREFUSED' || code === 'ENOTFOUND') return 'connect';
  if ((error as Error).name === 'AbortError') return 'aborted';
  if (error instanceof BodyTooLargeError) return `a message over ${MAX_MESSAGE_BYTES} bytes`;
  return 'reset';
}

export function headerValue(headers: Dispatcher.ResponseData['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function mediaType(headers: Dispatcher.ResponseData['headers']): string {
  return (headerValue(headers, 'content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

/** Drops a body gw does not read, so the connection can be reused (or closed when it is long). */
export function discard(body: Readable): void {
  body.on('error', () => undefined);
  body.resume();
}

/** A JSON body as one JSON-RPC message (bounded); a failure reason otherwise. */
export async function readJsonMessage(body: Readable): Promise<JsonRpcMessage | UpstreamFailure> {
  let text: string;
  try {
    text = (await readBody(body, MAX_MESSAGE_BYTES)).toString('utf8');
  } catch (error) {
    discard(body);
    return { failure: failureReason(error) };
  }
  return parseMessage(text);
}

export function parseMessage(text: string): JsonRpcMessage | UpstreamFailure {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { failure: 'a body that is not JSON' };
  }
  const message = toMessage(value);
  return isInvalid(message) ? { failure: `an invalid JSON-RPC message (${message.invalid})` } : message;
}

/** One SSE event of a target, with the fields a reconnect needs. */
export interface TargetEvent {
  event: string | undefined;
  data: string | undefined;
  id: string | undefined;
  retryMs: number | undefined;
}

/**
 * The events of an SSE body as they arrive. Ends when the body ends; throws when it breaks or an
 * event grows past MAX_MESSAGE_BYTES.
 */
export async function* targetEvents(body: Readable): AsyncGenerator<TargetEvent> {
  const reader = new SseReader(MAX_MESSAGE_BYTES);
  for await (const chunk of body as AsyncIterable<Buffer>) {
    for (const block of reader.push(chunk)) yield eventOf(block.raw, block.event, block.data);
    if (reader.overflowed) throw new BodyTooLargeError(MAX_MESSAGE_BYTES);
  }
  for (const block of reader.finish()) if (!block.unterminated) yield eventOf(block.raw, block.event, block.data);
}

/** The id and retry fields of a block, which the shared reader leaves in the raw text. */
function eventOf(raw: string, event: string | undefined, data: string | undefined): TargetEvent {
  let id: string | undefined;
  let retryMs: number | undefined;
  for (const line of raw.split(/\r\n|\r|\n/)) {
    if (line.startsWith('id:')) {
      const value = line.slice(line.charCodeAt(3) === 32 ? 4 : 3);
      if (!value.includes('\0')) id = value;
    } else if (line.startsWith('retry:')) {
      const value = line.slice(line.charCodeAt(6) === 32 ? 7 : 6);
      if (/^\d{1,9}$/.test(value)) retryMs = Number(value);
    }
  }
  return { event, data, id, retryMs };
}
