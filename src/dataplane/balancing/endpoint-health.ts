// Passive health of one endpoint (an AI provider, a backend, a concrete GwModel): the state machine of
// spec document 1, "States and transitions", driven by the responses the data plane observes. No
// probes and no timers: the clock is read when the state is asked for, so an eviction ends lazily.
import type { BackendEviction } from '../../api/types/backend-connection.ts';
import { durationMs } from '../../util/units.ts';

/** What the data plane saw of one attempt. A timeout is a connection failure: no response came back. */
export interface ObservedResponse {
  /** HTTP status of the response; absent when none arrived. */
  status?: number;
  /** The connection could not be made or broke, or the attempt timed out before a response. */
  connectionFailed?: boolean;
  /** Time to the response, for the latency average (successful responses only). */
  latencyMs?: number;
}

/** An observed response plus the verdict of Health.unhealthyCondition on it. */
export interface ResponseOutcome extends ObservedResponse {
  unhealthy: boolean;
}

/** Health.unhealthyCondition, compiled by the caller (a CEL program closed over its request context). */
export type UnhealthyCondition = (response: ObservedResponse) => boolean;

/** The spec's default condition: any 5xx response, or a connection failure or timeout. */
export const defaultUnhealthyCondition: UnhealthyCondition = (response) =>
  response.connectionFailed === true ||
  (response.status !== undefined && response.status >= 500 && response.status <= 599);

/** Judges a response with the configured condition, or the default one when Health.unhealthyCondition is unset. */
export function judgeResponse(
  response: ObservedResponse,
  unhealthyCondition: UnhealthyCondition = defaultUnhealthyCondition,
): ResponseOutcome {
  return { ...response, unhealthy: unhealthyCondition(response) };
}

/**
 * Smoothing factor of the health score: score += ALPHA * (target - score), target 100 for a healthy
 * response and 0 for an unhealthy one. 0.2 weighs roughly the last ten responses (the span of a
 * 9-sample moving average): a hard-down endpoint falls 100 → 80 → 64 → 51 → 41, so a threshold of 50
 * evicts on its fourth failure in a row, while one stray 5xx among successes costs 20 points that three
 * successes win back. At a steady failure rate p the score settles near 100 × (1 − p), so healthThreshold
 * reads as "evict when more than (100 − threshold)% of recent responses fail".
 */
export const HEALTH_SCORE_ALPHA = 0.2;

/** Smoothing factor of the latency average; the same ten-response memory as the score. */
export const LATENCY_ALPHA = 0.2;

/** BackendEviction.duration when unset (spec document 1, Limits). */
export const DEFAULT_EVICTION_DURATION = '3s';

export const MAX_HEALTH_SCORE = 100;

export type EndpointState = 'Healthy' | 'Evicted';

/** The health of an endpoint as telemetry and tests read it. */
export interface EndpointHealthSnapshot {
  state: EndpointState;
  /** EWMA health score, 0-100. */
  score: number;
  /** Unhealthy responses in a row (by Health.unhealthyCondition) since the last healthy one or restore. */
  consecutiveFailures: number;
  /** How many times the endpoint has been evicted; the next eviction lasts (evictions + 1) × duration. */
  evictions: number;
  /** Clock time (ms) the current eviction ends; only while Evicted. */
  evictedUntil?: number;
  /** EWMA latency of successful responses; absent until one was measured. */
  latencyMs?: number;
}

/** Health settings of the endpoint: Health.eviction, or nothing for the defaults. */
export interface EndpointHealthSettings {
  eviction?: BackendEviction;
}

export interface HealthClock {
  /** Milliseconds on any monotonic scale (Date.now or performance.now in production). */
  now: () => number;
}

/**
 * One endpoint's health. Shareable: every selector that routes to the same endpoint (the provider's
 * backend, each virtual model targeting the same GwModel) must hold the same object, so that all of
 * them see one state.
 *
 * Rules (docs/health-and-balancing.md):
 * - A response that is unhealthy by the condition, or unhealthy by the default condition, lowers the
 *   score; any other response raises it. Only a response unhealthy by the condition counts as a failure
 *   and can evict.
 * - Eviction criteria: consecutiveFailures reached, or the score below healthThreshold after an unhealthy
 *   response (either suffices); with neither set — including no eviction block at all — one unhealthy
 *   response evicts.
 * - The n-th eviction lasts n × duration. It ends with score = restoreHealth, or the score at eviction
 *   when unset, and the failure count cleared.
 * - Responses that arrive while Evicted (in flight, or sent by the all-evicted fallback) change nothing:
 *   only time ends an eviction, and the restored score is the one the endpoint had when evicted.
 */
export class EndpointHealth {
  readonly #now: () => number;
  readonly #baseEvictionMs: number;
  readonly #restoreHealth: number | undefined;
  readonly #consecutiveFailuresToEvict: number | undefined;
  readonly #healthThreshold: number | undefined;

  #score = MAX_HEALTH_SCORE;
  #consecutiveFailures = 0;
  #evictions = 0;
  #evictedUntil: number | undefined;
  #scoreAtEviction = MAX_HEALTH_SCORE;
  #latencyMs: number | undefined;
  #lastScoreDropAt: number | undefined;

  constructor(settings: EndpointHealthSettings, clock: HealthClock) {
    const eviction = settings.eviction ?? {};
    this.#now = clock.now;
    this.#baseEvictionMs = durationMs(eviction.duration ?? DEFAULT_EVICTION_DURATION);
    this.#restoreHealth = eviction.restoreHealth;
    this.#consecutiveFailuresToEvict = eviction.consecutiveFailures;
    this.#healthThreshold = eviction.healthThreshold;
  }

  get state(): EndpointState {
    this.#restoreIfDue();
    return this.#evictedUntil === undefined ? 'Healthy' : 'Evicted';
  }

  get evicted(): boolean {
    return this.state === 'Evicted';
  }

  get score(): number {
    this.#restoreIfDue();
    return this.#score;
  }

  get consecutiveFailures(): number {
    this.#restoreIfDue();
    return this.#consecutiveFailures;
  }

  get evictions(): number {
    return this.#evictions;
  }

  /** When the current eviction ends; undefined while Healthy. */
  get evictedUntil(): number | undefined {
    this.#restoreIfDue();
    return this.#evictedUntil;
  }

  get latencyMs(): number | undefined {
    return this.#latencyMs;
  }

  /** Clock time of the last response that lowered the score (failover's degradation hold reads it). */
  get lastScoreDropAt(): number | undefined {
    return this.#lastScoreDropAt;
  }

  /** Feeds one attempt's outcome into the state machine. */
  record(outcome: ResponseOutcome): void {
    if (this.evicted) return;
    const lowersScore = outcome.unhealthy || defaultUnhealthyCondition(outcome);
    this.#score += HEALTH_SCORE_ALPHA * ((lowersScore ? 0 : MAX_HEALTH_SCORE) - this.#score);
    if (lowersScore) this.#lastScoreDropAt = this.#now();
    if (!outcome.unhealthy) {
      this.#consecutiveFailures = 0;
      if (!lowersScore && outcome.latencyMs !== undefined && Number.isFinite(outcome.latencyMs)) {
        const sample = Math.max(0, outcome.latencyMs);
        this.#latencyMs =
          this.#latencyMs === undefined ? sample : this.#latencyMs + LATENCY_ALPHA * (sample - this.#latencyMs);
      }
      return;
    }
    this.#consecutiveFailures += 1;
    if (this.#evictionCriteriaMet()) this.#evict();
  }

  snapshot(): EndpointHealthSnapshot {
    const state = this.state;
    const snapshot: EndpointHealthSnapshot = {
      state,
      score: this.#score,
      consecutiveFailures: this.#consecutiveFailures,
      evictions: this.#evictions,
    };
    if (this.#evictedUntil !== undefined) snapshot.evictedUntil = this.#evictedUntil;
    if (this.#latencyMs !== undefined) snapshot.latencyMs = this.#latencyMs;
    return snapshot;
  }

  #evictionCriteriaMet(): boolean {
    const byCount = this.#consecutiveFailuresToEvict;
    const byScore = this.#healthThreshold;
    if (byCount === undefined && byScore === undefined) return true;
    // consecutiveFailures 0 is reached by the first failure, the same as 1.
    if (byCount !== undefined && this.#consecutiveFailures >= byCount) return true;
    return byScore !== undefined && this.#score < byScore;
  }

  #evict(): void {
    this.#evictions += 1;
    this.#scoreAtEviction = this.#score;
    this.#evictedUntil = this.#now() + this.#baseEvictionMs * this.#evictions;
  }

  #restoreIfDue(): void {
    if (this.#evictedUntil === undefined || this.#now() < this.#evictedUntil) return;
    this.#evictedUntil = undefined;
    this.#score = this.#restoreHealth ?? this.#scoreAtEviction;
    this.#consecutiveFailures = 0;
  }
}
