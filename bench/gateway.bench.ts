// Data-plane benchmark (issue 4): the same load against the OpenAI mock directly, through nginx,
// through gw (passthrough and translated to an Anthropic provider) and through Portkey, side by
// side in one run; the report ends with a line per goal of the issue.
// Run: ./node_modules/.bin/node bench/gateway.bench.ts [--duration 10] [--connections 64] (--help)
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { availableParallelism, cpus, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { CHAT_BODY } from './gateway/chat-request.ts';
import { runBench } from './gateway/cli.ts';
import { measureTarget, type Outcome } from './gateway/measure.ts';
import { NGINX_UPSTREAM_KEEPALIVE } from './gateway/nginx-config.ts';
import { type BenchOptions, parseOptions, USAGE } from './gateway/options.ts';
import { machineBusyMs, ownCpuMs } from './gateway/process-tree.ts';
import { renderReport } from './gateway/report.ts';
import { combineRounds } from './gateway/rounds.ts';
import { directAnthropic, directBedrock, directGemini, directOpenAi } from './gateway/targets/direct.ts';
import { gwTarget } from './gateway/targets/gw.ts';
import { findNginx, NGINX_INSTALL_HINT, nginxTarget } from './gateway/targets/nginx.ts';
import { portkeyTarget } from './gateway/targets/portkey.ts';
import type { TargetDefinition } from './gateway/targets/target.ts';
import { startUpstream } from './gateway/upstream.ts';

const log = (line: string) => process.stderr.write(`${line}\n`);

function nginxVersion(): string {
  const binary = findNginx();
  if (!binary) return `nginx not installed (${NGINX_INSTALL_HINT})`;
  // nginx -v writes to stderr.
  const version = spawnSync(binary, ['-v'], { encoding: 'utf8' }).stderr.trim();
  return version.replace('nginx version: ', '') || 'nginx (version unknown)';
}

/** Above this share of the machine used by other processes, the run says its figures are noisy. */
const NOISY_SHARE = 0.05;

function preamble(options: BenchOptions, othersShare: number): string[] {
  const s = options.settings;
  const cores = availableParallelism();
  const others = `Other processes on the machine used ${(othersShare * 100).toFixed(1)}% of its CPU during the run${othersShare > NOISY_SHARE ? ': the figures are noisier than on an idle machine' : ''}.`;
  return [
    `Machine: ${cores} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}, ${nginxVersion()}.`,
    `The load generator, the upstream mocks and the target run as separate processes and share these ${cores} cores; nothing is pinned, so a proxy's figures include the CPU it takes from the other two.`,
    `Request: ${CHAT_BODY.length}-byte Chat Completions JSON (model gpt-4o-mini); answer: the mock's fixed 1,024-byte completion with usage.`,
    `Runs per target${options.rounds > 1 ? `, in each of ${options.rounds} rounds (every figure below is the median of the rounds, peak RSS the highest)` : ''}: ${s.warmupSeconds} s warm-up, then ${s.connections} connections for ${s.durationSeconds} s (autocannon, closed loop); ` +
      `${s.rate} requests/s for ${s.rateSeconds} s after ${s.rateWarmupSeconds} s not measured (open loop, evenly spaced, ${s.connections} connections at most); ` +
      `${s.firstByteRequests} streaming requests one at a time (time to the first body bytes); ` +
      `${s.peakConnections} connections for ${s.peakSeconds} s, then the peak RSS (VmHWM summed over the target's processes).`,
    ...differingSettings(options),
    others,
    `Added latency: the target's p50 minus the p50 of the same run direct to the mock it ends at (the Anthropic mock for the translated path). CPU per request: user + system time of the target's processes during the measured run, over its answers.`,
  ];
}

/**
 * Every setting in which the targets differ, so that a reader can weigh the figures: the report
 * states them whatever the run's options (docs/benchmarks.md repeats them).
 */
function differingSettings(options: BenchOptions): string[] {
  const gwArgs = options.gwArgs.length > 0 ? ` with ${options.gwArgs.join(' ')}` : '';
  return [
    'Settings that differ between the targets:',
    `- processes: nginx ${options.workers} workers (worker_processes), gw 1 process${gwArgs}, Portkey 1 process;`,
    `- access log: nginx off (access_log off); gw ${options.gwAccessLog ? 'on, written to /dev/null' : 'off (a GwPolicy with accessLog filter "false"; --gw-access-log keeps it on)'}; ` +
      'Portkey with its own request log, which it keeps on Node with no setting to turn it off (after every /v1/ request it copies the answer and parses it into a log entry for its log stream);',
    '- metrics: gw records its request metrics as always (served on its admin port); nginx and Portkey record none;',
    '- runtime: gw with the settings gw run gives itself (--max-semi-space-size=8 --heap-growing-percent=50, MALLOC_ARENA_MAX=1, MALLOC_MMAP_THRESHOLD_=131072: bin/gw.js); ' +
      `Portkey on the same Node ${process.version} with Node's defaults, NODE_ENV=production and --headless (no log UI); nginx is C;`,
    `- upstream connections: nginx keeps up to ${NGINX_UPSTREAM_KEEPALIVE} idle keep-alive connections a worker (1,000,000 requests each), gw its connection pool's defaults, Portkey those of Node's fetch;`,
    "- backend auth: gw writes a fixed provider key, except gw-sigv4 (SigV4 signature over the request and body with static AWS keys from a Secret; the OpenAI mock does not check it) and gw-token-exchange (the client's key exchanged at a loopback OAuth token endpoint for a token valid an hour, cached: one exchange for the run); nginx and Portkey pass the client's key;",
    '- routing: nginx proxy_pass to the mock; gw by its configuration (a GwBackend that sets the provider key); Portkey by the headers of each request (x-portkey-provider: openai, x-portkey-custom-host: the mock);',
    '- streaming: nginx with proxy_buffering off on its streaming port; gw and Portkey pass streams on as they come;',
    '- listening: nginx and gw on 127.0.0.1, Portkey on every interface (it takes no address).',
  ];
}

function definitions(options: BenchOptions): TargetDefinition[] {
  const all: TargetDefinition[] = [
    directOpenAi,
    directAnthropic,
    directBedrock,
    directGemini,
    nginxTarget(options.workers),
    gwTarget('alpha', { accessLog: options.gwAccessLog, extraArgs: options.gwArgs }),
    gwTarget('gamma', { accessLog: options.gwAccessLog, extraArgs: options.gwArgs }),
    gwTarget('alpha', { accessLog: options.gwAccessLog, extraArgs: options.gwArgs, auth: 'sigv4' }),
    gwTarget('alpha', { accessLog: options.gwAccessLog, extraArgs: options.gwArgs, auth: 'token-exchange' }),
    gwTarget('zeta', { accessLog: options.gwAccessLog, extraArgs: options.gwArgs }),
    gwTarget('delta', { accessLog: options.gwAccessLog, extraArgs: options.gwArgs }),
    gwTarget('custom', { accessLog: options.gwAccessLog, extraArgs: options.gwArgs }),
    gwTarget('alpha', { accessLog: options.gwAccessLog, extraArgs: options.gwArgs, prompt4k: { guarded: false } }),
    gwTarget('alpha', { accessLog: options.gwAccessLog, extraArgs: options.gwArgs, prompt4k: { guarded: true } }),
    gwTarget('alpha', { accessLog: options.gwAccessLog, extraArgs: options.gwArgs, watched: true }),
    ...(options.baseline === undefined
      ? []
      : [
          gwTarget('alpha', { accessLog: options.gwAccessLog, extraArgs: options.gwArgs, baseline: options.baseline }),
          gwTarget('gamma', { accessLog: options.gwAccessLog, extraArgs: options.gwArgs, baseline: options.baseline }),
        ]),
    portkeyTarget(log),
  ];
  return all.filter((definition) => options.targets.includes(definition.id));
}

async function main(options: BenchOptions): Promise<number> {
  const started = performance.now();
  const busyAtStart = machineBusyMs();
  const ownAtStart = ownCpuMs();
  log('starting the upstream mocks');
  const upstream = await startUpstream();
  const rounds: Outcome[][] = [];
  try {
    for (let round = 1; round <= options.rounds && !interrupted; round++) {
      if (options.rounds > 1) log(`round ${round} of ${options.rounds}`);
      const outcomes: Outcome[] = [];
      // Every other round runs the targets in the reverse order, so that no target always runs
      // first (or last) in a round: what drifts during a round (the machine, the mocks) evens out.
      const ordered = round % 2 === 0 ? definitions(options).reverse() : definitions(options);
      for (const definition of ordered) {
        if (interrupted) break;
        log(`${definition.label}:`);
        const outcome = await measureTarget(definition, upstream.ports, options.settings, log);
        if (outcome.status === 'unavailable') log(`  not available: ${outcome.reason}`);
        else
          log(
            `  ${outcome.saturate.requestsPerSecond.toFixed(0)} requests/s, ${outcome.cpuUsPerRequest?.toFixed(0) ?? '–'} µs CPU per request`,
          );
        outcomes.push(outcome);
      }
      rounds.push(outcomes);
    }
  } finally {
    await upstream.stop();
  }
  // Every child has ended and been waited for: the machine's busy time minus ours is the others'.
  const elapsedMs = performance.now() - started;
  const othersMs = machineBusyMs() - busyAtStart - (ownCpuMs() - ownAtStart);
  const othersShare = Math.max(0, othersMs) / (elapsedMs * availableParallelism());
  if (interrupted) return 130;
  const report = renderReport(combineRounds(rounds), {
    rate: options.settings.rate,
    connections: options.settings.connections,
    peakConnections: options.settings.peakConnections,
    preamble: preamble(options, othersShare),
  });
  process.stdout.write(report);
  if (options.output) writeFileSync(options.output, report);
  log(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  return 0;
}

let interrupted = false;
runBench(USAGE, parseOptions, main, () => {
  interrupted = true;
});
