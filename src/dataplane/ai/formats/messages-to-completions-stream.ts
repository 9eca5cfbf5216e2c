// A Messages event stream (Anthropic) as a Chat Completions chunk stream (OpenAI).
//
// message_start gives the role chunk; text deltas content chunks; each tool_use block a tool call
// (index in order of appearance, id and name on its first chunk, then argument fragments);
// message_delta's stop_reason the finish chunk; message_stop the usage chunk (only when the client
// asked for it with stream_options.include_usage) and `data: [DONE]`.
import { isPlainObject, stringOr } from './json.ts';
import { finishReasonFor } from './stop-reasons.ts';
import { type EventTranslator, parseEventObject, StreamFailure, TRUNCATED_MESSAGE, upstreamFailure } from './stream.ts';
import type { JsonObject } from './types.ts';
import { completionsUsage, type Usage, usageFromMessages } from './usage.ts';

type BlockState = { kind: 'text' } | { kind: 'tool'; toolIndex: number; argumentsSent: boolean } | { kind: 'other' };

const KNOWN_EVENTS = new Set([
  'message_start',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
  'message_delta',
  'message_stop',
  'ping',
  'error',
]);

export class MessagesToCompletionsEvents implements EventTranslator {
  readonly #clientModel: string | undefined;
  readonly #includeUsage: boolean;
  readonly #created = Math.floor(Date.now() / 1000);
  #id = '';
  #upstreamModel: string | undefined;
  #started = false;
  #done = false;
  #finishSent = false;
  #stopReason: unknown;
  readonly #blocks = new Map<number, BlockState>();
  #nextToolIndex = 0;
  // Anthropic's usage counters as reported: message_start's, then message_delta's cumulative ones.
  #counters: JsonObject = {};
  #firstToken = false;

  constructor(options: { model?: string; includeUsage?: boolean }) {
    this.#clientModel = options.model;
    this.#includeUsage = options.includeUsage === true;
  }

  get done(): boolean {
    return this.#done;
  }

  get usage(): Usage | undefined {
    return usageFromMessages(this.#counters);
  }

  get model(): string | undefined {
    return this.#upstreamModel ?? this.#clientModel;
  }

  get firstTokenSeen(): boolean {
    return this.#firstToken;
  }

  event(_name: string | undefined, data: string): string {
    if (this.#done) return '';
    const payload = parseEventObject(data);
    const type = payload.type;
    if (typeof type !== 'string') throw new StreamFailure(502, 'The provider sent an event without a type.');
    // Anthropic may add event types; its versioning policy has clients ignore the ones they do not know.
    if (!KNOWN_EVENTS.has(type) || type === 'ping') return '';
    if (type === 'error') throw upstreamFailure(payload.error);
    if (type === 'message_start') return this.#start(payload);
    if (!this.#started) throw new StreamFailure(502, `The provider sent ${type} before message_start.`);
    switch (type) {
      case 'content_block_start':
        return this.#blockStart(payload);
      case 'content_block_delta':
        return this.#blockDelta(payload);
      case 'content_block_stop':
        return this.#blockStop(payload);
      case 'message_delta':
        return this.#messageDelta(payload);
      default:
        return this.#finish();
    }
  }

  end(): string {
    if (this.#done) return '';
    // The stop reason arrived and only message_stop is missing: the response is whole.
    if (this.#finishSent) return this.#finish();
    throw new StreamFailure(502, TRUNCATED_MESSAGE);
  }

  #chunk(delta: JsonObject, finishReason: string | null): string {
    const chunk: JsonObject = {
      id: this.#id,
      object: 'chat.completion.chunk',
      created: this.#created,
      model: this.#clientModel ?? this.#upstreamModel ?? '',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    };
    if (this.#includeUsage) chunk.usage = null;
    return `data: ${JSON.stringify(chunk)}\n\n`;
  }

  #start(payload: JsonObject): string {
    const message = payload.message;
    if (this.#started || !isPlainObject(message))
      throw new StreamFailure(502, 'The provider sent an unexpected message_start.');
    this.#started = true;
    this.#id = stringOr(message.id) ?? '';
    this.#upstreamModel = stringOr(message.model);
    if (isPlainObject(message.usage)) this.#counters = { ...message.usage };
    return this.#chunk({ role: 'assistant', content: '' }, null);
  }

  #index(payload: JsonObject): number {
    const index = payload.index;
    if (typeof index !== 'number')
      throw new StreamFailure(502, `The provider sent a ${payload.type} without an index.`);
    return index;
  }

  #blockStart(payload: JsonObject): string {
    const index = this.#index(payload);
    const block = payload.content_block;
    if (!isPlainObject(block)) throw new StreamFailure(502, 'The provider sent a content_block_start without a block.');
    if (block.type === 'text') {
      this.#blocks.set(index, { kind: 'text' });
      return this.#text(block.text);
    }
    if (block.type !== 'tool_use') {
      // Reasoning and server-tool blocks have no Chat Completions field.
      this.#blocks.set(index, { kind: 'other' });
      return '';
    }
    const toolIndex = this.#nextToolIndex++;
    const input = isPlainObject(block.input) && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : '';
    this.#blocks.set(index, { kind: 'tool', toolIndex, argumentsSent: input !== '' });
    this.#firstToken = true;
    const fn = { name: stringOr(block.name) ?? '', arguments: input };
    return this.#chunk(
      { tool_calls: [{ index: toolIndex, id: stringOr(block.id) ?? '', type: 'function', function: fn }] },
      null,
    );
  }

  #blockDelta(payload: JsonObject): string {
    const state = this.#blocks.get(this.#index(payload));
    const delta = payload.delta;
    if (!state || !isPlainObject(delta)) {
      throw new StreamFailure(502, 'The provider sent a content_block_delta for a block it did not start.');
    }
    if (delta.type === 'thinking_delta') this.#firstToken = true;
    if (state.kind === 'text' && delta.type === 'text_delta') return this.#text(delta.text);
    if (state.kind === 'tool' && delta.type === 'input_json_delta') {
      const fragment = stringOr(delta.partial_json) ?? '';
      if (fragment === '') return '';
      state.argumentsSent = true;
      return this.#chunk({ tool_calls: [{ index: state.toolIndex, function: { arguments: fragment } }] }, null);
    }
    return '';
  }

  #text(text: unknown): string {
    if (typeof text !== 'string' || text === '') return '';
    this.#firstToken = true;
    return this.#chunk({ content: text }, null);
  }

  #blockStop(payload: JsonObject): string {
    const state = this.#blocks.get(this.#index(payload));
    // A tool without parameters streams no input: its arguments are still a JSON object.
    if (state?.kind !== 'tool' || state.argumentsSent) return '';
    state.argumentsSent = true;
    return this.#chunk({ tool_calls: [{ index: state.toolIndex, function: { arguments: '{}' } }] }, null);
  }

  #messageDelta(payload: JsonObject): string {
    if (isPlainObject(payload.usage)) {
      // Cumulative counters: present ones replace, absent (or null) ones keep message_start's.
      for (const [key, value] of Object.entries(payload.usage)) if (value !== null) this.#counters[key] = value;
    }
    const delta = isPlainObject(payload.delta) ? payload.delta : {};
    if (typeof delta.stop_reason !== 'string' || this.#finishSent) return '';
    this.#stopReason = delta.stop_reason;
    this.#finishSent = true;
    return this.#chunk({}, finishReasonFor(this.#stopReason));
  }

  #finish(): string {
    this.#done = true;
    let out = this.#finishSent ? '' : this.#chunk({}, finishReasonFor(this.#stopReason));
    if (this.#includeUsage) {
      const usage = this.usage ?? { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
      const chunk = {
        id: this.#id,
        object: 'chat.completion.chunk',
        created: this.#created,
        model: this.#clientModel ?? this.#upstreamModel ?? '',
        choices: [],
        usage: completionsUsage(usage),
      };
      out += `data: ${JSON.stringify(chunk)}\n\n`;
    }
    return `${out}data: [DONE]\n\n`;
  }
}
