// Attack benchmark (gw issue 17): for each attack, a fresh `gw run` in front of the OpenAI mock,
// the plain route's p50/p99 at a fixed rate unattacked and then under the attack, gw's resident
// size before, at its peak during and after the attack, what the attack got, and the issue's
// goals met or not — side by side in one run. The attacks are bench/attack/attacks.ts; the bcrypt
// flood (bench/attack/bcrypt-flood.ts) measures its own rounds, alone and flooded, after them.
// Run: ./node_modules/.bin/node bench/attack.bench.ts [--only stalled-bodies,rapid-reset] (--help)
import { writeFileSync } from 'node:fs';
import { availableParallelism, cpus, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { ATTACKS, type Attack } from './attack/attacks.ts';
import {
  type BcryptFloodFigures,
  bcryptFloodGoalMet,
  bcryptFloodReport,
  DEFAULT_BCRYPT_FLOOD,
  measureBcryptFlood,
} from './attack/bcrypt-flood.ts';
import { type AttackRun, type AttackSettings, measureAttack } from './attack/measure.ts';
import { runBench } from './gateway/cli.ts';
import { positive } from './gateway/options.ts';
import { startUpstream } from './gateway/upstream.ts';

interface Options {
  settings: AttackSettings;
  attacks: Attack[];
  /** Rounds of the bcrypt flood; none when --only leaves it out. */
  bcryptRounds: number;
  output?: string;
}

const BCRYPT_FLOOD = 'bcrypt-flood';

const USAGE = `Usage: node bench/attack.bench.ts [options]
  --rate R        requests/s on the plain route, unattacked and under each attack (default 200)
  --connections N connections the plain route's load may use (default 8)
  --duration S    seconds of measured load, unattacked and under each attack (default 5)
  --after S       seconds gw's resident size is watched after an attack ends (default 10)
  --only IDS      comma-separated subset of: ${[...ATTACKS.map((attack) => attack.id), BCRYPT_FLOOD].join(', ')}
  --bcrypt-rounds N  rounds of the bcrypt flood, each alone and flooded (default 3)
  --output FILE   also write the report (markdown) to FILE
`;

function parseOptions(argv: string[]): Options {
  const { values } = parseArgs({
    args: argv,
    options: {
      rate: { type: 'string' },
      connections: { type: 'string' },
      duration: { type: 'string' },
      after: { type: 'string' },
      only: { type: 'string' },
      'bcrypt-rounds': { type: 'string' },
      output: { type: 'string' },
    },
    strict: true,
  });
  const wanted = values.only?.split(',').map((id) => id.trim());
  for (const id of wanted ?? [])
    if (id !== BCRYPT_FLOOD && !ATTACKS.some((attack) => attack.id === id))
      throw new Error(`unknown attack "${id}" in --only`);
  return {
    settings: {
      rate: positive('rate', values.rate, 200),
      connections: Math.round(positive('connections', values.connections, 8)),
      loadSeconds: positive('duration', values.duration, 5),
      afterSeconds: positive('after', values.after, 10),
    },
    attacks: ATTACKS.filter((attack) => wanted === undefined || wanted.includes(attack.id)),
    bcryptRounds:
      wanted === undefined || wanted.includes(BCRYPT_FLOOD)
        ? Math.round(positive('bcrypt-rounds', values['bcrypt-rounds'], DEFAULT_BCRYPT_FLOOD.rounds))
        : 0,
    output: values.output,
  };
}

const log = (line: string) => process.stderr.write(`${line}\n`);

const ms = (value: number) => (Number.isNaN(value) ? '–' : value < 10 ? value.toFixed(2) : value.toFixed(1));
const mib = (value: number) => value.toFixed(0);

function report(runs: AttackRun[], flood: BcryptFloodFigures | undefined, options: Options): string {
  const s = options.settings;
  const lines = [
    '# gw under attack',
    '',
    `Machine: ${availableParallelism()} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}. gw runs as \`gw run -f\` (one process, its defaults) in front of the OpenAI mock (fixed 1 KiB answers), a fresh gw per attack; the attacker runs in the harness, the plain route's load in its own process, the mock in another.`,
    `Plain route: Chat Completions passthrough at ${s.rate} requests/s (open loop, at most ${s.connections} connections), ${s.loadSeconds} s measured unattacked (after 2 s not measured) and ${s.loadSeconds} s measured under the attack (from 1 s after it began). RSS: gw's VmRSS just before the attack, its peak during it (sampled every 100 ms), and ${s.afterSeconds} s after it ended.`,
    '',
    '| attack | p50 / p99 unattacked (ms) | p50 / p99 under attack (ms) | failed under attack | RSS before / peak / after (MiB) | attack ran | what the attack got |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const run of runs) {
    const f = run.figures;
    lines.push(
      `| ${run.attack.label} | ${ms(run.unattacked.p50Ms)} / ${ms(run.unattacked.p99Ms)} | ${ms(run.attacked.p50Ms)} / ${ms(run.attacked.p99Ms)} | ${run.attacked.failed} of ${run.attacked.ok + run.attacked.failed} | ${mib(f.rssBeforeMiB)} / ${mib(f.rssPeakMiB)} / ${mib(f.rssAfterMiB)}${f.rssBackSeconds === undefined ? '' : ` (under ${run.attack.rssBackUnderMiB} after ${f.rssBackSeconds.toFixed(1)} s)`} | ${run.attackSeconds.toFixed(0)} s | ${run.outcome.join('; ')} |`,
    );
  }
  lines.push('', '## Goals', '');
  for (const run of runs)
    for (const goal of run.goals)
      lines.push(`- ${goal.met ? 'met' : '**not met**'}: ${run.attack.label}: ${goal.goal}`);
  if (flood) lines.push('', '## bcrypt flood', '', '```', ...bcryptFloodReport(flood), '```');
  return `${lines.join('\n')}\n`;
}

async function main(options: Options): Promise<number> {
  log('starting the upstream mocks');
  const upstream = await startUpstream();
  const runs: AttackRun[] = [];
  try {
    for (const attack of options.attacks) {
      if (interrupted) break;
      log(`${attack.label}:`);
      runs.push(await measureAttack(attack, upstream.ports, options.settings, log));
    }
  } finally {
    await upstream.stop();
  }
  let flood: BcryptFloodFigures | undefined;
  if (options.bcryptRounds > 0 && !interrupted) {
    log('bcrypt flood:');
    flood = await measureBcryptFlood({
      ...DEFAULT_BCRYPT_FLOOD,
      rate: options.settings.rate,
      durationSeconds: options.settings.loadSeconds,
      rounds: options.bcryptRounds,
    });
  }
  if (interrupted) return 130;
  const text = report(runs, flood, options);
  process.stdout.write(text);
  if (options.output) writeFileSync(options.output, text);
  const met = runs.every((run) => run.goals.every((goal) => goal.met)) && (!flood || bcryptFloodGoalMet(flood));
  return met ? 0 : 1;
}

let interrupted = false;
runBench(USAGE, parseOptions, main, () => {
  interrupted = true;
});
