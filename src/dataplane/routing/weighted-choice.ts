// Choosing a rule's backendRef by weight: each gets requests in proportion to its weight, and a
// weight of 0 gets none. Built once per rule; a pick is a binary search over the cumulative
// weights and allocates nothing. With no positive weight there is no backend: the caller
// answers 500 (Gateway API).

/** A source of uniform numbers in [0, 1); Math.random by default, seeded in tests. */
export type RandomSource = () => number;

export class WeightedChoice<T extends { readonly weight: number }> {
  /** The choosable items (positive, finite weights), in their original order. */
  readonly items: readonly T[];
  readonly totalWeight: number;
  readonly #cumulative: Float64Array;

  constructor(items: readonly T[]) {
    this.items = items.filter((item) => Number.isFinite(item.weight) && item.weight > 0);
    this.#cumulative = new Float64Array(this.items.length);
    let total = 0;
    this.items.forEach((item, i) => {
      total += item.weight;
      this.#cumulative[i] = total;
    });
    this.totalWeight = total;
  }

  /** An item chosen with probability weight / totalWeight, or undefined when there is none. */
  pick(random: RandomSource = Math.random): T | undefined {
    const items = this.items;
    if (items.length <= 1) return items[0];
    const cumulative = this.#cumulative;
    const target = random() * this.totalWeight;
    // The first index whose cumulative weight exceeds the target.
    let low = 0;
    let high = items.length - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (cumulative[middle]! > target) high = middle;
      else low = middle + 1;
    }
    return items[low];
  }
}

/**
 * An item chosen by weight among those `usable` accepts (a backend's passive health), or among all
 * of them when it accepts none (spec: with every endpoint evicted, selection falls back to them).
 */
export function pickUsable<T extends { readonly weight: number }>(
  choice: WeightedChoice<T>,
  usable: (item: T) => boolean,
  random: RandomSource = Math.random,
): T | undefined {
  let total = 0;
  for (const item of choice.items) if (usable(item)) total += item.weight;
  if (total === 0) return choice.pick(random);
  let target = random() * total;
  let last: T | undefined;
  for (const item of choice.items) {
    if (!usable(item)) continue;
    last = item;
    target -= item.weight;
    if (target < 0) return item;
  }
  return last;
}

export function compileWeightedChoice<T extends { readonly weight: number }>(items: readonly T[]): WeightedChoice<T> {
  return new WeightedChoice(items);
}
