// Selection among an AIBackend's providers (spec document 1, GwBackend: groups): 1-8 groups in
// priority order, each of 1-16 named providers treated equally with health-based weighting. A backend
// with a single `provider` is one group of one.
import {
  EndpointHealth,
  type EndpointHealthSettings,
  type EndpointHealthSnapshot,
  type ResponseOutcome,
} from './endpoint-health.ts';
import { type AttemptSequence, pickWeighted, type Random, soonestRestoredFirst } from './selection.ts';

/**
 * Selection weight of a provider with health score 0. Without a floor such a provider would get no
 * requests and so no healthy responses to earn its score back; with it, it gets about 1% of the
 * traffic a perfect peer gets.
 */
export const MIN_PROVIDER_WEIGHT = 1;

/** One provider as configured: its unique name, what the caller needs to call it, and its health settings. */
export interface GroupProvider<P> {
  name: string;
  provider: P;
  health?: EndpointHealthSettings;
}

/** A provider chosen for an attempt; hand it back to `report` with the outcome. */
export interface SelectedProvider<P> {
  readonly name: string;
  /** Index of its group, 0 being the most preferred. */
  readonly group: number;
  readonly provider: P;
  readonly health: EndpointHealth;
}

export interface ProviderHealthSnapshot extends EndpointHealthSnapshot {
  name: string;
  group: number;
}

export interface BalancerOptions {
  now: () => number;
  random: Random;
}

/**
 * The providers of one backend and their health. Attempt order for one request (each `next()`):
 * 1. The first group, in priority order, with a member that is neither evicted nor already tried in
 *    this request; within it a weighted random pick, weight = max(health score, MIN_PROVIDER_WEIGHT).
 * 2. When no such member is left in any group, the untried evicted providers: group order first, then
 *    the one whose eviction ends soonest, then configuration order. Selection never fails a request
 *    while an untried provider remains; how many attempts to make is the caller's retry budget.
 * 3. Then `undefined`.
 */
export class PriorityGroupBalancer<P> {
  readonly #groups: readonly (readonly SelectedProvider<P>[])[];
  readonly #random: Random;

  constructor(groups: readonly (readonly GroupProvider<P>[])[], options: BalancerOptions) {
    if (groups.length === 0 || groups.some((group) => group.length === 0)) {
      throw new Error('an AI backend needs at least one group and every group at least one provider');
    }
    const names = new Set<string>();
    this.#groups = groups.map((group, groupIndex) =>
      group.map((configured) => {
        if (names.has(configured.name)) throw new Error(`provider name "${configured.name}" is used twice`);
        names.add(configured.name);
        return {
          name: configured.name,
          group: groupIndex,
          provider: configured.provider,
          health: new EndpointHealth(configured.health ?? {}, { now: options.now }),
        };
      }),
    );
    this.#random = options.random;
  }

  startRequest(): AttemptSequence<SelectedProvider<P>> {
    const tried = new Set<SelectedProvider<P>>();
    return {
      next: () => {
        const chosen = this.#pickHealthy(tried) ?? this.#pickEvicted(tried);
        if (chosen) tried.add(chosen);
        return chosen;
      },
    };
  }

  report(selected: SelectedProvider<P>, outcome: ResponseOutcome): void {
    selected.health.record(outcome);
  }

  /** A provider by name (policies target one by sectionName). */
  provider(name: string): SelectedProvider<P> | undefined {
    for (const group of this.#groups) for (const member of group) if (member.name === name) return member;
    return undefined;
  }

  snapshot(): ProviderHealthSnapshot[] {
    return this.#groups.flatMap((group) =>
      group.map((member) => ({ name: member.name, group: member.group, ...member.health.snapshot() })),
    );
  }

  #pickHealthy(tried: ReadonlySet<SelectedProvider<P>>): SelectedProvider<P> | undefined {
    for (const group of this.#groups) {
      const candidates = group.filter((member) => !tried.has(member) && !member.health.evicted);
      if (candidates.length > 0) {
        return pickWeighted(candidates, (member) => Math.max(member.health.score, MIN_PROVIDER_WEIGHT), this.#random);
      }
    }
    return undefined;
  }

  #pickEvicted(tried: ReadonlySet<SelectedProvider<P>>): SelectedProvider<P> | undefined {
    for (const group of this.#groups) {
      const untried = group.filter((member) => !tried.has(member));
      if (untried.length > 0) return untried.sort((a, b) => soonestRestoredFirst(a.health, b.health))[0];
    }
    return undefined;
  }
}
