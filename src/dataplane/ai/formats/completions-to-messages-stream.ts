// A Chat Completions chunk stream (OpenAI) as a Messages event stream (Anthropic).
//
// The first chunk gives message_start; text (and refusal) deltas a text block; each tool call a
// tool_use block, its argument fragments input_json_delta events; blocks are numbered in order
// and each is stopped before the next starts. The finish_reason and the usage chunk (gw asks for
// it) give message_delta, then message_stop; `data: [DONE]` ends the stream in any case.
import { isPlainObject, stringOr } from './json.ts';
import { stopReasonFor } from './stop-reasons.ts';
import { type EventTranslator, parseEventObject, StreamFailure, TRUNCATED_MESSAGE, upstreamFailure } from './stream.ts';
import type { JsonObject } from './types.ts';
import { messagesUsage, type Usage, usageFromCompletions } from './usage.ts';

// The legacy function_call delta has no index: it is one tool call of its own.
const LEGACY_FUNCTION_CALL = -1;

function sse(payload: JsonObject): string {
  return `event: ${payload.type as string}\ndata: ${JSON.stringify(payload)}\n\n`;
}

export class CompletionsToMessagesEvents implements EventTranslator {
  readonly #clientModel: string | undefined;
  #id = '';
  #upstreamModel: string | undefined;
  #started = false;
  #done = false;
  #nextBlock = 0;
  #open: { index: number; kind: 'text' | 'tool' } | undefined;
  // Chat Completions tool call index -> Messages content block index.
  readonly #toolBlocks = new Map<number, number>();
  #finishReason: string | undefined;
  #usage: Usage | undefined;
  #firstToken = false;

  constructor(options: { model?: string }) {
    this.#clientModel = options.model;
  }

  get done(): boolean {
    return this.#done;
  }

  get usage(): Usage | undefined {
    return this.#usage;
  }

  get model(): string | undefined {
    return this.#upstreamModel ?? this.#clientModel;
  }

  get firstTokenSeen(): boolean {
    return this.#firstToken;
  }

  event(_name: string | undefined, data: string): string {
    if (this.#done) return '';
    if (data.trim() === '[DONE]') return this.#complete();
    const chunk = parseEventObject(data);
    if (chunk.error !== undefined && chunk.error !== null) throw upstreamFailure(chunk.error);
    const usage = usageFromCompletions(chunk.usage);
    // Some compatible servers send the usage chunk without a choices field.
    const choices = chunk.choices ?? (usage ? [] : undefined);
    if (!Array.isArray(choices)) throw new StreamFailure(502, 'The provider sent a chunk without choices.');
    if (usage) this.#usage = usage;
    let out = this.#started ? '' : this.#start(chunk);
    for (const choice of choices) {
      if (!isPlainObject(choice)) throw new StreamFailure(502, 'The provider sent a choice that is not an object.');
      // Messages has one choice; n > 1 is refused when the request is translated.
      if ((choice.index ?? 0) !== 0) continue;
      const delta = choice.delta;
      if (isPlainObject(delta)) out += this.#delta(delta);
      else if (delta !== undefined && delta !== null)
        throw new StreamFailure(502, 'The provider sent a malformed delta.');
      if (typeof choice.finish_reason === 'string') {
        this.#finishReason = choice.finish_reason;
        out += this.#closeOpenBlock();
      }
    }
    // The usage chunk follows the finish chunk: with both, the response is complete.
    if (this.#finishReason !== undefined && this.#usage !== undefined) out += this.#complete();
    return out;
  }

  end(): string {
    if (this.#done) return '';
    if (this.#finishReason !== undefined) return this.#complete();
    throw new StreamFailure(502, TRUNCATED_MESSAGE);
  }

  #start(chunk: JsonObject): string {
    this.#started = true;
    this.#id = stringOr(chunk.id) ?? '';
    this.#upstreamModel = stringOr(chunk.model);
    const message = {
      id: this.#id,
      type: 'message',
      role: 'assistant',
      model: this.#clientModel ?? this.#upstreamModel ?? '',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      // Chat Completions reports usage only at the end; message_delta carries it.
      usage: { input_tokens: 0, output_tokens: 0 },
    };
    return sse({ type: 'message_start', message });
  }

  #delta(delta: JsonObject): string {
    let out = '';
    if (typeof delta.content === 'string' && delta.content !== '') out += this.#text(delta.content);
    if (typeof delta.refusal === 'string' && delta.refusal !== '') out += this.#text(delta.refusal);
    if (Array.isArray(delta.tool_calls)) {
      for (const call of delta.tool_calls) out += this.#toolCall(call);
    } else if (delta.tool_calls !== undefined && delta.tool_calls !== null) {
      throw new StreamFailure(502, 'The provider sent malformed tool_calls.');
    }
    if (isPlainObject(delta.function_call)) {
      out += this.#toolCall({ index: LEGACY_FUNCTION_CALL, id: 'legacy_function_call', function: delta.function_call });
    }
    return out;
  }

  #text(text: string): string {
    this.#firstToken = true;
    let out = '';
    if (this.#open?.kind !== 'text') {
      out += this.#closeOpenBlock();
      const index = this.#nextBlock++;
      this.#open = { index, kind: 'text' };
      out += sse({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    }
    const index = this.#open!.index;
    return out + sse({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
  }

  #toolCall(call: unknown): string {
    if (!isPlainObject(call) || typeof call.index !== 'number') {
      throw new StreamFailure(502, 'The provider sent a tool call without an index.');
    }
    const fn = isPlainObject(call.function) ? call.function : {};
    let out = '';
    let index = this.#toolBlocks.get(call.index);
    if (index === undefined) {
      out += this.#closeOpenBlock();
      index = this.#nextBlock++;
      this.#toolBlocks.set(call.index, index);
      this.#open = { index, kind: 'tool' };
      this.#firstToken = true;
      const block = {
        type: 'tool_use',
        id: stringOr(call.id) ?? `toolu_gw_${index}`,
        name: stringOr(fn.name) ?? '',
        input: {},
      };
      out += sse({ type: 'content_block_start', index, content_block: block });
    }
    // Fragments of an earlier call after a later one began (providers do not interleave, but the
    // format allows it) still go to that call's block, which Messages clients address by index.
    if (typeof fn.arguments === 'string' && fn.arguments !== '') {
      out += sse({
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: fn.arguments },
      });
    }
    return out;
  }

  #closeOpenBlock(): string {
    if (!this.#open) return '';
    const index = this.#open.index;
    this.#open = undefined;
    return sse({ type: 'content_block_stop', index });
  }

  #complete(): string {
    this.#done = true;
    let out = this.#started ? '' : this.#start({});
    out += this.#closeOpenBlock();
    const usage = messagesUsage(this.#usage ?? { inputTokens: 0, outputTokens: 0, totalTokens: 0 });
    out += sse({
      type: 'message_delta',
      delta: { stop_reason: stopReasonFor(this.#finishReason), stop_sequence: null },
      usage,
    });
    return out + sse({ type: 'message_stop' });
  }
}
