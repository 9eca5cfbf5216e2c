// The HTTP plumbing both provider mocks share: listening, request recording, scripted failures,
// and writing JSON or server-sent-event answers the way the real APIs do. A provider "dialect"
// supplies only what differs: its error format, header checks, and answers.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { type RecordedRequest, RequestLog } from './request-log.ts';

export type { RecordedRequest } from './request-log.ts';

/** An error the provider reports; the dialect fills the fields left out with its usual values for the status. */
export interface ProviderError {
  status: number;
  message?: string;
  /** OpenAI `error.type` / Anthropic `error.type`. */
  type?: string;
  /** OpenAI only. */
  code?: string | null;
  /** OpenAI only. */
  param?: string | null;
  /** Extra response headers, e.g. `retry-after`. */
  headers?: Record<string, string>;
}

/** What a scripted request gets instead of the normal answer. */
export type ScriptedReply =
  | ({ kind: 'error' } & ProviderError)
  /** The connection is reset (TCP RST) before any response byte. */
  | { kind: 'reset' }
  /** Status 200, a JSON content type, and a body that is not JSON. */
  | { kind: 'garbage'; bytes?: string | Uint8Array; contentType?: string }
  /** A fixed body; objects and arrays are sent as JSON. */
  | {
      kind: 'body';
      status?: number;
      body: string | Uint8Array | object;
      contentType?: string;
      headers?: Record<string, string>;
    };

/** One scripted request. Everything is optional: `{}` is the normal answer. */
export interface ScriptStep {
  /** Wait this long before sending anything (headers included). */
  delayMs?: number;
  /** Answer with this instead of the normal answer. */
  reply?: ScriptedReply;
  /** Normal streamed answers only: wait this long between events. */
  chunkDelayMs?: number;
  /**
   * Normal answers only: reset the connection after this many stream events have been sent
   * (0 = right after the headers). A JSON answer is cut after its headers and half its body.
   */
  resetAfterEvents?: number;
}

export interface SseEvent {
  /** The `event:` line; absent for data-only streams (OpenAI chat completions). */
  event?: string;
  /** The `data:` payload, already serialized. */
  data: string;
}

export type Reply =
  | { kind: 'json'; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'stream'; events: SseEvent[]; headers?: Record<string, string> };

export type ParsedBody = { json: true; value: unknown } | { json: false };

/** What a provider's answer functions get from the mock. */
export interface AnswerContext {
  /** A new id unique within this mock, e.g. id("chatcmpl-") → "chatcmpl-mock000001". */
  id(prefix: string): string;
  /** An error reply in the provider's format. */
  error(error: ProviderError): Reply;
  /** The provider's "model not found" reply when the mock serves a fixed model list without `model`. */
  unknownModel(model: string): Reply | undefined;
}

/** What makes a mock speak one provider's API. */
export interface ProviderDialect {
  /** Headers sent with every answer, e.g. a request id. */
  replyHeaders(): Record<string, string>;
  /** An error in the provider's wire format. */
  errorReply(error: ProviderError): Reply;
  /** Authentication and required-header checks, run before routing; undefined lets the request through. */
  checkHeaders(headers: IncomingHttpHeaders, requiredKey: string | undefined): ProviderError | undefined;
  /** The deterministic answer to a request (errors included). */
  answer(request: RecordedRequest, body: ParsedBody): Reply;
  /** The precomputed answer of fixed mode and the one request line it answers. */
  fixedAnswer(): { method: string; path: string; body: Uint8Array };
}

export interface MockServerOptions {
  /** Require exactly this API key; any other key (or none) gets the provider's 401. */
  apiKey?: string;
  /**
   * Benchmark mode: the fixed-answer request is answered with one precomputed body without reading
   * or recording the request body; header checks run only when `apiKey` is set.
   */
  fixed?: boolean;
  /** How many requests `requests` keeps (the most recent). Default 1000. */
  maxRecordedRequests?: number;
  /** The loopback address to listen on (127.0.0.2... stand for pods). Default 127.0.0.1. */
  host?: string;
  /** The port to listen on. Default: one the OS picks. */
  port?: number;
}

export interface MockServer {
  /** `http://<host>:<port>` (host 127.0.0.1 unless the options name another) */
  readonly url: string;
  readonly port: number;
  /** The last requests received, oldest first (a copy). */
  readonly requests: RecordedRequest[];
  /** Queue `step` for the next `times` requests to `path` ("*" matches any path without a queue of its own). */
  script(path: string, step: ScriptStep, times?: number): void;
  /** Forget recorded requests and queued scripts. */
  clear(): void;
  /** Stop listening and end every connection, keep-alive ones included. */
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 16 * 1024 * 1024;
const MAX_QUEUED_STEPS_PER_PATH = 10_000;
const DEFAULT_GARBAGE = '<html>\u0000\u00ff not json {"choices": [';

export async function startMockServer(dialect: ProviderDialect, options: MockServerOptions = {}): Promise<MockServer> {
  const log = new RequestLog(options.maxRecordedRequests ?? 1000);
  const scripts = new Map<string, ScriptStep[]>();
  const closing = new AbortController();
  const fixed = options.fixed ? dialect.fixedAnswer() : undefined;
  const fixedHeaders = fixed
    ? { 'content-type': 'application/json', 'content-length': String(fixed.body.byteLength) }
    : undefined;

  const takeStep = (path: string): ScriptStep | undefined => {
    if (scripts.size === 0) return undefined;
    const queuePath = scripts.has(path) ? path : scripts.has('*') ? '*' : undefined;
    if (queuePath === undefined) return undefined;
    const queue = scripts.get(queuePath)!;
    const step = queue.shift();
    if (queue.length === 0) scripts.delete(queuePath);
    return step;
  };

  const server = createServer((req, res) => {
    res.on('error', () => {});
    if (fixed && req.method === fixed.method && req.url === fixed.path && scripts.size === 0) {
      // The benchmark path: no body read (node:http discards it), no allocation beyond the record.
      // With scripts queued, the request takes the full path below and still gets the fixed body.
      log.add({ method: fixed.method, path: fixed.path, url: fixed.path, headers: req.headers, body: undefined });
      const refusal = options.apiKey === undefined ? undefined : dialect.checkHeaders(req.headers, options.apiKey);
      if (refusal) {
        writeJson(res, dialect.errorReply(refusal), dialect);
        return;
      }
      res.writeHead(200, fixedHeaders);
      res.end(fixed.body);
      return;
    }
    handle(req, res).catch(() => {
      // Aborted by close() or by the client; anything else is a bug in a dialect: say so as a 500.
      if (closing.signal.aborted || res.destroyed) {
        res.destroy();
      } else if (!res.headersSent) {
        writeJson(res, dialect.errorReply({ status: 500 }), dialect);
      } else {
        res.destroy();
      }
    });
  });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = req.url ?? '/';
    const queryAt = url.indexOf('?');
    const path = queryAt === -1 ? url : url.slice(0, queryAt);
    const { text, tooLarge } = await readBody(req);
    const parsed = parseJson(text);
    const request: RecordedRequest = {
      method: req.method ?? 'GET',
      path,
      url,
      headers: req.headers,
      body: parsed.json ? parsed.value : text === '' ? undefined : text,
    };
    log.add(request);

    if (tooLarge) {
      writeJson(res, dialect.errorReply({ status: 413, message: 'Request body too large.' }), dialect);
      return;
    }
    const fixedRequest = fixed !== undefined && request.method === fixed.method && url === fixed.path;
    // Fixed mode checks headers only when a key is required, on this path as on the fast one.
    const refusal =
      fixedRequest && options.apiKey === undefined ? undefined : dialect.checkHeaders(req.headers, options.apiKey);
    if (refusal) {
      writeJson(res, dialect.errorReply(refusal), dialect);
      return;
    }

    const step = takeStep(path);
    const signal = AbortSignal.any([closing.signal, closedSignal(res)]);
    if (step?.delayMs) await sleep(step.delayMs, undefined, { signal });

    const scripted = step?.reply;
    if (scripted) {
      switch (scripted.kind) {
        case 'reset':
          req.socket.resetAndDestroy();
          return;
        case 'garbage':
          writeRaw(res, 200, scripted.contentType ?? 'application/json', scripted.bytes ?? DEFAULT_GARBAGE, dialect);
          return;
        case 'body': {
          const isBytes = typeof scripted.body === 'string' || scripted.body instanceof Uint8Array;
          const body = isBytes ? (scripted.body as string | Uint8Array) : JSON.stringify(scripted.body);
          const contentType = scripted.contentType ?? (isBytes ? 'text/plain; charset=utf-8' : 'application/json');
          writeRaw(res, scripted.status ?? 200, contentType, body, dialect, scripted.headers);
          return;
        }
        case 'error': {
          const { kind: _, ...error } = scripted;
          writeJson(res, dialect.errorReply(error), dialect);
          return;
        }
      }
    }

    if (fixedRequest) {
      res.writeHead(200, fixedHeaders);
      res.end(fixed.body);
      return;
    }
    const reply = dialect.answer(request, parsed);
    if (reply.kind === 'json') {
      if (step?.resetAfterEvents !== undefined) await writeJsonThenReset(res, reply, dialect);
      else writeJson(res, reply, dialect);
      return;
    }
    await writeStream(res, reply, dialect, step, signal);
  };

  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    get requests() {
      return log.list();
    },
    script(path, step, times = 1) {
      if (!Number.isInteger(times) || times < 1) throw new RangeError('times must be a positive integer');
      const queue = scripts.get(path) ?? [];
      if (queue.length + times > MAX_QUEUED_STEPS_PER_PATH) {
        throw new RangeError(`at most ${MAX_QUEUED_STEPS_PER_PATH} scripted steps per path`);
      }
      for (let i = 0; i < times; i++) queue.push(step);
      scripts.set(path, queue);
    },
    clear() {
      log.clear();
      scripts.clear();
    },
    close() {
      closing.abort();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/**
 * The JSON of `build(filler)` grown to exactly `bytes` bytes by lengthening an ASCII filler string
 * (fixed-mode answers have a known size). The filler repeats `sentence`.
 */
export function jsonOfSize(build: (filler: string) => unknown, bytes: number, sentence: string): Uint8Array {
  let fillerLength = 0;
  for (let attempt = 0; attempt < 8; attempt++) {
    const filler = sentence.repeat(Math.ceil(fillerLength / sentence.length) + 1).slice(0, fillerLength);
    const json = Buffer.from(JSON.stringify(build(filler)));
    if (json.byteLength === bytes) return json;
    fillerLength += bytes - json.byteLength;
    if (fillerLength < 0) throw new RangeError(`the answer is larger than ${bytes} bytes without filler`);
  }
  throw new Error(`could not size the answer to ${bytes} bytes`);
}

/** Reads the whole body; past the limit the rest is drained and dropped so memory stays bounded. */
async function readBody(req: IncomingMessage): Promise<{ text: string; tooLarge: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) tooLarge = true;
    if (!tooLarge) chunks.push(chunk);
  }
  return { text: tooLarge ? '' : Buffer.concat(chunks).toString('utf8'), tooLarge };
}

function parseJson(text: string): ParsedBody {
  if (text === '') return { json: false };
  try {
    return { json: true, value: JSON.parse(text) };
  } catch {
    return { json: false };
  }
}

/** The key of an `Authorization: Bearer <key>` header; '' without one. */
export function bearerKey(headers: IncomingHttpHeaders): string {
  const authorization = headers.authorization ?? '';
  return /^bearer\s+/i.test(authorization) ? authorization.replace(/^bearer\s+/i, '').trim() : '';
}

/** Aborts when the response is finished or its connection is gone, so delays stop for vanished clients. */
function closedSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => controller.abort());
  return controller.signal;
}

function headersFor(reply: Reply, dialect: ProviderDialect, contentType: string): Record<string, string> {
  return { ...dialect.replyHeaders(), 'content-type': contentType, ...reply.headers };
}

function writeJson(res: ServerResponse, reply: Reply, dialect: ProviderDialect): void {
  if (reply.kind !== 'json') throw new Error('writeJson needs a JSON reply');
  const body = Buffer.from(JSON.stringify(reply.body));
  res.writeHead(reply.status, {
    ...headersFor(reply, dialect, 'application/json'),
    'content-length': String(body.byteLength),
  });
  res.end(body);
}

async function writeJsonThenReset(res: ServerResponse, reply: Reply, dialect: ProviderDialect): Promise<void> {
  if (reply.kind !== 'json') throw new Error('writeJsonThenReset needs a JSON reply');
  const body = Buffer.from(JSON.stringify(reply.body));
  res.writeHead(reply.status, {
    ...headersFor(reply, dialect, 'application/json'),
    'content-length': String(body.byteLength),
  });
  await write(res, body.subarray(0, Math.floor(body.byteLength / 2)));
  res.socket?.resetAndDestroy();
}

function writeRaw(
  res: ServerResponse,
  status: number,
  contentType: string,
  body: string | Uint8Array,
  dialect: ProviderDialect,
  headers?: Record<string, string>,
): void {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  res.writeHead(status, {
    ...dialect.replyHeaders(),
    'content-type': contentType,
    ...headers,
    'content-length': String(bytes.byteLength),
  });
  res.end(bytes);
}

async function writeStream(
  res: ServerResponse,
  reply: Reply,
  dialect: ProviderDialect,
  step: ScriptStep | undefined,
  signal: AbortSignal,
): Promise<void> {
  if (reply.kind !== 'stream') throw new Error('writeStream needs a stream reply');
  res.writeHead(200, {
    ...headersFor(reply, dialect, 'text/event-stream; charset=utf-8'),
    'cache-control': 'no-cache',
  });
  res.flushHeaders();
  const resetAfter = step?.resetAfterEvents;
  const { events } = reply;
  for (let i = 0; i < events.length; i++) {
    if (resetAfter === i) break;
    if (res.destroyed) return;
    // Each event is its own write, so each leaves as its own chunk, as the real APIs flush them.
    await write(res, frame(events[i]));
    if (step?.chunkDelayMs && i < events.length - 1) await sleep(step.chunkDelayMs, undefined, { signal });
  }
  if (resetAfter !== undefined) {
    res.socket?.resetAndDestroy();
    return;
  }
  res.end();
}

function frame(event: SseEvent): string {
  return event.event === undefined ? `data: ${event.data}\n\n` : `event: ${event.event}\ndata: ${event.data}\n\n`;
}

function write(res: ServerResponse, chunk: string | Uint8Array): Promise<void> {
  return new Promise((resolve) => {
    res.write(chunk, () => resolve());
  });
}
