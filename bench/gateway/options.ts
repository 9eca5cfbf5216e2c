// Command-line options of bench/gateway.bench.ts.
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import type { MeasureSettings } from './measure.ts';
import type { TargetId } from './targets/target.ts';

const TARGET_IDS: TargetId[] = [
  'direct',
  'direct-anthropic',
  'direct-bedrock',
  'direct-gemini',
  'nginx',
  'gw',
  'gw-translated',
  'gw-baseline',
  'gw-translated-baseline',
  'gw-sigv4',
  'gw-token-exchange',
  'gw-bedrock',
  'gw-gemini',
  'gw-responses',
  'gw-4k',
  'gw-guarded',
  'gw-watched',
  'portkey',
];

/** The targets that run only with --baseline. */
const BASELINE_IDS: readonly TargetId[] = ['gw-baseline', 'gw-translated-baseline'];

export interface BenchOptions {
  settings: MeasureSettings;
  /** nginx's worker_processes; gw runs on every core by default, so does nginx. */
  workers: number;
  /** Extra arguments for `gw run`. */
  gwArgs: string[];
  /** gw's access log; off by default, as nginx's is. */
  gwAccessLog: boolean;
  targets: TargetId[];
  /** Times the whole sequence runs; the report gives the median of each figure. */
  rounds: number;
  /** Also write the report to this file. */
  output?: string;
  /** Another gw checkout (an earlier commit) measured beside this one: the A/B of a change. */
  baseline?: string;
}

export const USAGE = `Usage: node bench/gateway.bench.ts [options]
  --duration S          seconds of the measured closed-loop run per target (default 10)
  --connections N       connections of that run and of the fixed-rate run (default 64)
  --rate R              requests/s of the fixed-rate latency run (default 1000)
  --rate-duration S     seconds of the fixed-rate run, after 1 s not measured (default 4)
  --peak-connections N  connections of the peak-memory run (default 256)
  --peak-duration S     seconds of the peak-memory run (default 4)
  --warmup S            seconds of closed-loop warm-up before measuring (default 2)
  --workers N           nginx worker_processes (default: the number of cores, as gw)
  --gw-arg ARG          an extra argument for "gw run" (repeatable)
  --gw-access-log       keep gw's access log on (written to /dev/null); off by default, as nginx's
  --rounds N            run everything N times (fresh processes each time) and report medians (default 1)
  --only IDS            comma-separated subset of: ${TARGET_IDS.join(', ')}
  --output FILE         also write the report (markdown) to FILE
  --baseline DIR        also measure gw from another checkout (e.g. a git worktree of an earlier
                        commit with node_modules), as gw-baseline and gw-translated-baseline: the
                        A/B of a change in one run, each round running both
`;

/** A command-line number that must be positive (`fallback` when not given); throws naming the option. */
export function positive(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number, not "${text}"`);
  return value;
}

export function parseOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string' },
      connections: { type: 'string' },
      rate: { type: 'string' },
      'rate-duration': { type: 'string' },
      'peak-connections': { type: 'string' },
      'peak-duration': { type: 'string' },
      warmup: { type: 'string' },
      workers: { type: 'string' },
      'gw-arg': { type: 'string', multiple: true },
      'gw-access-log': { type: 'boolean' },
      only: { type: 'string' },
      rounds: { type: 'string' },
      output: { type: 'string' },
      baseline: { type: 'string' },
    },
    strict: true,
  });
  const targets =
    values.only === undefined
      ? TARGET_IDS.filter((id) => values.baseline !== undefined || !BASELINE_IDS.includes(id))
      : values.only.split(',').map((id) => id.trim());
  for (const id of targets) {
    if (!TARGET_IDS.includes(id as TargetId)) throw new Error(`unknown target "${id}" in --only`);
    if (BASELINE_IDS.includes(id as TargetId) && values.baseline === undefined)
      throw new Error(`target "${id}" needs --baseline DIR`);
  }
  return {
    settings: {
      connections: Math.round(positive('connections', values.connections, 64)),
      durationSeconds: positive('duration', values.duration, 10),
      warmupSeconds: positive('warmup', values.warmup, 2),
      rate: positive('rate', values.rate, 1000),
      rateSeconds: positive('rate-duration', values['rate-duration'], 4),
      rateWarmupSeconds: 1,
      peakConnections: Math.round(positive('peak-connections', values['peak-connections'], 256)),
      peakSeconds: positive('peak-duration', values['peak-duration'], 4),
      firstByteWarmup: 50,
      firstByteRequests: 300,
    },
    workers: Math.round(positive('workers', values.workers, availableParallelism())),
    gwArgs: values['gw-arg'] ?? [],
    gwAccessLog: values['gw-access-log'] ?? false,
    targets: TARGET_IDS.filter((id) => targets.includes(id)),
    rounds: Math.round(positive('rounds', values.rounds, 1)),
    output: values.output,
    baseline: values.baseline,
  };
}
