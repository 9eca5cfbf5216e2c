// Moves what the traffic tap captured to whoever watches, in batches: a single process hands the
// entries to the admin listener's traffic hub, a worker of gw run --workers sends them to the
// primary over IPC (cluster-worker.ts). The first record after a quiet spell arms one timer; when
// it fires the records captured since (the tap keeps the first MAX_ENTRIES_PER_FLUSH after each
// batch) are turned into entries (traffic-entry.ts), off the request path. A batch holds at most MAX_ENTRIES_PER_FLUSH: a person reads a few hundred rows a
// second at most, and the cost of watching must not grow with the request rate; the requests
// left out are counted (the page says how many), and the charts, from the metrics, count them all.
import type { TrafficEntry } from './traffic-entry.ts';
import { trafficEntry, trafficEntryId } from './traffic-entry.ts';
import type { TrafficTap } from './traffic-tap.ts';

/** How long captured records wait to be sent on, at most. */
export const TRAFFIC_FLUSH_MS = 100;
/** Entries sent per batch at most (per process): 500 a second. */
export const MAX_ENTRIES_PER_FLUSH = 50;

export type TrafficDelivery = (entries: TrafficEntry[], skipped: number) => void;

export class TrafficForwarder {
  readonly #tap: TrafficTap;
  readonly #deliver: TrafficDelivery;
  readonly #pid: number;
  #last = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(tap: TrafficTap, deliver: TrafficDelivery, pid: number = process.pid) {
    this.#tap = tap;
    this.#deliver = deliver;
    this.#pid = pid;
  }

  get watching(): boolean {
    return this.#tap.watching;
  }

  /** Starts (or stops) capturing; what was captured before a start is not sent. */
  setWatching(on: boolean): void {
    if (on === this.#tap.watching) return;
    if (on) {
      this.#last = this.#tap.captured;
      this.#tap.watch(() => this.#arm(), MAX_ENTRIES_PER_FLUSH);
    } else {
      this.#tap.unwatch();
      this.flush();
    }
  }

  /** Sends what was captured and not sent yet. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const { records, last, skipped } = this.#tap.take(this.#last, MAX_ENTRIES_PER_FLUSH);
    this.#last = last;
    if (records.length === 0 && skipped === 0) return;
    this.#deliver(
      records.map(([seq, record]) => trafficEntry(record, trafficEntryId(this.#pid, seq))),
      skipped,
    );
  }

  #arm(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => this.flush(), TRAFFIC_FLUSH_MS);
    this.#timer.unref();
  }
}
