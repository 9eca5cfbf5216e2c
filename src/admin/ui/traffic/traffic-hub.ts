// The admin listener's live traffic: the recent completed requests (a bounded ring of entries,
// traffic-entry.ts) and the browsers following them over server-sent events. It tells its source
// to capture only while someone watches — a subscriber connected, or the recent list asked for
// within the last WATCH_LEASE_MS — so that nobody watching costs the data plane nothing
// (traffic-tap.ts).
//
// Bounds: at most MAX_SUBSCRIBERS streams; each writes into its connection, and a subscriber
// whose connection still holds more than MAX_SUBSCRIBER_BUFFER_BYTES unread when the next batch
// comes (a browser that stopped reading, a stalled network) is dropped rather than buffered for:
// it reconnects and reads the recent list again. A batch is what the data plane's tap held since
// the last one (at most its ring, TRAFFIC_RING_CAPACITY entries; traffic-forwarder.ts), so a
// subscriber costs at most the bound plus one batch.
import type { ServerResponse } from 'node:http';
import type { RecordedVariables } from '../../../dataplane/telemetry/recorded-cel.ts';
import type { TrafficEntry } from '../../../dataplane/telemetry/traffic-entry.ts';
import { TRAFFIC_RING_CAPACITY } from '../../../dataplane/telemetry/traffic-tap.ts';
import { matchesTraffic, type TrafficFilter } from './traffic-filter.ts';
import type { TrafficSource } from './traffic-source.ts';

export const RECENT_CAPACITY = TRAFFIC_RING_CAPACITY;
export const MAX_SUBSCRIBERS = 8;
export const MAX_SUBSCRIBER_BUFFER_BYTES = 256 * 1024;
/** The recent list keeps capture on this long after it was last asked for. */
export const WATCH_LEASE_MS = 60_000;
/** A comment line this often keeps idle streams open through proxies. */
const KEEPALIVE_MS = 15_000;

interface Subscriber {
  readonly response: ServerResponse;
  readonly filter: TrafficFilter;
}

export interface RecentList {
  /** Newest first. */
  entries: TrafficEntry[];
  /** Whether requests are being captured now. */
  watching: boolean;
  /** Requests that completed while watched but are not listed (more than a batch takes; traffic-forwarder.ts). */
  skipped: number;
}

export class TrafficHub {
  readonly #source: TrafficSource;
  readonly #now: () => number;
  readonly #ring: (TrafficEntry | undefined)[] = [];
  #next = 0;
  readonly #subscribers = new Set<Subscriber>();
  #leaseUntil = 0;
  #leaseTimer: NodeJS.Timeout | undefined;
  #keepalive: NodeJS.Timeout | undefined;
  #watching = false;
  #skipped = 0;
  /** Entries received from the source since the hub started. */
  received = 0;
  /** Subscribers dropped for not reading. */
  droppedSubscribers = 0;

  constructor(source: TrafficSource, now: () => number = Date.now) {
    this.#source = source;
    this.#now = now;
  }

  get watching(): boolean {
    return this.#watching;
  }

  get subscriberCount(): number {
    return this.#subscribers.size;
  }

  /** The recent entries that pass `filter`, newest first; keeps capture on for WATCH_LEASE_MS. */
  recent(filter: TrafficFilter, limit: number): RecentList {
    this.#leaseUntil = this.#now() + WATCH_LEASE_MS;
    clearTimeout(this.#leaseTimer);
    this.#leaseTimer = setTimeout(() => this.#update(), WATCH_LEASE_MS + 10);
    this.#leaseTimer.unref();
    this.#update();
    const entries: TrafficEntry[] = [];
    const size = this.#ring.length;
    for (let i = 1; i <= size && entries.length < limit; i++) {
      const entry = this.#ring[(this.#next - i + size) % size];
      if (entry && matchesTraffic(entry, filter)) entries.push(entry);
    }
    return { entries, watching: this.#watching, skipped: this.#skipped };
  }

  /**
   * Follows new entries on `response` (already answered 200 with the event-stream headers);
   * false when MAX_SUBSCRIBERS follow already.
   */
  subscribe(response: ServerResponse, filter: TrafficFilter): boolean {
    if (this.#subscribers.size >= MAX_SUBSCRIBERS) return false;
    const subscriber: Subscriber = { response, filter };
    this.#subscribers.add(subscriber);
    response.once('close', () => {
      this.#subscribers.delete(subscriber);
      this.#update();
    });
    if (!this.#keepalive) {
      this.#keepalive = setInterval(() => this.#write(': keepalive\n\n', () => true), KEEPALIVE_MS);
      this.#keepalive.unref();
    }
    this.#update();
    return true;
  }

  /** Entries from the source, oldest first. */
  receive(entries: readonly TrafficEntry[], skipped: number): void {
    this.#skipped += skipped;
    this.received += entries.length;
    for (const entry of entries) {
      if (this.#ring.length < RECENT_CAPACITY) this.#ring.push(entry);
      else this.#ring[this.#next] = entry;
      this.#next = (this.#next + 1) % RECENT_CAPACITY;
    }
    if (this.#subscribers.size === 0) return;
    // Each entry's event text is made once, whatever the number of subscribers.
    const events = entries.map((entry) => `id: ${entry.id}\nevent: request\ndata: ${JSON.stringify(entry)}\n\n`);
    const skippedEvent = skipped > 0 ? `event: skipped\ndata: ${skipped}\n\n` : '';
    for (const subscriber of [...this.#subscribers]) {
      let text = skippedEvent;
      for (let i = 0; i < entries.length; i++) if (matchesTraffic(entries[i]!, subscriber.filter)) text += events[i];
      if (text !== '') this.#send(subscriber, text);
    }
  }

  /** The CEL variables of a listed request, while the process that served it still holds it. */
  recordedVariables(id: string): Promise<RecordedVariables | undefined> {
    return this.#source.recordedVariables(id);
  }

  /** Ends every stream and stops capture. */
  close(): void {
    clearTimeout(this.#leaseTimer);
    clearInterval(this.#keepalive);
    this.#keepalive = undefined;
    this.#leaseUntil = 0;
    for (const subscriber of this.#subscribers) subscriber.response.end();
    this.#subscribers.clear();
    this.#update();
  }

  #write(text: string, wanted: (subscriber: Subscriber) => boolean): void {
    for (const subscriber of [...this.#subscribers]) if (wanted(subscriber)) this.#send(subscriber, text);
  }

  #send(subscriber: Subscriber, text: string): void {
    const response = subscriber.response;
    if (response.destroyed) return;
    // The backlog from before: a subscriber that reads takes each batch before the next one.
    if (response.writableLength > MAX_SUBSCRIBER_BUFFER_BYTES) {
      // Not reading: dropped, not buffered for. Its 'close' removes it.
      this.droppedSubscribers++;
      this.#subscribers.delete(subscriber);
      response.destroy();
      this.#update();
      return;
    }
    response.write(text);
  }

  #update(): void {
    const wanted = this.#subscribers.size > 0 || this.#now() < this.#leaseUntil;
    if (this.#subscribers.size === 0 && this.#keepalive) {
      clearInterval(this.#keepalive);
      this.#keepalive = undefined;
    }
    if (wanted === this.#watching) return;
    this.#watching = wanted;
    this.#source.setWatching(wanted, (entries, skipped) => this.receive(entries, skipped));
  }
}
