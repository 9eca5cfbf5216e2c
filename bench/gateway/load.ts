// The load generator, seen from the harness: each job runs in a fresh child process
// (load-process.ts) so that it never shares an event loop with the upstream mocks or a gateway.
import { fileURLToPath } from 'node:url';
import { spawnChild } from './child-process.ts';

export interface Endpoint {
  /** Full URL of the request, path included. */
  url: string;
  headers: Record<string, string>;
  body: string;
  /** POST with `body` (the default), or GET without a body (closed loop only). */
  method?: 'POST' | 'GET';
}

/** Closed loop: every connection sends its next request as soon as the previous answer ends (autocannon). */
export interface SaturateJob {
  kind: 'saturate';
  endpoint: Endpoint;
  connections: number;
  durationSeconds: number;
}

/**
 * Open loop: requests started at a fixed rate, evenly spaced, whatever the answers do. (autocannon's
 * overallRate is not used: each connection sends its whole share at the start of every second, so
 * its latencies are those of a burst of `connections` concurrent requests, not of a steady rate.)
 */
export interface RateJob {
  kind: 'rate';
  endpoint: Endpoint;
  connections: number;
  rate: number;
  /** Sent at the rate first and not measured (connections opened, code warm). */
  warmupSeconds: number;
  durationSeconds: number;
}

/** Streaming requests one after another on one connection; the time to the first body bytes. */
export interface FirstByteJob {
  kind: 'first-byte';
  endpoint: Endpoint;
  warmup: number;
  requests: number;
}

export type LoadJob = SaturateJob | RateJob | FirstByteJob;

export interface Latency {
  p50Ms: number;
  p99Ms: number;
}

export interface SaturateResult extends Latency {
  kind: 'saturate';
  /** 2xx answers per second of the run. */
  requestsPerSecond: number;
  ok: number;
  non2xx: number;
  errors: number;
  durationSeconds: number;
}

export interface RateResult extends Latency {
  kind: 'rate';
  /** 2xx answers per second of the run; below the asked rate when the target fell behind. */
  achievedRate: number;
  ok: number;
  failed: number;
}

export interface FirstByteResult extends Latency {
  kind: 'first-byte';
  ok: number;
  failed: number;
}

export type LoadResult = SaturateResult | RateResult | FirstByteResult;

type ResultOf<J extends LoadJob> = J extends SaturateJob
  ? SaturateResult
  : J extends RateJob
    ? RateResult
    : FirstByteResult;

const loadProcess = fileURLToPath(new URL('./load-process.ts', import.meta.url));

/** Runs one job in its own Node process and returns what it measured. */
export async function runLoad<J extends LoadJob>(job: J): Promise<ResultOf<J>> {
  const child = spawnChild(`load generator (${job.kind})`, process.execPath, [loadProcess, JSON.stringify(job)], {
    ipc: true,
  });
  try {
    const message = (await child.nextMessage()) as { result?: LoadResult; error?: string };
    if (message.error !== undefined) throw new Error(`load generator: ${message.error}`);
    return message.result as ResultOf<J>;
  } finally {
    await child.stop();
  }
}
