// Responses API event streams read into the chat form's stream calls: the provider side, for a
// server that speaks only the Responses API streaming to a Chat Completions or Messages client.
//
// Each event's data carries its `type` (the SSE event name repeats it). response.created starts
// the response; response.output_text.delta (and refusal deltas) are text; reasoning summary and
// reasoning text deltas are reasoning (a finished reasoning item's id and encrypted_content its
// signature); a function_call output item is a tool call (numbered in
// order of appearance, found again by its output_index) whose
// response.function_call_arguments.delta events are its argument fragments, ended by its
// response.output_item.done. response.completed, or response.incomplete (the token limit, a
// filter), stops the response and completes it with the usage of the response it carries.
// response.failed and an error event end the stream with the provider's error. Event types gw
// does not know (built-in tool progress, annotations...) are ignored, as OpenAI adds them.

import { statusForErrorType } from '../errors.ts';
import { isPlainObject, numberOr, stringOr } from '../json.ts';
import { ProviderStreamReader, parseEventObject, StreamFailure, TRUNCATED_MESSAGE } from '../stream.ts';
import type { JsonObject } from '../types.ts';
import { usageFromResponsesResponse } from '../usage.ts';
import { reasoningOfItem, stopReasonOfResponse } from './response-reader.ts';

/** A function call being streamed: the form's tool index, and whether arguments were sent for it. */
interface StreamedCall {
  toolIndex: number;
  argumentsSent: boolean;
  ended: boolean;
}

/** OpenAI's error codes in a failed response or an error event, and the status each stands for. */
const STATUS_OF_CODE: Record<string, number> = {
  rate_limit_exceeded: 429,
  server_error: 500,
  invalid_prompt: 400,
};

export class ResponsesStreamReader extends ProviderStreamReader {
  #started = false;
  readonly #calls = new Map<number, StreamedCall>();
  #nextToolIndex = 0;

  event(_name: string | undefined, data: string): string {
    if (this.finished) return '';
    const payload = parseEventObject(data);
    const type = payload.type;
    if (typeof type !== 'string') throw new StreamFailure(502, 'The provider sent an event without a type.');
    if (type === 'error') throw responsesFailure(payload);
    if (type === 'response.failed') {
      const response = isPlainObject(payload.response) ? payload.response : {};
      throw responsesFailure(isPlainObject(response.error) ? response.error : {});
    }
    if (type === 'response.created') return this.#start(payload);
    if (!this.#started) {
      // Events before the response exists (none are defined) say nothing gw can place.
      if (!type.startsWith('response.')) return '';
      throw new StreamFailure(502, `The provider sent ${type} before response.created.`);
    }
    switch (type) {
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        return this.#text(payload.delta);
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        return this.#reasoning(payload.delta);
      case 'response.output_item.added':
        return this.#itemAdded(payload);
      case 'response.function_call_arguments.delta':
        return this.#arguments(payload);
      case 'response.output_item.done':
        return this.#itemDone(payload);
      case 'response.completed':
      case 'response.incomplete':
        return this.#finish(payload);
      default:
        return '';
    }
  }

  end(): string {
    if (this.finished) return '';
    throw new StreamFailure(502, TRUNCATED_MESSAGE);
  }

  #start(payload: JsonObject): string {
    const response = payload.response;
    if (this.#started || !isPlainObject(response))
      throw new StreamFailure(502, 'The provider sent an unexpected response.created.');
    this.#started = true;
    this.reportedModel = stringOr(response.model);
    return this.writer.start(stringOr(response.id) ?? '', this.reportedModel);
  }

  #text(delta: unknown): string {
    if (typeof delta !== 'string' || delta === '') return '';
    this.firstToken = true;
    return this.writer.text(delta);
  }

  #reasoning(delta: unknown): string {
    if (typeof delta !== 'string' || delta === '') return '';
    this.firstToken = true;
    return this.writer.reasoning(delta);
  }

  #outputIndex(payload: JsonObject): number {
    const index = numberOr(payload.output_index);
    if (index === undefined)
      throw new StreamFailure(502, `The provider sent a ${payload.type} without an output_index.`);
    return index;
  }

  /** A function_call item starts a tool call (with any arguments it already carries). */
  #itemAdded(payload: JsonObject): string {
    const item = payload.item;
    if (!isPlainObject(item) || item.type !== 'function_call') return '';
    return this.#startCall(this.#outputIndex(payload), item);
  }

  #startCall(outputIndex: number, item: JsonObject): string {
    if (this.#calls.has(outputIndex))
      throw new StreamFailure(502, 'The provider sent a function call twice at one output_index.');
    const initial = stringOr(item.arguments) ?? '';
    const call: StreamedCall = { toolIndex: this.#nextToolIndex++, argumentsSent: initial !== '', ended: false };
    this.#calls.set(outputIndex, call);
    this.firstToken = true;
    return this.writer.toolStart(call.toolIndex, stringOr(item.call_id), stringOr(item.name) ?? '', initial);
  }

  #arguments(payload: JsonObject): string {
    const call = this.#calls.get(this.#outputIndex(payload));
    if (call === undefined)
      throw new StreamFailure(502, 'The provider sent function call arguments for an item it did not add.');
    const fragment = stringOr(payload.delta) ?? '';
    if (fragment === '') return '';
    call.argumentsSent = true;
    return this.writer.toolArguments(call.toolIndex, fragment);
  }

  /**
   * A function_call item is complete: its call ends. A server that streamed no arguments (or never
   * announced the item) has them only here, so they are sent now.
   */
  #itemDone(payload: JsonObject): string {
    const item = payload.item;
    if (isPlainObject(item) && item.type === 'reasoning') return this.#reasoningDone(item);
    if (!isPlainObject(item) || item.type !== 'function_call') return '';
    const outputIndex = this.#outputIndex(payload);
    let out = this.#calls.has(outputIndex) ? '' : this.#startCall(outputIndex, item);
    const call = this.#calls.get(outputIndex)!;
    if (call.ended) return out;
    const args = stringOr(item.arguments) ?? '';
    if (!call.argumentsSent && args !== '') {
      call.argumentsSent = true;
      out += this.writer.toolArguments(call.toolIndex, args);
    }
    call.ended = true;
    return out + this.writer.toolEnd(call.toolIndex);
  }

  /** A finished reasoning item's id and encrypted_content are the signature of the reasoning streamed. */
  #reasoningDone(item: JsonObject): string {
    const signature = reasoningOfItem(item)?.signature;
    return signature === undefined ? '' : (this.writer.reasoningSignature?.(signature) ?? '');
  }

  #finish(payload: JsonObject): string {
    const response = isPlainObject(payload.response) ? payload.response : {};
    this.reportedUsage = usageFromResponsesResponse(response);
    let out = '';
    for (const call of this.#calls.values()) {
      if (!call.ended) {
        call.ended = true;
        out += this.writer.toolEnd(call.toolIndex);
      }
    }
    this.finished = true;
    out += this.writer.stop(stopReasonOfResponse(response, this.#calls.size > 0));
    return out + this.writer.done(this.reportedUsage);
  }
}

/**
 * The provider's error (an error event's fields, or a failed response's `error`): its message,
 * and the status its code (or type) stands for. An error event carries the fields itself (as the
 * API reference shows it) or nested in `error`, as in an error body (as gw writes it, and as the
 * openai SDK reads it).
 */
function responsesFailure(event: JsonObject): StreamFailure {
  const error = isPlainObject(event.error) ? event.error : event;
  const message = stringOr(error.message) ?? 'The provider reported an error in the stream.';
  const code = stringOr(error.code);
  const status = (code !== undefined ? STATUS_OF_CODE[code] : undefined) ?? statusForErrorType(error.type);
  return new StreamFailure(status, message, true);
}
