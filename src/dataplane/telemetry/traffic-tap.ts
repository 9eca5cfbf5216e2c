// The data plane's tap for the web UI's live traffic (docs/ui.md "Traffic"): while someone
// watches, every completed request's RequestRecord (the one the access log and the metrics are
// built from) is kept in a bounded ring, by a sequence number; nobody watching, the request path
// reads one boolean and does nothing else — no allocation, no copy (FrontendTelemetry.finish).
//
// The ring holds references, not copies: a record is complete when it is captured and nothing
// writes it afterwards. A consumer (traffic-forwarder.ts) reads what was captured since it last
// looked, so capturing never does more than store a reference and, for the first record after a
// quiet spell, arm the consumer's timer. The records stay here for CEL evaluation against a
// recorded request (the playground), until the ring wraps over them.
import type { RequestRecord } from './request-record.ts';

/** Records kept per process (each worker of gw run --workers has its own ring). */
export const TRAFFIC_RING_CAPACITY = 500;

export class TrafficTap {
  /** Read on every request: true only while a consumer watches. */
  watching = false;
  /** Records captured since the process started (0 while nobody ever watched). */
  captured = 0;
  readonly #capacity: number;
  /** Allocated the first time someone watches. */
  #ring: (RequestRecord | undefined)[] | undefined;
  /** Told of the first record after the consumer last read (it arms a timer). */
  #onCapture: (() => void) | undefined;
  #notified = false;

  constructor(capacity: number = TRAFFIC_RING_CAPACITY) {
    this.#capacity = capacity;
  }

  get capacity(): number {
    return this.#capacity;
  }

  /** Whether the ring has ever been allocated (false until the first watcher). */
  get allocated(): boolean {
    return this.#ring !== undefined;
  }

  /** Starts capturing; `onCapture` hears of the first record after each read (take()). */
  watch(onCapture: () => void): void {
    this.#ring ??= new Array(this.#capacity).fill(undefined);
    this.#onCapture = onCapture;
    this.#notified = false;
    this.watching = true;
  }

  /** Stops capturing; the records captured so far stay readable. */
  unwatch(): void {
    this.watching = false;
    this.#onCapture = undefined;
  }

  /** Called by the telemetry for a completed request, only while `watching`. */
  capture(record: RequestRecord): void {
    const ring = this.#ring;
    if (ring === undefined) return;
    this.captured++;
    ring[this.captured % this.#capacity] = record;
    if (!this.#notified) {
      this.#notified = true;
      this.#onCapture?.();
    }
  }

  /**
   * The newest `max` records captured after sequence number `after` (that the ring still holds),
   * oldest first, with the number of the last one and how many were left out (beyond `max`, or
   * overwritten before they could be read).
   */
  take(
    after: number,
    max: number = this.#capacity,
  ): { records: [seq: number, record: RequestRecord][]; last: number; skipped: number } {
    this.#notified = false;
    const ring = this.#ring;
    const last = this.captured;
    if (ring === undefined || last <= after) return { records: [], last: Math.max(after, last), skipped: 0 };
    const first = Math.max(after + 1, last - Math.min(max, this.#capacity) + 1);
    const records: [number, RequestRecord][] = [];
    for (let seq = first; seq <= last; seq++) records.push([seq, ring[seq % this.#capacity]!]);
    return { records, last, skipped: first - (after + 1) };
  }

  /** The record of sequence number `seq`, while the ring still holds it. */
  record(seq: number): RequestRecord | undefined {
    const ring = this.#ring;
    if (ring === undefined || !Number.isInteger(seq) || seq < 1 || seq > this.captured) return undefined;
    if (seq <= this.captured - this.#capacity) return undefined;
    return ring[seq % this.#capacity];
  }
}
