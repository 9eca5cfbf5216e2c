// HTTP to MCP targets, shared by both upstream transports: the headers a target gets (the
// client's, less what belongs to the MCP transport, then the target's own request policies and
// its backend auth), one request
// through the target's pool with a deadline, a bounded body read, and a bounded SSE reader that
// yields JSON-RPC messages with their event ids.
//
// Deadlines cost little per request: waiting for a target's response headers is bounded by
// undici's headersTimeout and reading a body by its bodyTimeout (undici's coarse timers), and
// where a whole exchange needs a total deadline (a POST's answer, which may come on a long SSE
// stream) one timer per exchange (ExchangeDeadline). No AbortSignal is made per request: the
// session's own signal stops its requests when it closes.
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { type SseBlock, SseReader } from '../ai/formats/sse-reader.ts';
import { type AuthIncoming, finishBackendAuth, settled } from '../auth/backend/index.ts';
import type { PolicyExchange } from '../policies/exchange.ts';
import { BodyTooLargeError, readBody } from '../proxy/body.ts';
import type { CelVariables } from '../telemetry/cel-context.ts';
import { isInvalid, type JsonRpcMessage, toMessage } from './jsonrpc.ts';
import { targetSubrequest } from './target-policies.ts';
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
  /** The client request's CEL variables, for backend auth expressions. */
  variables?: () => CelVariables;
  /** The client request's policy state, which a target's own request policies fork (decision 0045). */
  exchange?: PolicyExchange | undefined;
  /** Deadline of the whole exchange; for a long-lived stream, of its response headers only. */
  timeoutMs: number;
  /** Ends the call early (the session closed, gw shutting down). */
  signal?: AbortSignal;
  /** A long-lived stream (a GET stream, an SSE connection): no deadline once the headers are in. */
  streaming?: boolean;
}

export type UpstreamFailure = { failure: string };

/**
 * One HTTP exchange with a target: the response, or why there is none ('timeout', 'connect'...).
 * The response headers must come within `headersTimeoutMs` (the context's deadline unless the
 * exchange has less left); the body may pause that long between chunks, unless it is a stream.
 */
export async function targetRequest(
  target: McpTarget,
  method: 'GET' | 'POST' | 'DELETE',
  context: UpstreamContext,
  transportHeaders: Record<string, string>,
  body?: string,
  path: string = target.path,
  headersTimeoutMs: number = context.timeoutMs,
): Promise<Dispatcher.ResponseData | UpstreamFailure> {
  let headers: Record<string, string | string[]> = { ...context.headers, ...transportHeaders };
  let requestPath = path;
  let requestMethod: string = method;
  let requestBody: string | Buffer | undefined = body;
  if (target.requestPolicies) {
    const own = await targetSubrequest(target.requestPolicies, context.exchange, { method, path, headers, body });
    if ('failure' in own) return own;
    ({ method: requestMethod, path: requestPath, headers, body: requestBody } = own);
  }
  const auth = target.auth;
  if (auth) {
    const at = requestPath.indexOf('?');
    const query = new URLSearchParams(at === -1 ? '' : requestPath.slice(at + 1));
    const incoming: AuthIncoming = { headers: context.incoming };
    if (context.variables) incoming.variables = context.variables;
    const pending = auth.apply({ headers, query }, incoming);
    // A credential being fetched writes the query when it comes.
    if (pending !== undefined) await settled(pending);
    const search = query.toString();
    requestPath = (at === -1 ? requestPath : requestPath.slice(0, at)) + (search ? `?${search}` : '');
    const finishing = finishBackendAuth(
      pending,
      auth,
      () => ({ method: requestMethod, origin: target.origin, path: requestPath, headers, body: requestBody }),
      incoming,
    );
    const failure = finishing && (await finishing);
    if (failure !== undefined) return { failure: failure.message };
  }
  try {
    return await target.pool().request({
      method: requestMethod as Dispatcher.HttpMethod,
      path: requestPath,
      headers,
      body: requestBody,
      signal: context.signal,
      headersTimeout: headersTimeoutMs,
      bodyTimeout: context.streaming ? 0 : context.timeoutMs,
    });
  } catch (error) {
    return { failure: failureReason(error) };
  }
}

/**
 * What a target may still send on a POST's stream after the answer (SHOULD close it then): read
 * so that the connection can be reused, but no more than this many bytes of data or milliseconds.
 */
export const LINGER_BYTES = 64 * 1024;
const LINGER_MS = 1000;

/** What an exchange's body is destroyed with when its deadline passes (failureReason: 'timeout'). */
class DeadlineExceeded extends Error {
  override readonly name = 'TimeoutError';
}

/**
 * The total deadline of one exchange with a target (a POST and its answer, resumed streams
 * included): what is left of it bounds the wait for response headers (targetRequest), and one
 * timer, armed when a body is first read, destroys the body being read when time is up. The
 * timer goes once the exchange's last body is read (done).
 */
export class ExchangeDeadline {
  readonly #at: number;
  #timer: NodeJS.Timeout | undefined;
  #body: Readable | undefined;
  #expired = false;
  /**
   * The answer came on a stream that is still being read (drained so that the connection can be
   * reused): its reader ends the deadline when the stream ends, not the exchange.
   */
  draining = false;

  constructor(ms: number) {
    this.#at = performance.now() + ms;
  }

  get expired(): boolean {
    return this.#expired;
  }

  /** Milliseconds left (at least 1: undici takes 0 for "no timeout"). */
  remaining(): number {
    return Math.max(1, Math.ceil(this.#at - performance.now()));
  }

  /** `body` is the one being read now: destroyed if the deadline passes before done(). */
  watch(body: Readable): void {
    this.#body = body;
    if (this.#timer === undefined && !this.#expired) this.#timer = setTimeout(expire, this.remaining(), this);
  }

  /**
   * The answer is in: the rest of the stream being drained may take LINGER_MS more at most (a
   * target that streams on after its answer does not keep gw reading to the deadline).
   */
  linger(): void {
    if (this.#expired || this.remaining() <= LINGER_MS) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = setTimeout(expire, LINGER_MS, this);
  }

  /** The exchange's bodies are read (or given up): the timer goes. */
  done(): void {
    this.#body = undefined;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** The timer fired: the body being read is destroyed, which ends its reader with 'timeout'. */
  expire(): void {
    this.#expired = true;
    this.#timer = undefined;
    this.#body?.destroy(new DeadlineExceeded('the exchange with the target ran out of time'));
  }
}

/** The timer callback of every ExchangeDeadline (none made per deadline). */
function expire(deadline: ExchangeDeadline): void {
  deadline.expire();
}

/** A short reason for a failed exchange: never the target's own text, which may hold anything. */
export function failureReason(error: unknown): string {
  if ((error as Error).name === 'TimeoutError') return 'timeout';
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

/**
 * Events whose data is not a JSON-RPC message a target may send on one stream. Past them the
 * target speaks something else: its stream is given up (and the request on it fails) rather than
 * read on to its deadline.
 */
export const MAX_UNREADABLE_EVENTS = 16;

/** The messages of one target stream, counting the events that carry data gw cannot read. */
export class StreamMessages {
  #unreadable = 0;

  /** Whether the stream has sent more than MAX_UNREADABLE_EVENTS unreadable events. */
  get broken(): boolean {
    return this.#unreadable > MAX_UNREADABLE_EVENTS;
  }

  /** The message an event carries; undefined for one without (a comment, another event type) or unreadable. */
  of(event: { event?: string | undefined; data?: string | undefined }): JsonRpcMessage | undefined {
    if (event.data === undefined || event.data === '' || (event.event && event.event !== 'message')) return undefined;
    const message = parseMessage(event.data);
    if (!('failure' in message)) return message;
    this.#unreadable++;
    return undefined;
  }
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
 * event grows past MAX_MESSAGE_BYTES. For long-lived streams; a POST's answer stream is read with
 * readEvents, which costs less per event.
 */
export async function* targetEvents(body: Readable): AsyncGenerator<TargetEvent> {
  const reader = new SseReader(MAX_MESSAGE_BYTES);
  for await (const chunk of body as AsyncIterable<Buffer>) {
    for (const block of reader.push(chunk)) yield eventOf(block.raw, block.event, block.data);
    if (reader.overflowed) throw new BodyTooLargeError(MAX_MESSAGE_BYTES);
  }
  for (const block of reader.finish()) if (!block.unterminated) yield eventOf(block.raw, block.event, block.data);
}

/**
 * The events of an SSE body, handed to `onEvent` as the chunks arrive (no async iteration: no
 * promise per chunk and event). `onEnd` is told once: without an error when the body ended, with
 * one when it broke, was destroyed, grew an event past MAX_MESSAGE_BYTES, or onEvent threw.
 */
export function readEvents(
  body: Readable,
  onEvent: (event: TargetEvent) => void,
  onEnd: (error: unknown) => void,
): void {
  const reader = new SseReader(MAX_MESSAGE_BYTES);
  let ended = false;
  const end = (error: unknown) => {
    if (ended) return;
    ended = true;
    body.off('data', onData);
    onEnd(error);
  };
  const deliver = (blocks: readonly SseBlock[], final: boolean): boolean => {
    for (const block of blocks) {
      if (final && block.unterminated) continue;
      try {
        onEvent(eventOf(block.raw, block.event, block.data));
      } catch (error) {
        body.destroy();
        end(error);
        return false;
      }
      if (ended) return false;
    }
    return true;
  };
  const onData = (chunk: Buffer) => {
    if (!deliver(reader.push(chunk), false)) return;
    if (reader.overflowed) {
      const error = new BodyTooLargeError(MAX_MESSAGE_BYTES);
      body.destroy(error);
      end(error);
    }
  };
  body.on('data', onData);
  body.once('end', () => {
    if (deliver(reader.finish(), true)) end(undefined);
  });
  body.once('error', end);
  // Destroyed without an error (the connection reset): the stream ended early.
  body.once('close', () => {
    if (!ended) end(new Error('the stream closed'));
  });
}

/** The id and retry fields of a block, which the shared reader leaves in the raw text. */
function eventOf(raw: string, event: string | undefined, data: string | undefined): TargetEvent {
  let id: string | undefined;
  let retryMs: number | undefined;
  // Line by line without splitting: a long data line costs one search for its end. Linear: the
  // next CR and LF are searched for again only once passed.
  let nextCR = raw.indexOf('\r');
  let nextLF = raw.indexOf('\n');
  for (let start = 0; start < raw.length; ) {
    if (nextCR !== -1 && nextCR < start) nextCR = raw.indexOf('\r', start);
    if (nextLF !== -1 && nextLF < start) nextLF = raw.indexOf('\n', start);
    const end =
      nextLF === -1 ? (nextCR === -1 ? raw.length : nextCR) : nextCR === -1 || nextLF < nextCR ? nextLF : nextCR;
    if (raw.startsWith('id:', start)) {
      const value = raw.slice(start + (raw.charCodeAt(start + 3) === 32 ? 4 : 3), end);
      if (!value.includes('\0')) id = value;
    } else if (raw.startsWith('retry:', start)) {
      const value = raw.slice(start + (raw.charCodeAt(start + 6) === 32 ? 7 : 6), end);
      if (/^\d{1,9}$/.test(value)) retryMs = Number(value);
    }
    start = end + (raw.charCodeAt(end) === 13 && raw.charCodeAt(end + 1) === 10 ? 2 : 1);
  }
  return { event, data, id, retryMs };
}
