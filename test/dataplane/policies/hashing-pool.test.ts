// The password-hashing pool on its own, with real threads: checks run off the event loop, the
// number admitted and the wait for a thread are bounded, a failing check does not take the pool
// down, and closing refuses what is left and stops the threads.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import bcrypt from 'bcryptjs';
import { HashingPool, HashingUnavailable } from '../../../src/dataplane/policies/auth/hashing-pool.ts';

const password = Buffer.from('the-right-password');
/** bcryptjs takes about 250 ms at cost 12, 14 ms at cost 8. */
const SLOW = bcrypt.hashSync('the-right-password', 12);
const QUICK = bcrypt.hashSync('the-right-password', 4);

async function refusal(promise: Promise<unknown>): Promise<HashingUnavailable> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof HashingUnavailable, `refused with ${error}`);
    return error;
  }
  assert.fail('the check was not refused');
}

describe('HashingPool', () => {
  it('checks the own hash, then the decoys, on a thread while the event loop keeps turning', async () => {
    const pool = new HashingPool({ threads: 1, maxPending: 4, maxWaitMs: 5000 });
    try {
      assert.equal(pool.threadCount, 0, 'no thread before the first check');
      assert.equal(await pool.check({ password, own: QUICK, decoys: [] }), true);
      assert.equal(await pool.check({ password: Buffer.from('wrong'), own: QUICK, decoys: [] }), false);
      // An unknown user: decoys only, and a decoy that matches does not count.
      assert.equal(await pool.check({ password, decoys: [QUICK] }), false);
      // A password that is a view into a larger buffer: only its own bytes reach the thread.
      const slab = Buffer.concat([Buffer.from('alice:'), password, Buffer.from('...other data')]);
      assert.equal(await pool.check({ password: slab.subarray(6, 6 + password.length), own: QUICK, decoys: [] }), true);
      assert.equal(pool.threadCount, 1);

      let longestGap = 0;
      let last = performance.now();
      const ticker = setInterval(() => {
        const now = performance.now();
        longestGap = Math.max(longestGap, now - last);
        last = now;
      }, 2);
      const started = performance.now();
      assert.equal(await pool.check({ password: Buffer.from('wrong'), own: SLOW, decoys: [SLOW] }), false);
      const took = performance.now() - started;
      clearInterval(ticker);
      assert.ok(took > 200, `two cost-12 hashes take time (${took.toFixed(0)} ms)`);
      assert.ok(longestGap < took / 4, `the event loop turned throughout (longest gap ${longestGap.toFixed(1)} ms)`);
      assert.equal(pool.completed, 5);
    } finally {
      await pool.close();
    }
  });

  it('refuses a check beyond maxPending at once, and one that waited maxWaitMs for a thread', async () => {
    const pool = new HashingPool({ threads: 1, maxPending: 3, maxWaitMs: 100 });
    try {
      const running = pool.check({ password, own: SLOW, decoys: [] });
      const waiting = [
        pool.check({ password, own: QUICK, decoys: [] }),
        pool.check({ password, own: QUICK, decoys: [] }),
      ];
      const started = performance.now();
      const full = await refusal(pool.check({ password, own: QUICK, decoys: [] }));
      assert.equal(full.reason, 'full');
      assert.ok(performance.now() - started < 50, 'refused at once');
      for (const check of waiting) assert.equal((await refusal(check)).reason, 'waited');
      const waited = performance.now() - started;
      assert.ok(waited >= 95 && waited < 1000, `refused after waiting ${waited.toFixed(0)} ms`);
      assert.equal(await running, true, 'the running check finishes');
      // The refused checks left room: the pool admits again.
      assert.equal(await pool.check({ password, own: QUICK, decoys: [] }), true);
    } finally {
      await pool.close();
    }
  });

  it('refuses a check its thread cannot make, and goes on with the next', async () => {
    const pool = new HashingPool({ threads: 1, maxPending: 4, maxWaitMs: 5000 });
    try {
      const broken = await refusal(pool.check({ password, own: 'not a hash', decoys: [] }));
      assert.equal(broken.reason, 'failed');
      assert.equal(await pool.check({ password, own: QUICK, decoys: [] }), true);
    } finally {
      await pool.close();
    }
  });

  it('on close refuses the running and the waiting checks, stops its threads and admits nothing more', async () => {
    const pool = new HashingPool({ threads: 1, maxPending: 4, maxWaitMs: 5000 });
    const running = pool.check({ password, own: SLOW, decoys: [] });
    const waiting = pool.check({ password, own: SLOW, decoys: [] });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const closing = pool.close();
    assert.equal((await refusal(running)).reason, 'closed');
    assert.equal((await refusal(waiting)).reason, 'closed');
    await closing;
    assert.equal(pool.threadCount, 0);
    assert.equal((await refusal(pool.check({ password, own: QUICK, decoys: [] }))).reason, 'closed');
  });
});
