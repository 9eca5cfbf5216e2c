// Responses API responses (OpenAI's Response object) written from the chat form, for a client
// that spoke the Responses API to a provider that does not. The stream writer (stream.ts) builds
// the same items event by event.

import { callSignaturesAsReasoning, encryptedContent } from '../form/signatures.ts';
import { argumentsJson } from '../form/tool-arguments.ts';
import type { ChatResponse, StopReason } from '../form/types.ts';
import type { JsonObject } from '../types.ts';
import { responsesUsage, type Usage } from '../usage.ts';

/** An output text part as the API writes it. */
export function outputText(text: string): JsonObject {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

/** Output item ids: gw names them by kind and position (`msg_0`, `fc_1`, `rs_2`). */
export function itemId(kind: 'msg' | 'fc' | 'rs', outputIndex: number): string {
  return `${kind}_${outputIndex}`;
}

export function messageItem(id: string, content: JsonObject[], status: 'in_progress' | 'completed'): JsonObject {
  return { id, type: 'message', status, role: 'assistant', content };
}

export function functionCallItem(
  id: string,
  callId: string,
  name: string,
  args: string,
  status: 'in_progress' | 'completed',
): JsonObject {
  return { id, type: 'function_call', status, call_id: callId, name, arguments: args };
}

/**
 * A reasoning item: its text as reasoning_text (none when empty), and the provider's signature or
 * redacted reasoning in encrypted_content (form/signatures.ts), which the client sends back with
 * the item in the next turn.
 */
export function reasoningItem(id: string, text: string | undefined, encrypted?: string): JsonObject {
  const content = text === undefined || text === '' ? [] : [{ type: 'reasoning_text', text }];
  const item: JsonObject = { id, type: 'reasoning', summary: [], content };
  if (encrypted !== undefined) item.encrypted_content = encrypted;
  return item;
}

/** A finished response's status: cut short by the token limit or a filter is `incomplete`, with the reason. */
function completion(reason: StopReason | undefined): { status: string; incomplete_details: JsonObject | null } {
  if (reason === 'max_tokens' || reason === 'context_window') {
    return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  }
  if (reason === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

/** The Response object; `done` undefined while the response is in progress. */
export function responseObject(
  id: string,
  model: string,
  createdAt: number,
  output: JsonObject[],
  done: { reason: StopReason | undefined; usage: Usage | undefined } | undefined,
): JsonObject {
  const state = done === undefined ? { status: 'in_progress', incomplete_details: null } : completion(done.reason);
  return {
    id,
    object: 'response',
    created_at: createdAt,
    status: state.status,
    error: null,
    incomplete_details: state.incomplete_details,
    model,
    output,
    usage: done?.usage ? responsesUsage(done.usage) : null,
  };
}

/** The status a finished response's last stream event names: response.completed or response.incomplete. */
export function finalEventType(reason: StopReason | undefined): string {
  return completion(reason).status === 'completed' ? 'response.completed' : 'response.incomplete';
}

/**
 * The form's response as a Response: text (and refusals) join into one message item until a
 * tool call or reasoning comes between; each tool call is a function_call item (its arguments
 * as JSON text; a missing id becomes `call_<n>`, a signature a reasoning item before it),
 * reasoning a reasoning item with its text and its signature or redacted data.
 * `model`, when given, replaces the provider's model name.
 */
export function writeResponsesResponse(response: ChatResponse, options: { model?: string } = {}): JsonObject {
  const output: JsonObject[] = [];
  let message: JsonObject[] | undefined;
  // A call's signature (Gemini's) goes to the client as a reasoning item before the call.
  for (const part of callSignaturesAsReasoning(response.content)) {
    if (!('type' in part)) continue;
    if (part.type === 'text') {
      if (message === undefined) {
        message = [];
        output.push(messageItem(itemId('msg', output.length), message, 'completed'));
      }
      const last = message.at(-1);
      if (part.refusal) message.push({ type: 'refusal', refusal: part.text });
      else if (last?.type === 'output_text') last.text = `${last.text as string}${part.text}`;
      else message.push(outputText(part.text));
    } else if (part.type === 'tool_call') {
      message = undefined;
      const callId = part.id ?? `call_${output.length}`;
      const args = argumentsJson(part.arguments);
      output.push(functionCallItem(itemId('fc', output.length), callId, part.name, args, 'completed'));
    } else if (part.type === 'reasoning') {
      message = undefined;
      output.push(reasoningItem(itemId('rs', output.length), part.text, encryptedContent(part)));
    }
  }
  const createdAt = Math.floor(Date.now() / 1000);
  const done = { reason: response.stopReason, usage: response.usage };
  return responseObject(response.id ?? '', options.model ?? response.model ?? '', createdAt, output, done);
}
