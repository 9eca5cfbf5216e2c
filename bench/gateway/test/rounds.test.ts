// Rounds fold into one row per target: medians of figures, sums of failures, the highest peak.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Measured, Outcome } from '../measure.ts';
import { combineRounds, median } from '../rounds.ts';

function round(rps: number, p50: number, rssMiB: number, non2xx = 0): Measured {
  return {
    status: 'measured',
    id: 'gw',
    label: 'gw',
    upstreamFamily: 'openai',
    saturate: {
      kind: 'saturate',
      requestsPerSecond: rps,
      p50Ms: p50,
      p99Ms: p50 * 2,
      ok: 10,
      non2xx,
      errors: 0,
      durationSeconds: 10,
    },
    rate: { kind: 'rate', achievedRate: 1000, p50Ms: p50 / 10, p99Ms: 1, ok: 4000, failed: 0 },
    firstByte: { kind: 'first-byte', p50Ms: p50 / 5, p99Ms: 1, ok: 300, failed: 0 },
    cpuUsPerRequest: rps / 100,
    peak: {
      connections: 256,
      rssBytes: rssMiB * 1024 * 1024,
      processes: 1,
      saturate: {
        kind: 'saturate',
        requestsPerSecond: rps,
        p50Ms: 1,
        p99Ms: 2,
        ok: 1,
        non2xx: 0,
        errors: 0,
        durationSeconds: 4,
      },
    },
    notes: ['access log off'],
  };
}

test('median of odd and even counts', () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
});

test('three rounds give medians, summed failures and the highest peak memory', () => {
  const [gw] = combineRounds([[round(9000, 5, 100)], [round(12000, 4, 130, 3)], [round(11000, 6, 110)]]) as Measured[];
  assert.equal(gw!.saturate.requestsPerSecond, 11000);
  assert.equal(gw!.saturate.p50Ms, 5);
  assert.equal(gw!.saturate.non2xx, 3);
  assert.equal(gw!.rate.p50Ms, 0.5);
  assert.equal(gw!.firstByte!.p50Ms, 1);
  assert.equal(gw!.cpuUsPerRequest, 110);
  assert.equal(gw!.peak!.rssBytes, 130 * 1024 * 1024);
  assert.deepEqual(gw!.notes, ['access log off', 'median of 3 rounds']);
});

test('a round where the target failed is left out and said so; all failed keeps the reason', () => {
  const failed: Outcome = { status: 'unavailable', id: 'gw', label: 'gw', reason: 'gw ended (exit code 1)' };
  const [partly] = combineRounds([[round(9000, 5, 100)], [failed], [round(11000, 6, 110)]]) as Measured[];
  assert.equal(partly!.saturate.requestsPerSecond, 10000);
  assert.ok(partly!.notes.includes('not measured in 1 of 3 rounds: gw ended (exit code 1)'));
  assert.deepEqual(combineRounds([[failed], [failed]]), [failed]);
});

test('a single round is reported as measured', () => {
  const single = round(9000, 5, 100);
  assert.deepEqual(combineRounds([[single]]), [single]);
});
