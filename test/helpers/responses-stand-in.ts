// A server that speaks only the OpenAI Responses API (POST /v1/responses; every other path is
// 404), for the provider side of gw's Responses adapters. It answers the last user text with
// "echo: <text>", calls the offered tool a text names ("call get_weather"), shows a reasoning
// summary when the request sets reasoning.effort (with STAND_IN_ENCRYPTED_REASONING as its
// encrypted_content when the request includes reasoning.encrypted_content, in the whole item and
// the stream's output_item.done, as OpenAI sends it), and reports usage with cached and reasoning
// tokens — whole or as the typed event stream, in the wire format the openai SDK reads.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer } from 'node:http';
import { closeServer, listen, readBody, sendJson } from './http-server.ts';

export interface ResponsesStandIn {
  port: number;
  url: string;
  /** What reached it: method, path, Authorization and the JSON body. */
  requests: { method: string; path: string; authorization: string | undefined; body: Record<string, unknown> }[];
  close(): Promise<void>;
}

/** The usage every answer reports: 2 of the input tokens were cached, 3 output tokens were reasoning. */
export const STAND_IN_USAGE = {
  input_tokens: 12,
  input_tokens_details: { cached_tokens: 2 },
  output_tokens: 7,
  output_tokens_details: { reasoning_tokens: 3 },
  total_tokens: 19,
};

export const STAND_IN_REASONING = 'Considering the question.';
/** The encrypted_content of the reasoning item, when the request includes it. */
export const STAND_IN_ENCRYPTED_REASONING = 'gAAAAABstandInEncryptedReasoning==';

type Item = Record<string, unknown>;

export async function startResponsesStandIn(apiKey: string): Promise<ResponsesStandIn> {
  const requests: ResponsesStandIn['requests'] = [];
  const server: Server = createServer((req, res) => {
    void answer(req, res).catch(() => res.destroy());
  });
  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    const path = (req.url ?? '/').split('?')[0]!;
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text || '{}') as Record<string, unknown>;
    } catch {
      return sendJson(res, 400, { error: { message: 'not JSON', type: 'invalid_request_error' } });
    }
    requests.push({ method: req.method ?? '', path, authorization: req.headers.authorization, body });
    if (req.method !== 'POST' || path !== '/v1/responses') {
      return sendJson(res, 404, {
        error: { message: `no route ${req.method} ${path}`, type: 'invalid_request_error' },
      });
    }
    if (req.headers.authorization !== `Bearer ${apiKey}`) {
      return sendJson(res, 401, { error: { message: 'Incorrect API key', type: 'invalid_request_error' } });
    }
    const output = outputOf(body);
    const model = typeof body.model === 'string' ? body.model : 'stand-in';
    const base = { id: 'resp_standin', object: 'response', created_at: 1760000000, model, error: null };
    const done = { ...base, status: 'completed', incomplete_details: null, output, usage: STAND_IN_USAGE };
    if (body.stream !== true) return sendJson(res, 200, done);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let sequence = 0;
    const send = (event: Item) => {
      res.write(`event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: sequence++ })}\n\n`);
    };
    const started = { ...base, status: 'in_progress', incomplete_details: null, output: [], usage: null };
    send({ type: 'response.created', response: started });
    send({ type: 'response.in_progress', response: started });
    output.forEach((item, index) => {
      for (const event of itemEvents(item, index)) send(event);
    });
    send({ type: 'response.completed', response: done });
    res.end();
  }
  const port = await listen(server);
  return { port, url: `http://127.0.0.1:${port}/v1`, requests, close: () => closeServer(server) };
}

/** The text of the last user message of `input` (a string, or items). */
function lastUserText(input: unknown): string {
  if (typeof input === 'string') return input;
  if (!Array.isArray(input)) return '';
  const last = [...input].reverse().find((item: Item) => item.role === 'user' || item.type === 'function_call_output');
  if (last === undefined) return '';
  if (last.type === 'function_call_output') return `tool said ${String(last.output)}`;
  const content = last.content;
  if (typeof content === 'string') return content;
  return Array.isArray(content)
    ? content.map((part: Item) => (part.type === 'input_text' ? part.text : '')).join('')
    : '';
}

function outputOf(body: Record<string, unknown>): Item[] {
  const text = lastUserText(body.input);
  const output: Item[] = [];
  if (typeof body.reasoning === 'object' && body.reasoning !== null) {
    const item: Item = { id: 'rs_0', type: 'reasoning', summary: [{ type: 'summary_text', text: STAND_IN_REASONING }] };
    const include = Array.isArray(body.include) ? body.include : [];
    if (include.includes('reasoning.encrypted_content')) item.encrypted_content = STAND_IN_ENCRYPTED_REASONING;
    output.push(item);
  }
  const tools = Array.isArray(body.tools) ? (body.tools as Item[]) : [];
  const called = tools.find((tool) => tool.type === 'function' && text.includes(`call ${String(tool.name)}`));
  if (called !== undefined) {
    output.push({
      id: `fc_${output.length}`,
      type: 'function_call',
      status: 'completed',
      call_id: 'call_standin',
      name: called.name,
      arguments: JSON.stringify({ city: 'Paris' }),
    });
  } else {
    output.push({
      id: `msg_${output.length}`,
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: `echo: ${text}`, annotations: [], logprobs: [] }],
    });
  }
  return output;
}

/** The events that build one output item, as the API sends them. */
function itemEvents(item: Item, index: number): Item[] {
  const at = { item_id: item.id, output_index: index };
  if (item.type === 'reasoning') {
    const summary = STAND_IN_REASONING;
    const part = { type: 'summary_text', text: summary };
    return [
      {
        type: 'response.output_item.added',
        output_index: index,
        item: { ...item, summary: [], encrypted_content: null },
      },
      { type: 'response.reasoning_summary_part.added', ...at, summary_index: 0, part: { ...part, text: '' } },
      ...summary
        .split(/(?<= )/)
        .map((delta) => ({ type: 'response.reasoning_summary_text.delta', ...at, summary_index: 0, delta })),
      { type: 'response.reasoning_summary_text.done', ...at, summary_index: 0, text: summary },
      { type: 'response.reasoning_summary_part.done', ...at, summary_index: 0, part },
      { type: 'response.output_item.done', output_index: index, item },
    ];
  }
  if (item.type === 'function_call') {
    const args = String(item.arguments);
    return [
      {
        type: 'response.output_item.added',
        output_index: index,
        item: { ...item, status: 'in_progress', arguments: '' },
      },
      { type: 'response.function_call_arguments.delta', ...at, delta: args.slice(0, 5) },
      { type: 'response.function_call_arguments.delta', ...at, delta: args.slice(5) },
      { type: 'response.function_call_arguments.done', ...at, arguments: args },
      { type: 'response.output_item.done', output_index: index, item },
    ];
  }
  const part = (item.content as Item[])[0]!;
  const text = String(part.text);
  const empty = { ...part, text: '' };
  return [
    { type: 'response.output_item.added', output_index: index, item: { ...item, status: 'in_progress', content: [] } },
    { type: 'response.content_part.added', ...at, content_index: 0, part: empty },
    ...text
      .split(/(?<= )/)
      .map((delta) => ({ type: 'response.output_text.delta', ...at, content_index: 0, delta, logprobs: [] })),
    { type: 'response.output_text.done', ...at, content_index: 0, text, logprobs: [] },
    { type: 'response.content_part.done', ...at, content_index: 0, part },
    { type: 'response.output_item.done', output_index: index, item },
  ];
}
