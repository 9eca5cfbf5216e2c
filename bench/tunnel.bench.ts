// Tunnel and a2a benchmark (issue 23): one gw serving the same OpenAI-style route twice — direct to
// the fixed-answer mock, and through an HTTP CONNECT proxy (a backend policy's tunnel) — and an a2a
// route (an A2A SendMessage JSON-RPC call to a fast local agent, bench/gateway/a2a-agent-mock.ts),
// loaded in turns in one run, so the figures share the machine's state. The proxy is its own
// process; the agent runs with the mocks. Goal: the tunnelled and the a2a route's requests/s each
// at least 0.8x the direct (plain) route's.
// Two layouts of the processes on the machine's cores, each a run of its own (both by default):
// `shared` — every process on every core, so the proxy's relaying competes with gw for CPU; and
// `apart` — the proxy alone on the last core, gw, the load generator and the mocks on the others,
// as an egress proxy runs on machines of its own (taskset; Linux).
// Run: ./node_modules/.bin/node bench/tunnel.bench.ts [--duration 10] [--connections 32] [--rounds 3]
//      [--proxy squid|node] (default: Squid where Debian's package is installed)
//      [--layout shared|apart|both] (default both)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { A2A_HEADERS, A2A_RPC_PATH, A2A_SEND_BODY } from './gateway/a2a-agent-mock.ts';
import { CHAT_BODY, CHAT_HEADERS, CHAT_PATH } from './gateway/chat-request.ts';
import { type ChildHandle, freePort, spawnChild, stopAllChildren, waitUntilAnswers } from './gateway/child-process.ts';
import { writeTunnelBenchConfig } from './gateway/gw-config.ts';
import { runLoad, type SaturateResult } from './gateway/load.ts';
import { cpuMs, processTree } from './gateway/process-tree.ts';
import { median } from './gateway/rounds.ts';
import { startGw } from './gateway/targets/gw.ts';
import { startUpstream } from './gateway/upstream.ts';

const GOAL = 0.8;
const SQUID = '/usr/sbin/squid';

const TASKSET = '/usr/bin/taskset';

/** How a process is started: as it is, or on the cores `cores` names (taskset's list). */
function command(cores: string | undefined, file: string, args: string[]): [string, string[]] {
  return cores === undefined ? [file, args] : [TASKSET, ['-c', cores, file, ...args]];
}

/** The suite's CONNECT proxy (node's http server) in a child process. */
async function startNodeProxy(cores: string | undefined): Promise<{ child: ChildHandle; port: number }> {
  const child = spawnChild(
    'connect proxy',
    ...command(cores, process.execPath, [
      fileURLToPath(new URL('./gateway/connect-proxy-process.ts', import.meta.url)),
    ]),
    { ipc: true },
  );
  const { port } = (await child.nextMessage()) as { port: number };
  return { child, port };
}

/**
 * Squid in the foreground on a free loopback port, as a bare CONNECT relay: every CONNECT allowed
 * (the mock's port is not 443), no cache, no logs.
 */
async function startSquid(dir: string, cores: string | undefined): Promise<{ child: ChildHandle; port: number }> {
  const port = await freePort();
  const config = join(dir, 'squid.conf');
  writeFileSync(
    config,
    [
      `http_port 127.0.0.1:${port}`,
      'http_access allow all',
      'cache deny all',
      'cache_mem 8 MB',
      'access_log none',
      'cache_log /dev/null',
      'cache_store_log none',
      'logfile_rotate 0',
      `pid_filename ${join(dir, 'squid.pid')}`,
      `coredump_dir ${dir}`,
      'shutdown_lifetime 0 seconds',
      '',
    ].join('\n'),
  );
  const child = spawnChild('squid', ...command(cores, SQUID, ['-N', '-f', config]));
  try {
    // Squid answers a plain GET of its own address with an error page: an answer all the same.
    await waitUntilAnswers(child, `http://127.0.0.1:${port}/`);
  } catch (error) {
    await child.stop();
    throw error;
  }
  return { child, port };
}
const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '3' },
    proxy: { type: 'string' },
    layout: { type: 'string', default: 'both' },
  },
});
const durationSeconds = Number(values.duration);
const connections = Number(values.connections);
const rounds = Number(values.rounds);
/**
 * The CONNECT proxy: Squid (Debian's package: the egress proxy many networks run; C++, one
 * process, epoll) where it is installed, else the test suite's proxy on node's http server
 * (test/support/connect-proxy.ts), whose relaying costs more CPU on the cores gw shares with it.
 */
const proxyKind = values.proxy ?? (existsSync(SQUID) ? 'squid' : 'node');
if (proxyKind !== 'squid' && proxyKind !== 'node') throw new Error('--proxy is squid or node');
const log = (line: string) => process.stderr.write(`${line}\n`);
/** Counted before any pinning: availableParallelism() counts the cores a process may run on. */
const CORES = availableParallelism();
const LAYOUTS = ['shared', 'apart'] as const;
type Layout = (typeof LAYOUTS)[number];
const layouts: readonly Layout[] =
  values.layout === 'both' ? LAYOUTS : LAYOUTS.filter((layout) => layout === values.layout);
if (layouts.length === 0) throw new Error('--layout is shared, apart or both');
if (layouts.includes('apart') && (CORES < 2 || !existsSync(TASKSET)))
  throw new Error('--layout apart needs two cores and taskset (util-linux)');
/** The cores of the apart layout: the proxy's (the last), everyone else's. */
const lastCore = CORES - 1;
const PROXY_CORES = String(lastCore);
const OTHER_CORES = lastCore === 1 ? '0' : `0-${lastCore - 1}`;
const ALL_CORES = `0-${lastCore}`;

/** The routes loaded in turns: the plain LLM route, the tunnelled one, the a2a one. */
const ROUTES = ['direct', 'tunnelled', 'agent'] as const;
type Route = (typeof ROUTES)[number];

/** Pins this process's threads — and so every process it starts from now on — to `cores`. */
function pinSelf(cores: string): void {
  execFileSync(TASKSET, ['-a', '-p', '-c', cores, String(process.pid)], { stdio: 'ignore' });
}

/** One run of every route in one layout: the table's lines. */
async function measure(layout: Layout): Promise<string[]> {
  // Apart: the mocks, gw and the load generator (all started below) on the other cores.
  pinSelf(layout === 'apart' ? OTHER_CORES : ALL_CORES);
  const proxyCores = layout === 'apart' ? PROXY_CORES : undefined;
  const loadBefore = loadavg()[0]!;
  const upstream = await startUpstream();
  const dir = mkdtempSync(join(tmpdir(), 'gw-tunnel-bench-'));
  const { child: proxyChild, port: proxyPort } =
    proxyKind === 'squid' ? await startSquid(dir, proxyCores) : await startNodeProxy(proxyCores);
  const listenerPort = await freePort();
  writeTunnelBenchConfig(dir, {
    listenerPort,
    upstreamPort: upstream.ports.openaiFixed,
    proxyPort,
    agentPort: upstream.ports.a2aAgent,
  });
  const gw = await startGw(dir, `http://127.0.0.1:${listenerPort}`);
  const results: Record<Route, SaturateResult[]> = { direct: [], tunnelled: [], agent: [] };
  /** gw's CPU (its process tree) per answered request in each measured run, µs. */
  const gwCpu: Record<Route, number[]> = { direct: [], tunnelled: [], agent: [] };
  const proxyCpu: Record<Route, number[]> = { direct: [], tunnelled: [], agent: [] };
  try {
    const endpoint = (name: Route) =>
      name === 'agent'
        ? { url: `http://127.0.0.1:${listenerPort}/agent${A2A_RPC_PATH}`, headers: A2A_HEADERS, body: A2A_SEND_BODY }
        : { url: `http://127.0.0.1:${listenerPort}/${name}${CHAT_PATH}`, headers: CHAT_HEADERS, body: CHAT_BODY };
    // Warm-up of every route (connections opened, code compiled), not measured.
    for (const name of ROUTES)
      await runLoad({ kind: 'saturate', endpoint: endpoint(name), connections, durationSeconds: 3 });
    for (let round = 1; round <= rounds; round++)
      for (const name of ROUTES) {
        const gwPids = processTree(gw.pid);
        const proxyPids = processTree(proxyChild.pid);
        const gwBefore = cpuMs(gwPids);
        const proxyBefore = cpuMs(proxyPids);
        const result = await runLoad({ kind: 'saturate', endpoint: endpoint(name), connections, durationSeconds });
        if (result.non2xx > 0 || result.errors > 0)
          throw new Error(`${name}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
        results[name].push(result);
        gwCpu[name].push(((cpuMs(gwPids) - gwBefore) * 1000) / Math.max(1, result.ok));
        proxyCpu[name].push(((cpuMs(proxyPids) - proxyBefore) * 1000) / Math.max(1, result.ok));
        log(
          `${layout} round ${round} ${name}: ${result.requestsPerSecond.toFixed(0)} requests/s, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms`,
        );
      }
  } finally {
    await gw.stop();
    await proxyChild.stop();
    await upstream.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const rps = (name: Route) => median(results[name].map((result) => result.requestsPerSecond));
  const p50 = (name: Route) => median(results[name].map((result) => result.p50Ms));
  const cpu = (name: Route) => `${median(gwCpu[name]).toFixed(0)} µs`;
  const proxyShare = (name: Route) => (name === 'tunnelled' ? `${median(proxyCpu[name]).toFixed(0)} µs` : '—');
  const ratio = (name: Route) => rps(name) / rps('direct');
  const goal = (name: Route, what: string) =>
    `Goal: ${what} requests/s at least ${GOAL}x the direct route's: ${ratio(name).toFixed(2)}x, ${ratio(name) >= GOAL ? 'met' : 'NOT met'}.`;
  const where =
    layout === 'apart'
      ? `the CONNECT proxy alone on core ${PROXY_CORES}, everything else on core${OTHER_CORES.includes('-') ? 's' : ''} ${OTHER_CORES}`
      : 'every process on every core';
  return [
    `### Layout ${layout}: ${where}`,
    `Load average (1 min) ${loadBefore.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end: above ${CORES} the figures are shared with other work and noisy.`,
    '',
    '| route | requests/s | p50 | gw CPU per request | proxy CPU per request |',
    '|---|---|---|---|---|',
    `| gw → mock (direct) | ${rps('direct').toFixed(0)} | ${p50('direct')} ms | ${cpu('direct')} | — |`,
    `| gw → CONNECT proxy → mock (tunnel) | ${rps('tunnelled').toFixed(0)} | ${p50('tunnelled')} ms | ${cpu('tunnelled')} | ${proxyShare('tunnelled')} |`,
    `| gw → A2A agent (a2a, SendMessage over JSON-RPC) | ${rps('agent').toFixed(0)} | ${p50('agent')} ms | ${cpu('agent')} | — |`,
    '',
    goal('tunnelled', 'tunnelled'),
    goal('agent', 'a2a'),
    '',
  ];
}

async function main(): Promise<void> {
  const lines = [
    `Machine: ${CORES} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), Node ${process.version}; load generator, mocks, CONNECT proxy and gw in separate processes.`,
    `CONNECT proxy: ${proxyKind === 'squid' ? `Squid (${SQUID}, Debian's package)` : "the test suite's proxy on node's http server (test/support/connect-proxy.ts)"}.`,
    `${rounds} rounds of ${connections} connections for ${durationSeconds} s per route (autocannon, closed loop), medians; 1 KiB fixed completion, a 230-byte SendMessage answered with a 270-byte fixed A2A task.`,
    '',
  ];
  for (const layout of layouts) lines.push(...(await measure(layout)));
  process.stdout.write(`${lines.join('\n')}`);
}

process.on('SIGINT', () => void stopAllChildren().finally(() => process.exit(130)));
main().catch(async (error) => {
  log(String(error instanceof Error ? error.stack : error));
  await stopAllChildren();
  process.exit(1);
});
