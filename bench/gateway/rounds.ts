// Several rounds of the whole sequence (each with fresh processes) folded into one result per
// target: the median of every figure, counts of failures added up, the highest peak memory. On a
// machine other work shares, one round can land on a busy moment; the median of three rarely does.
import type { FirstByteResult, RateResult, SaturateResult } from './load.ts';
import type { Measured, Outcome, PeakRun } from './measure.ts';

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

function combineSaturate(runs: SaturateResult[]): SaturateResult {
  return {
    kind: 'saturate',
    requestsPerSecond: median(runs.map((r) => r.requestsPerSecond)),
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
    durationSeconds: median(runs.map((r) => r.durationSeconds)),
    ok: sum(runs.map((r) => r.ok)),
    non2xx: sum(runs.map((r) => r.non2xx)),
    errors: sum(runs.map((r) => r.errors)),
  };
}

function combineRate(runs: RateResult[]): RateResult {
  return {
    kind: 'rate',
    achievedRate: median(runs.map((r) => r.achievedRate)),
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
    ok: sum(runs.map((r) => r.ok)),
    failed: sum(runs.map((r) => r.failed)),
  };
}

function combineFirstByte(runs: FirstByteResult[]): FirstByteResult | undefined {
  if (runs.length === 0) return undefined;
  return {
    kind: 'first-byte',
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
    ok: sum(runs.map((r) => r.ok)),
    failed: sum(runs.map((r) => r.failed)),
  };
}

function combinePeak(runs: PeakRun[]): PeakRun | undefined {
  if (runs.length === 0) return undefined;
  return {
    connections: runs[0]!.connections,
    rssBytes: Math.max(...runs.map((r) => r.rssBytes)),
    processes: Math.max(...runs.map((r) => r.processes)),
    saturate: combineSaturate(runs.map((r) => r.saturate)),
  };
}

function combineTarget(results: Outcome[]): Outcome {
  const measured = results.filter((o): o is Measured => o.status === 'measured');
  const failures = results.filter((o) => o.status === 'unavailable');
  if (measured.length === 0) return failures[0]!;
  const first = measured[0]!;
  if (measured.length === 1 && failures.length === 0) return first;
  const cpu = measured.map((o) => o.cpuUsPerRequest).filter((value) => value !== undefined);
  const streamed = measured.map((o) => o.firstByte).filter((value) => value !== undefined);
  const notes = [...first.notes, `median of ${measured.length} rounds`];
  if (failures.length > 0) {
    notes.push(`not measured in ${failures.length} of ${results.length} rounds: ${failures[0]!.reason}`);
  }
  return {
    status: 'measured',
    id: first.id,
    label: first.label,
    upstreamFamily: first.upstreamFamily,
    saturate: combineSaturate(measured.map((o) => o.saturate)),
    rate: combineRate(measured.map((o) => o.rate)),
    firstByte: combineFirstByte(streamed),
    streamProblem: streamed.length === 0 ? measured.find((o) => o.streamProblem)?.streamProblem : undefined,
    cpuUsPerRequest: cpu.length === 0 ? undefined : median(cpu),
    peak: combinePeak(measured.map((o) => o.peak).filter((value) => value !== undefined)),
    notes,
  };
}

/** One outcome per target, in the order of the first round. */
export function combineRounds(rounds: Outcome[][]): Outcome[] {
  const order = rounds[0] ?? [];
  return order.map((outcome) => combineTarget(rounds.map((round) => round.find((o) => o.id === outcome.id)!)));
}
