// Requests, errors, tokens and cost per interval, for the traffic page's charts. Taken from the
// metrics registry (metrics.ts), not from the traffic ring: the metrics count every request
// whether or not anyone watched, and with gw run --workers they are already summed over the
// workers (the same snapshot /metrics renders), whereas the ring holds only the last few
// hundred requests and only while watched. A sample is the registry's totals; a point is the
// difference between two samples.
//
// Sampling costs the data plane nothing per request (it reads the registry every interval, off
// the request path), and it runs only while the UI looks: it starts when the series is first
// asked for and stops IDLE_STOP_MS after it was last asked for.
import type { MetricsSnapshot } from '../../../dataplane/telemetry/metrics.ts';

export const SERIES_INTERVAL_MS = 10_000;
/** One hour of points. */
export const SERIES_POINTS = 360;
export const IDLE_STOP_MS = 60 * 60 * 1000;

/** What the registry has counted since the process (or the oldest worker) started. */
export interface TrafficTotals {
  requests: number;
  /** Answered 5xx. */
  serverErrors: number;
  /** Answered 4xx. */
  clientErrors: number;
  inputTokens: number;
  outputTokens: number;
  /** USD by the model catalog, of the requests it priced. */
  costUsd: number;
}

export interface SeriesPoint extends TrafficTotals {
  /** End of the interval, ms since the epoch. */
  time: number;
}

export interface TrafficSeriesView {
  intervalMs: number;
  /** Oldest first. */
  points: SeriesPoint[];
}

const STATUS = /(?:^|,)status="(\d)\d\d"/;

export function metricsTotals(snapshot: MetricsSnapshot): TrafficTotals {
  const totals: TrafficTotals = {
    requests: 0,
    serverErrors: 0,
    clientErrors: 0,
    inputTokens: 0,
    outputTokens: 0,
    costUsd: 0,
  };
  for (const series of snapshot.http) {
    totals.requests += series.requests;
    const statusClass = STATUS.exec(series.labels)?.[1];
    if (statusClass === '5') totals.serverErrors += series.requests;
    else if (statusClass === '4') totals.clientErrors += series.requests;
  }
  for (const series of snapshot.genAi) {
    totals.inputTokens += series.inputTokens.sum;
    totals.outputTokens += series.outputTokens.sum;
    totals.costUsd += series.costs?.usd ?? 0;
  }
  return totals;
}

export class TrafficSeries {
  readonly #snapshot: () => MetricsSnapshot | Promise<MetricsSnapshot>;
  readonly #intervalMs: number;
  readonly #now: () => number;
  readonly #points: SeriesPoint[] = [];
  #previous: TrafficTotals | undefined;
  #timer: NodeJS.Timeout | undefined;
  #lastAsked = 0;
  #sampling = false;

  constructor(
    snapshot: () => MetricsSnapshot | Promise<MetricsSnapshot>,
    intervalMs: number = SERIES_INTERVAL_MS,
    now: () => number = Date.now,
  ) {
    this.#snapshot = snapshot;
    this.#intervalMs = intervalMs;
    this.#now = now;
  }

  get running(): boolean {
    return this.#timer !== undefined;
  }

  /** The points so far; starts sampling (the first point follows one interval later). */
  async read(): Promise<TrafficSeriesView> {
    this.#lastAsked = this.#now();
    if (!this.#timer) {
      this.#timer = setInterval(() => void this.#sample(), this.#intervalMs);
      this.#timer.unref();
      await this.#sample();
    }
    return { intervalMs: this.#intervalMs, points: [...this.#points] };
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#previous = undefined;
  }

  async #sample(): Promise<void> {
    if (this.#now() - this.#lastAsked > IDLE_STOP_MS) return this.stop();
    if (this.#sampling) return;
    this.#sampling = true;
    try {
      const totals = metricsTotals(await this.#snapshot());
      const previous = this.#previous;
      this.#previous = totals;
      if (!previous) return;
      const point: SeriesPoint = { time: this.#now(), ...totals };
      for (const key of Object.keys(totals) as (keyof TrafficTotals)[])
        point[key] = Math.max(0, totals[key] - previous[key]);
      this.#points.push(point);
      if (this.#points.length > SERIES_POINTS) this.#points.shift();
    } catch {
      // A worker that did not answer: this interval has no point.
    } finally {
      this.#sampling = false;
    }
  }
}
