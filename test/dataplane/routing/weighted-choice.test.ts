import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileWeightedChoice } from '../../../src/dataplane/routing/weighted-choice.ts';
import { seededRandom } from '../../helpers/random.ts';

test('picks follow the weights; weight 0 is never picked', () => {
  const refs = [
    { name: 'a', weight: 1 },
    { name: 'zero', weight: 0 },
    { name: 'b', weight: 3 },
    { name: 'c', weight: 6 },
  ];
  const choice = compileWeightedChoice(refs);
  const random = seededRandom(42);
  const counts = new Map<string, number>();
  const picks = 200_000;
  for (let i = 0; i < picks; i++) {
    const name = choice.pick(random)!.name;
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  assert.equal(counts.get('zero'), undefined);
  for (const [name, share] of [
    ['a', 0.1],
    ['b', 0.3],
    ['c', 0.6],
  ] as const) {
    const observed = counts.get(name)! / picks;
    assert.ok(Math.abs(observed - share) < 0.005, `${name}: ${observed} vs ${share}`);
  }
});

test('the same seed gives the same sequence', () => {
  const choice = compileWeightedChoice([
    { id: 1, weight: 5 },
    { id: 2, weight: 5 },
    { id: 3, weight: 1 },
  ]);
  const run = (seed: number) => {
    const random = seededRandom(seed);
    return Array.from({ length: 50 }, () => choice.pick(random)!.id);
  };
  assert.deepEqual(run(7), run(7));
  assert.notDeepEqual(run(7), run(8));
});

test('boundaries: the random value selects by cumulative weight', () => {
  const choice = compileWeightedChoice([
    { id: 'a', weight: 1 },
    { id: 'b', weight: 2 },
    { id: 'c', weight: 1 },
  ]);
  assert.equal(choice.totalWeight, 4);
  assert.equal(choice.pick(() => 0)!.id, 'a');
  assert.equal(choice.pick(() => 0.2499)!.id, 'a');
  assert.equal(choice.pick(() => 0.25)!.id, 'b');
  assert.equal(choice.pick(() => 0.7499)!.id, 'b');
  assert.equal(choice.pick(() => 0.75)!.id, 'c');
  assert.equal(choice.pick(() => 0.999999999)!.id, 'c');
  assert.equal(choice.pick(() => 1)!.id, 'c', 'a source returning 1 stays in range');
});

test('all weights zero (or no refs) means no backend; one ref is always picked', () => {
  assert.equal(compileWeightedChoice([{ weight: 0 }, { weight: 0 }]).pick(), undefined);
  assert.equal(compileWeightedChoice([]).pick(), undefined);
  const only = { weight: 3 };
  assert.equal(
    compileWeightedChoice([only, { weight: 0 }]).pick(() => 0.99),
    only,
  );
});

test('weights that are not positive finite numbers are left out', () => {
  const choice = compileWeightedChoice([{ weight: -1 }, { weight: Number.NaN }, { weight: Number.POSITIVE_INFINITY }]);
  assert.equal(choice.pick(), undefined);
});
