// Multi-core benchmark (issue 4): the same closed-loop load against `gw run --workers 1` and
// `--workers 2` (or the counts given) on a static backend route, each figure the median of
// several rounds; prints requests/s, latency, where the CPU went, and the ratio to one worker.
// The upstream (a fixed-answer mock, 1 KiB answers) and the load generator (autocannon) run in
// their own processes, as in bench/gateway.bench.ts, and share the machine's cores with gw.
// Run: ./node_modules/.bin/node bench/scaling.bench.ts [--duration 10] [--connections 64] (--help)
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { CHAT_BODY, CHAT_HEADERS, CHAT_PATH } from './gateway/chat-request.ts';
import { freePort } from './gateway/child-process.ts';
import { runBench } from './gateway/cli.ts';
import { writeStaticBenchConfig } from './gateway/gw-config.ts';
import { type Endpoint, runLoad } from './gateway/load.ts';
import { cpuMs, machineBusyMs, machineInterruptMs, ownCpuMs, processTree } from './gateway/process-tree.ts';
import { median } from './gateway/rounds.ts';
import { startGw } from './gateway/targets/gw.ts';
import { startUpstream } from './gateway/upstream.ts';

const USAGE = `Usage: node bench/scaling.bench.ts [options]
  --workers LIST      gw worker counts to compare, comma-separated (default 1,2)
  --duration S        seconds of each measured run (default 10)
  --warmup S          seconds of load before each measured run, not counted (default 2)
  --connections N     connections of the load generator (default 64)
  --rounds N          measure every count N times, in alternating order; medians are reported (default 3)
  --access-log        keep gw's access log on (written to /dev/null); off by default
`;

interface Options {
  workers: number[];
  durationSeconds: number;
  warmupSeconds: number;
  connections: number;
  rounds: number;
  accessLog: boolean;
}

function parseOptions(args: string[]): Options {
  const { values } = parseArgs({
    args,
    options: {
      workers: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      rounds: { type: 'string' },
      'access-log': { type: 'boolean' },
    },
    strict: true,
  });
  const whole = (name: string, text: string | undefined, fallback: number, min: number): number => {
    if (text === undefined) return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < min) throw new Error(`--${name} must be a whole number ≥ ${min}`);
    return value;
  };
  const workers = (values.workers ?? '1,2').split(',').map((text) => whole('workers', text.trim(), 1, 1));
  return {
    workers: [...new Set(workers)],
    durationSeconds: whole('duration', values.duration, 10, 1),
    warmupSeconds: whole('warmup', values.warmup, 2, 0),
    connections: whole('connections', values.connections, 64, 1),
    rounds: whole('rounds', values.rounds, 3, 1),
    accessLog: values['access-log'] ?? false,
  };
}

interface Run {
  workers: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  failed: number;
  /** Cores' worth of CPU used during the measured run. */
  gwCores: number;
  upstreamCores: number;
  /** The load generator's process (and this one's, which only waits). */
  loadCores: number;
  /** Interrupt and softirq time (the loopback network's receive work is largely here). */
  interruptCores: number;
  machineCores: number;
}

const log = (line: string) => process.stderr.write(`${line}\n`);

async function measure(workers: number, upstream: { port: number; pid: number }, options: Options): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-scaling-'));
  const listenerPort = await freePort();
  writeStaticBenchConfig(dir, { listenerPort, upstreamPort: upstream.port, accessLog: options.accessLog });
  const gw = await startGw(dir, `http://127.0.0.1:${listenerPort}`, ['--workers', String(workers)]);
  try {
    const endpoint: Endpoint = { url: gw.url + CHAT_PATH, headers: CHAT_HEADERS, body: CHAT_BODY };
    const check = await request(endpoint.url, { method: 'POST', headers: endpoint.headers, body: endpoint.body });
    await check.body.dump();
    if (check.statusCode !== 200) throw new Error(`gw answered ${check.statusCode} through the static route`);
    const job = { kind: 'saturate' as const, endpoint, connections: options.connections };
    if (options.warmupSeconds > 0) await runLoad({ ...job, durationSeconds: options.warmupSeconds });
    const gwPids = processTree(gw.pid);
    const gwBefore = cpuMs(gwPids);
    const upstreamBefore = cpuMs([upstream.pid]);
    const machineBefore = machineBusyMs();
    // The load generator is a child that has ended and been waited for when runLoad returns, so
    // its CPU time is in this process's children's time.
    const ownBefore = ownCpuMs();
    const interruptBefore = machineInterruptMs();
    const startedAt = performance.now();
    const result = await runLoad({ ...job, durationSeconds: options.durationSeconds });
    // CPU shares over the wall time of the run, the load generator's start and end included.
    const elapsedMs = performance.now() - startedAt;
    return {
      workers,
      requestsPerSecond: result.requestsPerSecond,
      p50Ms: result.p50Ms,
      p99Ms: result.p99Ms,
      failed: result.non2xx + result.errors,
      gwCores: (cpuMs(gwPids) - gwBefore) / elapsedMs,
      upstreamCores: (cpuMs([upstream.pid]) - upstreamBefore) / elapsedMs,
      loadCores: (ownCpuMs() - ownBefore) / elapsedMs,
      interruptCores: (machineInterruptMs() - interruptBefore) / elapsedMs,
      machineCores: (machineBusyMs() - machineBefore) / elapsedMs,
    };
  } finally {
    await gw.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function medianRun(runs: Run[]): Run {
  const of = (pick: (run: Run) => number) => median(runs.map(pick));
  return {
    workers: runs[0]!.workers,
    requestsPerSecond: of((run) => run.requestsPerSecond),
    p50Ms: of((run) => run.p50Ms),
    p99Ms: of((run) => run.p99Ms),
    failed: runs.reduce((sum, run) => sum + run.failed, 0),
    gwCores: of((run) => run.gwCores),
    upstreamCores: of((run) => run.upstreamCores),
    loadCores: of((run) => run.loadCores),
    interruptCores: of((run) => run.interruptCores),
    machineCores: of((run) => run.machineCores),
  };
}

function report(options: Options, byWorkers: Map<number, Run[]>): string {
  const cores = availableParallelism();
  const base = medianRun(byWorkers.get(options.workers[0]!)!);
  const lines = [
    `# gw multi-core scaling`,
    '',
    `Machine: ${cores} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), Node ${process.version}. ` +
      `The load generator (autocannon, ${options.connections} connections, closed loop), the upstream mock ` +
      `(fixed 1 KiB answer) and gw run as separate processes on these ${cores} cores; nothing is pinned.`,
    `Route: an HTTPRoute to a static GwBackend (plain HTTP proxying, ${CHAT_BODY.length}-byte POST). ` +
      `Access log ${options.accessLog ? 'on (to /dev/null)' : 'off'}. Each figure: the median of ${options.rounds} ` +
      `round(s) of ${options.warmupSeconds} s warm-up + ${options.durationSeconds} s measured, counts in alternating order.`,
    '',
    '| gw | requests/s | vs first | p50 ms | p99 ms | failed | gw CPU (cores) | requests per gw CPU-second | upstream CPU | load generator CPU | interrupts | machine busy |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const workers of options.workers) {
    const run = medianRun(byWorkers.get(workers)!);
    lines.push(
      `| --workers ${workers} | ${Math.round(run.requestsPerSecond)} | ${(run.requestsPerSecond / base.requestsPerSecond).toFixed(2)}x | ` +
        `${run.p50Ms.toFixed(2)} | ${run.p99Ms.toFixed(2)} | ${run.failed} | ${run.gwCores.toFixed(2)} | ` +
        `${Math.round(run.requestsPerSecond / run.gwCores)} | ` +
        `${run.upstreamCores.toFixed(2)} | ${run.loadCores.toFixed(2)} | ${run.interruptCores.toFixed(2)} | ${run.machineCores.toFixed(2)} of ${cores} |`,
    );
  }
  lines.push(
    '',
    "CPU columns: cores' worth of CPU time over the measured run (wall time). Requests per gw CPU-second: " +
      'what one core of gw serves; when it is the same for every count, more workers cost nothing extra per ' +
      "request. Interrupts: the machine's irq and softirq time, where much of the loopback network work is " +
      "counted. Machine busy: all of the machine's non-idle time, other tenants included; it comes from " +
      'other kernel counters than the per-process columns, so the columns need not add up to it exactly.',
    '',
    'Per round (requests/s): ' +
      options.workers
        .map(
          (workers) =>
            `--workers ${workers}: ${byWorkers
              .get(workers)!
              .map((run) => Math.round(run.requestsPerSecond))
              .join(', ')}`,
        )
        .join('; '),
    '',
  );
  return lines.join('\n');
}

async function main(options: Options): Promise<number> {
  log('starting the upstream mock');
  const mocks = await startUpstream();
  const upstream = { port: mocks.ports.openaiFixed, pid: mocks.pid };
  const byWorkers = new Map<number, Run[]>(options.workers.map((workers) => [workers, []]));
  try {
    for (let round = 1; round <= options.rounds; round++) {
      const order = round % 2 === 1 ? options.workers : [...options.workers].reverse();
      for (const workers of order) {
        log(`round ${round}/${options.rounds}: gw --workers ${workers}`);
        const run = await measure(workers, upstream, options);
        log(`  ${Math.round(run.requestsPerSecond)} requests/s, gw ${run.gwCores.toFixed(2)} cores`);
        byWorkers.get(workers)!.push(run);
      }
    }
  } finally {
    await mocks.stop();
  }
  process.stdout.write(report(options, byWorkers));
  return 0;
}

runBench(USAGE, parseOptions, main);
