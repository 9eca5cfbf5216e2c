// Bedrock Converse responses (non-streaming) read into the chat form. A provider format only: gw
// never writes a Converse response. Converse names neither the response nor the model in its body:
// the id is gw's, and the proxy shows the model it sent (the one in the path).
import { randomUUID } from 'node:crypto';
import type { ChatResponse, Part, StopReason } from '../form/types.ts';
import { isPlainObject, stringOr } from '../json.ts';
import { type JsonObject, TranslationError } from '../types.ts';
import { usageFromConverse } from '../usage.ts';

/** Converse names no response: gw gives the client's response an id of its own. */
export function converseResponseId(): string {
  return `bedrock-${randomUUID()}`;
}

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: 'end',
  stop_sequence: 'stop_sequence',
  max_tokens: 'max_tokens',
  model_context_window_exceeded: 'context_window',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};

/** A Converse stopReason in the form; undefined when there is none. */
export function stopReasonOfConverse(stopReason: unknown): StopReason | undefined {
  if (typeof stopReason !== 'string') return undefined;
  return STOP_REASONS[stopReason] ?? 'other';
}

/** A reasoningContent block (the response's or a stream delta's) as a reasoning part; undefined for another shape. */
export function reasoningOfConverse(value: unknown, path: string): Part | undefined {
  if (!isPlainObject(value)) return undefined;
  const redacted = stringOr(value.redactedContent);
  if (redacted !== undefined) return { type: 'reasoning', text: '', redacted, path };
  const reasoning = value.reasoningText;
  if (!isPlainObject(reasoning) || typeof reasoning.text !== 'string') return undefined;
  const signature = stringOr(reasoning.signature);
  return signature === undefined
    ? { type: 'reasoning', text: reasoning.text, path }
    : { type: 'reasoning', text: reasoning.text, signature, path };
}

/** The output message's text, toolUse and reasoningContent blocks; other blocks (citations, images) are left out. */
export function readConverseResponse(body: JsonObject): ChatResponse {
  const output = body.output;
  const message = isPlainObject(output) ? output.message : undefined;
  if (!isPlainObject(message) || !Array.isArray(message.content)) {
    throw new TranslationError('the provider response is not a Converse response (no output.message.content)');
  }
  const content: Part[] = [];
  const path = '';
  for (const block of message.content) {
    if (!isPlainObject(block)) continue;
    if (typeof block.text === 'string') {
      content.push({ type: 'text', text: block.text, path });
    } else if (isPlainObject(block.toolUse) && typeof block.toolUse.name === 'string') {
      const toolUse = block.toolUse;
      content.push({
        type: 'tool_call',
        id: stringOr(toolUse.toolUseId),
        name: toolUse.name as string,
        arguments: toolUse.input,
        argumentsPath: path,
        path,
      });
    } else if (block.reasoningContent !== undefined) {
      const reasoning = reasoningOfConverse(block.reasoningContent, path);
      if (reasoning !== undefined) content.push(reasoning);
    }
  }
  return {
    id: converseResponseId(),
    model: undefined,
    content,
    stopReason: stopReasonOfConverse(body.stopReason),
    usage: usageFromConverse(body.usage),
  };
}
