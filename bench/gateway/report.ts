// The benchmark's report: one markdown table (a row per target) and a line per goal of the
// data-plane issue, every figure computed from the measurements.
import type { Measured, Outcome } from './measure.ts';
import type { TargetId, UpstreamFamily } from './targets/target.ts';

/** The goals of the data-plane issue. */
const GOALS = {
  /** gw passthrough requests/s at least this many times Portkey's. */
  passthroughVsPortkey: 8,
  /** gw passthrough requests/s at least this fraction of nginx's. */
  passthroughVsNginx: 0.5,
  /** Translated requests/s at least this fraction of passthrough's. */
  translatedVsPassthrough: 0.8,
  /** Added p50 latency at the fixed rate, at most (ms). */
  addedP50AtRateMs: 0.5,
  /** Peak RSS at the peak-memory connection count, at most (MiB). */
  peakRssMiB: 150,
  /** Added time to first token when streaming, at most (ms). */
  addedFirstByteMs: 1,
  /** Requests/s of a SigV4-signed or token-exchanged backend at least this fraction of fixed-key auth's (issue 19). */
  credentialVsKey: 0.85,
  /** Requests/s of Chat Completions translated to Bedrock or Gemini, and of Responses translated to Chat Completions, at least this fraction of passthrough's (issue 20). */
  otherFamilyVsPassthrough: 0.8,
  /** CPU a request regex guard of every builtin adds on a 4 KiB prompt, at most (µs; issue 21). */
  guardCpuUs: 20,
  /** Time to the first streamed byte a response guard adds, at most (ms; issue 21). */
  guardFirstByteMs: 1,
  /** Passthrough requests/s with the web UI's traffic page open and subscribed, at least this fraction of closed (issue 24). */
  watchedVsPassthrough: 0.97,
} as const;

/** A rate run below this share of the asked rate fell behind: its latency is not at that rate. */
const SUSTAINED_SHARE = 0.97;
const MIB = 1024 * 1024;

export interface GoalLine {
  verdict: 'met' | 'missed' | 'not measured';
  text: string;
}

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

function requestsPerSecond(value: number): string {
  return integer.format(value);
}

function ms(value: number): string {
  return `${value.toFixed(2)} ms`;
}

function signedMs(value: number): string {
  return `${value < 0 ? '−' : '+'}${Math.abs(value).toFixed(2)} ms`;
}

function ratio(value: number): string {
  return `${value.toFixed(2)}x`;
}

function mib(bytes: number): string {
  return `${(bytes / MIB).toFixed(1)} MiB`;
}

function cell(text: string): string {
  return text.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

function measured(outcomes: Outcome[], id: TargetId): Measured | undefined {
  const outcome = outcomes.find((o) => o.id === id);
  return outcome?.status === 'measured' ? outcome : undefined;
}

function whyMissing(outcomes: Outcome[], id: TargetId, label: string): string {
  const outcome = outcomes.find((o) => o.id === id);
  if (outcome === undefined) return `${label} was not run`;
  return outcome.status === 'unavailable' ? `${outcome.label} not available` : '';
}

/** The direct row of each family of mocks. */
const DIRECT: Record<UpstreamFamily, TargetId> = {
  openai: 'direct',
  anthropic: 'direct-anthropic',
  bedrock: 'direct-bedrock',
  gemini: 'direct-gemini',
};

/** The direct measurement a target is compared with: the mock its traffic ends at. */
function baselineOf(outcomes: Outcome[], target: Measured): Measured | undefined {
  return measured(outcomes, DIRECT[target.upstreamFamily]);
}

function isBaseline(target: Measured): boolean {
  return Object.values(DIRECT).includes(target.id);
}

export interface Added {
  p50Ms: number;
  p50AtRateMs: number;
  /** Undefined when the target or its baseline was not measured streaming. */
  firstByteMs?: number;
}

/** The latency a target adds over the direct path to its mock; undefined for the baselines themselves. */
export function addedLatency(outcomes: Outcome[], target: Measured): Added | undefined {
  const baseline = baselineOf(outcomes, target);
  if (isBaseline(target) || baseline === undefined) return undefined;
  return {
    p50Ms: target.saturate.p50Ms - baseline.saturate.p50Ms,
    p50AtRateMs: target.rate.p50Ms - baseline.rate.p50Ms,
    firstByteMs: target.firstByte && baseline.firstByte ? target.firstByte.p50Ms - baseline.firstByte.p50Ms : undefined,
  };
}

export function resultsTable(outcomes: Outcome[], rate: number, connections: number, peakConnections: number): string {
  const passthrough = measured(outcomes, 'gw');
  const header = [
    'target',
    `requests/s (${connections} conn.)`,
    'vs gw passthrough',
    'p50',
    'p99',
    'added p50',
    `p50 at ${requestsPerSecond(rate)}/s`,
    `added p50 at ${requestsPerSecond(rate)}/s`,
    'stream first byte p50',
    'added first byte',
    'CPU per request',
    `peak RSS (${peakConnections} conn.)`,
  ];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  for (const outcome of outcomes) {
    if (outcome.status === 'unavailable') {
      const cells = [cell(outcome.label), cell(`not available: ${outcome.reason}`), ...header.slice(2).map(() => '—')];
      lines.push(`| ${cells.join(' | ')} |`);
      continue;
    }
    const added = addedLatency(outcomes, outcome);
    const fellBehind = outcome.rate.achievedRate < rate * SUSTAINED_SHARE;
    const cells = [
      cell(outcome.label),
      requestsPerSecond(outcome.saturate.requestsPerSecond),
      passthrough ? ratio(outcome.saturate.requestsPerSecond / passthrough.saturate.requestsPerSecond) : '—',
      ms(outcome.saturate.p50Ms),
      ms(outcome.saturate.p99Ms),
      added ? signedMs(added.p50Ms) : '—',
      `${ms(outcome.rate.p50Ms)}${fellBehind ? ` (fell behind: ${requestsPerSecond(outcome.rate.achievedRate)}/s)` : ''}`,
      added ? signedMs(added.p50AtRateMs) : '—',
      outcome.firstByte ? ms(outcome.firstByte.p50Ms) : 'failed',
      added?.firstByteMs !== undefined ? signedMs(added.firstByteMs) : '—',
      outcome.cpuUsPerRequest === undefined ? '—' : `${integer.format(outcome.cpuUsPerRequest)} µs`,
      outcome.peak ? mib(outcome.peak.rssBytes) : '—',
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

function ratioGoal(
  outcomes: Outcome[],
  what: string,
  numeratorId: TargetId,
  denominatorId: TargetId,
  goal: number,
): GoalLine {
  const numerator = measured(outcomes, numeratorId);
  const denominator = measured(outcomes, denominatorId);
  if (!numerator || !denominator) {
    const missing = [
      numerator ? '' : whyMissing(outcomes, numeratorId, numeratorId),
      denominator ? '' : whyMissing(outcomes, denominatorId, denominatorId),
    ].filter((text) => text !== '');
    return { verdict: 'not measured', text: `${what} ≥ ${goal}x: not measured (${missing.join('; ')})` };
  }
  const value = numerator.saturate.requestsPerSecond / denominator.saturate.requestsPerSecond;
  if (value >= goal) return { verdict: 'met', text: `${what} ≥ ${goal}x: met (${ratio(value)})` };
  const neededMore = (goal / value - 1) * 100;
  return {
    verdict: 'missed',
    text: `${what} ≥ ${goal}x: missed (${ratio(value)}, ${ratio(goal - value)} short; ${numerator.label} needs ${neededMore.toFixed(0)}% more requests/s)`,
  };
}

function ceilingGoal(
  what: string,
  target: Measured | undefined,
  missing: string,
  value: (target: Measured) => number | undefined,
  goal: number,
  unit: (value: number) => string,
): GoalLine {
  const figure = target ? value(target) : undefined;
  if (target === undefined || figure === undefined) {
    return { verdict: 'not measured', text: `${what} ≤ ${unit(goal)}: not measured (${missing})` };
  }
  if (figure <= goal) return { verdict: 'met', text: `${what} ≤ ${unit(goal)}: met (${unit(figure)})` };
  return { verdict: 'missed', text: `${what} ≤ ${unit(goal)}: missed by ${unit(figure - goal)} (${unit(figure)})` };
}

/** One line per goal of the issue, met or missed by how much, or why it could not be measured. */
export function goalLines(outcomes: Outcome[], rate: number, peakConnections: number): GoalLine[] {
  const lines: GoalLine[] = [
    ratioGoal(outcomes, 'gw passthrough requests/s vs Portkey', 'gw', 'portkey', GOALS.passthroughVsPortkey),
    ratioGoal(outcomes, 'gw passthrough requests/s vs nginx', 'gw', 'nginx', GOALS.passthroughVsNginx),
    ratioGoal(
      outcomes,
      'gw translated requests/s vs passthrough',
      'gw-translated',
      'gw',
      GOALS.translatedVsPassthrough,
    ),
  ];
  const plainMs = (value: number) => `${value.toFixed(2)} ms`;
  const plainMiB = (value: number) => `${value.toFixed(1)} MiB`;
  for (const id of ['gw', 'gw-translated'] as const) {
    const name = id === 'gw' ? 'gw passthrough' : 'gw translated';
    const target = measured(outcomes, id);
    const targetMissing = target ? '' : whyMissing(outcomes, id, name);
    const baselineId = id === 'gw' ? 'direct' : 'direct-anthropic';
    const added = target ? addedLatency(outcomes, target) : undefined;
    const addedMissing = targetMissing || (added ? '' : whyMissing(outcomes, baselineId, baselineId));
    const behind =
      target && target.rate.achievedRate < rate * SUSTAINED_SHARE
        ? ` (it fell behind: ${requestsPerSecond(target.rate.achievedRate)}/s)`
        : '';
    lines.push(
      ceilingGoal(
        `${name} added p50 at ${requestsPerSecond(rate)} requests/s${behind}`,
        target,
        addedMissing,
        () => added?.p50AtRateMs,
        GOALS.addedP50AtRateMs,
        plainMs,
      ),
      ceilingGoal(
        `${name} peak RSS at ${peakConnections} connections`,
        target,
        targetMissing || 'no peak-memory run',
        (t) => (t.peak ? t.peak.rssBytes / MIB : undefined),
        GOALS.peakRssMiB,
        plainMiB,
      ),
      ceilingGoal(
        `${name} added time to first streamed byte`,
        target,
        addedMissing ||
          (target?.streamProblem
            ? `streaming failed: ${target.streamProblem}`
            : 'the baseline was not measured streaming'),
        () => added?.firstByteMs,
        GOALS.addedFirstByteMs,
        plainMs,
      ),
    );
  }
  // Issue 20: the other provider families and the Responses API translate as cheaply as gamma.
  for (const [id, name] of [
    ['gw-bedrock', 'gw Chat Completions → Bedrock'],
    ['gw-gemini', 'gw Chat Completions → Gemini'],
    ['gw-responses', 'gw Responses → Chat Completions'],
  ] as const) {
    lines.push(ratioGoal(outcomes, `${name} requests/s vs passthrough`, id, 'gw', GOALS.otherFamilyVsPassthrough));
    const target = measured(outcomes, id);
    const added = target ? addedLatency(outcomes, target) : undefined;
    const missing = target
      ? added
        ? ''
        : `its direct row (${DIRECT[target.upstreamFamily]}) was not measured`
      : whyMissing(outcomes, id, id);
    lines.push(
      ceilingGoal(
        `${name} added p50 at ${requestsPerSecond(rate)} requests/s`,
        target,
        missing,
        () => added?.p50AtRateMs,
        GOALS.addedP50AtRateMs,
        plainMs,
      ),
    );
  }
  // Issue 21: regex guards beside the same route unguarded, on the same 4 KiB prompt.
  const unguarded = measured(outcomes, 'gw-4k');
  const guarded = measured(outcomes, 'gw-guarded');
  const pairMissing = [
    unguarded ? '' : whyMissing(outcomes, 'gw-4k', 'gw-4k'),
    guarded ? '' : whyMissing(outcomes, 'gw-guarded', 'gw-guarded'),
  ]
    .filter((text) => text !== '')
    .join('; ');
  const addedCpu =
    guarded?.cpuUsPerRequest !== undefined && unguarded?.cpuUsPerRequest !== undefined
      ? guarded.cpuUsPerRequest - unguarded.cpuUsPerRequest
      : undefined;
  const addedFirstByte =
    guarded?.firstByte && unguarded?.firstByte ? guarded.firstByte.p50Ms - unguarded.firstByte.p50Ms : undefined;
  lines.push(
    ceilingGoal(
      'gw request regex guard (5 builtins, 4 KiB prompt) added CPU per request',
      guarded,
      pairMissing || 'CPU was not measured',
      () => addedCpu,
      GOALS.guardCpuUs,
      (value) => `${value.toFixed(0)} µs`,
    ),
    ceilingGoal(
      'gw streamed response guard added time to first streamed byte',
      guarded,
      pairMissing || 'streaming was not measured',
      () => addedFirstByte,
      GOALS.guardFirstByteMs,
      plainMs,
    ),
  );
  // Issue 19: backend credentials that are signed or fetched cost little beside a fixed key.
  lines.push(
    ratioGoal(outcomes, 'gw SigV4-signed requests/s vs fixed key', 'gw-sigv4', 'gw', GOALS.credentialVsKey),
    ratioGoal(outcomes, 'gw exchanged-token requests/s vs fixed key', 'gw-token-exchange', 'gw', GOALS.credentialVsKey),
  );
  // Issue 24: the web UI's traffic page open and subscribed costs passthrough little.
  lines.push(
    ratioGoal(
      outcomes,
      'gw passthrough requests/s with the traffic page open vs closed',
      'gw-watched',
      'gw',
      GOALS.watchedVsPassthrough,
    ),
  );
  return lines;
}

/** A change's A/B (--baseline): gw's figures over the baseline checkout's, measured in the same run. */
export function baselineLines(outcomes: Outcome[]): string[] {
  const lines: string[] = [];
  for (const [id, baselineId, name] of [
    ['gw', 'gw-baseline', 'passthrough'],
    ['gw-translated', 'gw-translated-baseline', 'translated'],
  ] as const) {
    const after = measured(outcomes, id);
    const before = measured(outcomes, baselineId);
    if (!after || !before) continue;
    const cpu =
      after.cpuUsPerRequest !== undefined && before.cpuUsPerRequest !== undefined
        ? `, CPU per request ${integer.format(after.cpuUsPerRequest)} µs vs ${integer.format(before.cpuUsPerRequest)} µs`
        : '';
    lines.push(
      `gw ${name} vs the baseline: requests/s ${ratio(after.saturate.requestsPerSecond / before.saturate.requestsPerSecond)} (${requestsPerSecond(after.saturate.requestsPerSecond)} vs ${requestsPerSecond(before.saturate.requestsPerSecond)}), p50 ${ms(after.saturate.p50Ms)} vs ${ms(before.saturate.p50Ms)}${cpu}`,
    );
  }
  return lines;
}

/** Everything that makes a row less than a clean measurement: failed requests, a rate not held. */
export function problemLines(outcomes: Outcome[], rate: number): string[] {
  const lines: string[] = [];
  for (const outcome of outcomes) {
    if (outcome.status !== 'measured') continue;
    const runs = [
      ['measured run', outcome.saturate.non2xx, outcome.saturate.errors],
      ...(outcome.peak
        ? [['peak-memory run', outcome.peak.saturate.non2xx, outcome.peak.saturate.errors] as const]
        : []),
    ] as const;
    for (const [run, non2xx, errors] of runs) {
      if (non2xx > 0 || errors > 0)
        lines.push(`${outcome.label}: ${run} had ${non2xx} non-2xx answers and ${errors} errors`);
    }
    if (outcome.rate.failed > 0)
      lines.push(`${outcome.label}: ${outcome.rate.failed} requests failed at the fixed rate`);
    if (outcome.rate.achievedRate < rate * SUSTAINED_SHARE) {
      lines.push(
        `${outcome.label}: held only ${requestsPerSecond(outcome.rate.achievedRate)} of ${requestsPerSecond(rate)} requests/s`,
      );
    }
    if (outcome.streamProblem) lines.push(`${outcome.label}: streaming not measured: ${outcome.streamProblem}`);
    if (outcome.firstByte && outcome.firstByte.failed > 0) {
      lines.push(`${outcome.label}: ${outcome.firstByte.failed} streaming requests failed`);
    }
  }
  return lines;
}

/** The full report: table, goals, problems and how each target ran. */
export function renderReport(
  outcomes: Outcome[],
  options: { rate: number; connections: number; peakConnections: number; preamble: string[] },
): string {
  const goals = goalLines(outcomes, options.rate, options.peakConnections);
  const ab = baselineLines(outcomes);
  const problems = problemLines(outcomes, options.rate);
  const runs = outcomes
    .filter((o): o is Measured => o.status === 'measured' && (o.peak !== undefined || o.notes.length > 0))
    .map((o) => {
      const parts = [...o.notes];
      if (o.peak) parts.push(`${o.peak.processes} process${o.peak.processes === 1 ? '' : 'es'}`);
      if (o.peak) {
        parts.push(
          `${requestsPerSecond(o.peak.saturate.requestsPerSecond)} requests/s at ${o.peak.connections} connections`,
        );
      }
      return `- ${o.label}: ${parts.join(', ')}`;
    });
  return [
    ...options.preamble,
    '',
    resultsTable(outcomes, options.rate, options.connections, options.peakConnections),
    '',
    'Goals:',
    ...goals.map((goal) => `- ${goal.text}`),
    ...(ab.length > 0 ? ['', 'A/B against the baseline checkout:', ...ab.map((line) => `- ${line}`)] : []),
    ...(problems.length > 0 ? ['', 'Problems:', ...problems.map((line) => `- ${line}`)] : []),
    ...(runs.length > 0 ? ['', 'How the targets ran:', ...runs] : []),
    '',
  ].join('\n');
}
