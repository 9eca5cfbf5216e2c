// Response guards over a streamed answer (AIPromptGuard.streaming: Enabled): reads the SSE text
// gw is about to send the client (in the client's format, translated or not) and takes the
// generated text out of each event (content and refusal deltas, tool-call argument pieces).
// Regex Reject guards read it as it passes: each channel (a choice, a content block, an output
// item) keeps the last characters it passed — as many as the longest match of its guards spans
// (Guard.streamReach), at most OVERLAP — and a guard scans them with the new text, so a match
// split across events is caught (only one longer than that is missed); the text that
// completes a match is withheld. Guards that call a service check it in windows
// (stream-window.ts): the text is held until its window passes. Mask guards do not change
// streamed content (the spec). On a rejection the caller ends the stream with `errorEvent`, the
// client format's error event.
import { responsesStreamErrorEvent, streamErrorEvent } from '../formats/errors.ts';
import { isPlainObject } from '../formats/json.ts';
import { SseReader } from '../formats/sse-reader.ts';
import type { ApiFormat, JsonObject } from '../formats/types.ts';
import type { GuardOutcome } from './outcome.ts';
import {
  type StreamGuardEntry,
  type StreamRejection,
  type StreamStep,
  StreamWindow,
  type WindowRequest,
} from './stream-window.ts';

export type { StreamGuardEntry, StreamRejection, StreamStep, WindowRequest } from './stream-window.ts';

/** Characters of a channel's earlier text scanned again with its next piece (the longest match caught across events). */
export const OVERLAP = 1024;

export class StreamGuard {
  /** The guards that scan each event's text as it passes (regex Reject guards), with their outcomes. */
  readonly #scanners: Array<{ entry: StreamGuardEntry; outcome: GuardOutcome }> = [];
  /** The windows of the guards that call a service; undefined when there are none. */
  readonly #window: StreamWindow | undefined;
  /** Every guard's outcome over the stream, in list order (for the access log). */
  readonly #outcomes: GuardOutcome[];
  readonly #format: ApiFormat;
  readonly #reader = new SseReader();
  readonly #tails = new Map<string, string>();
  /** Characters of a channel's text kept for the next piece: the scanners' longest reach, at most OVERLAP. */
  readonly #tailLength: number;
  /** The sequence_number of the last Responses event read, and of the last sent (-1: none yet). */
  #lastRead = -1;
  #lastSent = -1;
  #rejected: StreamRejection | undefined;
  /** How an event no guard can read ends the stream: the first guard's rejection. */
  readonly #unreadable: StreamRejection;

  /**
   * `guards` in their list order: those with scanStream read each event, the others (guards that
   * call a service) check windows for `request`; `failure` answers a window a FailClosed guard
   * could not check.
   */
  constructor(guards: StreamGuardEntry[], format: ApiFormat, request: WindowRequest, failure: StreamRejection) {
    this.#format = format;
    this.#unreadable = guards[0]!.rejection;
    this.#outcomes = guards.map((entry) => ({
      side: 'response' as const,
      index: entry.index,
      kind: entry.guard.kind,
      action: 'pass' as const,
      ms: 0,
    }));
    const windowed: StreamGuardEntry[] = [];
    const windowOutcomes: GuardOutcome[] = [];
    guards.forEach((entry, i) => {
      const outcome = this.#outcomes[i]!;
      if (entry.guard.scanStream !== undefined) this.#scanners.push({ entry, outcome });
      else {
        outcome.checks = 0;
        windowed.push(entry);
        windowOutcomes.push(outcome);
      }
    });
    this.#window = windowed.length > 0 ? new StreamWindow(windowed, windowOutcomes, request, failure) : undefined;
    this.#tailLength = Math.min(
      OVERLAP,
      Math.max(0, ...this.#scanners.map(({ entry }) => entry.guard.streamReach ?? OVERLAP)),
    );
  }

  /**
   * Takes the next SSE text bound for the client (`last`: the client's stream ends with it) and
   * says what may be sent now: all of it when no window holds it, nothing while a window fills,
   * what was held when a window passes — or the rejection, after which nothing more is sent. A
   * promise while a window is checked; at once otherwise (regex guards never wait).
   */
  pass(text: string, last = false): StreamStep | Promise<StreamStep> {
    if (this.#rejected) return { rejected: this.#rejected };
    const generated = this.#read(text);
    if (this.#rejected) return { rejected: this.#rejected };
    if (this.#window === undefined) return this.#sent({ send: text });
    const step = this.#window.add(text, generated, last);
    return step instanceof Promise ? step.then((settled) => this.#settle(settled)) : this.#settle(step);
  }

  /** Whether text is held for a window: the client has not got everything read so far. */
  get holding(): boolean {
    return this.#window?.holding ?? false;
  }

  /** Milliseconds until held text must be checked though its window is not full; undefined when nothing is held. */
  dueIn(): number | undefined {
    return this.#window?.dueIn();
  }

  /** Checks the window held now (it waited long enough): what to send, or the rejection. */
  release(): StreamStep | Promise<StreamStep> {
    if (this.#rejected) return { rejected: this.#rejected };
    if (this.#window === undefined) return { send: '' };
    const step = this.#window.check();
    return step instanceof Promise ? step.then((settled) => this.#settle(settled)) : this.#settle(step);
  }

  /** The error event that ends the client's stream on the rejection, in its format (a Responses one follows the last event sent). */
  errorEvent(status: number, message: string): string {
    if (this.#format === 'responses') return responsesStreamErrorEvent(status, message, this.#lastSent + 1);
    return streamErrorEvent(this.#format, status, message);
  }

  /** What each guard did over the stream (for the access log). */
  outcomes(): GuardOutcome[] {
    return this.#outcomes;
  }

  /** Reads the events of `text` through the scanning guards; returns their generated text (for windows). */
  #read(text: string): string {
    if (text.length === 0) return '';
    const windowed = this.#window !== undefined;
    let generated = '';
    for (const block of this.#reader.push(Buffer.from(text))) {
      if (block.data === undefined || block.data === '[DONE]') continue;
      let event: unknown;
      try {
        event = JSON.parse(block.data);
      } catch {
        continue;
      }
      if (!isPlainObject(event)) continue;
      if (typeof event.sequence_number === 'number') this.#lastRead = event.sequence_number;
      for (const [channel, piece] of pieces(event, this.#format)) {
        if (this.#scan(channel, piece)) return '';
        if (windowed) generated += piece;
      }
    }
    // An event past the reader's bound (1 MiB) cannot be read: the stream is refused, not passed unchecked.
    if (this.#reader.overflowed) this.#reject(this.#outcomes[0]!, this.#unreadable, 'UNREADABLE_EVENT');
    return generated;
  }

  /** Whether a scanning guard matched `piece` with its channel's earlier text (the stream is then rejected). */
  #scan(channel: string, piece: string): boolean {
    if (piece.length === 0 || this.#scanners.length === 0) return false;
    const window = (this.#tails.get(channel) ?? '') + piece;
    const keep = this.#tailLength;
    this.#tails.set(channel, window.length > keep ? window.slice(window.length - keep) : window);
    for (const { entry, outcome } of this.#scanners) {
      const started = performance.now();
      const matched = entry.guard.scanStream!(window);
      outcome.ms += performance.now() - started;
      if (matched !== undefined) {
        this.#reject(outcome, entry.rejection, matched);
        return true;
      }
    }
    return false;
  }

  /** The step of a window: a rejection ends the stream; text sent moves the Responses sequence on. */
  #settle(step: StreamStep): StreamStep {
    if (step.rejected !== undefined) {
      this.#rejected = step.rejected;
      return step;
    }
    return this.#sent(step);
  }

  /** `step` is sent: with nothing left held, the client has every event read so far. */
  #sent(step: StreamStep): StreamStep {
    if (!this.holding) this.#lastSent = this.#lastRead;
    return step;
  }

  #reject(outcome: GuardOutcome, rejection: StreamRejection, matched: string): void {
    this.#rejected = rejection;
    this.#window?.discard();
    outcome.action = 'reject';
    outcome.matched = [matched];
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
