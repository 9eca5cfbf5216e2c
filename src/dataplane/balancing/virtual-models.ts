// Routing of a virtual GwModel (spec document 2, VirtualModel) to its target GwModels: weighted,
// failover or conditional. A target's health is the EndpointHealth of the GwModel it names, shared with
// every other route to that model, so all of them see the same evictions and scores.
import type { EndpointHealth, ResponseOutcome } from './endpoint-health.ts';
import { type AttemptSequence, pickWeighted, type Random, soonestRestoredFirst } from './selection.ts';

/** A target GwModel: whatever the caller needs to call it, and that model's shared health. */
export interface VirtualTarget<T> {
  target: T;
  health: EndpointHealth;
}

export interface WeightedTarget<T> extends VirtualTarget<T> {
  /** Share of requests relative to the other targets (WeightedModelTarget.weight, default 1). */
  weight?: number;
}

export interface FailoverTarget<T> extends VirtualTarget<T> {
  /** Lower is preferred (FailoverModelTarget.priority). */
  priority: number;
}

export interface ConditionalTarget<T, R> extends VirtualTarget<T> {
  /** ConditionalModelTarget.when compiled by the caller; unset only on a final catch-all target. */
  when?: (request: R) => boolean;
}

/** The three routings of VirtualModel, with targets already resolved and conditions compiled. */
export type VirtualModelRouting<T, R> =
  | { weighted: { targets: readonly WeightedTarget<T>[] } }
  | { failover: { targets: readonly FailoverTarget<T>[] } }
  | { conditional: { targets: readonly ConditionalTarget<T, R>[] } };

/** What routing gives one request: targets to attempt in order, or none (the caller answers with a 4xx). */
export type VirtualRoute<X> = { kind: 'attempts'; attempts: AttemptSequence<X> } | { kind: 'noTarget'; reason: string };

export interface VirtualModelRouter<T, R> {
  route(request: R): VirtualRoute<VirtualTarget<T>>;
  report(target: VirtualTarget<T>, outcome: ResponseOutcome): void;
}

export const DEFAULT_TARGET_WEIGHT = 1;

/**
 * A failover target whose health score is below this is degraded. With the score's smoothing (0.2) a
 * hard-down target gets here on its fourth failure in a row, and at a steady mix it means more than
 * half of its recent responses failed.
 */
export const DEFAULT_DEGRADED_BELOW_SCORE = 50;

/**
 * How long a low score keeps a target degraded after the response that last lowered it. A degraded
 * target gets no traffic, so its score cannot recover by itself; after this hold it is offered again,
 * and one more failure degrades it for another hold. Same as the default eviction duration.
 */
export const DEFAULT_DEGRADED_HOLD_MS = 3000;

/** Floor for latencies in the failover score, so a 0 ms measurement cannot divide by zero. */
const MIN_LATENCY_MS = 1;

export interface VirtualModelRouterOptions {
  random: Random;
  now: () => number;
  degradedBelowScore?: number;
  degradedHoldMs?: number;
}

export function createVirtualModelRouter<T, R>(
  routing: VirtualModelRouting<T, R>,
  options: VirtualModelRouterOptions,
): VirtualModelRouter<T, R> {
  if ('weighted' in routing) return new WeightedRouter(routing.weighted.targets, options.random);
  if ('failover' in routing) return new FailoverRouter(routing.failover.targets, options);
  return new ConditionalRouter(routing.conditional.targets);
}

function requireTargets(targets: readonly unknown[], routing: string): void {
  if (targets.length === 0) throw new Error(`${routing} routing needs at least one target`);
}

/**
 * Weighted: each attempt is a weighted random pick (by weight, not health) among the targets not yet
 * tried and not evicted; when none is left, the untried evicted ones, soonest restored first.
 */
export class WeightedRouter<T, R = unknown> implements VirtualModelRouter<T, R> {
  readonly #targets: readonly WeightedTarget<T>[];
  readonly #random: Random;

  constructor(targets: readonly WeightedTarget<T>[], random: Random) {
    requireTargets(targets, 'weighted');
    this.#targets = targets;
    this.#random = random;
  }

  route(): VirtualRoute<WeightedTarget<T>> {
    const tried = new Set<WeightedTarget<T>>();
    return {
      kind: 'attempts',
      attempts: {
        next: () => {
          const untried = this.#targets.filter((target) => !tried.has(target));
          const available = untried.filter((target) => !target.health.evicted);
          const chosen =
            available.length > 0
              ? pickWeighted(available, (target) => target.weight ?? DEFAULT_TARGET_WEIGHT, this.#random)
              : untried.sort((a, b) => soonestRestoredFirst(a.health, b.health))[0];
          if (chosen) tried.add(chosen);
          return chosen;
        },
      },
    };
  }

  report(target: VirtualTarget<T>, outcome: ResponseOutcome): void {
    target.health.record(outcome);
  }
}

// Ranking classes of failover targets, best first.
const TargetClass = { Usable: 0, Degraded: 1, Evicted: 2 } as const;

/**
 * Failover. Each attempt takes, among the targets not yet tried, the first by:
 * 1. class: usable, then degraded (score below degradedBelowScore within degradedHoldMs of the response
 *    that lowered it), then evicted;
 * 2. priority, lower first — so the next priority is reached only when every target at the current one
 *    is degraded, evicted or already tried;
 * 3. within a priority: usable and degraded targets by the highest combined score, evicted ones by the
 *    soonest end of eviction;
 * 4. configuration order.
 * Combined score = health score × fastest / latency, where fastest is the lowest latency average among
 * the targets at the same priority and latency is the target's own (a target with none measured yet
 * counts as the fastest: it is not penalised for lacking a measurement). Health approximates the share of responses
 * that succeed and fastest/latency the relative rate of responses, so the product ranks targets by
 * how fast they give successful responses.
 */
export class FailoverRouter<T, R = unknown> implements VirtualModelRouter<T, R> {
  readonly #targets: readonly FailoverTarget<T>[];
  readonly #now: () => number;
  readonly #degradedBelowScore: number;
  readonly #degradedHoldMs: number;

  constructor(targets: readonly FailoverTarget<T>[], options: Omit<VirtualModelRouterOptions, 'random'>) {
    requireTargets(targets, 'failover');
    this.#targets = targets;
    this.#now = options.now;
    this.#degradedBelowScore = options.degradedBelowScore ?? DEFAULT_DEGRADED_BELOW_SCORE;
    this.#degradedHoldMs = options.degradedHoldMs ?? DEFAULT_DEGRADED_HOLD_MS;
  }

  route(): VirtualRoute<FailoverTarget<T>> {
    const tried = new Set<FailoverTarget<T>>();
    return {
      kind: 'attempts',
      attempts: {
        next: () => {
          const chosen = this.#rank(this.#targets.filter((target) => !tried.has(target)))[0];
          if (chosen) tried.add(chosen);
          return chosen;
        },
      },
    };
  }

  /** True when the target is evicted or its recent health score is below the degraded threshold. */
  degraded(target: FailoverTarget<T>): boolean {
    return this.#classOf(target) !== TargetClass.Usable;
  }

  report(target: VirtualTarget<T>, outcome: ResponseOutcome): void {
    target.health.record(outcome);
  }

  #rank(candidates: readonly FailoverTarget<T>[]): FailoverTarget<T>[] {
    const ranked = candidates.map((target, order) => ({
      target,
      order,
      targetClass: this.#classOf(target),
      combined: this.#combinedScore(target),
    }));
    ranked.sort(
      (a, b) =>
        a.targetClass - b.targetClass ||
        a.target.priority - b.target.priority ||
        (a.targetClass === TargetClass.Evicted
          ? soonestRestoredFirst(a.target.health, b.target.health)
          : b.combined - a.combined) ||
        a.order - b.order,
    );
    return ranked.map((entry) => entry.target);
  }

  #classOf(target: FailoverTarget<T>): number {
    const health = target.health;
    if (health.evicted) return TargetClass.Evicted;
    const lowered = health.lastScoreDropAt;
    const recentlyLowered = lowered !== undefined && this.#now() - lowered < this.#degradedHoldMs;
    return recentlyLowered && health.score < this.#degradedBelowScore ? TargetClass.Degraded : TargetClass.Usable;
  }

  #combinedScore(target: FailoverTarget<T>): number {
    const latency = target.health.latencyMs;
    if (latency === undefined) return target.health.score;
    let fastest = Number.POSITIVE_INFINITY;
    for (const peer of this.#targets) {
      const peerLatency = peer.priority === target.priority ? peer.health.latencyMs : undefined;
      if (peerLatency !== undefined) fastest = Math.min(fastest, peerLatency);
    }
    return (target.health.score * Math.max(fastest, MIN_LATENCY_MS)) / Math.max(latency, MIN_LATENCY_MS);
  }
}

/**
 * Conditional: the first target, in order, whose `when` holds (a target without `when` always holds;
 * a `when` that throws does not). That target is the only attempt: first match wins, and moving on to a
 * later target the request also matches (typically the catch-all) would route it where its author sent
 * other requests, which a condition such as a data-residency one must not allow. Failover belongs
 * inside the chosen target (a failover virtual model, or a backend's priority groups). No match:
 * `noTarget`.
 */
export class ConditionalRouter<T, R> implements VirtualModelRouter<T, R> {
  readonly #targets: readonly ConditionalTarget<T, R>[];

  constructor(targets: readonly ConditionalTarget<T, R>[]) {
    requireTargets(targets, 'conditional');
    this.#targets = targets;
  }

  route(request: R): VirtualRoute<ConditionalTarget<T, R>> {
    const matched = this.#targets.find((target) => holds(target, request));
    if (!matched) return { kind: 'noTarget', reason: 'no conditional target of the virtual model matches the request' };
    let given = false;
    return {
      kind: 'attempts',
      attempts: {
        next: () => {
          if (given) return undefined;
          given = true;
          return matched;
        },
      },
    };
  }

  report(target: VirtualTarget<T>, outcome: ResponseOutcome): void {
    target.health.record(outcome);
  }
}

function holds<T, R>(target: ConditionalTarget<T, R>, request: R): boolean {
  if (target.when === undefined) return true;
  try {
    return target.when(request) === true;
  } catch {
    return false;
  }
}
