// Moves what the traffic tap captured to whoever watches, in batches: a single process hands the
// entries to the admin listener's traffic hub, a worker of gw run --workers sends them to the
// primary over IPC (cluster-worker.ts). The first record after a quiet spell arms one timer; when
// it fires the records captured since are turned into entries (traffic-entry.ts) off the request
// path. A burst larger than the tap's ring within one interval loses its oldest records, counted.
import type { TrafficEntry } from './traffic-entry.ts';
import { trafficEntry, trafficEntryId } from './traffic-entry.ts';
import type { TrafficTap } from './traffic-tap.ts';

/** How long captured records wait to be sent on, at most. */
export const TRAFFIC_FLUSH_MS = 100;

export type TrafficDelivery = (entries: TrafficEntry[], lost: number) => void;

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
      this.#tap.watch(() => this.#arm());
    } else {
      this.#tap.unwatch();
      this.flush();
    }
  }

  /** Sends what was captured and not sent yet. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const { records, last, lost } = this.#tap.take(this.#last);
    this.#last = last;
    if (records.length === 0 && lost === 0) return;
    this.#deliver(
      records.map(([seq, record]) => trafficEntry(record, trafficEntryId(this.#pid, seq))),
      lost,
    );
  }

  #arm(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => this.flush(), TRAFFIC_FLUSH_MS);
    this.#timer.unref();
  }
}
