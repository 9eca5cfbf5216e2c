// The chat playground: a conversation sent to gw's own listener as an OpenAI Chat Completions
// client would send it (streaming, with usage), and what comes back passed to the browser as
// server-sent events of its own: `delta` (text), `usage` (tokens), `done` (status, model) or
// `error` (status and gw's answer). The browser's key for the route, if it gives one, goes to gw as
// Authorization and nowhere else: it is never written back, logged or kept.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SseReader } from '../../../dataplane/ai/formats/sse-reader.ts';
import { cutText } from '../../../util/values.ts';
import {
  type ListenerTarget,
  parseListenerTarget,
  type ResolvedListener,
  readAnswer,
  requestListener,
} from './listener-client.ts';

export interface ChatRequest {
  target: ListenerTarget;
  model: string;
  messages: { role: 'system' | 'user' | 'assistant'; content: string }[];
}

const ROLES = new Set(['system', 'user', 'assistant']);
const MAX_MESSAGES = 100;
const MAX_MODEL_LENGTH = 256;
/** Most characters of gw's error answer shown. */
const MAX_ERROR_TEXT = 4096;

export const DEFAULT_CHAT_PATH = '/v1/chat/completions';

export function parseChatRequest(body: unknown): ChatRequest | { problem: string } {
  const target = parseListenerTarget(body, DEFAULT_CHAT_PATH);
  if ('problem' in target) return target;
  const { model, messages } = body as Record<string, unknown>;
  if (typeof model !== 'string' || model === '' || model.length > MAX_MODEL_LENGTH)
    return { problem: `model: the model to ask for (at most ${MAX_MODEL_LENGTH} characters)` };
  if (!Array.isArray(messages) || messages.length === 0 || messages.length > MAX_MESSAGES)
    return { problem: `messages: 1 to ${MAX_MESSAGES} messages` };
  for (const [index, message] of messages.entries()) {
    const { role, content } = (message ?? {}) as Record<string, unknown>;
    if (typeof role !== 'string' || !ROLES.has(role))
      return { problem: `messages[${index}].role: system, user or assistant` };
    if (typeof content !== 'string') return { problem: `messages[${index}].content: text` };
  }
  return { target, model, messages: messages as ChatRequest['messages'] };
}

/** An event to the browser. */
function event(response: ServerResponse, name: string, data: unknown): void {
  if (!response.destroyed) response.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** Sends the chat through the listener and streams the answer to `response` (SSE headers sent). */
export async function streamChat(
  resolved: ResolvedListener,
  chat: ChatRequest,
  response: ServerResponse,
): Promise<void> {
  const abort = new AbortController();
  response.once('close', () => abort.abort());
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'text/event-stream, application/json',
    'user-agent': 'gw-ui-playground',
  };
  if (chat.target.apiKey) headers.authorization = `Bearer ${chat.target.apiKey}`;
  const body = JSON.stringify({
    model: chat.model,
    messages: chat.messages,
    stream: true,
    stream_options: { include_usage: true },
  });
  let answer: IncomingMessage;
  try {
    answer = await requestListener(resolved, {
      method: 'POST',
      path: chat.target.path,
      headers,
      body,
      signal: abort.signal,
    });
  } catch (error) {
    if (!abort.signal.aborted) event(response, 'error', { message: `gw's listener: ${(error as Error).message}` });
    response.end();
    return;
  }
  const status = answer.statusCode ?? 0;
  const type = String(answer.headers['content-type'] ?? '');
  try {
    if (status !== 200) {
      const text = await readAnswer(answer);
      event(response, 'error', { status, message: cutText(text, MAX_ERROR_TEXT) });
    } else if (type.startsWith('text/event-stream')) {
      await relayStream(answer, response);
    } else {
      relayJson(await readAnswer(answer), response);
    }
  } catch (error) {
    if (!abort.signal.aborted) event(response, 'error', { status, message: (error as Error).message });
  }
  response.end();
}

interface ChatChunk {
  model?: string;
  choices?: { delta?: { content?: string | null }; message?: { content?: string | null }; finish_reason?: string }[];
  usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number } | null;
  error?: { message?: string };
}

async function relayStream(answer: IncomingMessage, response: ServerResponse): Promise<void> {
  const reader = new SseReader();
  let model: string | undefined;
  let finish: string | undefined;
  const take = (data: string | undefined) => {
    if (data === undefined || data === '[DONE]') return;
    let chunk: ChatChunk;
    try {
      chunk = JSON.parse(data) as ChatChunk;
    } catch {
      return;
    }
    if (chunk.error) event(response, 'error', { status: 200, message: chunk.error.message ?? 'error in the stream' });
    model ??= chunk.model;
    const choice = chunk.choices?.[0];
    const text = choice?.delta?.content;
    if (typeof text === 'string' && text !== '') event(response, 'delta', { text });
    if (choice?.finish_reason) finish = choice.finish_reason;
    if (chunk.usage) event(response, 'usage', usageOf(chunk.usage));
  };
  for await (const bytes of answer as AsyncIterable<Buffer>) for (const block of reader.push(bytes)) take(block.data);
  for (const block of reader.finish()) take(block.data);
  event(response, 'done', { status: 200, model, finishReason: finish });
}

function relayJson(text: string, response: ServerResponse): void {
  const answer = JSON.parse(text) as ChatChunk;
  const content = answer.choices?.[0]?.message?.content;
  if (typeof content === 'string' && content !== '') event(response, 'delta', { text: content });
  if (answer.usage) event(response, 'usage', usageOf(answer.usage));
  event(response, 'done', { status: 200, model: answer.model, finishReason: answer.choices?.[0]?.finish_reason });
}

function usageOf(usage: NonNullable<ChatChunk['usage']>): Record<string, number | undefined> {
  return { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens, totalTokens: usage.total_tokens };
}
