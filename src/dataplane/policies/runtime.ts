// State that outlives one compiled configuration: a JWKS cache, a rate limiter's buckets, a gRPC
// client. A configuration swap must not reset a rate limit or refetch every JWKS, so policies
// keep such things here under a key of their own; after each swap the data plane drops (and
// closes) whatever no configuration uses any more. The runtime also gives that state its clock.
import { type Clock, systemClock } from '../../util/clock.ts';

interface Closable {
  close?: () => unknown;
}

export class PolicyRuntime {
  /** What the state kept here reads time from: the system's, or a test's. */
  readonly clock: Clock;
  private readonly values = new Map<string, unknown>();
  /** Keys used by the configuration being compiled (collected by `use`, read by `endCompile`). */
  private used: Set<string> | undefined;

  constructor(options: { clock?: Clock } = {}) {
    this.clock = options.clock ?? systemClock;
  }

  /** The value kept under `key`, created on first use. */
  use<T>(key: string, create: () => T): T {
    this.used?.add(key);
    let value = this.values.get(key) as T | undefined;
    if (value === undefined) {
      value = create();
      this.values.set(key, value);
    }
    return value;
  }

  /** Starts recording the keys one configuration uses. */
  beginCompile(): void {
    this.used = new Set();
  }

  /** The keys used since beginCompile. */
  endCompile(): Set<string> {
    const used = this.used ?? new Set<string>();
    this.used = undefined;
    return used;
  }

  /** Drops and closes every value whose key is not in `keep`. */
  retainOnly(keep: ReadonlySet<string>): void {
    for (const [key, value] of this.values) {
      if (keep.has(key)) continue;
      this.values.delete(key);
      void closeQuietly(value);
    }
  }

  /** Closes every value; resolves when those that close asynchronously (threads, clients) are closed. */
  async close(): Promise<void> {
    const closing = [...this.values.values()].map(closeQuietly);
    this.values.clear();
    await Promise.all(closing);
  }
}

/** Closes `value` if it can be closed; resolves when it is (never rejects). */
async function closeQuietly(value: unknown): Promise<void> {
  try {
    await (value as Closable)?.close?.();
  } catch {
    // closing is best effort: the value is dropped either way
  }
}
