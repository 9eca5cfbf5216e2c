// What gw's MCP multiplexer costs (issue: the MCP gateway). gw runs as a child process in front
// of MCP servers built with @modelcontextprotocol/sdk (Streamable HTTP, in child processes of
// their own); the load generator is a fresh child process per run, with its own MCP session.
//
// (a) tools/list across 8 targets: 8 stateful servers with 10 tools each, one of them the slowest
//     (its list handler waits --delay ms, 20 by default). One request at a time on an initialized
//     session, through gw (the merged list of 80 tools) against the slowest target directly; gw
//     sends the targets' requests in their configured order, so the slowest is measured as the
//     last target (its request leaves gw last: the goal is judged on this) and as the first.
//     Goal: gw adds at most 2 ms.
// (b) tools/call on one target: a closed loop of JSON-RPC POSTs (a fresh id each) on one session,
//     --connections connections, through gw against the target directly, for two SDK targets:
//     stateful (a server per session, answers on SSE streams, the SDK's default) and stateless (a
//     server per request, JSON answers). Not stateful with JSON answers: SDK 1.32.2 keeps every
//     request of such a session in memory (its JSON path never removes the stream entry), so it
//     slows down as it runs. Goal: gw reaches at least 0.5x the requests/s of the faster target
//     called directly.
//
// Rounds alternate the sides; the report gives medians.
//
//   ./node_modules/.bin/node bench/mcp.bench.ts [--rounds N] [--duration S] [--connections C] [--delay MS]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, stopAllChildren } from './gateway/child-process.ts';
import { gateway, gatewayClass, noAccessLog, writeResources } from './gateway/gw-config.ts';
import { cpuMs } from './gateway/process-tree.ts';
import { startGw } from './gateway/targets/gw.ts';
import { type CallsResult, type RoundTripResult, runMcpLoad } from './mcp/load.ts';
import { type McpServers, mcpUrl, startMcpServers } from './mcp/servers.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string' },
    duration: { type: 'string' },
    connections: { type: 'string' },
    delay: { type: 'string' },
  },
});
const rounds = Number(values.rounds ?? 3);
const duration = Number(values.duration ?? 5);
const connections = Number(values.connections ?? 32);
const delayMs = Number(values.delay ?? 20);
const TARGETS = 8;
const TOOLS = 10;
const LIST_WARMUP = 20;
const LIST_REQUESTS = 200;

type CallTarget = 'stateful' | 'stateless';
const CALL_TARGETS: readonly CallTarget[] = ['stateful', 'stateless'];

function median(numbers: number[]): number {
  const sorted = [...numbers].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function route(name: string): Record<string, unknown> {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name },
    spec: {
      parentRefs: [{ name: 'bench' }],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: `/${name}` } }],
          backendRefs: [{ group: 'gw.dev', kind: 'GwBackend', name }],
        },
      ],
    },
  };
}

function mcpBackend(name: string, targets: { name: string; port: number }[]): Record<string, unknown> {
  return {
    apiVersion: 'gw.dev/v1alpha1',
    kind: 'GwBackend',
    metadata: { name },
    spec: {
      mcp: {
        targets: targets.map((target) => ({ name: target.name, static: { host: '127.0.0.1', port: target.port } })),
      },
    },
  };
}

/**
 * Gateway bench: /slow-last and /slow-first to the 8 list servers (the slowest last or first),
 * /stateful and /stateless to the call servers; access log off.
 */
function resources(port: number, fast: McpServers, slow: McpServers, call: Record<CallTarget, McpServers>) {
  const fastTargets = fast.ports.map((targetPort, n) => ({ name: `fast-${n + 1}`, port: targetPort }));
  const slowTarget = { name: 'slow', port: slow.ports[0]! };
  return [
    gatewayClass,
    gateway([{ name: 'http', port }]),
    noAccessLog,
    mcpBackend('slow-last', [...fastTargets, slowTarget]),
    route('slow-last'),
    mcpBackend('slow-first', [slowTarget, ...fastTargets]),
    route('slow-first'),
    ...CALL_TARGETS.flatMap((kind) => [mcpBackend(kind, [{ name: 'echo', port: call[kind].ports[0]! }]), route(kind)]),
  ];
}

// The 7 fast servers share a process; the slowest and each call target have their own, so that
// the measured target does exactly the same work whether it is called directly or through gw.
const fast = await startMcpServers({ role: 'list', count: TARGETS - 1, tools: TOOLS, delayMs: 0 });
const slow = await startMcpServers({ role: 'list', count: 1, tools: TOOLS, delayMs });
const call: Record<CallTarget, McpServers> = {
  stateful: await startMcpServers({ role: 'call', stateless: false, json: false }),
  stateless: await startMcpServers({ role: 'call', stateless: true, json: true }),
};
const dir = mkdtempSync(join(tmpdir(), 'gw-bench-mcp-'));
const port = await freePort();
writeResources(dir, resources(port, fast, slow, call));
const gw = await startGw(dir, `http://127.0.0.1:${port}`);
const gwUrl = (path: string) => `http://127.0.0.1:${port}/${path}/mcp`;

interface CallSample extends CallsResult {
  targetCpuUs: number;
  gwCpuUs: number;
}

try {
  // (a) tools/list round trips.
  const lists: Record<'fast' | 'slow' | 'slow-last' | 'slow-first', RoundTripResult[]> = {
    fast: [],
    slow: [],
    'slow-last': [],
    'slow-first': [],
  };
  const listCpuUs: number[] = [];
  const roundTrip = (url: string) =>
    runMcpLoad({ kind: 'round-trip', url, method: 'tools/list', warmup: LIST_WARMUP, requests: LIST_REQUESTS });
  for (let round = 0; round < rounds; round++) {
    lists.fast.push(await roundTrip(mcpUrl(fast.ports[0]!).href));
    lists.slow.push(await roundTrip(mcpUrl(slow.ports[0]!).href));
    for (const order of ['slow-last', 'slow-first'] as const) {
      const gwCpuBefore = cpuMs([gw.pid]);
      const merged = await roundTrip(gwUrl(order));
      listCpuUs.push(((cpuMs([gw.pid]) - gwCpuBefore) * 1000) / (LIST_WARMUP + LIST_REQUESTS));
      if (merged.items !== TARGETS * TOOLS) throw new Error(`gw listed ${merged.items} tools, not ${TARGETS * TOOLS}`);
      lists[order].push(merged);
    }
    process.stderr.write(
      `round ${round + 1} tools/list p50: slowest ${lists.slow.at(-1)!.p50Ms.toFixed(2)} ms, ` +
        `gw ${lists['slow-last'].at(-1)!.p50Ms.toFixed(2)} ms (slowest last), ` +
        `${lists['slow-first'].at(-1)!.p50Ms.toFixed(2)} ms (slowest first)\n`,
    );
  }

  // (b) tools/call throughput, each target directly and through gw, alternately.
  const calls: Record<CallTarget, Record<'direct' | 'gw', CallSample[]>> = {
    stateful: { direct: [], gw: [] },
    stateless: { direct: [], gw: [] },
  };
  const callRun = async (kind: CallTarget, side: 'direct' | 'gw') => {
    const target = call[kind];
    const before = { gw: cpuMs([gw.pid]), target: cpuMs([target.pid]) };
    const result = await runMcpLoad({
      kind: 'calls',
      url: side === 'gw' ? gwUrl(kind) : mcpUrl(target.ports[0]!).href,
      connections,
      warmupSeconds: 1,
      durationSeconds: duration,
    });
    if (result.failed > 0) throw new Error(`tools/call ${kind} ${side}: ${result.failed} failed answers`);
    // CPU over the whole run (warm-up included), per answer read in it.
    calls[kind][side].push({
      ...result,
      targetCpuUs: ((cpuMs([target.pid]) - before.target) * 1000) / result.answered,
      gwCpuUs: ((cpuMs([gw.pid]) - before.gw) * 1000) / result.answered,
    });
    process.stderr.write(`tools/call ${kind} ${side}: ${Math.round(result.requestsPerSecond)} requests/s\n`);
  };
  for (let round = 0; round < rounds; round++) {
    for (const kind of CALL_TARGETS) {
      await callRun(kind, 'direct');
      await callRun(kind, 'gw');
    }
  }

  // What differs between the two sides, so that the figures can be weighed.
  console.log(
    '\nBoth sides call the same MCP servers; through gw adds one process: gw run -f with its access log off ' +
      '(a GwPolicy with accessLog filter "false") and the runtime settings gw run gives itself (bin/gw.js), ' +
      'metrics recorded as always. Nothing else differs.',
  );

  // Report (a).
  const p50 = (side: keyof typeof lists) => median(lists[side].map((r) => r.p50Ms));
  const p99 = (side: keyof typeof lists) => median(lists[side].map((r) => r.p99Ms));
  const added = (order: 'slow-last' | 'slow-first') =>
    `${(p50(order) - p50('slow')).toFixed(2)} ms at p50, ${(p99(order) - p99('slow')).toFixed(2)} ms at p99`;
  const addedP50 = p50('slow-last') - p50('slow');
  console.log(
    `\n(a) tools/list, one request at a time on an initialized session, ${LIST_REQUESTS} requests per run ` +
      `(after ${LIST_WARMUP}), ${rounds} rounds, medians\n`,
  );
  console.log('| endpoint | tools listed | p50 | p99 |');
  console.log('|---|---|---|---|');
  const listRow = (label: string, tools: number, side: keyof typeof lists) =>
    `| ${label} | ${tools} | ${p50(side).toFixed(2)} ms | ${p99(side).toFixed(2)} ms |`;
  console.log(listRow('a fast target directly', TOOLS, 'fast'));
  console.log(listRow(`the slowest target directly (its list waits ${delayMs} ms)`, TOOLS, 'slow'));
  console.log(listRow(`gw, ${TARGETS} targets merged, the slowest last`, TARGETS * TOOLS, 'slow-last'));
  console.log(listRow(`gw, ${TARGETS} targets merged, the slowest first`, TARGETS * TOOLS, 'slow-first'));
  console.log(
    `\nadded by gw over the slowest target: ${added('slow-last')} with the slowest last ` +
      `(goal: at most 2 ms at p50: ${addedP50 <= 2 ? 'met' : 'missed'}); ${added('slow-first')} with the slowest first; ` +
      `gw CPU per merged list ${median(listCpuUs).toFixed(0)} µs`,
  );

  // Report (b).
  const rps = (kind: CallTarget, side: 'direct' | 'gw') => median(calls[kind][side].map((r) => r.requestsPerSecond));
  const of = (
    kind: CallTarget,
    side: 'direct' | 'gw',
    field: 'p50Ms' | 'p99Ms' | 'targetCpuUs' | 'gwCpuUs' | 'loadCpuUs',
  ) => median(calls[kind][side].map((r) => r[field]));
  console.log(
    `\n(b) tools/call on one target (SDK servers: stateful with SSE answers, stateless with JSON answers), ${connections} connections, ` +
      `${duration} s per run (after 1 s), ${rounds} rounds, medians\n`,
  );
  console.log(
    '| target | endpoint | requests/s | p50 | p99 | CPU per call: target | gw | load generator | cores busy |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const kind of CALL_TARGETS) {
    for (const side of ['direct', 'gw'] as const) {
      const gwCpu = side === 'gw' ? of(kind, side, 'gwCpuUs') : 0;
      const totalCpu = of(kind, side, 'targetCpuUs') + gwCpu + of(kind, side, 'loadCpuUs');
      console.log(
        `| ${kind} | ${side === 'gw' ? 'through gw' : 'directly'} | ${Math.round(rps(kind, side)).toLocaleString('en-US')} | ` +
          `${of(kind, side, 'p50Ms').toFixed(2)} ms | ${of(kind, side, 'p99Ms').toFixed(2)} ms | ` +
          `${of(kind, side, 'targetCpuUs').toFixed(0)} µs | ${side === 'gw' ? `${gwCpu.toFixed(0)} µs` : '—'} | ` +
          `${of(kind, side, 'loadCpuUs').toFixed(0)} µs | ${((totalCpu * rps(kind, side)) / 1e6).toFixed(2)} |`,
      );
    }
  }
  const fastest = CALL_TARGETS.reduce((best, kind) => (rps(kind, 'direct') > rps(best, 'direct') ? kind : best));
  console.log('');
  for (const kind of CALL_TARGETS) {
    const ratio = rps(kind, 'gw') / rps(kind, 'direct');
    const goal =
      kind === fastest ? ` (the faster target; goal: at least 0.5x: ${ratio >= 0.5 ? 'met' : 'missed'})` : '';
    console.log(`throughput ratio, ${kind} target: ${ratio.toFixed(3)}x${goal}`);
  }
} finally {
  await gw.stop();
  await Promise.all([fast.stop(), slow.stop(), ...CALL_TARGETS.map((kind) => call[kind].stop())]);
  await stopAllChildren();
  rmSync(dir, { recursive: true, force: true });
}
