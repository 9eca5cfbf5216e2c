// The data plane's tap for the web UI's live traffic (docs/ui.md "Traffic"): while someone
// watches, completed requests' RequestRecords (the ones the access log and the metrics are built
// from) are kept in a bounded ring, by a sequence number; nobody watching, the request path reads
// one boolean and does nothing else — no allocation, no copy (FrontendTelemetry.finish).
//
// The ring holds references, not copies: a record is complete when it is captured and nothing
// writes it afterwards. A consumer (traffic-forwarder.ts) reads what was captured since it last
// looked, at most `perTake` records: so the tap keeps only the first `perTake` records after each
// read and counts the others. Keeping every record until the ring wraps holds each request's
// record (and what it references) longer than the young generation's collections at high rates:
// measured, 5 µs more CPU a request (0.93x the requests/s of an unwatched gw at 23,000 a second),
// against none with the sample (docs/benchmarks.md, "Web UI"). Capturing
// never does more than count, store a reference and, for the first record after a read, arm the
// consumer's timer. The records stay here for CEL evaluation against a recorded request (the
// playground), until the ring wraps over them.
import type { RequestRecord } from './request-record.ts';

/** Records kept per process (each worker of gw run --workers has its own ring). */
export const TRAFFIC_RING_CAPACITY = 500;

export class TrafficTap {
  /** Read on every request: true only while a consumer watches. */
  watching = false;
  /** Records captured (kept) since the process started (0 while nobody ever watched). */
  captured = 0;
  readonly #capacity: number;
  /** Records kept after each take() at most; the rest are counted in #passed. */
  #perTake: number;
  #sinceTake = 0;
  /** Requests completed while watched and not kept since the last take(). */
  #passed = 0;
  /** Allocated the first time someone watches. */
  #ring: (RequestRecord | undefined)[] | undefined;
  /** Told of the first record after the consumer last read (it arms a timer). */
  #onCapture: (() => void) | undefined;
  #notified = false;

  constructor(capacity: number = TRAFFIC_RING_CAPACITY) {
    this.#capacity = capacity;
    this.#perTake = capacity;
  }

  get capacity(): number {
    return this.#capacity;
  }

  /** Whether the ring has ever been allocated (false until the first watcher). */
  get allocated(): boolean {
    return this.#ring !== undefined;
  }

  /**
   * Starts capturing, at most `perTake` records between two reads (take()); `onCapture` hears of
   * the first record after each read.
   */
  watch(onCapture: () => void, perTake: number = this.#capacity): void {
    this.#ring ??= new Array(this.#capacity).fill(undefined);
    this.#onCapture = onCapture;
    this.#perTake = Math.min(perTake, this.#capacity);
    this.#notified = false;
    this.#sinceTake = 0;
    this.#passed = 0;
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
    if (this.#sinceTake >= this.#perTake) {
      this.#passed++;
      return;
    }
    this.#sinceTake++;
    this.captured++;
    ring[this.captured % this.#capacity] = record;
    if (!this.#notified) {
      this.#notified = true;
      this.#onCapture?.();
    }
  }

  /**
   * The newest `max` records captured after sequence number `after` (that the ring still holds),
   * oldest first, with the number of the last one and how many were left out (not kept since the
   * last take, beyond `max`, or overwritten before they could be read).
   */
  take(
    after: number,
    max: number = this.#capacity,
  ): { records: [seq: number, record: RequestRecord][]; last: number; skipped: number } {
    this.#notified = false;
    const passed = this.#passed;
    this.#passed = 0;
    this.#sinceTake = 0;
    const ring = this.#ring;
    const last = this.captured;
    if (ring === undefined || last <= after) return { records: [], last: Math.max(after, last), skipped: passed };
    const first = Math.max(after + 1, last - Math.min(max, this.#capacity) + 1);
    const records: [number, RequestRecord][] = [];
    for (let seq = first; seq <= last; seq++) records.push([seq, ring[seq % this.#capacity]!]);
    return { records, last, skipped: first - (after + 1) + passed };
  }

  /** The record of sequence number `seq`, while the ring still holds it. */
  record(seq: number): RequestRecord | undefined {
    const ring = this.#ring;
    if (ring === undefined || !Number.isInteger(seq) || seq < 1 || seq > this.captured) return undefined;
    if (seq <= this.captured - this.#capacity) return undefined;
    return ring[seq % this.#capacity];
  }
}
