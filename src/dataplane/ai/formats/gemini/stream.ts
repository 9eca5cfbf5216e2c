// Gemini streamGenerateContent?alt=sse streams read into the chat form's stream calls. The
// provider side only.
//
// Each SSE event's data is a whole GenerateContentResponse chunk, with no event name. Text parts
// are text deltas, thought parts reasoning; a function call arrives whole in one part, so it is a
// tool start with all its arguments and its end at once. The chunk with the finishReason stops
// the response, and usageMetadata is cumulative (the last chunk's counts are the totals). Gemini
// sends no end event: the response is whole when the stream ends after a finishReason, and cut
// short when it ends before one. An `error` object in a chunk ends the stream with that error.

import { argumentsJson } from '../form/tool-arguments.ts';
import type { StreamWriter } from '../form/types.ts';
import { isPlainObject, numberOr, stringOr } from '../json.ts';
import { type EventTranslator, parseEventObject, StreamFailure, TRUNCATED_MESSAGE } from '../stream.ts';
import type { JsonObject } from '../types.ts';
import { type Usage, usageFromGemini } from '../usage.ts';
import { firstCandidate, readCandidateParts, stopReasonOfGemini } from './response.ts';

export class GeminiStreamReader implements EventTranslator {
  readonly #writer: StreamWriter;
  #model: string | undefined;
  #started = false;
  #done = false;
  #stopped = false;
  #nextToolIndex = 0;
  #usage: Usage | undefined;
  #firstToken = false;

  constructor(writer: StreamWriter) {
    this.#writer = writer;
  }

  get done(): boolean {
    return this.#done;
  }

  get usage(): Usage | undefined {
    return this.#usage;
  }

  get model(): string | undefined {
    return this.#model;
  }

  get firstTokenSeen(): boolean {
    return this.#firstToken;
  }

  event(_name: string | undefined, data: string): string {
    if (this.#done) return '';
    const chunk = parseEventObject(data);
    if (chunk.error !== undefined) throw geminiStreamFailure(chunk.error);
    let out = '';
    if (!this.#started) {
      this.#started = true;
      this.#model = stringOr(chunk.modelVersion);
      out += this.#writer.start(stringOr(chunk.responseId) ?? '', this.#model);
    }
    const usage = usageFromGemini(chunk.usageMetadata);
    if (usage !== undefined) this.#usage = usage;
    const candidate = firstCandidate(chunk);
    for (const part of readCandidateParts(candidate)) {
      if (!('type' in part)) continue;
      if (part.type === 'text' && part.text !== '') {
        this.#firstToken = true;
        out += this.#writer.text(part.text);
      } else if (part.type === 'reasoning' && part.text !== '') {
        this.#firstToken = true;
        out += this.#writer.reasoning(part.text);
      } else if (part.type === 'tool_call') {
        this.#firstToken = true;
        const index = this.#nextToolIndex++;
        out += this.#writer.toolStart(index, part.id, part.name, argumentsJson(part.arguments));
        out += this.#writer.toolEnd(index);
      }
    }
    const blocked = candidate === undefined && isPlainObject(chunk.promptFeedback) && chunk.promptFeedback.blockReason;
    const reason = blocked ? 'content_filter' : stopReasonOfGemini(candidate?.finishReason, this.#nextToolIndex > 0);
    if (reason !== undefined && !this.#stopped) {
      this.#stopped = true;
      out += this.#writer.stop(reason);
    }
    return out;
  }

  end(): string {
    if (this.#done) return '';
    if (!this.#stopped) throw new StreamFailure(502, TRUNCATED_MESSAGE);
    this.#done = true;
    return this.#writer.done(this.#usage);
  }
}

/** An error Gemini sent inside its stream ({"error":{"code","message","status"}}). */
function geminiStreamFailure(error: unknown): StreamFailure {
  const object: JsonObject = isPlainObject(error) ? error : {};
  const code = numberOr(object.code);
  const status = code !== undefined && code >= 400 && code <= 599 ? code : 500;
  return new StreamFailure(status, stringOr(object.message) ?? 'The provider reported an error in the stream.', true);
}
