// The buffer budget on its own (server/buffer-budget.ts): a port's share within the process's,
// eviction of the longest-silent bodies for a newcomer, refusal when nothing is silent enough.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BufferBudget, EVICTABLE_IDLE_MS, type Reservation } from '../../../src/dataplane/server/buffer-budget.ts';

/** Backdates a reservation's last arrival, as if it had been silent for `ms`. */
function silentFor(reservation: Reservation, ms: number): void {
  reservation.lastGrowthAt = performance.now() - ms;
}

describe('the buffer budget', () => {
  it('keeps a port within its share and the process within its budget, and takes bytes back on release', () => {
    const process = new BufferBudget(100);
    const a = process.forListener(60, () => []);
    const b = process.forListener(60, () => []);
    const first = a.reserve(() => assert.fail('not evicted'));
    assert.equal(first.grow(60), true);
    assert.equal(first.grow(1), false, 'over the port share');
    const second = b.reserve(() => assert.fail('not evicted'));
    assert.equal(second.grow(40), true);
    assert.equal(second.grow(1), false, 'over the process budget');
    assert.equal(process.used, 100);
    first.release();
    first.release();
    assert.equal(process.used, 40);
    assert.equal(a.used, 0);
    assert.equal(second.grow(20), true);
  });

  it('evicts the longest-silent bodies, and only those silent long enough, to make room', () => {
    const process = new BufferBudget(100);
    const listed: Reservation[] = [];
    const port = process.forListener(100, () => listed);
    const evicted: string[] = [];
    const old = port.reserve(() => evicted.push('old'));
    const older = port.reserve(() => evicted.push('older'));
    const recent = port.reserve(() => evicted.push('recent'));
    listed.push(old, older, recent);
    assert.ok(old.grow(30) && older.grow(30) && recent.grow(30));
    silentFor(old, EVICTABLE_IDLE_MS + 10);
    silentFor(older, EVICTABLE_IDLE_MS + 500);
    const newcomer = port.reserve(() => assert.fail('not evicted'));
    assert.equal(newcomer.grow(40), true);
    assert.deepEqual(evicted, ['older'], 'the one silent longest is enough');
    assert.equal(newcomer.grow(30), true);
    assert.deepEqual(evicted, ['older', 'old']);
    // Only a recently active body is left: nothing to evict.
    assert.equal(port.reserve(() => undefined).grow(40), false);
    assert.deepEqual(evicted, ['older', 'old']);
    assert.equal(process.used, 100);
  });

  it('counts arrivals for reserved bytes as activity', async () => {
    const listed: Reservation[] = [];
    const port = new BufferBudget(10).forListener(10, () => listed);
    const reserved = port.reserve(() => assert.fail('not evicted'));
    listed.push(reserved);
    assert.equal(reserved.grow(10), true);
    silentFor(reserved, EVICTABLE_IDLE_MS + 10);
    reserved.touch();
    await sleep(1);
    assert.equal(port.reserve(() => undefined).grow(1), false);
  });
});
