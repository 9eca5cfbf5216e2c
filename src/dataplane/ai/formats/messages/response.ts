// Messages responses (Anthropic, non-streaming) read into the chat form and written from it.

import { callSignaturesAsReasoning } from '../form/signatures.ts';
import { argumentsObject } from '../form/tool-arguments.ts';
import type { ChatResponse, Part, StopReason } from '../form/types.ts';
import { isPlainObject, stringOr } from '../json.ts';
import { type JsonObject, TranslationError } from '../types.ts';
import { messagesUsage, usageFromMessages } from '../usage.ts';

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: 'end',
  stop_sequence: 'stop_sequence',
  max_tokens: 'max_tokens',
  model_context_window_exceeded: 'context_window',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
  pause_turn: 'pause',
};

const STOP_REASON_NAMES: Record<StopReason, string> = {
  end: 'end_turn',
  stop_sequence: 'stop_sequence',
  max_tokens: 'max_tokens',
  context_window: 'model_context_window_exceeded',
  tool_calls: 'tool_use',
  content_filter: 'refusal',
  pause: 'pause_turn',
  other: 'end_turn',
};

/** A stop_reason in the form; undefined when there is none. */
export function stopReasonOfMessages(stopReason: unknown): StopReason | undefined {
  if (typeof stopReason !== 'string') return undefined;
  return STOP_REASONS[stopReason] ?? 'other';
}

/** The form's stop reason as a stop_reason ("end_turn" for an unknown one and for none). */
export function messagesStopReason(reason: StopReason | undefined): string {
  return reason === undefined ? 'end_turn' : STOP_REASON_NAMES[reason];
}

/** A Message's text, tool_use and thinking blocks; other blocks (server tools) are left out. */
export function readMessagesResponse(body: JsonObject): ChatResponse {
  if (!isPlainObject(body) || !Array.isArray(body.content)) {
    throw new TranslationError('the provider response is not a Messages response (no content array)');
  }
  const content: Part[] = [];
  // A response's parts are never reported on: they carry no source path.
  const path = '';
  for (const block of body.content) {
    if (!isPlainObject(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') {
      content.push({ type: 'text', text: block.text, path });
    } else if (block.type === 'tool_use' && typeof block.name === 'string') {
      const id = stringOr(block.id);
      content.push({
        type: 'tool_call',
        id,
        name: block.name,
        arguments: block.input,
        argumentsPath: path,
        path,
      });
    } else if (block.type === 'thinking' && typeof block.thinking === 'string') {
      const signature = stringOr(block.signature);
      content.push(
        signature === undefined
          ? { type: 'reasoning', text: block.thinking, path }
          : { type: 'reasoning', text: block.thinking, signature, path },
      );
    } else if (block.type === 'redacted_thinking' && typeof block.data === 'string') {
      // Claude's encrypted thinking: it goes back to Claude as it came.
      content.push({ type: 'reasoning', text: '', redacted: block.data, path });
    }
  }
  return {
    id: stringOr(body.id),
    model: stringOr(body.model),
    content,
    stopReason: stopReasonOfMessages(body.stop_reason),
    usage: usageFromMessages(body.usage),
  };
}

/**
 * The form's response as a Message: text (and a refusal) as text blocks, each tool call a
 * tool_use block whose input is the parsed arguments ({} when they are not a JSON object:
 * Anthropic's input must be one). `model`, when given, replaces the provider's model name.
 */
export function writeMessagesResponse(response: ChatResponse, options: { model?: string } = {}): JsonObject {
  const content: JsonObject[] = [];
  let toolCalls = 0;
  // A call's signature (Gemini's) goes to the client as a thinking block before the call.
  for (const part of callSignaturesAsReasoning(response.content)) {
    if (!('type' in part)) continue;
    if (part.type === 'text') {
      content.push({ type: 'text', text: part.text });
    } else if (part.type === 'tool_call') {
      const id = part.id ?? `toolu_${toolCalls}`;
      toolCalls++;
      content.push({ type: 'tool_use', id, name: part.name, input: argumentsObject(part.arguments) });
    } else if (part.type === 'reasoning' && part.redacted !== undefined) {
      content.push({ type: 'redacted_thinking', data: part.redacted });
    } else if (part.type === 'reasoning' && part.signature !== undefined) {
      // Thinking goes back to Anthropic only with its signature.
      content.push({ type: 'thinking', thinking: part.text, signature: part.signature });
    }
  }
  return {
    id: response.id ?? '',
    type: 'message',
    role: 'assistant',
    model: options.model ?? response.model ?? '',
    content,
    stop_reason: messagesStopReason(response.stopReason),
    stop_sequence: null,
    usage: response.usage ? messagesUsage(response.usage) : { input_tokens: 0, output_tokens: 0 },
  };
}
