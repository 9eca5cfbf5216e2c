import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EndpointHealthSettings } from '../../../src/dataplane/balancing/endpoint-health.ts';
import { PriorityGroupBalancer, type SelectedProvider } from '../../../src/dataplane/balancing/priority-groups.ts';
import { fakeClock, HEALTHY, seededRandom, shares, UNHEALTHY } from './fakes.ts';

type Provider = { url: string };

function balancer(groups: string[][], health: EndpointHealthSettings = {}, seed = 7) {
  const clock = fakeClock();
  const backend = new PriorityGroupBalancer<Provider>(
    groups.map((names) => names.map((name) => ({ name, provider: { url: `https://${name}.test` }, health }))),
    { now: clock.now, random: seededRandom(seed) },
  );
  return { backend, clock };
}

function attemptOrder(backend: PriorityGroupBalancer<Provider>): string[] {
  const attempts = backend.startRequest();
  const order: string[] = [];
  for (let chosen = attempts.next(); chosen; chosen = attempts.next()) order.push(chosen.name);
  return order;
}

function evict(backend: PriorityGroupBalancer<Provider>, name: string): void {
  backend.report(backend.provider(name)!, UNHEALTHY);
}

test('attempts go through the groups in priority order, every provider once', () => {
  const { backend } = balancer([['a', 'b'], ['c'], ['d', 'e']]);
  for (let i = 0; i < 20; i++) {
    const order = attemptOrder(backend);
    assert.equal(order.length, 5);
    assert.deepEqual(new Set(order.slice(0, 2)), new Set(['a', 'b']));
    assert.equal(order[2], 'c');
    assert.deepEqual(new Set(order.slice(3)), new Set(['d', 'e']));
  }
});

test('both members of a group get first attempts (they are treated equally)', () => {
  const { backend } = balancer([['a', 'b'], ['c']]);
  const first = shares(2000, () => backend.startRequest().next()!.name);
  assert.equal(first.get('c'), undefined);
  assert.ok(Math.abs(first.get('a')! - 0.5) < 0.05, `a got ${first.get('a')}`);
});

test('a group whose members are all evicted is skipped', () => {
  const { backend } = balancer([['a', 'b'], ['c'], ['d']]);
  evict(backend, 'a');
  evict(backend, 'b');
  assert.deepEqual(attemptOrder(backend), ['c', 'd', 'a', 'b']);
});

test('an evicted member is skipped while a sibling in its group is healthy', () => {
  const { backend } = balancer([['a', 'b'], ['c']]);
  evict(backend, 'a');
  for (let i = 0; i < 20; i++) assert.deepEqual(attemptOrder(backend), ['b', 'c', 'a']);
});

test('every provider evicted: selection falls back to evicted ones, group order, soonest restored first', () => {
  const { backend, clock } = balancer([['a', 'b'], ['c']]);
  // b is evicted twice (its current eviction lasts 6s), a and c once (3s, started later than b's first).
  evict(backend, 'b');
  clock.advance(3000);
  evict(backend, 'b');
  evict(backend, 'a');
  evict(backend, 'c');
  assert.ok(backend.snapshot().every((provider) => provider.state === 'Evicted'));
  assert.deepEqual(attemptOrder(backend), ['a', 'b', 'c']);
});

test('an eviction ending brings the provider back to the front of its group', () => {
  const { backend, clock } = balancer([['a'], ['b']]);
  evict(backend, 'a');
  assert.equal(backend.startRequest().next()!.name, 'b');
  clock.advance(2999);
  assert.equal(backend.startRequest().next()!.name, 'b');
  clock.advance(1);
  assert.equal(backend.startRequest().next()!.name, 'a');
});

test('an outcome reported during a request reshapes the rest of that request', () => {
  const { backend } = balancer([['a'], ['b'], ['c']]);
  const attempts = backend.startRequest();
  const first = attempts.next()!;
  assert.equal(first.name, 'a');
  backend.report(first, { status: 502, unhealthy: true });
  // Meanwhile another request's response evicts c: b stays next, then c comes last as a fallback.
  evict(backend, 'c');
  assert.deepEqual([attempts.next()?.name, attempts.next()?.name, attempts.next()], ['b', 'c', undefined]);
  assert.equal(backend.provider('a')!.health.state, 'Evicted');
});

test('members are weighted by health score (statistical, seeded)', () => {
  // No eviction within reach: the score alone differs.
  const { backend } = balancer([['a', 'b']], { eviction: { consecutiveFailures: 1000 } }, 42);
  const b = backend.provider('b')!;
  for (let i = 0; i < 3; i++) backend.report(b, UNHEALTHY); // score 51.2
  const first = shares(20_000, () => backend.startRequest().next()!.name);
  const expected = 100 / (100 + 51.2);
  assert.ok(Math.abs(first.get('a')! - expected) < 0.015, `a got ${first.get('a')}, expected ${expected}`);
});

test('a provider with a score near 0 still gets a trickle of traffic to recover by', () => {
  const { backend } = balancer([['a', 'b']], { eviction: { consecutiveFailures: 1000 } }, 3);
  const b = backend.provider('b')!;
  for (let i = 0; i < 40; i++) backend.report(b, UNHEALTHY);
  assert.ok(b.health.score < 1); // below the weight floor of 1
  const first = shares(20_000, () => backend.startRequest().next()!.name);
  const share = first.get('b') ?? 0;
  assert.ok(share > 0.005 && share < 0.015, `b got ${share}, expected about 1/101`);
  backend.report(b, HEALTHY);
  assert.ok(b.health.score > 19);
});

test('each provider has its own health settings', () => {
  const clock = fakeClock();
  const backend = new PriorityGroupBalancer(
    [
      [
        { name: 'strict', provider: 1 },
        { name: 'lenient', provider: 2, health: { eviction: { consecutiveFailures: 3 } } },
      ],
    ],
    { now: clock.now, random: seededRandom(1) },
  );
  for (const name of ['strict', 'lenient']) backend.report(backend.provider(name)!, UNHEALTHY);
  const states = Object.fromEntries(backend.snapshot().map((p) => [p.name, p.state]));
  assert.deepEqual(states, { strict: 'Evicted', lenient: 'Healthy' });
});

test('snapshot lists every provider with its group and health', () => {
  const { backend } = balancer([['a'], ['b']]);
  backend.report(backend.provider('b')!, UNHEALTHY);
  const [a, b] = backend.snapshot();
  assert.deepEqual(a, { name: 'a', group: 0, state: 'Healthy', score: 100, consecutiveFailures: 0, evictions: 0 });
  assert.equal(b!.name, 'b');
  assert.equal(b!.group, 1);
  assert.equal(b!.state, 'Evicted');
});

test('configuration errors are refused', () => {
  const options = { now: () => 0, random: () => 0 };
  assert.throws(() => new PriorityGroupBalancer([], options), /at least one group/);
  assert.throws(() => new PriorityGroupBalancer([[]], options), /at least one provider/);
  assert.throws(
    () => new PriorityGroupBalancer([[{ name: 'x', provider: 1 }], [{ name: 'x', provider: 2 }]], options),
    /"x" is used twice/,
  );
});

test('the chosen provider carries what the caller needs to call it', () => {
  const { backend } = balancer([['a']]);
  const chosen: SelectedProvider<Provider> = backend.startRequest().next()!;
  assert.deepEqual(chosen.provider, { url: 'https://a.test' });
});
