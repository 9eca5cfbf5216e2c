// Messages event streams (Anthropic) read into the chat form's stream calls, and written from
// them.
//
// Reading: message_start starts the response (with its input usage); text deltas are text,
// thinking deltas reasoning (signature deltas its signature, a redacted_thinking block redacted
// reasoning); each tool_use block a tool call (numbered in order of appearance)
// with its input_json_delta fragments; message_delta's stop_reason stops it; message_stop
// completes it. ping and event types gw does not know are ignored, as Anthropic's versioning
// policy asks of clients.
//
// Writing: the start is message_start; text and reasoning open a text or thinking block when none
// is open (a reasoning signature is the thinking block's signature_delta, redacted reasoning a
// redacted_thinking block); each tool call a tool_use block (after a thinking block with only a
// signature when the call has one); blocks are numbered in order and each is stopped
// before the next starts; the end is message_delta with the stop reason and usage, then
// message_stop.
import type { StopReason, StreamWriter } from '../form/types.ts';
import { isPlainObject, stringOr } from '../json.ts';
import {
  ProviderStreamReader,
  parseEventObject,
  StreamFailure,
  TRUNCATED_MESSAGE,
  upstreamFailure,
} from '../stream.ts';
import type { JsonObject } from '../types.ts';
import { messagesUsage, type Usage, usageFromMessages } from '../usage.ts';
import { messagesStopReason, stopReasonOfMessages } from './response.ts';

type BlockState = { kind: 'text' } | { kind: 'tool'; toolIndex: number } | { kind: 'other' };

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

export class MessagesStreamReader extends ProviderStreamReader {
  #started = false;
  #stopped = false;
  readonly #blocks = new Map<number, BlockState>();
  #nextToolIndex = 0;
  // Anthropic's usage counters as reported: message_start's, then message_delta's cumulative ones.
  #counters: JsonObject = {};

  override get usage(): Usage | undefined {
    return usageFromMessages(this.#counters);
  }

  event(_name: string | undefined, data: string): string {
    if (this.finished) return '';
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
    if (this.finished) return '';
    // The stop reason arrived and only message_stop is missing: the response is whole.
    if (this.#stopped) return this.#finish();
    throw new StreamFailure(502, TRUNCATED_MESSAGE);
  }

  #start(payload: JsonObject): string {
    const message = payload.message;
    if (this.#started || !isPlainObject(message))
      throw new StreamFailure(502, 'The provider sent an unexpected message_start.');
    this.#started = true;
    this.reportedModel = stringOr(message.model);
    if (isPlainObject(message.usage)) this.#counters = { ...message.usage };
    return this.writer.start(stringOr(message.id) ?? '', this.reportedModel);
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
    if (block.type === 'redacted_thinking' && typeof block.data === 'string') {
      this.#blocks.set(index, { kind: 'other' });
      return this.writer.redactedReasoning?.(block.data) ?? '';
    }
    if (block.type !== 'tool_use') {
      // Thinking arrives in its deltas; server-tool blocks have no place in the form.
      this.#blocks.set(index, { kind: 'other' });
      return '';
    }
    const toolIndex = this.#nextToolIndex++;
    const input = isPlainObject(block.input) && Object.keys(block.input).length > 0 ? JSON.stringify(block.input) : '';
    this.#blocks.set(index, { kind: 'tool', toolIndex });
    this.firstToken = true;
    return this.writer.toolStart(toolIndex, stringOr(block.id), stringOr(block.name) ?? '', input);
  }

  #blockDelta(payload: JsonObject): string {
    const state = this.#blocks.get(this.#index(payload));
    const delta = payload.delta;
    if (!state || !isPlainObject(delta)) {
      throw new StreamFailure(502, 'The provider sent a content_block_delta for a block it did not start.');
    }
    if (delta.type === 'thinking_delta') {
      this.firstToken = true;
      return typeof delta.thinking === 'string' && delta.thinking !== '' ? this.writer.reasoning(delta.thinking) : '';
    }
    if (delta.type === 'signature_delta') {
      // The thinking block's signature, which Claude checks when the thinking comes back.
      const signature = stringOr(delta.signature) ?? '';
      return signature === '' ? '' : (this.writer.reasoningSignature?.(signature) ?? '');
    }
    if (state.kind === 'text' && delta.type === 'text_delta') return this.#text(delta.text);
    if (state.kind === 'tool' && delta.type === 'input_json_delta') {
      const fragment = stringOr(delta.partial_json) ?? '';
      return fragment === '' ? '' : this.writer.toolArguments(state.toolIndex, fragment);
    }
    return '';
  }

  #text(text: unknown): string {
    if (typeof text !== 'string' || text === '') return '';
    this.firstToken = true;
    return this.writer.text(text);
  }

  #blockStop(payload: JsonObject): string {
    const state = this.#blocks.get(this.#index(payload));
    return state?.kind === 'tool' ? this.writer.toolEnd(state.toolIndex) : '';
  }

  #messageDelta(payload: JsonObject): string {
    if (isPlainObject(payload.usage)) {
      // Cumulative counters: present ones replace, absent (or null) ones keep message_start's.
      for (const [key, value] of Object.entries(payload.usage)) if (value !== null) this.#counters[key] = value;
    }
    const delta = isPlainObject(payload.delta) ? payload.delta : {};
    if (typeof delta.stop_reason !== 'string' || this.#stopped) return '';
    this.#stopped = true;
    return this.writer.stop(stopReasonOfMessages(delta.stop_reason));
  }

  #finish(): string {
    this.finished = true;
    return this.writer.done(this.usage);
  }
}

function sse(payload: JsonObject): string {
  return `event: ${payload.type as string}\ndata: ${JSON.stringify(payload)}\n\n`;
}

export class MessagesStreamWriter implements StreamWriter {
  readonly #clientModel: string | undefined;
  #nextBlock = 0;
  #open: { index: number; kind: 'text' | 'thinking' | 'tool' } | undefined;
  // The form's tool index -> the Messages content block index.
  readonly #toolBlocks: number[] = [];
  #stopReason: StopReason | undefined;

  constructor(options: { model?: string }) {
    this.#clientModel = options.model;
  }

  start(id: string, model: string | undefined): string {
    const message = {
      id,
      type: 'message',
      role: 'assistant',
      model: this.#clientModel ?? model ?? '',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      // Formats that report usage only at the end: message_delta carries it.
      usage: { input_tokens: 0, output_tokens: 0 },
    };
    return sse({ type: 'message_start', message });
  }

  text(text: string): string {
    const out = this.#openBlock('text', { type: 'text', text: '' });
    const index = this.#open!.index;
    return out + sse({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
  }

  reasoning(text: string): string {
    const out = this.#openBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
    const index = this.#open!.index;
    return out + sse({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: text } });
  }

  reasoningSignature(signature: string): string {
    const out = this.#openBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
    const index = this.#open!.index;
    return out + sse({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature } });
  }

  redactedReasoning(data: string): string {
    const out = this.#closeOpenBlock();
    const index = this.#nextBlock++;
    const content_block = { type: 'redacted_thinking', data };
    return (
      out + sse({ type: 'content_block_start', index, content_block }) + sse({ type: 'content_block_stop', index })
    );
  }

  #openBlock(kind: 'text' | 'thinking', block: JsonObject): string {
    if (this.#open?.kind === kind) return '';
    const out = this.#closeOpenBlock();
    const index = this.#nextBlock++;
    this.#open = { index, kind };
    return out + sse({ type: 'content_block_start', index, content_block: block });
  }

  toolStart(index: number, id: string | undefined, name: string, initialArguments: string, signature?: string): string {
    let out = this.#closeOpenBlock();
    // A call's signature (Gemini's) goes to the client as a thinking block of its own before the
    // call, as in a whole response (form/signatures.ts).
    if (signature !== undefined) out += this.reasoningSignature(signature) + this.#closeOpenBlock();
    const block = this.#nextBlock++;
    this.#toolBlocks[index] = block;
    this.#open = { index: block, kind: 'tool' };
    const content_block = { type: 'tool_use', id: id ?? `toolu_gw_${block}`, name, input: {} };
    out += sse({ type: 'content_block_start', index: block, content_block });
    return initialArguments === '' ? out : out + this.toolArguments(index, initialArguments);
  }

  toolArguments(index: number, fragment: string): string {
    // A late fragment of an earlier call still goes to that call's block: clients address blocks by index.
    const block = this.#toolBlocks[index];
    if (block === undefined) return '';
    return sse({
      type: 'content_block_delta',
      index: block,
      delta: { type: 'input_json_delta', partial_json: fragment },
    });
  }

  toolEnd(): string {
    // Blocks are stopped when the next one starts, or at the stop.
    return '';
  }

  stop(reason: StopReason | undefined): string {
    this.#stopReason = reason;
    return this.#closeOpenBlock();
  }

  done(usage: Usage | undefined): string {
    let out = this.#closeOpenBlock();
    out += sse({
      type: 'message_delta',
      delta: { stop_reason: messagesStopReason(this.#stopReason), stop_sequence: null },
      usage: messagesUsage(usage ?? { inputTokens: 0, outputTokens: 0, totalTokens: 0 }),
    });
    return out + sse({ type: 'message_stop' });
  }

  #closeOpenBlock(): string {
    if (!this.#open) return '';
    const index = this.#open.index;
    this.#open = undefined;
    return sse({ type: 'content_block_stop', index });
  }
}
