// POST /v1/chat/completions: a `chat.completion` object, or `chat.completion.chunk` events ending in [DONE].
import type { ChatCompletion, ChatCompletionChunk } from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import {
  chunkString,
  countWords,
  echoAnswer,
  isObject,
  limitWords,
  type OfferedTool,
  requestedTools,
  toolArguments,
  wordPieces,
} from './deterministic.ts';
import type { AnswerContext, Reply, SseEvent } from './mock-server.ts';

export const SYSTEM_FINGERPRINT = 'fp_mock';

interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export function chatCompletionReply(body: Record<string, unknown>, context: AnswerContext): Reply {
  const { model, messages } = body;
  if (typeof model !== 'string' || model === '') {
    return context.error({ status: 400, message: 'you must provide a model parameter' });
  }
  if (!Array.isArray(messages)) {
    return context.error({
      status: 400,
      message: "Missing required parameter: 'messages'.",
      param: 'messages',
      code: 'missing_required_parameter',
    });
  }
  if (messages.length === 0) {
    return context.error({
      status: 400,
      message:
        "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
      param: 'messages',
      code: 'empty_array',
    });
  }
  if (body.stream_options != null && body.stream !== true) {
    return context.error({
      status: 400,
      message: "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
      param: 'stream_options',
    });
  }
  const unknown = context.unknownModel(model);
  if (unknown) return unknown;

  const turns = messages.filter(isObject);
  const last = turns.at(-1);
  // A tool result is answered by echoing it; only a user turn may trigger tool calls.
  const answeringToolResult = last?.role === 'tool';
  const lastText = answeringToolResult
    ? contentText(last?.content)
    : contentText(turns.findLast((turn) => turn.role === 'user')?.content);
  const tools = answeringToolResult || last?.role !== 'user' ? [] : requestedTools(lastText, offeredTools(body.tools));
  const toolCalls: ToolCall[] = tools.map((tool) => ({
    id: context.id('call_'),
    name: tool.name,
    arguments: JSON.stringify(toolArguments(tool.parameters)),
  }));
  const limit = limitWords(echoAnswer(lastText), maxTokens(body));
  const text = toolCalls.length > 0 ? null : limit.text;
  const finishReason = toolCalls.length > 0 ? 'tool_calls' : limit.cut ? 'length' : 'stop';
  const promptTokens = turns.reduce((sum, turn) => sum + countWords(contentText(turn.content)), 0);
  const completionTokens =
    toolCalls.length > 0
      ? toolCalls.reduce((sum, call) => sum + countWords(`${call.name} ${call.arguments}`), 0)
      : countWords(limit.text);
  const usage = chatUsage(promptTokens, completionTokens);
  const id = context.id('chatcmpl-');
  const created = Math.floor(Date.now() / 1000);

  if (body.stream === true) {
    const includeUsage = isObject(body.stream_options) && body.stream_options.include_usage === true;
    return {
      kind: 'stream',
      events: chunkEvents({ id, created, model, text, toolCalls, finishReason, usage, includeUsage }),
    };
  }
  const completion: ChatCompletion = {
    id,
    object: 'chat.completion',
    created,
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text,
          refusal: null,
          annotations: [],
          ...(toolCalls.length > 0 && {
            tool_calls: toolCalls.map((call) => ({
              id: call.id,
              type: 'function' as const,
              function: { name: call.name, arguments: call.arguments },
            })),
          }),
        },
        logprobs: null,
        finish_reason: finishReason,
      },
    ],
    usage,
    service_tier: 'default',
    system_fingerprint: SYSTEM_FINGERPRINT,
  };
  return { kind: 'json', status: 200, body: completion };
}

/** The usage object of chat completions, detail counters included as the real API sends them. */
export function chatUsage(promptTokens: number, completionTokens: number): CompletionUsage {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

interface StreamPlan {
  id: string;
  created: number;
  model: string;
  text: string | null;
  toolCalls: ToolCall[];
  finishReason: 'stop' | 'length' | 'tool_calls';
  usage: CompletionUsage;
  includeUsage: boolean;
}

/**
 * The role comes in the first chunk (with the first tool call's id and name when calling tools),
 * then content or argument pieces, then an empty delta with the finish reason, then, when asked
 * for, a usage chunk without choices; `[DONE]` ends the stream.
 */
function chunkEvents(plan: StreamPlan): SseEvent[] {
  const chunk = (choices: ChatCompletionChunk.Choice[], usage?: CompletionUsage): SseEvent => {
    const value: ChatCompletionChunk = {
      id: plan.id,
      object: 'chat.completion.chunk',
      created: plan.created,
      model: plan.model,
      service_tier: 'default',
      system_fingerprint: SYSTEM_FINGERPRINT,
      choices,
      ...(plan.includeUsage && { usage: usage ?? null }),
    };
    return { data: JSON.stringify(value) };
  };
  const delta = (value: ChatCompletionChunk.Choice.Delta): ChatCompletionChunk.Choice[] => [
    { index: 0, delta: value, logprobs: null, finish_reason: null },
  ];

  const events: SseEvent[] = [];
  if (plan.toolCalls.length === 0) {
    events.push(chunk(delta({ role: 'assistant', content: '', refusal: null })));
    for (const piece of wordPieces(plan.text ?? '')) events.push(chunk(delta({ content: piece })));
  } else {
    plan.toolCalls.forEach((call, index) => {
      const header = {
        index,
        id: call.id,
        type: 'function' as const,
        function: { name: call.name, arguments: '' },
      };
      events.push(
        chunk(
          delta(index === 0 ? { role: 'assistant', content: null, tool_calls: [header] } : { tool_calls: [header] }),
        ),
      );
      for (const piece of chunkString(call.arguments)) {
        events.push(chunk(delta({ tool_calls: [{ index, function: { arguments: piece } }] })));
      }
    });
  }
  events.push(chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: plan.finishReason }]));
  if (plan.includeUsage) events.push(chunk([], plan.usage));
  events.push({ data: '[DONE]' });
  return events;
}

/** The text of a message's content: a string, or the text parts of a part list joined by newlines. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter(isObject)
    .map((part) => (typeof part.text === 'string' ? part.text : ''))
    .filter((text) => text !== '')
    .join('\n');
}

function offeredTools(tools: unknown): OfferedTool[] {
  if (!Array.isArray(tools)) return [];
  return tools
    .filter(isObject)
    .map((tool) => tool.function)
    .filter(isObject)
    .filter((fn) => typeof fn.name === 'string')
    .map((fn) => ({ name: fn.name as string, parameters: fn.parameters }));
}

function maxTokens(body: Record<string, unknown>): number | undefined {
  const value = body.max_completion_tokens ?? body.max_tokens;
  return typeof value === 'number' ? value : undefined;
}
