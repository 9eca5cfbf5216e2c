// ConverseStream events (Bedrock) read into the chat form's stream calls. A provider format
// only. The framing is event-stream.ts's; this reader gets each event's type and JSON payload.
//
// messageStart starts the response; contentBlockStart with a toolUse opens a tool call (numbered
// in order of appearance), whose contentBlockDelta toolUse.input fragments are its arguments;
// text deltas are text, reasoningContent text deltas reasoning; messageStop stops it, and the
// metadata event after it (usage) completes it. Event types gw does not know are ignored.
import { isPlainObject, stringOr } from '../json.ts';
import { ProviderStreamReader, parseEventObject, StreamFailure, TRUNCATED_MESSAGE } from '../stream.ts';
import type { JsonObject } from '../types.ts';
import { usageFromConverse } from '../usage.ts';
import { converseResponseId, stopReasonOfConverse } from './response.ts';

export class ConverseStreamReader extends ProviderStreamReader {
  #started = false;
  #stopped = false;
  /** The tool call of each open toolUse content block, by contentBlockIndex. */
  readonly #tools = new Map<number, number>();
  #nextToolIndex = 0;

  /** ConverseStream never names the model. */
  override get model(): string | undefined {
    return undefined;
  }

  event(name: string | undefined, data: string): string {
    if (this.finished) return '';
    const payload = parseEventObject(data);
    if (name === 'messageStart') {
      if (this.#started) throw new StreamFailure(502, 'The provider sent an unexpected messageStart.');
      this.#started = true;
      return this.writer.start(converseResponseId(), undefined);
    }
    const known = name === 'contentBlockStart' || name === 'contentBlockDelta' || name === 'contentBlockStop';
    if (!known && name !== 'messageStop' && name !== 'metadata') return '';
    if (!this.#started) throw new StreamFailure(502, `The provider sent ${name} before messageStart.`);
    switch (name) {
      case 'contentBlockStart':
        return this.#blockStart(payload);
      case 'contentBlockDelta':
        return this.#blockDelta(payload);
      case 'contentBlockStop':
        return this.#blockStop(payload);
      case 'messageStop':
        this.#stopped = true;
        return this.writer.stop(stopReasonOfConverse(payload.stopReason));
      default:
        this.reportedUsage = usageFromConverse(payload.usage);
        // Usage comes after messageStop; metadata before it is only an interim report.
        return this.#stopped ? this.#finish() : '';
    }
  }

  end(): string {
    if (this.finished) return '';
    // The stop reason arrived and only the metadata is missing: the response is whole.
    if (this.#stopped) return this.#finish();
    throw new StreamFailure(502, TRUNCATED_MESSAGE);
  }

  #index(payload: JsonObject): number {
    const index = payload.contentBlockIndex;
    if (typeof index !== 'number')
      throw new StreamFailure(502, 'The provider sent a content block event without an index.');
    return index;
  }

  #blockStart(payload: JsonObject): string {
    const index = this.#index(payload);
    const start = payload.start;
    if (!isPlainObject(start) || !isPlainObject(start.toolUse)) return '';
    const toolIndex = this.#nextToolIndex++;
    this.#tools.set(index, toolIndex);
    this.firstToken = true;
    const toolUse = start.toolUse;
    return this.writer.toolStart(toolIndex, stringOr(toolUse.toolUseId), stringOr(toolUse.name) ?? '', '');
  }

  #blockDelta(payload: JsonObject): string {
    const index = this.#index(payload);
    const delta = payload.delta;
    if (!isPlainObject(delta)) throw new StreamFailure(502, 'The provider sent a contentBlockDelta without a delta.');
    if (typeof delta.text === 'string') {
      if (delta.text === '') return '';
      this.firstToken = true;
      return this.writer.text(delta.text);
    }
    if (isPlainObject(delta.toolUse)) {
      const toolIndex = this.#tools.get(index);
      if (toolIndex === undefined)
        throw new StreamFailure(502, 'The provider sent tool input for a block that is not a tool call.');
      const fragment = stringOr(delta.toolUse.input) ?? '';
      return fragment === '' ? '' : this.writer.toolArguments(toolIndex, fragment);
    }
    const reasoning = delta.reasoningContent;
    if (isPlainObject(reasoning) && typeof reasoning.text === 'string' && reasoning.text !== '') {
      this.firstToken = true;
      return this.writer.reasoning(reasoning.text);
    }
    if (isPlainObject(reasoning) && typeof reasoning.signature === 'string' && reasoning.signature !== '') {
      return this.writer.reasoningSignature?.(reasoning.signature) ?? '';
    }
    if (isPlainObject(reasoning) && typeof reasoning.redactedContent === 'string' && reasoning.redactedContent !== '') {
      return this.writer.redactedReasoning?.(reasoning.redactedContent) ?? '';
    }
    // Citations have no stream call in the form.
    return '';
  }

  #blockStop(payload: JsonObject): string {
    const toolIndex = this.#tools.get(this.#index(payload));
    return toolIndex === undefined ? '' : this.writer.toolEnd(toolIndex);
  }

  #finish(): string {
    this.finished = true;
    return this.writer.done(this.reportedUsage);
  }
}
