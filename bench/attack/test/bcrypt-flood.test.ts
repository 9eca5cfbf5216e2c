// The bcrypt flood measurement end to end, briefly: gw and the mocks start, each round measures
// the plain route alone and under the flood, the flood is answered, and the report says whether
// the goal was met.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bcryptFloodReport, DEFAULT_BCRYPT_FLOOD, measureBcryptFlood } from '../bcrypt-flood.ts';

test('measures a plain route alone and under a bcrypt flood', async () => {
  const figures = await measureBcryptFlood({
    ...DEFAULT_BCRYPT_FLOOD,
    cost: 4,
    rate: 50,
    durationSeconds: 1,
    warmupSeconds: 0.2,
    rounds: 2,
  });
  assert.equal(figures.quiet.length, 2);
  assert.equal(figures.attacked.length, 2);
  for (const run of [...figures.quiet, ...figures.attacked]) {
    assert.equal(run.failed, 0);
    assert.ok(run.p50Ms > 0 && run.p99Ms >= run.p50Ms);
    assert.ok(run.othersShare >= 0 && run.othersShare <= 1);
  }
  assert.ok(figures.floodAnswersPerSecond > 10, `the flood was answered (${figures.floodAnswersPerSecond}/s)`);
  assert.ok(figures.threads > 1 && figures.rssBytes > 0);
  const report = bcryptFloodReport(figures).join('\n');
  assert.match(report, /plain route under flood: {2}p50 [\d.]+ ms, p99 [\d.]+ ms/);
  assert.match(report, /goal \(issue 17\): p99 under flood at most 10 ms: (met|not met)/);
});
