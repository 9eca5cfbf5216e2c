// The report computes every comparison and goal verdict from the measurements: ratios, added
// latency against the right baseline, verdicts with the margin, and why a figure is missing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Measured, Outcome, Unavailable } from '../measure.ts';
import { addedLatency, goalLines, problemLines, renderReport, resultsTable } from '../report.ts';
import type { TargetId, UpstreamFamily } from '../targets/target.ts';

const MIB = 1024 * 1024;

const UPSTREAM: Partial<Record<TargetId, UpstreamFamily>> = {
  'direct-anthropic': 'anthropic',
  'gw-translated': 'anthropic',
  'direct-bedrock': 'bedrock',
  'gw-bedrock': 'bedrock',
  'direct-gemini': 'gemini',
  'gw-gemini': 'gemini',
};

function measured(
  id: TargetId,
  figures: {
    rps: number;
    p50: number;
    p50AtRate: number;
    firstByte?: number;
    rssMiB?: number;
    achieved?: number;
    cpuUs?: number;
  },
): Measured {
  return {
    status: 'measured',
    id,
    label: id,
    upstreamFamily: UPSTREAM[id] ?? 'openai',
    saturate: {
      kind: 'saturate',
      requestsPerSecond: figures.rps,
      ok: figures.rps * 10,
      non2xx: 0,
      errors: 0,
      durationSeconds: 10,
      p50Ms: figures.p50,
      p99Ms: figures.p50 * 3,
    },
    rate: {
      kind: 'rate',
      achievedRate: figures.achieved ?? 1000,
      ok: 4000,
      failed: 0,
      p50Ms: figures.p50AtRate,
      p99Ms: 2,
    },
    firstByte:
      figures.firstByte === undefined
        ? undefined
        : { kind: 'first-byte', ok: 300, failed: 0, p50Ms: figures.firstByte, p99Ms: figures.firstByte * 2 },
    peak:
      figures.rssMiB === undefined
        ? undefined
        : {
            connections: 256,
            rssBytes: figures.rssMiB * MIB,
            processes: 1,
            saturate: {
              kind: 'saturate',
              requestsPerSecond: figures.rps,
              ok: 1,
              non2xx: 0,
              errors: 0,
              durationSeconds: 4,
              p50Ms: 1,
              p99Ms: 2,
            },
          },
    notes: [],
    ...(figures.cpuUs === undefined ? {} : { cpuUsPerRequest: figures.cpuUs }),
  };
}

const unavailable = (id: TargetId, reason: string): Unavailable => ({ status: 'unavailable', id, label: id, reason });

const world = (): Outcome[] => [
  measured('direct', { rps: 40_000, p50: 1.0, p50AtRate: 0.1, firstByte: 0.3 }),
  measured('direct-anthropic', { rps: 38_000, p50: 1.1, p50AtRate: 0.2, firstByte: 0.5 }),
  measured('nginx', { rps: 20_000, p50: 2.0, p50AtRate: 0.2, firstByte: 0.35, rssMiB: 20 }),
  measured('gw', { rps: 12_000, p50: 4.0, p50AtRate: 0.4, firstByte: 0.9, rssMiB: 120 }),
  measured('gw-translated', { rps: 9_000, p50: 5.0, p50AtRate: 0.9, firstByte: 1.4, rssMiB: 160 }),
  measured('portkey', { rps: 2_000, p50: 30, p50AtRate: 1, rssMiB: 400 }),
  measured('gw-sigv4', { rps: 10_800, p50: 4.2, p50AtRate: 0.45 }),
  measured('gw-token-exchange', { rps: 9_600, p50: 4.5, p50AtRate: 0.45 }),
  measured('gw-bedrock', { rps: 10_200, p50: 4.6, p50AtRate: 0.5 }),
  measured('gw-responses', { rps: 9_000, p50: 5.0, p50AtRate: 0.7 }),
  measured('direct-bedrock', { rps: 39_000, p50: 1.0, p50AtRate: 0.2 }),
  measured('gw-4k', { rps: 11_000, p50: 4.2, p50AtRate: 0.4, firstByte: 0.9, cpuUs: 48 }),
  measured('gw-guarded', { rps: 9_500, p50: 4.8, p50AtRate: 0.45, firstByte: 1.3, cpuUs: 61 }),
  measured('gw-watched', { rps: 11_760, p50: 4.1, p50AtRate: 0.41 }),
];

test('added latency is measured against the mock the traffic ends at', () => {
  const outcomes = world();
  const gw = addedLatency(outcomes, outcomes[3] as Measured)!;
  assert.ok(Math.abs(gw.p50AtRateMs - 0.3) < 1e-9);
  assert.ok(Math.abs(gw.firstByteMs! - 0.6) < 1e-9);
  // The translated path ends at the Anthropic mock: 0.9 - 0.2, not 0.9 - 0.1.
  const translated = addedLatency(outcomes, outcomes[4] as Measured)!;
  assert.ok(Math.abs(translated.p50AtRateMs - 0.7) < 1e-9);
  assert.ok(Math.abs(translated.firstByteMs! - 0.9) < 1e-9);
  assert.equal(addedLatency(outcomes, outcomes[0] as Measured), undefined);
  assert.equal(addedLatency(outcomes, outcomes[5] as Measured)!.firstByteMs, undefined);
});

test('each goal says met, or missed and by how much', () => {
  const lines = goalLines(world(), 1000, 256).map((line) => `${line.verdict}: ${line.text}`);
  assert.deepEqual(lines, [
    'missed: gw passthrough requests/s vs Portkey ≥ 8x: missed (6.00x, 2.00x short; gw needs 33% more requests/s)',
    'met: gw passthrough requests/s vs nginx ≥ 0.5x: met (0.60x)',
    'missed: gw translated requests/s vs passthrough ≥ 0.8x: missed (0.75x, 0.05x short; gw-translated needs 7% more requests/s)',
    'met: gw passthrough added p50 at 1,000 requests/s ≤ 0.50 ms: met (0.30 ms)',
    'met: gw passthrough peak RSS at 256 connections ≤ 150.0 MiB: met (120.0 MiB)',
    'met: gw passthrough added time to first streamed byte ≤ 1.00 ms: met (0.60 ms)',
    'missed: gw translated added p50 at 1,000 requests/s ≤ 0.50 ms: missed by 0.20 ms (0.70 ms)',
    'missed: gw translated peak RSS at 256 connections ≤ 150.0 MiB: missed by 10.0 MiB (160.0 MiB)',
    'met: gw translated added time to first streamed byte ≤ 1.00 ms: met (0.90 ms)',
    'met: gw Chat Completions → Bedrock requests/s vs passthrough ≥ 0.8x: met (0.85x)',
    // Against the Bedrock mock's own direct row: 0.5 - 0.2.
    'met: gw Chat Completions → Bedrock added p50 at 1,000 requests/s ≤ 0.50 ms: met (0.30 ms)',
    'not measured: gw Chat Completions → Gemini requests/s vs passthrough ≥ 0.8x: not measured (gw-gemini was not run)',
    'not measured: gw Chat Completions → Gemini added p50 at 1,000 requests/s ≤ 0.50 ms: not measured (gw-gemini was not run)',
    'missed: gw Responses → Chat Completions requests/s vs passthrough ≥ 0.8x: missed (0.75x, 0.05x short; gw-responses needs 7% more requests/s)',
    'missed: gw Responses → Chat Completions added p50 at 1,000 requests/s ≤ 0.50 ms: missed by 0.10 ms (0.60 ms)',
    // The guarded row against the same 4 KiB prompt unguarded: 61 - 48 µs, 1.3 - 0.9 ms.
    'met: gw request regex guard (5 builtins, 4 KiB prompt) added CPU per request ≤ 20 µs: met (13 µs)',
    'met: gw streamed response guard added time to first streamed byte ≤ 1.00 ms: met (0.40 ms)',
    'met: gw SigV4-signed requests/s vs fixed key ≥ 0.85x: met (0.90x)',
    'missed: gw exchanged-token requests/s vs fixed key ≥ 0.85x: missed (0.80x, 0.05x short; gw-token-exchange needs 6% more requests/s)',
    'met: gw passthrough requests/s with the traffic page open vs closed ≥ 0.97x: met (0.98x)',
  ]);
});

test('a goal whose target could not run is "not measured", with the reason', () => {
  const outcomes = world().map((o) =>
    o.id === 'gw' ? unavailable('gw', 'gw ended (exit code 2): gw: unknown command "run"') : o,
  );
  const lines = goalLines(outcomes, 1000, 256);
  const passthrough = lines.filter((line) => line.text.startsWith('gw passthrough'));
  assert.equal(passthrough.length, 6);
  for (const line of passthrough) {
    assert.equal(line.verdict, 'not measured');
    assert.match(line.text, /not measured \(gw not available\)/);
  }
  assert.equal(lines.find((l) => l.text.startsWith('gw translated requests/s'))!.verdict, 'not measured');
});

test('a fixed-rate run the target could not keep up with is flagged, not passed off as latency at that rate', () => {
  const outcomes = world().map((o) =>
    o.id === 'gw' ? measured('gw', { rps: 900, p50: 40, p50AtRate: 0.2, firstByte: 0.5, achieved: 800 }) : o,
  );
  assert.match(goalLines(outcomes, 1000, 256)[3]!.text, /\(it fell behind: 800\/s\)/);
  assert.match(resultsTable(outcomes, 1000, 64, 256), /0\.20 ms \(fell behind: 800\/s\)/);
  assert.ok(problemLines(outcomes, 1000).includes('gw: held only 800 of 1,000 requests/s'));
});

test('the table has a row per target, ratios to gw passthrough and the unavailable reason escaped', () => {
  const outcomes = world().map((o) => (o.id === 'nginx' ? unavailable('nginx', 'not installed | try apt-get') : o));
  const rows = resultsTable(outcomes, 1000, 64, 256).split('\n');
  assert.equal(rows.length, 2 + outcomes.length);
  const columns = rows[0]!.split(' | ').length;
  for (const row of rows.slice(2)) assert.equal(row.split(' | ').length, columns, row);
  assert.match(rows[2]!, /^\| direct \| 40,000 \| 3\.33x \| 1\.00 ms \| 3\.00 ms \| — \|/);
  assert.match(rows[4]!, /^\| nginx \| not available: not installed \\\| try apt-get \| — \|/);
  assert.match(
    rows[5]!,
    /^\| gw \| 12,000 \| 1\.00x \| 4\.00 ms \| 12\.00 ms \| \+3\.00 ms \| 0\.40 ms \| \+0\.30 ms \| 0\.90 ms \| \+0\.60 ms \|/,
  );
  assert.match(rows[7]!, /^\| portkey \| 2,000 \| 0\.17x \|.*\| failed \| — \|/);
});

test('the report ends with the problems found in the runs', () => {
  const outcomes = world();
  const portkey = outcomes[5] as Measured;
  portkey.streamProblem = 'a streaming request got status 500';
  portkey.saturate.non2xx = 12;
  const report = renderReport(outcomes, {
    rate: 1000,
    connections: 64,
    peakConnections: 256,
    preamble: ['Machine: test'],
  });
  assert.ok(report.startsWith('Machine: test\n'));
  assert.match(report, /Problems:\n- portkey: measured run had 12 non-2xx answers and 0 errors\n/);
  assert.match(report, /- portkey: streaming not measured: a streaming request got status 500\n/);
});
