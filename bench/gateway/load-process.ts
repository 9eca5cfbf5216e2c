// Child process: runs one load job (argv[2], JSON) and sends the result to the parent over IPC.
// Latencies are kept in microseconds: autocannon's own histogram counts whole milliseconds, too
// coarse for a 0.5 ms goal, so its per-response times (hrtime based) are recorded here instead.
import { createRequire } from 'node:module';
import { createHistogram, performance, type RecordableHistogram } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Pool } from 'undici';
import type {
  FirstByteJob,
  FirstByteResult,
  Latency,
  LoadJob,
  LoadResult,
  RateJob,
  RateResult,
  SaturateJob,
  SaturateResult,
} from './load.ts';

interface AutocannonResult {
  '2xx': number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Seconds. */
  duration: number;
}

interface AutocannonInstance {
  on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, ms: number) => void): void;
}

type Autocannon = (
  options: Record<string, unknown>,
  done: (error: Error | null, result: AutocannonResult) => void,
) => AutocannonInstance;

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/** Waiting for the answers still in flight when an open-loop run stops sending. */
const DRAIN_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 10_000;

function latencyOf(histogram: RecordableHistogram): Latency {
  if (histogram.count === 0) return { p50Ms: Number.NaN, p99Ms: Number.NaN };
  return { p50Ms: histogram.percentile(50) / 1000, p99Ms: histogram.percentile(99) / 1000 };
}

function recordMs(histogram: RecordableHistogram, ms: number): void {
  histogram.record(Math.max(1, Math.round(ms * 1000)));
}

function saturate(job: SaturateJob): Promise<SaturateResult> {
  const histogram = createHistogram();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: job.endpoint.url,
        ...(job.endpoint.method === 'GET'
          ? { method: 'GET', headers: job.endpoint.headers }
          : { method: 'POST', headers: job.endpoint.headers, body: job.endpoint.body }),
        connections: job.connections,
        duration: job.durationSeconds,
        pipelining: 1,
        timeout: REQUEST_TIMEOUT_MS / 1000,
      },
      (error, result) => {
        if (error) {
          reject(error);
          return;
        }
        resolve({
          kind: 'saturate',
          requestsPerSecond: result['2xx'] / result.duration,
          ok: result['2xx'],
          non2xx: result.non2xx,
          errors: result.errors + result.timeouts,
          durationSeconds: result.duration,
          ...latencyOf(histogram),
        });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, ms) => {
      if (statusCode >= 200 && statusCode < 300) recordMs(histogram, ms);
    });
  });
}

async function atRate(job: RateJob): Promise<RateResult> {
  const url = new URL(job.endpoint.url);
  const pool = new Pool(url.origin, { connections: job.connections, pipelining: 1 });
  const histogram = createHistogram();
  const intervalMs = 1000 / job.rate;
  const warmupCount = Math.round(job.rate * job.warmupSeconds);
  const total = warmupCount + Math.round(job.rate * job.durationSeconds);
  let ok = 0;
  let failed = 0;
  let inFlight = 0;

  const send = (measured: boolean) => {
    inFlight++;
    const started = performance.now();
    pool
      .request({
        method: 'POST',
        path: url.pathname,
        headers: job.endpoint.headers,
        body: job.endpoint.body,
        headersTimeout: REQUEST_TIMEOUT_MS,
        bodyTimeout: REQUEST_TIMEOUT_MS,
      })
      .then(async ({ statusCode, body }) => {
        await body.dump({ limit: Number.MAX_SAFE_INTEGER });
        if (!measured) return;
        if (statusCode >= 200 && statusCode < 300) {
          ok++;
          recordMs(histogram, performance.now() - started);
        } else {
          failed++;
        }
      })
      .catch(() => {
        if (measured) failed++;
      })
      .finally(() => {
        inFlight--;
      });
  };

  // Timers fire about once a millisecond; each tick sends every request that is due by now, so
  // the schedule stays on time without a busy loop (which would steal a core from the target).
  const start = performance.now();
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor((performance.now() - start) / intervalMs) + 1);
    while (sent < due) {
      send(sent >= warmupCount);
      sent++;
    }
    await sleep(1);
  }
  const measuredMs = performance.now() - start - job.warmupSeconds * 1000;
  const drainDeadline = performance.now() + DRAIN_TIMEOUT_MS;
  while (inFlight > 0 && performance.now() < drainDeadline) await sleep(5);
  failed += inFlight;
  await pool.destroy();
  return {
    kind: 'rate',
    achievedRate: ok / (Math.max(measuredMs, job.durationSeconds * 1000) / 1000),
    ok,
    failed,
    ...latencyOf(histogram),
  };
}

async function firstByte(job: FirstByteJob): Promise<FirstByteResult> {
  const url = new URL(job.endpoint.url);
  const client = new Client(url.origin, { pipelining: 1 });
  const histogram = createHistogram();
  let ok = 0;
  let failed = 0;
  for (let i = 0; i < job.warmup + job.requests; i++) {
    const started = performance.now();
    let firstMs: number | undefined;
    try {
      const { statusCode, body } = await client.request({
        method: 'POST',
        path: url.pathname,
        headers: job.endpoint.headers,
        body: job.endpoint.body,
        headersTimeout: REQUEST_TIMEOUT_MS,
        bodyTimeout: REQUEST_TIMEOUT_MS,
      });
      for await (const _chunk of body) {
        firstMs ??= performance.now() - started;
      }
      if (i < job.warmup) continue;
      if (statusCode === 200 && firstMs !== undefined) {
        ok++;
        recordMs(histogram, firstMs);
      } else {
        failed++;
      }
    } catch {
      if (i >= job.warmup) failed++;
    }
  }
  await client.destroy();
  return { kind: 'first-byte', ok, failed, ...latencyOf(histogram) };
}

function run(job: LoadJob): Promise<LoadResult> {
  switch (job.kind) {
    case 'saturate':
      return saturate(job);
    case 'rate':
      return atRate(job);
    case 'first-byte':
      return firstByte(job);
  }
}

const job = JSON.parse(process.argv[2] ?? '{}') as LoadJob;
run(job).then(
  (result) => process.send!({ result }, () => process.exit(0)),
  (error: unknown) =>
    process.send!({ error: error instanceof Error ? error.message : String(error) }, () => process.exit(0)),
);
