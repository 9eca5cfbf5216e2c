import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EndpointHealth } from '../../../src/dataplane/balancing/endpoint-health.ts';
import { pickWeighted, soonestRestoredFirst } from '../../../src/dataplane/balancing/selection.ts';
import { fakeClock, UNHEALTHY } from './fakes.ts';

test('pickWeighted maps the random point onto cumulative weights', () => {
  const items = ['a', 'b', 'c'];
  const weights: Record<string, number> = { a: 1, b: 0, c: 3 };
  const pick = (point: number) =>
    pickWeighted(
      items,
      (item) => weights[item]!,
      () => point,
    );
  assert.equal(pick(0), 'a');
  assert.equal(pick(0.2499), 'a');
  assert.equal(pick(0.25), 'c'); // b has no weight and is never picked
  assert.equal(pick(0.9999999), 'c');
  assert.equal(pick(1), 'c'); // a random() that breaks its contract still yields a weighted item
});

test('pickWeighted picks uniformly when no item has weight, and nothing from an empty list', () => {
  const items = ['a', 'b', 'c', 'd'];
  assert.equal(
    pickWeighted(
      items,
      () => 0,
      () => 0.5,
    ),
    'c',
  );
  assert.equal(
    pickWeighted(
      [],
      () => 1,
      () => 0.5,
    ),
    undefined,
  );
});

test('soonestRestoredFirst puts restored endpoints, then shorter evictions, first', () => {
  const clock = fakeClock();
  const healthy = new EndpointHealth({}, clock);
  const long = new EndpointHealth({ eviction: { duration: '10s' } }, clock);
  const short = new EndpointHealth({ eviction: { duration: '1s' } }, clock);
  long.record(UNHEALTHY);
  short.record(UNHEALTHY);
  assert.deepEqual([long, short, healthy].sort(soonestRestoredFirst), [healthy, short, long]);
});
