// Same-format streams: the events pass through byte for byte while gw reads usage, model and the
// first token from them. The one change: the usage-only Chat Completions chunk that gw asked for
// on the client's behalf (stream_options.include_usage) is left out when dropUsageOnlyChunk is set.
//
// An observer never breaks a stream: an event it cannot read is passed on unread, and past an
// event longer than the bound it stops reading and passes the rest through as it comes. Made for
// `detect`, it does not know the format in advance: the first event that tells decides it.
import { detectedEventFormat } from './detect.ts';
import { responsesStreamErrorEvent, streamErrorEvent } from './errors.ts';
import { isPlainObject, stringOr } from './json.ts';
import { type SseBlock, SseReader } from './sse-reader.ts';
import type { StreamProcessor, StreamState } from './stream.ts';
import type { ApiFormat, JsonObject } from './types.ts';
import {
  type Usage,
  usageFromCompletions,
  usageFromGemini,
  usageFromMessages,
  usageFromResponsesResponse,
} from './usage.ts';

/** The stream formats an observer reads; a Gemini stream is observed only when the client speaks it too. */
export type ObservedFormat = 'completions' | 'messages' | 'responses' | 'gemini';

export interface StreamObserverOptions {
  /** Leave out the Chat Completions chunk that carries only usage (`choices: []`). */
  dropUsageOnlyChunk?: boolean;
}

const RESPONSE_EVENTS = new Set([
  'response.created',
  'response.in_progress',
  'response.completed',
  'response.incomplete',
  'response.failed',
]);

/** An observer of a stream in `format`, or (`detect`) in whichever of them its events turn out to be in. */
export function createStreamObserver(
  format: ObservedFormat | 'detect',
  options: StreamObserverOptions = {},
): ObservingProcessor {
  return new StreamObserver(
    format === 'detect' ? undefined : format,
    options.dropUsageOnlyChunk === true && format === 'completions',
  );
}

export interface ObservingProcessor extends StreamProcessor {
  /** The stream's format; undefined while no event has told it (`detect`). */
  readonly format: ObservedFormat | undefined;
  /**
   * The event that ends this stream on an error, in the stream's own format (`otherwise` while no
   * event has told it): a Responses stream's is its `error` event numbered after the last event
   * passed on, as the API numbers every event of a stream.
   */
  errorEvent(otherwise: ApiFormat, status: number, message: string): string;
}

class StreamObserver implements ObservingProcessor {
  readonly #reader = new SseReader();
  #format: ObservedFormat | undefined;
  readonly #dropUsageOnlyChunk: boolean;
  #usage: Usage | undefined;
  #messagesCounters: JsonObject | undefined;
  #model: string | undefined;
  #firstToken = false;
  /** The sequence_number of the last Responses event seen (-1: none yet). */
  #lastSequence = -1;

  constructor(format: ObservedFormat | undefined, dropUsageOnlyChunk: boolean) {
    this.#format = format;
    this.#dropUsageOnlyChunk = dropUsageOnlyChunk;
  }

  get format(): ObservedFormat | undefined {
    return this.#format;
  }

  get usage(): Usage | undefined {
    return this.#messagesCounters ? usageFromMessages(this.#messagesCounters) : this.#usage;
  }

  get model(): string | undefined {
    return this.#model;
  }

  get firstTokenSeen(): boolean {
    return this.#firstToken;
  }

  // An observer never ends a stream itself: it passes on whatever the upstream sends.
  get state(): StreamState {
    return 'open';
  }

  get failure(): undefined {
    return undefined;
  }

  errorEvent(otherwise: ApiFormat, status: number, message: string): string {
    const format = this.#format ?? otherwise;
    if (format === 'responses') return responsesStreamErrorEvent(status, message, this.#lastSequence + 1);
    return streamErrorEvent(format, status, message);
  }

  write(chunk: Uint8Array): string {
    return this.#pass(this.#reader.push(chunk));
  }

  end(): string {
    return this.#pass(this.#reader.finish());
  }

  #pass(blocks: SseBlock[]): string {
    let out = '';
    for (const block of blocks) if (block.data === undefined || this.#observe(block.data)) out += block.raw;
    if (this.#reader.overflowed) out += this.#reader.passthrough();
    return out;
  }

  /** Reads one event; false when the event is to be left out. */
  #observe(data: string): boolean {
    if (data === '[DONE]') return true;
    let payload: unknown;
    try {
      payload = JSON.parse(data);
    } catch {
      return true;
    }
    if (!isPlainObject(payload)) return true;
    this.#format ??= detectedEventFormat(payload);
    switch (this.#format) {
      case 'completions':
        return this.#completionsChunk(payload);
      case 'messages':
        this.#messagesEvent(payload);
        return true;
      case 'responses':
        this.#responsesEvent(payload);
        return true;
      case 'gemini':
        this.#geminiChunk(payload);
        return true;
      case undefined:
        return true;
    }
  }

  #completionsChunk(chunk: JsonObject): boolean {
    this.#model ??= stringOr(chunk.model);
    const usage = usageFromCompletions(chunk.usage);
    if (usage) this.#usage = usage;
    if (!Array.isArray(chunk.choices)) return true;
    if (!this.#firstToken && chunk.choices.some(generatesContent)) this.#firstToken = true;
    return !(this.#dropUsageOnlyChunk && usage !== undefined && chunk.choices.length === 0);
  }

  #messagesEvent(event: JsonObject): void {
    if (event.type === 'message_start' && isPlainObject(event.message)) {
      this.#model = stringOr(event.message.model);
      this.#messagesCounters = isPlainObject(event.message.usage) ? { ...event.message.usage } : {};
    } else if (event.type === 'message_delta' && isPlainObject(event.usage)) {
      this.#messagesCounters ??= {};
      for (const [key, value] of Object.entries(event.usage)) if (value !== null) this.#messagesCounters[key] = value;
    } else if (event.type === 'content_block_delta') {
      this.#firstToken = true;
    } else if (event.type === 'content_block_start' && isPlainObject(event.content_block)) {
      if (event.content_block.type === 'tool_use') this.#firstToken = true;
    }
  }

  // Each chunk is a GenerateContentResponse; its usageMetadata is cumulative (the last one counts).
  #geminiChunk(chunk: JsonObject): void {
    this.#model ??= stringOr(chunk.modelVersion);
    const usage = usageFromGemini(chunk.usageMetadata);
    if (usage) this.#usage = usage;
    if (this.#firstToken || !Array.isArray(chunk.candidates)) return;
    const content = isPlainObject(chunk.candidates[0]) ? chunk.candidates[0].content : undefined;
    if (isPlainObject(content) && Array.isArray(content.parts) && content.parts.length > 0) this.#firstToken = true;
  }

  #responsesEvent(event: JsonObject): void {
    if (typeof event.sequence_number === 'number' && event.sequence_number > this.#lastSequence)
      this.#lastSequence = event.sequence_number;
    const type = stringOr(event.type);
    if (type === undefined) return;
    if (RESPONSE_EVENTS.has(type) && isPlainObject(event.response)) {
      this.#model = stringOr(event.response.model) ?? this.#model;
      this.#usage = usageFromResponsesResponse(event.response) ?? this.#usage;
    } else if (type.endsWith('.delta')) {
      this.#firstToken = true;
    }
  }
}

function generatesContent(choice: unknown): boolean {
  if (!isPlainObject(choice) || !isPlainObject(choice.delta)) return false;
  const delta = choice.delta;
  return (
    (typeof delta.content === 'string' && delta.content !== '') ||
    (typeof delta.refusal === 'string' && delta.refusal !== '') ||
    (Array.isArray(delta.tool_calls) && delta.tool_calls.length > 0) ||
    isPlainObject(delta.function_call)
  );
}
