// gw's demo LLM: a small OpenAI-compatible server with no model behind it, started by
// `gw run --demo-llm` so that the quickstart (examples/quickstart.yaml) shows a round trip
// through gw with no API key and no external service. It answers Chat Completions (streamed or
// not) by echoing the last user message, says in every answer that it is a demo, and lists one
// model. It is not a test double of OpenAI: it serves what a first request needs, and answers
// anything else with an OpenAI-style error that says what it serves (docs/guide/getting-started.md).

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

/** The one model the demo lists; a request may name any model, which the answer repeats. */
export const DEMO_MODEL = 'demo-echo';

/** Where the quickstart expects the demo LLM (examples/quickstart.yaml's GwBackend demo-llm). */
export const DEMO_LLM_DEFAULT_PORT = 8081;

/** Every answer starts with this, so that nobody mistakes the echo for a model's reply. */
export const DEMO_ANSWER_PREFIX = '[gw demo LLM: an echo, not a model]';

/** A request body larger than this is refused: the demo has no use for big prompts. */
const MAX_BODY_BYTES = 1024 * 1024;

/** The longest a client may take to send its request. */
const REQUEST_TIMEOUT_MS = 30_000;

export interface DemoLlm {
  readonly address: string;
  readonly port: number;
  /** The base URL an OpenAI client (or a GwBackend) uses: http://ADDRESS:PORT/v1. */
  readonly baseUrl: string;
  close(): Promise<void>;
}

/** Starts the demo LLM on address:port (port 0 picks a free one); rejects when it cannot listen. */
export async function startDemoLlm(options: { port: number; address?: string }): Promise<DemoLlm> {
  const address = options.address ?? '127.0.0.1';
  const server = createServer(
    { requestTimeout: REQUEST_TIMEOUT_MS, headersTimeout: REQUEST_TIMEOUT_MS },
    (req, res) => {
      handle(req, res).catch(() => {
        if (!res.headersSent) sendError(res, 500, 'server_error', 'The demo LLM failed to answer.');
        else res.destroy();
      });
    },
  );
  await listen(server, options.port, address);
  const port = (server.address() as { port: number }).port;
  return {
    address,
    port,
    baseUrl: `http://${address}:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function listen(server: Server, port: number, address: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const why = error.code === 'EADDRINUSE' ? 'is in use by another process' : `cannot be bound (${error.code})`;
      reject(new Error(`the demo LLM cannot listen: port ${port} on ${address} ${why}`));
    });
    server.listen(port, address, () => resolve());
  });
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://demo').pathname.replace(/\/+$/, '');
  if (path === '/v1/models' || path === '/models') {
    if (req.method !== 'GET') return sendError(res, 405, 'invalid_request_error', 'Use GET to list the models.');
    return sendJson(res, 200, {
      object: 'list',
      data: [{ id: DEMO_MODEL, object: 'model', created: 0, owned_by: 'gw-demo' }],
    });
  }
  if (path === '/v1/chat/completions' || path === '/chat/completions') {
    if (req.method !== 'POST') return sendError(res, 405, 'invalid_request_error', 'Use POST for chat completions.');
    const body = await readJson(req, res);
    if (body === undefined) return;
    return answerChat(body, res);
  }
  req.resume();
  sendError(
    res,
    404,
    'invalid_request_error',
    `gw's demo LLM serves only POST /v1/chat/completions and GET /v1/models, not ${req.method} ${path || '/'}; point gw at a real provider for the rest (docs/guide/providers.md).`,
    'not_found',
  );
}

/** The request's JSON object, or undefined once an error has been answered. */
async function readJson(req: IncomingMessage, res: ServerResponse): Promise<Record<string, unknown> | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      // The rest is read and dropped (within the request timeout), so that the client reads the answer.
      res.setHeader('connection', 'close');
      sendError(
        res,
        413,
        'invalid_request_error',
        `The demo LLM takes request bodies of up to ${MAX_BODY_BYTES} bytes.`,
      );
      req.resume();
      return undefined;
    }
    chunks.push(chunk);
  }
  let body: unknown;
  try {
    body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    sendError(res, 400, 'invalid_request_error', 'The request body is not valid JSON.');
    return undefined;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    sendError(res, 400, 'invalid_request_error', 'The request body must be a JSON object.');
    return undefined;
  }
  return body as Record<string, unknown>;
}

function answerChat(body: Record<string, unknown>, res: ServerResponse): void {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) {
    sendError(res, 400, 'invalid_request_error', "'messages' must be a non-empty array.", null, 'messages');
    return;
  }
  const prompt = lastUserText(messages);
  const reply =
    prompt === undefined
      ? `${DEMO_ANSWER_PREFIX} The conversation has no user message with text to echo.`
      : `${DEMO_ANSWER_PREFIX} You said: ${prompt}`;
  const model = typeof body.model === 'string' && body.model !== '' ? body.model : DEMO_MODEL;
  const id = `chatcmpl-demo-${randomUUID()}`;
  const created = Math.floor(Date.now() / 1000);
  const usage = {
    prompt_tokens: wordCount(messages.map(messageText).join(' ')),
    completion_tokens: wordCount(reply),
    total_tokens: 0,
  };
  usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
  if (body.stream === true) {
    const options = body.stream_options as { include_usage?: unknown } | undefined;
    streamChat(res, { id, created, model, reply, usage: options?.include_usage === true ? usage : undefined });
    return;
  }
  sendJson(res, 200, {
    id,
    object: 'chat.completion',
    created,
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: reply, refusal: null },
        finish_reason: 'stop',
        logprobs: null,
      },
    ],
    usage,
  });
}

interface StreamedAnswer {
  id: string;
  created: number;
  model: string;
  reply: string;
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | undefined;
}

/** The answer as Chat Completions server-sent events: the role, the text word by word, the stop, usage when asked. */
function streamChat(res: ServerResponse, answer: StreamedAnswer): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: answer.id, object: 'chat.completion.chunk', created: answer.created, model: answer.model, choices, ...extra })}\n\n`;
  const delta = (value: Record<string, unknown>, finish: string | null = null) => ({
    index: 0,
    delta: value,
    finish_reason: finish,
    logprobs: null,
  });
  let text = chunk([delta({ role: 'assistant', content: '' })]);
  for (const piece of answer.reply.match(/\S+\s*/g) ?? []) text += chunk([delta({ content: piece })]);
  text += chunk([delta({}, 'stop')]);
  if (answer.usage) text += chunk([], { usage: answer.usage });
  res.end(`${text}data: [DONE]\n\n`);
}

/** The text of the last user message: a string, or the text parts of a content array. */
function lastUserText(messages: unknown[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i] as { role?: unknown } | null;
    if (message?.role !== 'user') continue;
    const text = messageText(message);
    if (text !== '') return text;
  }
  return undefined;
}

function messageText(message: unknown): string {
  const content = (message as { content?: unknown } | null)?.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: { type?: unknown; text?: unknown } | null) =>
      part?.type === 'text' && typeof part.text === 'string' ? part.text : '',
    )
    .filter((text) => text !== '')
    .join('\n');
}

/** The demo counts words as tokens: it has no tokenizer, and the numbers only need to be plausible. */
function wordCount(text: string): number {
  return text.split(/\s+/).filter((word) => word !== '').length;
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function sendError(
  res: ServerResponse,
  status: number,
  type: string,
  message: string,
  code: string | null = null,
  param: string | null = null,
): void {
  sendJson(res, status, { error: { message, type, param, code } });
}
