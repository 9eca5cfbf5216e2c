// Chat Completions responses (OpenAI, non-streaming) read into the chat form and written from it.

import { completionsCallExtra, completionsCallSignature } from '../form/signatures.ts';
import { argumentsJson } from '../form/tool-arguments.ts';
import type { ChatResponse, Part, StopReason, ToolCallPart } from '../form/types.ts';
import { isPlainObject, stringOr } from '../json.ts';
import { type JsonObject, TranslationError } from '../types.ts';
import { completionsUsage, usageFromCompletions } from '../usage.ts';
import { messageReasoningFields, readMessageReasoning } from './reasoning.ts';

const STOP_REASONS: Record<string, StopReason> = {
  stop: 'end',
  length: 'max_tokens',
  tool_calls: 'tool_calls',
  function_call: 'tool_calls',
  content_filter: 'content_filter',
};

/** A finish_reason in the form; undefined when there is none. */
export function stopReasonOfFinishReason(finishReason: unknown): StopReason | undefined {
  if (typeof finishReason !== 'string') return undefined;
  return STOP_REASONS[finishReason] ?? 'other';
}

/** The form's stop reason as a finish_reason: Chat Completions has four ("stop" for the rest and for none). */
export function finishReasonOf(reason: StopReason | undefined): string {
  switch (reason) {
    case 'max_tokens':
    case 'context_window':
      return 'length';
    case 'tool_calls':
      return 'tool_calls';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/** Message content as text: a string, or the text parts some compatible servers return. */
function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isPlainObject(part) && typeof part.text === 'string' ? part.text : '')).join('');
}

/** The first choice of a Chat Completion: its text, refusal and tool calls. Throws for a body that is not one. */
export function readCompletionsResponse(body: JsonObject): ChatResponse {
  const choice = isPlainObject(body) && Array.isArray(body.choices) ? body.choices[0] : undefined;
  if (!isPlainObject(choice) || !isPlainObject(choice.message)) {
    throw new TranslationError('the provider response is not a Chat Completions response (no choices[0].message)');
  }
  const message = choice.message;
  const content: Part[] = [];
  // A response's parts are never reported on: they carry no source path.
  const path = '';
  // A compatible server's reasoning (DeepSeek's reasoning_content), first as it was produced first.
  const reasoning = readMessageReasoning(message, 'choices[0].message', false);
  if (reasoning !== undefined) content.push({ ...reasoning, path });
  const text = messageText(message.content);
  if (text) content.push({ type: 'text', text, path });
  if (typeof message.refusal === 'string' && message.refusal) {
    content.push({ type: 'text', text: message.refusal, refusal: true, path });
  }
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      if (!isPlainObject(call) || !isPlainObject(call.function) || typeof call.function.name !== 'string') continue;
      const args = call.function.arguments;
      const id = stringOr(call.id);
      const part: ToolCallPart = {
        type: 'tool_call',
        id,
        name: call.function.name,
        arguments: args,
        argumentsPath: path,
        path,
      };
      const signature = completionsCallSignature(call);
      if (signature !== undefined) part.signature = signature;
      content.push(part);
    }
  }
  const fn = message.function_call;
  if (isPlainObject(fn) && typeof fn.name === 'string') {
    content.push({
      type: 'tool_call',
      id: 'legacy_function_call',
      name: fn.name,
      arguments: fn.arguments,
      argumentsPath: path,
      path,
    });
  }
  return {
    id: stringOr(body.id),
    model: stringOr(body.model),
    content,
    stopReason: stopReasonOfFinishReason(choice.finish_reason),
    usage: usageFromCompletions(body.usage),
  };
}

/**
 * The form's response as a Chat Completion with one choice: text joins into the message content,
 * tool calls become tool_calls, reasoning reasoning_content with its reasoning_signature
 * (completions/reasoning.ts).
 * `model`, when given, replaces the provider's model name (the name the client asked for).
 */
export function writeCompletionsResponse(response: ChatResponse, options: { model?: string } = {}): JsonObject {
  let text = '';
  let hasText = false;
  let refusal: string | null = null;
  const toolCalls: JsonObject[] = [];
  for (const part of response.content) {
    if (!('type' in part)) continue;
    if (part.type === 'text' && part.refusal) {
      refusal = (refusal ?? '') + part.text;
    } else if (part.type === 'text') {
      text += part.text;
      hasText = true;
    } else if (part.type === 'tool_call') {
      const call: JsonObject = {
        id: part.id ?? `call_${toolCalls.length}`,
        type: 'function',
        function: { name: part.name, arguments: argumentsJson(part.arguments) },
      };
      if (part.signature !== undefined) call.extra_content = completionsCallExtra(part.signature);
      toolCalls.push(call);
    }
  }
  const message: JsonObject = {
    role: 'assistant',
    content: hasText ? text : toolCalls.length > 0 ? null : '',
    refusal,
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  Object.assign(message, messageReasoningFields(response.content));
  const out: JsonObject = {
    id: response.id ?? '',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: options.model ?? response.model ?? '',
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReasonOf(response.stopReason) }],
  };
  if (response.usage) out.usage = completionsUsage(response.usage);
  return out;
}
