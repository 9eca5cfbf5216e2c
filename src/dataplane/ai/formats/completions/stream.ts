// Chat Completions chunk streams (OpenAI) read into the chat form's stream calls, and written
// from them.
//
// Reading: the first chunk starts the response; content and refusal deltas are text,
// reasoning_content deltas reasoning and a reasoning_signature delta its signature
// (completions/reasoning.ts); each tool call (by its index) starts a tool call, its argument
// fragments follow; the finish_reason stops it; the usage chunk (gw asks for it) and the finish
// reason together, or `data: [DONE]`, complete it.
//
// Writing: the start is the role chunk, text content chunks, reasoning reasoning_content chunks
// and its signature a reasoning_signature chunk, a tool call a tool_calls chunk with its id and
// name then argument chunks, the stop the finish chunk; at the end the usage chunk (only when the
// client asked for it with stream_options.include_usage) and `data: [DONE]`. Redacted reasoning
// has no field and is left out.
import { completionsCallExtra, completionsCallSignature } from '../form/signatures.ts';
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
import { completionsUsage, type Usage, usageFromCompletions } from '../usage.ts';
import { finishReasonOf, stopReasonOfFinishReason } from './response.ts';

// The legacy function_call delta has no index: it is one tool call of its own.
const LEGACY_FUNCTION_CALL = -1;

export class CompletionsStreamReader extends ProviderStreamReader {
  #started = false;
  // Chat Completions tool call index -> the form's (order of appearance).
  readonly #tools = new Map<number, number>();
  #finishReason: string | undefined;

  event(_name: string | undefined, data: string): string {
    if (this.finished) return '';
    if (data.trim() === '[DONE]') return this.#complete();
    const chunk = parseEventObject(data);
    if (chunk.error !== undefined && chunk.error !== null) throw upstreamFailure(chunk.error);
    const usage = usageFromCompletions(chunk.usage);
    // Some compatible servers send the usage chunk without a choices field.
    const choices = chunk.choices ?? (usage ? [] : undefined);
    if (!Array.isArray(choices)) throw new StreamFailure(502, 'The provider sent a chunk without choices.');
    if (usage) this.reportedUsage = usage;
    let out = this.#started ? '' : this.#start(chunk);
    for (const choice of choices) {
      if (!isPlainObject(choice)) throw new StreamFailure(502, 'The provider sent a choice that is not an object.');
      // The form has one choice; n > 1 is refused when the request is translated.
      if ((choice.index ?? 0) !== 0) continue;
      const delta = choice.delta;
      if (isPlainObject(delta)) out += this.#delta(delta);
      else if (delta !== undefined && delta !== null)
        throw new StreamFailure(502, 'The provider sent a malformed delta.');
      if (typeof choice.finish_reason === 'string') {
        this.#finishReason = choice.finish_reason;
        out += this.writer.stop(stopReasonOfFinishReason(choice.finish_reason));
      }
    }
    // The usage chunk follows the finish chunk: with both, the response is complete.
    if (this.#finishReason !== undefined && this.reportedUsage !== undefined) out += this.#complete();
    return out;
  }

  end(): string {
    if (this.finished) return '';
    if (this.#finishReason !== undefined) return this.#complete();
    throw new StreamFailure(502, TRUNCATED_MESSAGE);
  }

  #start(chunk: JsonObject): string {
    this.#started = true;
    this.reportedModel = stringOr(chunk.model);
    return this.writer.start(stringOr(chunk.id) ?? '', this.reportedModel);
  }

  #delta(delta: JsonObject): string {
    let out = '';
    // A compatible server's reasoning comes before the answer it leads to.
    if (typeof delta.reasoning_content === 'string' && delta.reasoning_content !== '') {
      this.firstToken = true;
      out += this.writer.reasoning(delta.reasoning_content);
    }
    if (typeof delta.reasoning_signature === 'string' && delta.reasoning_signature !== '') {
      out += this.writer.reasoningSignature?.(delta.reasoning_signature) ?? '';
    }
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
    this.firstToken = true;
    return this.writer.text(text);
  }

  #toolCall(call: unknown): string {
    if (!isPlainObject(call) || typeof call.index !== 'number') {
      throw new StreamFailure(502, 'The provider sent a tool call without an index.');
    }
    const fn = isPlainObject(call.function) ? call.function : {};
    let out = '';
    let index = this.#tools.get(call.index);
    if (index === undefined) {
      index = this.#tools.size;
      this.#tools.set(call.index, index);
      this.firstToken = true;
      out += this.writer.toolStart(
        index,
        stringOr(call.id),
        stringOr(fn.name) ?? '',
        '',
        completionsCallSignature(call),
      );
    }
    // Fragments of an earlier call after a later one began (providers do not interleave, but the
    // format allows it) still go to that call.
    if (typeof fn.arguments === 'string' && fn.arguments !== '') out += this.writer.toolArguments(index, fn.arguments);
    return out;
  }

  #complete(): string {
    this.finished = true;
    const out = this.#started ? '' : this.#start({});
    return out + this.writer.done(this.reportedUsage);
  }
}

export interface CompletionsStreamOptions {
  /** The model name to show the client (the one it asked for); the provider's otherwise. */
  model?: string;
  /** The client asked for the usage chunk (stream_options.include_usage). */
  includeUsage?: boolean;
}

export class CompletionsStreamWriter implements StreamWriter {
  readonly #clientModel: string | undefined;
  readonly #includeUsage: boolean;
  readonly #created = Math.floor(Date.now() / 1000);
  #id = '';
  #upstreamModel: string | undefined;
  #finishSent = false;
  // Whether each tool call has had arguments: one without gets "{}", so that they parse.
  readonly #argumentsSent: boolean[] = [];

  constructor(options: CompletionsStreamOptions) {
    this.#clientModel = options.model;
    this.#includeUsage = options.includeUsage === true;
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

  start(id: string, model: string | undefined): string {
    this.#id = id;
    this.#upstreamModel = model;
    return this.#chunk({ role: 'assistant', content: '' }, null);
  }

  text(text: string): string {
    return this.#chunk({ content: text }, null);
  }

  reasoning(text: string): string {
    return this.#chunk({ reasoning_content: text }, null);
  }

  reasoningSignature(signature: string): string {
    return this.#chunk({ reasoning_signature: signature }, null);
  }

  toolStart(index: number, id: string | undefined, name: string, initialArguments: string, signature?: string): string {
    this.#argumentsSent[index] = initialArguments !== '';
    const fn = { name, arguments: initialArguments };
    // A call the provider gave no id (Gemini's) gets the one a whole response would give it: the
    // client answers it by that id, so an empty one would leave its results indistinguishable.
    const call: JsonObject = { index, id: id ?? `call_${index}`, type: 'function', function: fn };
    if (signature !== undefined) call.extra_content = completionsCallExtra(signature);
    return this.#chunk({ tool_calls: [call] }, null);
  }

  toolArguments(index: number, fragment: string): string {
    this.#argumentsSent[index] = true;
    return this.#chunk({ tool_calls: [{ index, function: { arguments: fragment } }] }, null);
  }

  toolEnd(index: number): string {
    // A tool without parameters streams no input: its arguments are still a JSON object.
    if (this.#argumentsSent[index] !== false) return '';
    this.#argumentsSent[index] = true;
    return this.#chunk({ tool_calls: [{ index, function: { arguments: '{}' } }] }, null);
  }

  stop(reason: StopReason | undefined): string {
    if (this.#finishSent) return '';
    this.#finishSent = true;
    return this.#chunk({}, finishReasonOf(reason));
  }

  done(usage: Usage | undefined): string {
    let out = this.#finishSent ? '' : this.#chunk({}, finishReasonOf(undefined));
    if (this.#includeUsage) {
      const chunk = {
        id: this.#id,
        object: 'chat.completion.chunk',
        created: this.#created,
        model: this.#clientModel ?? this.#upstreamModel ?? '',
        choices: [],
        usage: completionsUsage(usage ?? { inputTokens: 0, outputTokens: 0, totalTokens: 0 }),
      };
      out += `data: ${JSON.stringify(chunk)}\n\n`;
    }
    return `${out}data: [DONE]\n\n`;
  }
}
