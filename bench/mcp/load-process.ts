// Child process: runs one MCP load job (argv[2], JSON; see load.ts) and sends the result to the
// parent over IPC. Latencies are recorded in microseconds.
import { createHistogram, performance, type RecordableHistogram } from 'node:perf_hooks';
import { Client, Pool } from 'undici';
import type { CallsJob, CallsResult, McpLoadJob, RoundTripJob, RoundTripResult } from './load.ts';
import { closeSession, openSession, parseAnswer, post } from './rpc.ts';

function record(histogram: RecordableHistogram, ms: number): void {
  histogram.record(Math.max(1, Math.round(ms * 1000)));
}

function percentileMs(histogram: RecordableHistogram, percentile: number): number {
  return histogram.count === 0 ? Number.NaN : histogram.percentile(percentile) / 1000;
}

async function roundTrips(job: RoundTripJob): Promise<RoundTripResult> {
  const url = new URL(job.url);
  const client = new Client(url.origin, { pipelining: 1 });
  const histogram = createHistogram();
  let items = 0;
  try {
    const headers = await openSession(client, url);
    for (let n = 0; n < job.warmup + job.requests; n++) {
      const started = performance.now();
      const { answer } = await post(client, url, headers, { jsonrpc: '2.0', id: n, method: job.method, params: {} });
      const ms = performance.now() - started;
      const tools = answer?.result?.tools;
      if (!Array.isArray(tools)) throw new Error(`${job.method} answered without a list`);
      items = tools.length;
      if (n >= job.warmup) record(histogram, ms);
    }
    await closeSession(client, url, headers);
  } finally {
    await client.close();
  }
  return {
    kind: 'round-trip',
    p50Ms: percentileMs(histogram, 50),
    p99Ms: percentileMs(histogram, 99),
    ok: histogram.count,
    items,
  };
}

async function calls(job: CallsJob): Promise<CallsResult> {
  const url = new URL(job.url);
  const pool = new Pool(url.origin, { connections: job.connections, pipelining: 1 });
  const histogram = createHistogram();
  let ok = 0;
  let failed = 0;
  let answered = 0;
  let nextId = 0;
  const cpuBefore = process.cpuUsage();
  try {
    const headers = await openSession(pool, url);
    const measureFrom = performance.now() + job.warmupSeconds * 1000;
    const end = measureFrom + job.durationSeconds * 1000;
    const worker = async () => {
      while (performance.now() < end) {
        const id = nextId++;
        const started = performance.now();
        let good = false;
        try {
          const response = await pool.request({
            origin: url.origin,
            path: url.pathname,
            method: 'POST',
            headers,
            body: `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}`,
          });
          const text = await response.body.text();
          if (response.statusCode === 200) {
            const answer = parseAnswer(String(response.headers['content-type'] ?? ''), text);
            good = answer.id === id && answer.result !== undefined;
          }
        } catch {
          good = false;
        }
        answered++;
        // Counted only when sent and answered inside the measured window.
        const finished = performance.now();
        if (started < measureFrom || finished > end) continue;
        if (good) {
          ok++;
          record(histogram, finished - started);
        } else {
          failed++;
        }
      }
    };
    await Promise.all(Array.from({ length: job.connections }, worker));
    await closeSession(pool, url, headers);
  } finally {
    await pool.close();
  }
  return {
    kind: 'calls',
    requestsPerSecond: ok / job.durationSeconds,
    ok,
    failed,
    answered,
    loadCpuUs: (() => {
      const used = process.cpuUsage(cpuBefore);
      return (used.user + used.system) / Math.max(1, answered);
    })(),
    p50Ms: percentileMs(histogram, 50),
    p99Ms: percentileMs(histogram, 99),
  };
}

function run(job: McpLoadJob): Promise<RoundTripResult | CallsResult> {
  return job.kind === 'round-trip' ? roundTrips(job) : calls(job);
}

const job = JSON.parse(process.argv[2] ?? '{}') as McpLoadJob;
run(job).then(
  (result) => process.send!({ result }, () => process.exit(0)),
  (error: unknown) =>
    process.send!({ error: error instanceof Error ? error.message : String(error) }, () => process.exit(0)),
);
