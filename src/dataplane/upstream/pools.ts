// Keep-alive connection pools to backends, shared by every configuration that connects the same
// way: a configuration swap keeps warm connections. Pools no configuration uses any more are
// closed once the requests still running on them finish (close() waits for them). Two kinds:
// undici pools (HTTP routes, MCP, HTTP/2), and gw's own HTTP/1.1 pools for the LLM path.
import type { buildConnector, Dispatcher, Pool } from 'undici';
import { undici } from '../../util/undici.ts';
import { UndiciUpstreamClient, type UpstreamClient } from './client.ts';
import type { ConnectionSettings } from './connection-settings.ts';
import { Http1Pool } from './http1/pool.ts';

type PoolClass = new (origin: string, options: Pool.Options) => Pool;
let tlsBackendPoolClass: PoolClass | undefined;

/**
 * A pool to a TLS backend whose server name (SNI, and the name the certificate is checked
 * against) is always the backend's: BackendTLS.sni, else its hostname, none for an IP address.
 * undici otherwise takes a request's server name from its Host header, which a proxy forwards
 * from the client — so SNI would follow the client, and a change of Host between requests
 * would drop the pool's connections. (The class extends undici's Pool, so it is defined once
 * undici is loaded.)
 */
function defineTlsBackendPool(): PoolClass {
  const { Pool: UndiciPool } = undici();
  return class TlsBackendPool extends UndiciPool {
    readonly #pinned: string;

    constructor(origin: string, options: Pool.Options) {
      const connector = options.connect as buildConnector.connector;
      super(origin, {
        ...options,
        // The name undici hands over is the request's; the connector's own (from the settings) applies instead.
        connect: (connectOptions, callback) => connector({ ...connectOptions, servername: undefined }, callback),
      });
      this.#pinned = origin;
    }

    // One server name for every request, so undici never reconnects because a Host header changed.
    override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      return super.dispatch({ ...options, servername: this.#pinned } as Dispatcher.DispatchOptions, handler);
    }
  };
}

export class UpstreamPools {
  private readonly pools = new Map<string, Pool>();
  private readonly http1Pools = new Map<string, Http1Pool>();
  private readonly undiciClients = new WeakMap<Pool, UpstreamClient>();

  /** The pool for these settings, created on first use. */
  get(settings: ConnectionSettings): Pool {
    let pool = this.pools.get(settings.key);
    if (!pool) {
      if (settings.origin.startsWith('https:')) {
        tlsBackendPoolClass ??= defineTlsBackendPool();
        pool = new tlsBackendPoolClass(settings.origin, settings.options);
      } else pool = new (undici().Pool)(settings.origin, settings.options);
      this.pools.set(settings.key, pool);
    }
    return pool;
  }

  /**
   * The client for provider requests with these settings: gw's HTTP/1.1 pool, or for an HTTP/2
   * destination the undici pool behind the same interface. Created on first use.
   */
  client(settings: ConnectionSettings): UpstreamClient {
    if (settings.http1 === undefined) {
      const pool = this.get(settings);
      let client = this.undiciClients.get(pool);
      if (!client) {
        client = new UndiciUpstreamClient(pool);
        this.undiciClients.set(pool, client);
      }
      return client;
    }
    let pool = this.http1Pools.get(settings.key);
    if (!pool) {
      pool = new Http1Pool(settings.http1);
      this.http1Pools.set(settings.key, pool);
    }
    return pool;
  }

  /** Closes (gracefully) every pool whose key is not in `keep`. */
  retainOnly(keep: ReadonlySet<string>): void {
    for (const pools of [this.pools, this.http1Pools])
      for (const [key, pool] of pools) {
        if (keep.has(key)) continue;
        pools.delete(key);
        void pool.close().catch(() => undefined);
      }
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values(), ...this.http1Pools.values()];
    this.pools.clear();
    this.http1Pools.clear();
    await Promise.all(pools.map((pool) => pool.destroy().catch(() => undefined)));
  }
}
