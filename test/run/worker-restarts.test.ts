// The cluster's restart backoff for workers that exit: a worker that ran 10 s or longer before it
// exited was fine, so its count of quick exits starts over (a millisecond less counts as quick);
// each quick exit in a row doubles the wait before the next start, 100 ms up to 10 s.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { quickExitsAfter, restartDelayMs, STABLE_AFTER_MS } from '../../src/run/cluster-primary.ts';

describe('worker restart backoff', () => {
  it('counts a worker that ran less than 10 s as a quick exit, and starts over after a longer run', () => {
    assert.equal(quickExitsAfter(3, STABLE_AFTER_MS - 1), 4);
    assert.equal(quickExitsAfter(3, STABLE_AFTER_MS), 1);
    assert.equal(quickExitsAfter(0, 0), 1, 'the first exit of a fresh slot');
  });

  it('doubles the wait for each quick exit in a row, from 100 ms to at most 10 s', () => {
    const waits = [1, 2, 3, 4, 5, 6, 7, 8, 9, 30].map(restartDelayMs);
    assert.deepEqual(waits, [100, 200, 400, 800, 1600, 3200, 6400, 10_000, 10_000, 10_000]);
  });

  it('waits 100 ms again after a stable run, however many quick exits came before it', () => {
    let quickExits = 0;
    for (let i = 0; i < 6; i++) quickExits = quickExitsAfter(quickExits, 50);
    assert.equal(restartDelayMs(quickExits), 3200);
    assert.equal(restartDelayMs(quickExitsAfter(quickExits, STABLE_AFTER_MS)), 100);
  });
});
