// Keep-alive connection pools to backends, shared by every configuration that connects the same
// way: a configuration swap keeps warm connections. Pools no configuration uses any more are
// closed once the requests still running on them finish (undici's close() waits for them).
import { Pool } from 'undici';
import type { ConnectionSettings } from './connection-settings.ts';

export class UpstreamPools {
  private readonly pools = new Map<string, Pool>();

  /** The pool for these settings, created on first use. */
  get(settings: ConnectionSettings): Pool {
    let pool = this.pools.get(settings.key);
    if (!pool) {
      pool = new Pool(settings.origin, settings.options);
      this.pools.set(settings.key, pool);
    }
    return pool;
  }

  /** Closes (gracefully) every pool whose key is not in `keep`. */
  retainOnly(keep: ReadonlySet<string>): void {
    for (const [key, pool] of this.pools) {
      if (keep.has(key)) continue;
      this.pools.delete(key);
      void pool.close().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((pool) => pool.destroy().catch(() => undefined)));
  }
}
