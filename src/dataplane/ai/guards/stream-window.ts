// Windows of a streamed answer checked by response guards that call a service (streaming:
// Enabled; decisions 0028 and 0033). The SSE text bound for the client is held while the text it
// generates accumulates; when that text reaches WINDOW_BYTES, when what is held reaches
// MAX_HELD_CHARS, when the oldest held text has waited MAX_HOLD_MS, or when the stream ends, the
// guards check the window (the last WINDOW_OVERLAP_BYTES of the previous one and the new text,
// one assistant text). A pass sends everything held; a reject drops it and the stream ends on the
// guard's rejection; a guard that cannot check follows its failure mode. A mask verdict is not
// applied to streamed content (the spec): it counts as a pass. Text sent after a passing window
// cannot be taken back, and a match longer than the overlap can be missed.
import { type Guard, type GuardCall, GuardFailure, type GuardVerdict } from './guard.ts';
import type { GuardOutcome } from './outcome.ts';

/** Bytes of generated text (UTF-8) that make a window: the guards check it once it is this long. */
export const WINDOW_BYTES = 1024;
/** Bytes of the previous window's end checked again with the next one (a match split between them is seen whole). */
export const WINDOW_OVERLAP_BYTES = 256;
/** Most SSE text held for a window (characters): past it the window is checked, however short its text. */
export const MAX_HELD_CHARS = 128 * 1024;
/** Longest a held text waits for its window to fill: past it the window is checked as it is. */
export const MAX_HOLD_MS = 1000;

/** A response guard over streams, with its place in the list and the answer of its rejection. */
export interface StreamGuardEntry {
  index: number;
  guard: Guard;
  rejection: StreamRejection;
}

/** How a rejected stream ends: the status and message of the client format's error event. */
export interface StreamRejection {
  status: number;
  message: string;
}

/** What may go to the client of the SSE text the stream guard was given: `send` (possibly empty: held), or the rejection. */
export type StreamStep = { send: string; rejected?: undefined } | { rejected: StreamRejection; send?: undefined };

/** The request a window is checked for (its headers, CEL variables, and the client going away). */
export type WindowRequest = Omit<GuardCall, 'side' | 'texts'>;

export class StreamWindow {
  readonly #guards: readonly StreamGuardEntry[];
  /** Each guard's outcome over the stream, updated window by window. */
  readonly #outcomes: readonly GuardOutcome[];
  readonly #request: WindowRequest;
  readonly #failure: StreamRejection;
  #held: string[] = [];
  #heldChars = 0;
  /** When the oldest held text was held (performance.now()). */
  #heldSince = 0;
  /** Generated text of the held events, not yet checked. */
  #text = '';
  #textBytes = 0;
  /** The end of the last checked window. */
  #overlap = '';

  /** `outcomes[i]` is the outcome of `guards[i]` (owned by the stream guard, which reports them). */
  constructor(
    guards: readonly StreamGuardEntry[],
    outcomes: readonly GuardOutcome[],
    request: WindowRequest,
    failure: StreamRejection,
  ) {
    this.#guards = guards;
    this.#outcomes = outcomes;
    this.#request = request;
    this.#failure = failure;
  }

  /** Whether SSE text is held, waiting for its window to be checked. */
  get holding(): boolean {
    return this.#held.length > 0;
  }

  /**
   * Takes the next SSE text bound for the client and the text it generates; `last` when the
   * client's stream ends with it. Text with nothing generated and nothing held ahead of it passes
   * at once; otherwise it is held, and a window due is checked (a promise).
   */
  add(sse: string, generated: string, last: boolean): StreamStep | Promise<StreamStep> {
    if (this.#held.length === 0) {
      if (generated.length === 0) return { send: sse };
      this.#heldSince = performance.now();
    }
    if (sse.length > 0) {
      this.#held.push(sse);
      this.#heldChars += sse.length;
    }
    if (generated.length > 0) {
      this.#text += generated;
      this.#textBytes += Buffer.byteLength(generated);
    }
    // The time bound counts here too: a provider that never pauses long enough for the caller's timer.
    const due = last || this.#textBytes >= WINDOW_BYTES || this.#heldChars >= MAX_HELD_CHARS || this.dueIn() === 0;
    return due ? this.check() : { send: '' };
  }

  /** Milliseconds until the held text has waited MAX_HOLD_MS (0: overdue); undefined when nothing is held. */
  dueIn(now = performance.now()): number | undefined {
    if (this.#held.length === 0) return undefined;
    return Math.max(0, this.#heldSince + MAX_HOLD_MS - now);
  }

  /** Checks the window held now: everything held to send, or the rejection (what was held is dropped). */
  check(): StreamStep | Promise<StreamStep> {
    const held = this.#held.join('');
    this.#held = [];
    this.#heldChars = 0;
    if (this.#text.length === 0) return { send: held };
    const window = this.#overlap + this.#text;
    this.#overlap = lastBytes(window, WINDOW_OVERLAP_BYTES);
    this.#text = '';
    this.#textBytes = 0;
    return this.#checkWindow(window).then((rejected) => (rejected === undefined ? { send: held } : { rejected }));
  }

  /** Drops what is held (the stream was rejected). */
  discard(): void {
    this.#held = [];
    this.#heldChars = 0;
    this.#text = '';
    this.#textBytes = 0;
  }

  /** Runs the guards in list order over one window; the first rejection (or closed failure) stops the rest. */
  async #checkWindow(window: string): Promise<StreamRejection | undefined> {
    const call: GuardCall = { ...this.#request, side: 'response', texts: [{ role: 'assistant', text: window }] };
    for (let i = 0; i < this.#guards.length; i++) {
      const entry = this.#guards[i]!;
      const outcome = this.#outcomes[i]!;
      const started = performance.now();
      let verdict: GuardVerdict;
      try {
        verdict = await entry.guard.check(call);
      } catch (error) {
        outcome.ms += performance.now() - started;
        outcome.checks = (outcome.checks ?? 0) + 1;
        outcome.error = error instanceof GuardFailure ? error.message : 'the guard failed unexpectedly';
        outcome.errorType = error instanceof GuardFailure ? error.type : '_OTHER';
        if (entry.guard.failureMode === 'FailOpen') continue;
        outcome.action = 'reject';
        return this.#failure;
      }
      outcome.ms += performance.now() - started;
      outcome.checks = (outcome.checks ?? 0) + 1;
      if (verdict.reason !== undefined) outcome.reason = verdict.reason;
      if (verdict.action === 'pass') continue;
      if (verdict.matched !== undefined && verdict.matched.length > 0) outcome.matched = verdict.matched;
      if (verdict.action === 'mask') {
        // Streamed content is not masked (the spec): what the guard would have masked is logged, and the window passes.
        outcome.reason ??= 'a mask is not applied to a streamed answer';
        continue;
      }
      outcome.action = 'reject';
      return verdict.answer ?? entry.rejection;
    }
    return undefined;
  }
}

/** The last `max` bytes of `text` (UTF-8), starting on a character. */
function lastBytes(text: string, max: number): string {
  if (text.length * 3 <= max) return text;
  const bytes = Buffer.from(text);
  if (bytes.length <= max) return text;
  let start = bytes.length - max;
  while (start < bytes.length && (bytes[start]! & 0xc0) === 0x80) start++;
  return bytes.subarray(start).toString();
}
