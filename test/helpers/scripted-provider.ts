// One stand-in for every provider wire format, for the family matrix tests
// (test/dataplane/gateway/family-matrix-*.test.ts): it tells the format a request is in from its
// path, as gw's families send them — Chat Completions (…/chat/completions), the Responses API
// (…/responses), Anthropic Messages (…/messages, Vertex's :rawPredict / :streamRawPredict),
// Gemini (:generateContent / :streamGenerateContent) and Bedrock Converse (/converse,
// /converse-stream) — and answers in it: a short text with the same usage in every format (11
// input tokens of which 4 cached, 7 output of which 3 reasoning where the format carries them),
// whole or streamed; or, when a test scripts it, the provider's own error (status, headers and
// body as given), a stream that ends on the provider's own error event, or a stream cut short.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { eventFrame, exceptionFrame } from './bedrock-stand-in.ts';
import { closeServer, listen, readBody } from './http-server.ts';

export type WireFormat = 'completions' | 'responses' | 'messages' | 'gemini' | 'converse';

/** What the next request is answered with (then the stand-in answers normally again). */
export type Script =
  | { kind: 'error'; status: number; headers?: Record<string, string>; body: unknown }
  /** A stream that starts, then carries the provider's own error event (Bedrock: an exception frame). */
  | { kind: 'stream-error'; error: StreamError }
  /** A stream that starts, then the connection is closed under it. */
  | { kind: 'cut' };

export interface StreamError {
  /** The error type the provider names (OpenAI's type, Anthropic's, Google's status, Bedrock's exception). */
  type: string;
  /** The HTTP status Google's error carries. */
  code: number;
  message: string;
}

export interface ScriptedRequest {
  path: string;
  format: WireFormat;
  stream: boolean;
  body: Record<string, unknown>;
  headers: IncomingMessage['headers'];
}

export interface ScriptedProvider {
  port: number;
  requests: ScriptedRequest[];
  /** Answers the next request with `script`. */
  next(script: Script): void;
  close(): Promise<void>;
}

/** The usage every answer reports, in gw's terms. */
export const SCRIPTED_USAGE = { input: 11, cached: 4, output: 7, reasoning: 3, total: 18 } as const;
export const SCRIPTED_TEXT = 'Hi there';
/** The model a provider says answered: the one asked for, dated. */
export const answeringModel = (model: string) => `${model}-2026-01-01`;

const U = SCRIPTED_USAGE;

export function wireFormatOf(path: string): { format: WireFormat; stream: boolean | undefined } | undefined {
  if (path.endsWith('/converse-stream')) return { format: 'converse', stream: true };
  if (path.endsWith('/converse')) return { format: 'converse', stream: false };
  if (path.endsWith(':streamGenerateContent')) return { format: 'gemini', stream: true };
  if (path.endsWith(':generateContent')) return { format: 'gemini', stream: false };
  if (path.endsWith(':streamRawPredict')) return { format: 'messages', stream: true };
  if (path.endsWith(':rawPredict')) return { format: 'messages', stream: undefined };
  if (path.endsWith('/messages')) return { format: 'messages', stream: undefined };
  if (path.endsWith('/responses')) return { format: 'responses', stream: undefined };
  if (path.endsWith('/chat/completions')) return { format: 'completions', stream: undefined };
  return undefined;
}

/** The model a request names: in its body, or in its path (Gemini, Vertex, Bedrock). */
function modelOf(path: string, body: Record<string, unknown>): string {
  if (typeof body.model === 'string') return body.model;
  const match = /\/models?\/([^/:]+)(?::|\/)/.exec(path);
  return decodeURIComponent(match?.[1] ?? 'unknown');
}

export async function startScriptedProvider(): Promise<ScriptedProvider> {
  const requests: ScriptedRequest[] = [];
  const scripts: Script[] = [];
  const server: Server = createServer((req, res) => {
    void answer(req, res).catch(() => res.destroy());
  });
  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    const path = (req.url ?? '/').split('?')[0]!;
    const body = (text === '' ? {} : JSON.parse(text)) as Record<string, unknown>;
    const wire = wireFormatOf(path);
    if (wire === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: `no route ${path}` }));
      return;
    }
    const stream = wire.stream ?? body.stream === true;
    requests.push({ path, format: wire.format, stream, body, headers: req.headers });
    const script = scripts.shift();
    if (script?.kind === 'error') {
      res
        .writeHead(script.status, { 'content-type': 'application/json', ...script.headers })
        .end(typeof script.body === 'string' ? script.body : JSON.stringify(script.body));
      return;
    }
    const model = modelOf(path, body);
    if (!stream) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(WHOLE[wire.format](model)));
      return;
    }
    const converse = wire.format === 'converse';
    res.writeHead(200, { 'content-type': converse ? 'application/vnd.amazon.eventstream' : 'text/event-stream' });
    const events = STREAMS[wire.format](model);
    if (script === undefined) {
      for (const event of events) res.write(event);
      res.end();
      return;
    }
    // The opening events (the text begun), then the error or the cut.
    for (const event of events.slice(0, 2)) res.write(event);
    if (script.kind === 'cut') {
      await new Promise((resolve) => setTimeout(resolve, 20));
      res.destroy();
      return;
    }
    res.end(STREAM_ERRORS[wire.format](script.error));
  }
  const port = await listen(server);
  return {
    port,
    requests,
    next: (script) => scripts.push(script),
    close: () => closeServer(server),
  };
}

const sse = (data: unknown, event?: string) =>
  `${event === undefined ? '' : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`;

const COMPLETIONS_USAGE = {
  prompt_tokens: U.input,
  completion_tokens: U.output,
  total_tokens: U.total,
  prompt_tokens_details: { cached_tokens: U.cached },
  completion_tokens_details: { reasoning_tokens: U.reasoning },
};
const RESPONSES_USAGE = {
  input_tokens: U.input,
  input_tokens_details: { cached_tokens: U.cached },
  output_tokens: U.output,
  output_tokens_details: { reasoning_tokens: U.reasoning },
  total_tokens: U.total,
};
// Anthropic counts cache reads apart from input_tokens and reports no reasoning count.
const MESSAGES_USAGE = { input_tokens: U.input - U.cached, cache_read_input_tokens: U.cached, output_tokens: U.output };
// Gemini's candidates exclude the thoughts; its prompt count includes the cached part.
const GEMINI_USAGE = {
  promptTokenCount: U.input,
  cachedContentTokenCount: U.cached,
  candidatesTokenCount: U.output - U.reasoning,
  thoughtsTokenCount: U.reasoning,
  totalTokenCount: U.total,
};
// Bedrock counts cache reads apart from inputTokens and reports no reasoning count.
const CONVERSE_USAGE = {
  inputTokens: U.input - U.cached,
  cacheReadInputTokens: U.cached,
  outputTokens: U.output,
  totalTokens: U.total,
};

const WHOLE: Record<WireFormat, (model: string) => unknown> = {
  completions: (model) => ({
    id: 'chatcmpl-scripted',
    object: 'chat.completion',
    created: 1760000000,
    model: answeringModel(model),
    choices: [
      { index: 0, message: { role: 'assistant', content: SCRIPTED_TEXT }, finish_reason: 'stop', logprobs: null },
    ],
    usage: COMPLETIONS_USAGE,
  }),
  responses: (model) => responseObject(model, 'completed'),
  messages: (model) => ({
    id: 'msg_scripted',
    type: 'message',
    role: 'assistant',
    model: answeringModel(model),
    content: [{ type: 'text', text: SCRIPTED_TEXT }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: MESSAGES_USAGE,
  }),
  gemini: (model) => ({
    candidates: [{ content: { role: 'model', parts: [{ text: SCRIPTED_TEXT }] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: GEMINI_USAGE,
    modelVersion: answeringModel(model),
    responseId: 'scripted',
  }),
  converse: () => ({
    output: { message: { role: 'assistant', content: [{ text: SCRIPTED_TEXT }] } },
    stopReason: 'end_turn',
    usage: CONVERSE_USAGE,
    metrics: { latencyMs: 5 },
  }),
};

function responseObject(model: string, status: 'in_progress' | 'completed'): Record<string, unknown> {
  const done = status === 'completed';
  return {
    id: 'resp_scripted',
    object: 'response',
    created_at: 1760000000,
    model: answeringModel(model),
    status,
    error: null,
    incomplete_details: null,
    output: done ? [MESSAGE_ITEM] : [],
    usage: done ? RESPONSES_USAGE : null,
  };
}

const TEXT_PART = { type: 'output_text', text: SCRIPTED_TEXT, annotations: [], logprobs: [] };
const MESSAGE_ITEM = { id: 'msg_0', type: 'message', status: 'completed', role: 'assistant', content: [TEXT_PART] };

/** Each format's stream: its first two events begin the text (a scripted failure comes after them). */
const STREAMS: Record<WireFormat, (model: string) => (string | Uint8Array)[]> = {
  completions: (model) => {
    const chunk = (delta: unknown, finish: string | null) => ({
      id: 'chatcmpl-scripted',
      object: 'chat.completion.chunk',
      created: 1760000000,
      model: answeringModel(model),
      choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    });
    return [
      sse(chunk({ role: 'assistant', content: 'Hi' }, null)),
      sse(chunk({ content: ' there' }, null)),
      sse(chunk({}, 'stop')),
      sse({ ...chunk({}, null), choices: [], usage: COMPLETIONS_USAGE }),
      'data: [DONE]\n\n',
    ];
  },
  responses: (model) => {
    let sequence = 0;
    const event = (fields: Record<string, unknown>) =>
      sse({ ...fields, sequence_number: sequence++ }, String(fields.type));
    const at = { item_id: 'msg_0', output_index: 0, content_index: 0 };
    return [
      event({ type: 'response.created', response: responseObject(model, 'in_progress') }),
      event({
        type: 'response.output_item.added',
        output_index: 0,
        item: { ...MESSAGE_ITEM, status: 'in_progress', content: [] },
      }),
      event({ type: 'response.content_part.added', ...at, part: { ...TEXT_PART, text: '' } }),
      event({ type: 'response.output_text.delta', ...at, delta: SCRIPTED_TEXT, logprobs: [] }),
      event({ type: 'response.output_text.done', ...at, text: SCRIPTED_TEXT, logprobs: [] }),
      event({ type: 'response.content_part.done', ...at, part: TEXT_PART }),
      event({ type: 'response.output_item.done', output_index: 0, item: MESSAGE_ITEM }),
      event({ type: 'response.completed', response: responseObject(model, 'completed') }),
    ];
  },
  messages: (model) => [
    sse(
      {
        type: 'message_start',
        message: {
          id: 'msg_scripted',
          type: 'message',
          role: 'assistant',
          model: answeringModel(model),
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...MESSAGES_USAGE, output_tokens: 1 },
        },
      },
      'message_start',
    ),
    sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'),
    sse(
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: SCRIPTED_TEXT } },
      'content_block_delta',
    ),
    sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop'),
    sse(
      {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: U.output },
      },
      'message_delta',
    ),
    sse({ type: 'message_stop' }, 'message_stop'),
  ],
  gemini: (model) => [
    sse({
      candidates: [{ content: { role: 'model', parts: [{ text: 'Hi' }] }, index: 0 }],
      modelVersion: answeringModel(model),
    }),
    sse({
      candidates: [{ content: { role: 'model', parts: [{ text: ' there' }] }, index: 0 }],
      modelVersion: answeringModel(model),
    }),
    sse({
      candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: GEMINI_USAGE,
      modelVersion: answeringModel(model),
    }),
  ],
  converse: () => [
    eventFrame('messageStart', { role: 'assistant' }),
    eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi' } }),
    eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: ' there' } }),
    eventFrame('contentBlockStop', { contentBlockIndex: 0 }),
    eventFrame('messageStop', { stopReason: 'end_turn' }),
    eventFrame('metadata', { usage: CONVERSE_USAGE, metrics: { latencyMs: 5 } }),
  ],
};

/** The error event each provider ends a failed stream with, in its own shape. */
const STREAM_ERRORS: Record<WireFormat, (error: StreamError) => string | Uint8Array> = {
  completions: (error) => sse({ error: { message: error.message, type: error.type, param: null, code: null } }),
  responses: (error) =>
    sse(
      {
        type: 'error',
        error: { message: error.message, type: error.type, param: null, code: null },
        sequence_number: 2,
      },
      'error',
    ),
  messages: (error) => sse({ type: 'error', error: { type: error.type, message: error.message } }, 'error'),
  gemini: (error) => sse({ error: { code: error.code, message: error.message, status: error.type } }),
  converse: (error) => exceptionFrame(error.type, error.message),
};
