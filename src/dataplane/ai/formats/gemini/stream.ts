// Gemini streamGenerateContent?alt=sse streams read into the chat form's stream calls, and
// written from them for a Gemini client.
//
// Reading:
// Each SSE event's data is a whole GenerateContentResponse chunk, with no event name. Text parts
// are text deltas, thought parts reasoning; a function call arrives whole in one part, so it is a
// tool start with all its arguments and its end at once. The chunk with the finishReason stops
// the response, and usageMetadata is cumulative (the last chunk's counts are the totals). Gemini
// sends no end event: the response is whole when the stream ends after a finishReason, and cut
// short when it ends before one. An `error` object in a chunk ends the stream with that error.
//
// Writing: each text or reasoning delta is a chunk of its own; a tool call is one functionCall
// part, sent whole when its arguments are (at its end, or at the stop); the last chunk has the
// finishReason and the usageMetadata. Every chunk carries the responseId and modelVersion.

import { argumentsJson, argumentsObject } from '../form/tool-arguments.ts';
import type { StopReason, StreamWriter } from '../form/types.ts';
import { isPlainObject, numberOr, stringOr } from '../json.ts';
import { ProviderStreamReader, parseEventObject, StreamFailure, TRUNCATED_MESSAGE } from '../stream.ts';
import type { JsonObject } from '../types.ts';
import { geminiUsage, type Usage, usageFromGemini } from '../usage.ts';
import {
  firstCandidate,
  geminiFinishReason,
  geminiResponseObject,
  readCandidateParts,
  stopReasonOfGemini,
} from './response.ts';

export class GeminiStreamReader extends ProviderStreamReader {
  #started = false;
  #stopped = false;
  #nextToolIndex = 0;

  event(_name: string | undefined, data: string): string {
    if (this.finished) return '';
    const chunk = parseEventObject(data);
    if (chunk.error !== undefined) throw geminiStreamFailure(chunk.error);
    let out = '';
    if (!this.#started) {
      this.#started = true;
      this.reportedModel = stringOr(chunk.modelVersion);
      out += this.writer.start(stringOr(chunk.responseId) ?? '', this.reportedModel);
    }
    const usage = usageFromGemini(chunk.usageMetadata);
    if (usage !== undefined) this.reportedUsage = usage;
    const candidate = firstCandidate(chunk);
    for (const part of readCandidateParts(candidate)) {
      if (!('type' in part)) continue;
      if (part.type === 'text' && part.text !== '') {
        this.firstToken = true;
        out += this.writer.text(part.text);
      } else if (part.type === 'reasoning') {
        if (part.text !== '') {
          this.firstToken = true;
          out += this.writer.reasoning(part.text);
        }
        if (part.signature !== undefined) out += this.writer.reasoningSignature?.(part.signature) ?? '';
      } else if (part.type === 'tool_call') {
        this.firstToken = true;
        const index = this.#nextToolIndex++;
        out += this.writer.toolStart(index, part.id, part.name, argumentsJson(part.arguments), part.signature);
        out += this.writer.toolEnd(index);
      }
    }
    const blocked = candidate === undefined && isPlainObject(chunk.promptFeedback) && chunk.promptFeedback.blockReason;
    const reason = blocked ? 'content_filter' : stopReasonOfGemini(candidate?.finishReason, this.#nextToolIndex > 0);
    if (reason !== undefined && !this.#stopped) {
      this.#stopped = true;
      out += this.writer.stop(reason);
    }
    return out;
  }

  end(): string {
    if (this.finished) return '';
    if (!this.#stopped) throw new StreamFailure(502, TRUNCATED_MESSAGE);
    this.finished = true;
    return this.writer.done(this.reportedUsage);
  }
}

/** An error Gemini sent inside its stream ({"error":{"code","message","status"}}). */
function geminiStreamFailure(error: unknown): StreamFailure {
  const object: JsonObject = isPlainObject(error) ? error : {};
  const code = numberOr(object.code);
  const status = code !== undefined && code >= 400 && code <= 599 ? code : 500;
  return new StreamFailure(status, stringOr(object.message) ?? 'The provider reported an error in the stream.', true);
}

interface PendingCall {
  id: string | undefined;
  name: string;
  arguments: string;
  signature: string | undefined;
}

export class GeminiStreamWriter implements StreamWriter {
  readonly #clientModel: string | undefined;
  #id: string | undefined;
  #model: string | undefined;
  // Tool calls whose arguments are still arriving, by the form's index.
  readonly #calls = new Map<number, PendingCall>();
  #stopReason: StopReason | undefined;

  constructor(options: { model?: string }) {
    this.#clientModel = options.model;
  }

  start(id: string, model: string | undefined): string {
    this.#id = id === '' ? undefined : id;
    this.#model = this.#clientModel ?? model;
    return '';
  }

  text(text: string): string {
    return this.#chunk([{ text }]);
  }

  reasoning(text: string): string {
    return this.#chunk([{ text, thought: true }]);
  }

  reasoningSignature(signature: string): string {
    // The signature of the thought just streamed, on a thought part of its own (as Gemini sends one).
    return this.#chunk([{ text: '', thought: true, thoughtSignature: signature }]);
  }

  toolStart(index: number, id: string | undefined, name: string, initialArguments: string, signature?: string): string {
    this.#calls.set(index, { id, name, arguments: initialArguments, signature });
    return '';
  }

  toolArguments(index: number, fragment: string): string {
    const call = this.#calls.get(index);
    if (call !== undefined) call.arguments += fragment;
    return '';
  }

  toolEnd(index: number): string {
    const call = this.#calls.get(index);
    if (call === undefined) return '';
    this.#calls.delete(index);
    const functionCall: JsonObject = { name: call.name, args: argumentsObject(call.arguments) };
    if (call.id !== undefined) functionCall.id = call.id;
    return this.#chunk([
      call.signature === undefined ? { functionCall } : { functionCall, thoughtSignature: call.signature },
    ]);
  }

  stop(reason: StopReason | undefined): string {
    this.#stopReason = reason;
    return this.#flushCalls();
  }

  done(usage: Usage | undefined): string {
    const out = this.#flushCalls();
    const candidate = {
      content: { role: 'model', parts: [] },
      finishReason: geminiFinishReason(this.#stopReason),
      index: 0,
    };
    const metadata = geminiUsage(usage ?? { inputTokens: 0, outputTokens: 0, totalTokens: 0 });
    return out + sse(geminiResponseObject(candidate, this.#id, this.#model, metadata));
  }

  /** Calls a reader never ended (formats that end tool calls only at the stop). */
  #flushCalls(): string {
    let out = '';
    for (const index of [...this.#calls.keys()]) out += this.toolEnd(index);
    return out;
  }

  #chunk(parts: JsonObject[]): string {
    const candidate = { content: { role: 'model', parts }, index: 0 };
    return sse(geminiResponseObject(candidate, this.#id, this.#model, undefined));
  }
}

function sse(payload: JsonObject): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}
