// Responses API responses (OpenAI's Response object) read into the chat form: the provider side,
// for a server that speaks only the Responses API answering a Chat Completions or Messages
// client. The stream reader (stream-reader.ts) reads the same items event by event.

import { responsesItemSignature } from '../form/signatures.ts';
import type { ChatResponse, Part, ReasoningPart, StopReason } from '../form/types.ts';
import { isPlainObject, stringOr } from '../json.ts';
import { type JsonObject, TranslationError } from '../types.ts';
import { usageFromResponsesResponse } from '../usage.ts';

/**
 * Why a finished response stopped: `incomplete` says why it was cut short (the token limit, a
 * content filter); a complete one stopped for its tool calls when it made any, else at the end of
 * its turn.
 */
export function stopReasonOfResponse(response: JsonObject, madeToolCalls: boolean): StopReason {
  if (response.status === 'incomplete') {
    const details = isPlainObject(response.incomplete_details) ? response.incomplete_details : {};
    if (details.reason === 'max_output_tokens') return 'max_tokens';
    if (details.reason === 'content_filter') return 'content_filter';
    return 'other';
  }
  return madeToolCalls ? 'tool_calls' : 'end';
}

/** A reasoning item's text: its reasoning_text content, else its summary. */
export function reasoningText(item: JsonObject): string {
  const texts = (list: unknown, type: string) =>
    Array.isArray(list)
      ? list
          .filter((part) => isPlainObject(part) && part.type === type && typeof part.text === 'string')
          .map((part) => (part as { text: string }).text)
      : [];
  const content = texts(item.content, 'reasoning_text');
  return (content.length > 0 ? content : texts(item.summary, 'summary_text')).join('\n\n');
}

/**
 * A reasoning output item as a reasoning part: its text, and the item itself (id and
 * encrypted_content, when the request asked for it) as the signature, which the provider wants
 * back; undefined for an item with neither.
 */
export function reasoningOfItem(item: JsonObject): ReasoningPart | undefined {
  const text = reasoningText(item);
  const part: ReasoningPart = { type: 'reasoning', text, path: '' };
  if (typeof item.id === 'string' && typeof item.encrypted_content === 'string' && item.encrypted_content !== '') {
    part.signature = responsesItemSignature(item.id, item.encrypted_content);
  }
  return text === '' && part.signature === undefined ? undefined : part;
}

/** The output items in the form: message text and refusals, function calls, reasoning; others are OpenAI's own. */
export function outputParts(output: unknown): Part[] {
  const content: Part[] = [];
  // A response's parts are never reported on: they carry no source path.
  const path = '';
  if (!Array.isArray(output)) return content;
  for (const item of output) {
    if (!isPlainObject(item)) continue;
    if (item.type === 'message' && Array.isArray(item.content)) {
      for (const part of item.content) {
        if (!isPlainObject(part)) continue;
        if (part.type === 'output_text' && typeof part.text === 'string' && part.text !== '')
          content.push({ type: 'text', text: part.text, path });
        else if (part.type === 'refusal' && typeof part.refusal === 'string' && part.refusal !== '')
          content.push({ type: 'text', text: part.refusal, refusal: true, path });
      }
    } else if (item.type === 'function_call' && typeof item.name === 'string') {
      const id = stringOr(item.call_id);
      content.push({ type: 'tool_call', id, name: item.name, arguments: item.arguments, argumentsPath: path, path });
    } else if (item.type === 'reasoning') {
      const part = reasoningOfItem(item);
      if (part !== undefined) content.push(part);
    }
    // Built-in tool calls (web search, file search, code interpreter...) ran at the provider.
  }
  return content;
}

/**
 * A Response in the form. Throws for a body that is not a finished Response: one still queued or
 * in progress (a background response), and one that failed, whose error the client gets as 502.
 */
export function readResponsesResponse(body: JsonObject): ChatResponse {
  // Compatible servers may leave `object` out; one that names another object is not a Response.
  if (!isPlainObject(body) || (body.object ?? 'response') !== 'response' || !Array.isArray(body.output)) {
    throw new TranslationError('the provider response is not a Responses API response (no output)');
  }
  if (body.status === 'failed') {
    const error = isPlainObject(body.error) ? body.error : {};
    throw new TranslationError(`the provider's response failed: ${stringOr(error.message) ?? 'no reason given'}`);
  }
  if (body.status === 'queued' || body.status === 'in_progress') {
    throw new TranslationError(`the provider's response is not finished (status ${body.status})`);
  }
  const content = outputParts(body.output);
  const madeToolCalls = content.some((part) => 'type' in part && part.type === 'tool_call');
  return {
    id: stringOr(body.id),
    model: stringOr(body.model),
    content,
    stopReason: stopReasonOfResponse(body, madeToolCalls),
    usage: usageFromResponsesResponse(body),
  };
}
