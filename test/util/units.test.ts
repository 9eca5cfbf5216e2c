import assert from 'node:assert/strict';
import { test } from 'node:test';
import { byteSize, durationMs } from '../../src/util/units.ts';

test('durations convert every unit and their sums', () => {
  assert.equal(durationMs('3s'), 3000);
  assert.equal(durationMs('250ms'), 250);
  assert.equal(durationMs('1m30s'), 90_000);
  assert.equal(durationMs('1h2m3s4ms'), 3_723_004);
  assert.equal(durationMs('0s'), 0);
});

test('a malformed duration is an error naming the value', () => {
  for (const bad of ['', '3', 's', '3x', '1m 30s', '-1s']) assert.throws(() => durationMs(bad), /is not a duration/);
});

test('byte sizes accept numbers and decimal or binary suffixes', () => {
  assert.equal(byteSize(1024), 1024);
  assert.equal(byteSize('2Mi'), 2 * 1024 * 1024);
  assert.equal(byteSize('16kb'), 16_000);
  assert.equal(byteSize('16Ki'), 16_384);
  assert.equal(byteSize('2mb'), 2_000_000);
  assert.equal(byteSize('1.5Gi'), 1.5 * 1024 ** 3);
  assert.equal(byteSize('1e6'), 1_000_000);
  assert.equal(byteSize('512k'), 512_000);
  assert.throws(() => byteSize('2 parsecs'), /is not a byte size/);
});
