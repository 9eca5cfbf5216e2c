// A/B benchmark of plain HTTP routing (decision 0051): this tree's gw against another checkout's
// (e.g. `git worktree add /tmp/base <commit>`, node_modules linked), each a `gw run` serving an
// HTTPRoute to a static GwBackend — a fixed-answer server, 270 bytes a response — loaded in turns,
// rounds alternating which goes first so that a busy machine slows both alike. Two requests, each
// measured on a fresh pair of processes (one kind's traffic warms code the other kind then runs:
// a POST after GETs on undici measured up to 1.5x faster than POSTs alone): a GET (no body: gw's
// own HTTP/1.1 client since 0051) and a POST of the 1 KiB chat body (streamed from the client:
// undici in both trees). Prints requests/s and gw's CPU a request, medians.
// Run: ./node_modules/.bin/node bench/http-route-ab.bench.ts OTHER_CHECKOUT [--rounds 3]
//      [--duration 10] [--connections 32] [--only GET|POST]
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { CHAT_BODY, CHAT_HEADERS } from './gateway/chat-request.ts';
import { freePort, stopAllChildren } from './gateway/child-process.ts';
import { writeStaticBenchConfig } from './gateway/gw-config.ts';
import { type Endpoint, runLoad } from './gateway/load.ts';
import { cpuMs, processTree } from './gateway/process-tree.ts';
import { median } from './gateway/rounds.ts';
import { type StartedGw, startGw } from './gateway/targets/gw.ts';
import { startUpstream } from './gateway/upstream.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    only: { type: 'string' },
  },
});
const other = positionals[0];
if (other === undefined) {
  console.error(
    'usage: node bench/http-route-ab.bench.ts OTHER_CHECKOUT [--rounds 3] [--duration 10] [--connections 32]',
  );
  process.exit(2);
}
const rounds = Number(values.rounds);
const durationSeconds = Number(values.duration);
const connections = Number(values.connections);

const TREES = { this: resolve(new URL('..', import.meta.url).pathname), other: resolve(other) } as const;
type Tree = keyof typeof TREES;
const METHODS = ['GET', 'POST'] as const;
type Method = (typeof METHODS)[number];
const REQUESTS = METHODS.filter((method) => values.only === undefined || values.only === method);
if (REQUESTS.length === 0) throw new Error('--only is GET or POST');

function endpoint(gw: StartedGw, method: Method): Endpoint {
  return method === 'GET'
    ? { url: `${gw.url}/agent/card`, headers: {}, body: '', method: 'GET' }
    : { url: `${gw.url}/v1/chat/completions`, headers: CHAT_HEADERS, body: CHAT_BODY };
}

/** The two trees' figures for one kind of request: a fresh pair of gw processes, rounds alternating. */
async function measure(method: Method, upstreamPort: number): Promise<Record<Tree, { rps: number[]; cpu: number[] }>> {
  const dirs: string[] = [];
  const gws = {} as Record<Tree, StartedGw>;
  const figures: Record<Tree, { rps: number[]; cpu: number[] }> = {
    this: { rps: [], cpu: [] },
    other: { rps: [], cpu: [] },
  };
  try {
    for (const tree of Object.keys(TREES) as Tree[]) {
      const dir = mkdtempSync(join(tmpdir(), `gw-http-ab-${tree}-`));
      dirs.push(dir);
      const port = await freePort();
      writeStaticBenchConfig(dir, { listenerPort: port, upstreamPort, accessLog: false });
      gws[tree] = await startGw(dir, `http://127.0.0.1:${port}`, [], TREES[tree]);
      await runLoad({ kind: 'saturate', endpoint: endpoint(gws[tree], method), connections, durationSeconds: 5 });
    }
    for (let round = 0; round < rounds; round++)
      for (const tree of (round % 2 === 0 ? ['this', 'other'] : ['other', 'this']) as Tree[]) {
        const pids = processTree(gws[tree].pid);
        const before = cpuMs(pids);
        const result = await runLoad({
          kind: 'saturate',
          endpoint: endpoint(gws[tree], method),
          connections,
          durationSeconds,
        });
        if (result.non2xx > 0 || result.errors > 0)
          throw new Error(`${tree} ${method}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
        figures[tree].rps.push(result.requestsPerSecond);
        figures[tree].cpu.push(((cpuMs(pids) - before) * 1000) / Math.max(1, result.ok));
        process.stderr.write(
          `round ${round + 1} ${method} ${tree}: ${result.requestsPerSecond.toFixed(0)} requests/s\n`,
        );
      }
  } finally {
    for (const gw of Object.values(gws)) await gw.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}

async function main(): Promise<void> {
  const loadBefore = loadavg()[0]!;
  const upstream = await startUpstream();
  const figures = {} as Record<Method, Record<Tree, { rps: number[]; cpu: number[] }>>;
  try {
    // The A2A agent stand-in answers any request at once with the same bytes: a plain HTTP server.
    for (const method of REQUESTS) figures[method] = await measure(method, upstream.ports.a2aAgent);
  } finally {
    await upstream.stop();
  }
  const lines = [
    `Machine: ${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), Node ${process.version}; load generator, upstream and both gw processes separate.`,
    `Load average (1 min) ${loadBefore.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end.`,
    `This tree: ${TREES.this}; other: ${TREES.other}. ${rounds} rounds of ${connections} connections for ${durationSeconds} s each, medians.`,
    '',
    '| request | other: requests/s, gw CPU a request | this: requests/s, gw CPU a request | this / other |',
    '|---|---|---|---|',
  ];
  for (const method of REQUESTS) {
    const cell = (tree: Tree) => {
      const { rps, cpu } = figures[method][tree];
      return `${median(rps).toFixed(0)}, ${median(cpu).toFixed(1)} µs`;
    };
    const ratio = median(figures[method].this.rps) / median(figures[method].other.rps);
    const what = method === 'GET' ? 'GET, no body' : 'POST, 1 KiB body streamed';
    lines.push(`| ${what} | ${cell('other')} | ${cell('this')} | ${ratio.toFixed(2)}x |`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

process.on('SIGINT', () => void stopAllChildren().finally(() => process.exit(130)));
main().catch(async (error) => {
  process.stderr.write(`${error instanceof Error ? error.stack : error}\n`);
  await stopAllChildren();
  process.exit(1);
});
