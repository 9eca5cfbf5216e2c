// Response guards over a streamed answer (AIPromptGuard.streaming: Enabled): reads the SSE text
// gw is about to send the client (in the client's format, translated or not), takes the
// generated text out of each event (content and refusal deltas, tool-call argument pieces), and
// runs the Reject guards over it as it passes. Mask guards do not change streamed content (the
// spec). A match split across events is caught: each channel (a choice, a content block, an
// output item) keeps the last OVERLAP characters it passed, and a guard scans them with the new
// text; only a match longer than that is missed. On a match the caller withholds the events that
// complete it and ends the stream with `errorEvent`, the client format's error event.
import { responsesStreamErrorEvent, streamErrorEvent } from '../formats/errors.ts';
import { isPlainObject } from '../formats/json.ts';
import { SseReader } from '../formats/sse-reader.ts';
import type { ApiFormat, JsonObject } from '../formats/types.ts';
import type { Guard } from './guard.ts';
import type { GuardOutcome } from './outcome.ts';

/** Characters of a channel's earlier text scanned again with its next piece (the longest match caught across events). */
export const OVERLAP = 1024;

/** A response guard that reads streams (its Guard has scanStream), with its place and rejection. */
export interface StreamRejectGuard {
  index: number;
  guard: Guard;
  rejection: { status: number; message: string };
}

export class StreamGuard {
  readonly #guards: StreamRejectGuard[];
  readonly #format: ApiFormat;
  readonly #reader = new SseReader();
  readonly #tails = new Map<string, string>();
  /** Time the guards took over the whole stream, per guard (milliseconds). */
  readonly #ms: number[];
  /** The sequence_number of the last Responses event read (-1: none yet). */
  #lastSequence = -1;
  #rejected: { status: number; message: string } | undefined;
  #outcomes: GuardOutcome[] | undefined;

  constructor(guards: StreamRejectGuard[], format: ApiFormat) {
    this.#guards = guards;
    this.#format = format;
    this.#ms = guards.map(() => 0);
  }

  /**
   * Reads the next SSE text bound for the client. Returns the rejection when a guard matched
   * (the text must then be withheld), or undefined to send it.
   */
  inspect(text: string): { status: number; message: string } | undefined {
    if (this.#rejected || text.length === 0) return this.#rejected;
    // Numbered events count as sent only when the text is: the error event follows the last sent.
    let sequence = this.#lastSequence;
    for (const block of this.#reader.push(Buffer.from(text))) {
      if (block.data === undefined || block.data === '[DONE]') continue;
      let event: unknown;
      try {
        event = JSON.parse(block.data);
      } catch {
        continue;
      }
      if (!isPlainObject(event)) continue;
      if (typeof event.sequence_number === 'number') sequence = event.sequence_number;
      for (const [channel, piece] of pieces(event, this.#format)) {
        const rejected = this.#scan(channel, piece);
        if (rejected) return rejected;
      }
    }
    // An event past the reader's bound (1 MiB) cannot be read: the stream is refused, not passed unchecked.
    if (this.#reader.overflowed) return this.#reject(0, 'UNREADABLE_EVENT');
    this.#lastSequence = sequence;
    return undefined;
  }

  /** The error event that ends the client's stream on the rejection, in its format. */
  errorEvent(status: number, message: string): string {
    if (this.#format === 'responses') return responsesStreamErrorEvent(status, message, this.#lastSequence + 1);
    return streamErrorEvent(this.#format, status, message);
  }

  /** What each guard did over the stream (for the access log). */
  outcomes(): GuardOutcome[] {
    if (this.#outcomes) return this.#outcomes;
    return this.#guards.map((guard, i) => ({
      side: 'response' as const,
      index: guard.index,
      kind: guard.guard.kind,
      action: 'pass' as const,
      ms: this.#ms[i]!,
    }));
  }

  #scan(channel: string, piece: string): { status: number; message: string } | undefined {
    if (piece.length === 0) return undefined;
    const window = (this.#tails.get(channel) ?? '') + piece;
    this.#tails.set(channel, window.length > OVERLAP ? window.slice(window.length - OVERLAP) : window);
    for (let i = 0; i < this.#guards.length; i++) {
      const guard = this.#guards[i]!;
      const started = performance.now();
      const matched = guard.guard.scanStream!(window);
      this.#ms[i]! += performance.now() - started;
      if (matched !== undefined) return this.#reject(i, matched);
    }
    return undefined;
  }

  #reject(i: number, matched: string): { status: number; message: string } {
    const guard = this.#guards[i]!;
    this.#rejected = guard.rejection;
    const outcomes = this.outcomes().slice(0, i + 1);
    outcomes[i] = { ...outcomes[i]!, action: 'reject', matched: [matched] };
    this.#outcomes = outcomes;
    return guard.rejection;
  }
}

/** The generated text pieces of one client-format stream event, each with the channel it continues. */
function pieces(event: JsonObject, format: ApiFormat): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const add = (channel: string, value: unknown) => {
    if (typeof value === 'string') out.push([channel, value]);
  };
  switch (format) {
    case 'completions':
      if (!Array.isArray(event.choices)) break;
      for (const choice of event.choices) {
        if (!isPlainObject(choice) || !isPlainObject(choice.delta)) continue;
        const at = String(choice.index ?? 0);
        add(`c${at}`, choice.delta.content);
        add(`r${at}`, choice.delta.refusal);
        if (!Array.isArray(choice.delta.tool_calls)) continue;
        for (const call of choice.delta.tool_calls)
          if (isPlainObject(call) && isPlainObject(call.function))
            add(`t${at}.${String(call.index ?? 0)}`, call.function.arguments);
      }
      break;
    case 'messages':
      if (event.type === 'content_block_delta' && isPlainObject(event.delta)) {
        const at = String(event.index ?? 0);
        add(at, event.delta.text);
        add(at, event.delta.partial_json);
      }
      break;
    case 'responses':
      if (
        event.type === 'response.output_text.delta' ||
        event.type === 'response.refusal.delta' ||
        event.type === 'response.function_call_arguments.delta'
      )
        add(`${String(event.output_index ?? 0)}.${String(event.content_index ?? 0)}`, event.delta);
      break;
    case 'gemini':
      if (!Array.isArray(event.candidates)) break;
      for (const candidate of event.candidates) {
        if (!isPlainObject(candidate) || !isPlainObject(candidate.content) || !Array.isArray(candidate.content.parts))
          continue;
        const at = String(candidate.index ?? 0);
        for (const part of candidate.content.parts) {
          if (!isPlainObject(part)) continue;
          add(at, part.text);
          // A Gemini function call arrives whole, in one part.
          if (isPlainObject(part.functionCall)) out.push([`f${at}`, JSON.stringify(part.functionCall.args ?? {})]);
        }
      }
      break;
    default:
      break;
  }
  return out;
}
