import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EndpointHealth, type EndpointHealthSettings } from '../../../src/dataplane/balancing/endpoint-health.ts';
import type { AttemptSequence } from '../../../src/dataplane/balancing/selection.ts';
import {
  ConditionalRouter,
  createVirtualModelRouter,
  FailoverRouter,
  type VirtualRoute,
  type VirtualTarget,
  WeightedRouter,
} from '../../../src/dataplane/balancing/virtual-models.ts';
import { type FakeClock, fakeClock, seededRandom, shares, UNHEALTHY } from './fakes.ts';

// Health that only evicts after many failures, so a test can lower a score without evicting.
const NO_EVICTION_IN_REACH: EndpointHealthSettings = { eviction: { consecutiveFailures: 1000 } };

function attemptsOf<X>(route: VirtualRoute<X>): AttemptSequence<X> {
  assert.equal(route.kind, 'attempts');
  return (route as { attempts: AttemptSequence<X> }).attempts;
}

function order<X extends VirtualTarget<string>>(route: VirtualRoute<X>): string[] {
  const attempts = attemptsOf(route);
  const names: string[] = [];
  for (let chosen = attempts.next(); chosen; chosen = attempts.next()) names.push(chosen.target);
  return names;
}

function healthFor(clock: FakeClock, settings: EndpointHealthSettings = {}): EndpointHealth {
  return new EndpointHealth(settings, clock);
}

function lowerScore(health: EndpointHealth, failures: number): void {
  for (let i = 0; i < failures; i++) health.record(UNHEALTHY);
}

function succeedIn(health: EndpointHealth, latencyMs: number): void {
  health.record({ status: 200, latencyMs, unhealthy: false });
}

// --- weighted ---

test('weighted: targets are chosen in proportion to weight, default 1 (statistical, seeded)', () => {
  const clock = fakeClock();
  const router = new WeightedRouter(
    [
      { target: 'one', health: healthFor(clock) },
      { target: 'three', weight: 3, health: healthFor(clock) },
      { target: 'six', weight: 6, health: healthFor(clock) },
    ],
    seededRandom(11),
  );
  const first = shares(20_000, () => attemptsOf(router.route()).next()!.target);
  for (const [name, expected] of [
    ['one', 0.1],
    ['three', 0.3],
    ['six', 0.6],
  ] as const) {
    assert.ok(Math.abs(first.get(name)! - expected) < 0.015, `${name} got ${first.get(name)}, expected ${expected}`);
  }
});

test('weighted: a request moves on through every target once, evicted ones last', () => {
  const clock = fakeClock();
  const evicted = healthFor(clock);
  evicted.record(UNHEALTHY);
  const router = new WeightedRouter(
    [
      { target: 'a', health: healthFor(clock) },
      { target: 'evicted', weight: 1000, health: evicted },
      { target: 'b', health: healthFor(clock) },
    ],
    seededRandom(5),
  );
  for (let i = 0; i < 20; i++) {
    const names = order(router.route());
    assert.deepEqual(new Set(names.slice(0, 2)), new Set(['a', 'b']));
    assert.equal(names[2], 'evicted');
  }
});

test('weighted: all targets evicted, the one restored soonest is tried first', () => {
  const clock = fakeClock();
  const twice = healthFor(clock);
  twice.record(UNHEALTHY);
  clock.advance(3000);
  twice.record(UNHEALTHY); // evicted until +6s
  const once = healthFor(clock);
  once.record(UNHEALTHY); // evicted until +3s
  const router = new WeightedRouter(
    [
      { target: 'twice', health: twice },
      { target: 'once', health: once },
    ],
    seededRandom(1),
  );
  assert.deepEqual(order(router.route()), ['once', 'twice']);
});

// --- failover ---

function failover(clock: FakeClock, targets: { name: string; priority: number; health?: EndpointHealth }[]) {
  return new FailoverRouter(
    targets.map(({ name, priority, health }) => ({
      target: name,
      priority,
      health: health ?? healthFor(clock, NO_EVICTION_IN_REACH),
    })),
    { now: clock.now },
  );
}

test('failover: lower priority values first; equal health and latency keep configuration order', () => {
  const clock = fakeClock();
  const router = failover(clock, [
    { name: 'backup', priority: 1 },
    { name: 'primary-1', priority: 0 },
    { name: 'primary-2', priority: 0 },
  ]);
  assert.deepEqual(order(router.route()), ['primary-1', 'primary-2', 'backup']);
});

test('failover: at equal priority the lower latency wins', () => {
  const clock = fakeClock();
  const slow = healthFor(clock);
  const fast = healthFor(clock);
  succeedIn(slow, 400);
  succeedIn(fast, 100);
  const router = failover(clock, [
    { name: 'slow', priority: 0, health: slow },
    { name: 'fast', priority: 0, health: fast },
  ]);
  assert.deepEqual(order(router.route()), ['fast', 'slow']);
});

test('failover: the score is health × fastest / latency', () => {
  // healthy: health 100, latency 100 ms. shaky: health 71.2 (two failures, then a success), latency given.
  const rank = (shakyLatencyMs: number) => {
    const clock = fakeClock();
    const healthy = healthFor(clock, NO_EVICTION_IN_REACH);
    const shaky = healthFor(clock, NO_EVICTION_IN_REACH);
    succeedIn(healthy, 100);
    lowerScore(shaky, 2);
    succeedIn(shaky, shakyLatencyMs);
    return order(
      failover(clock, [
        { name: 'healthy', priority: 0, health: healthy },
        { name: 'shaky', priority: 0, health: shaky },
      ]).route(),
    );
  };
  // shaky 71.2 × 50/50 = 71.2 beats healthy 100 × 50/100 = 50.
  assert.deepEqual(rank(50), ['shaky', 'healthy']);
  // healthy 100 × 80/100 = 80 beats shaky 71.2 × 80/80 = 71.2.
  assert.deepEqual(rank(80), ['healthy', 'shaky']);
});

test('failover: the next priority is used only when every target at the current one is degraded', () => {
  const clock = fakeClock();
  const targets = [
    { target: 'p0-degraded', priority: 0, health: healthFor(clock, NO_EVICTION_IN_REACH) },
    { target: 'p0-ok', priority: 0, health: healthFor(clock, NO_EVICTION_IN_REACH) },
    { target: 'p1', priority: 1, health: healthFor(clock, NO_EVICTION_IN_REACH) },
  ];
  const router = new FailoverRouter(targets, { now: clock.now });
  lowerScore(targets[0]!.health, 4); // 40.96 < 50
  assert.deepEqual(
    targets.map((target) => router.degraded(target)),
    [true, false, false],
  );
  assert.deepEqual(order(router.route()), ['p0-ok', 'p1', 'p0-degraded']);
  lowerScore(targets[1]!.health, 4);
  assert.deepEqual(order(router.route()), ['p1', 'p0-degraded', 'p0-ok']);
});

function firstTarget(router: FailoverRouter<string>) {
  return attemptsOf(router.route()).next()!;
}

test('failover: a degraded or evicted preferred target yields to the next priority, and is tried last', () => {
  const clock = fakeClock();
  const degraded = healthFor(clock, NO_EVICTION_IN_REACH);
  lowerScore(degraded, 3); // 51.2: not yet degraded
  const router = failover(clock, [
    { name: 'primary', priority: 0, health: degraded },
    { name: 'secondary', priority: 5 },
  ]);
  assert.deepEqual(order(router.route()), ['primary', 'secondary']);
  lowerScore(degraded, 1); // 40.96: degraded
  assert.deepEqual(order(router.route()), ['secondary', 'primary']);

  const evicted = healthFor(clock);
  evicted.record(UNHEALTHY);
  const withEvicted = failover(clock, [
    { name: 'evicted', priority: 0, health: evicted },
    { name: 'degraded', priority: 1, health: degraded },
    { name: 'last-resort', priority: 2 },
  ]);
  // Usable before degraded before evicted, whatever the priority.
  assert.deepEqual(order(withEvicted.route()), ['last-resort', 'degraded', 'evicted']);
});

test('failover: a low score stops degrading a target once the hold has passed since it last dropped', () => {
  const clock = fakeClock();
  const primary = healthFor(clock, NO_EVICTION_IN_REACH);
  lowerScore(primary, 4);
  const router = failover(clock, [
    { name: 'primary', priority: 0, health: primary },
    { name: 'secondary', priority: 1 },
  ]);
  assert.equal(firstTarget(router).target, 'secondary');
  clock.advance(2999);
  assert.equal(firstTarget(router).target, 'secondary');
  clock.advance(1);
  // Offered again as a probe; one more failure degrades it for another hold.
  assert.equal(firstTarget(router).target, 'primary');
  lowerScore(primary, 1);
  assert.equal(firstTarget(router).target, 'secondary');
});

test('failover: an eviction ending returns the preferred target', () => {
  const clock = fakeClock();
  const primary = healthFor(clock);
  primary.record(UNHEALTHY); // one failure evicts (no criteria set), score 80
  const router = failover(clock, [
    { name: 'primary', priority: 0, health: primary },
    { name: 'secondary', priority: 1 },
  ]);
  assert.equal(firstTarget(router).target, 'secondary');
  clock.advance(3000);
  assert.equal(firstTarget(router).target, 'primary');
});

// --- conditional ---

interface Request {
  user: string;
  region: string;
}

function conditional() {
  const clock = fakeClock();
  return new ConditionalRouter<string, Request>([
    { target: 'eu-model', when: (request) => request.region === 'eu', health: healthFor(clock) },
    { target: 'vip-model', when: (request) => request.user === 'vip', health: healthFor(clock) },
    { target: 'default-model', health: healthFor(clock) },
  ]);
}

test('conditional: the first target whose condition holds, and only that one', () => {
  const router = conditional();
  assert.deepEqual(order(router.route({ user: 'vip', region: 'eu' })), ['eu-model']);
  assert.deepEqual(order(router.route({ user: 'vip', region: 'us' })), ['vip-model']);
  assert.deepEqual(order(router.route({ user: 'anon', region: 'us' })), ['default-model']);
});

test('conditional: an evicted match is still the target (no move to a target meant for other requests)', () => {
  const clock = fakeClock();
  const eu = healthFor(clock);
  eu.record(UNHEALTHY);
  const router = new ConditionalRouter<string, Request>([
    { target: 'eu-model', when: (request) => request.region === 'eu', health: eu },
    { target: 'default-model', health: healthFor(clock) },
  ]);
  assert.deepEqual(order(router.route({ user: 'x', region: 'eu' })), ['eu-model']);
});

test('conditional: no match is a typed noTarget result', () => {
  const clock = fakeClock();
  const router = new ConditionalRouter<string, Request>([
    { target: 'eu-model', when: (request) => request.region === 'eu', health: healthFor(clock) },
  ]);
  const route = router.route({ user: 'x', region: 'us' });
  assert.equal(route.kind, 'noTarget');
  assert.match((route as { reason: string }).reason, /no conditional target/);
});

test('conditional: a condition that throws does not match', () => {
  const clock = fakeClock();
  const router = new ConditionalRouter<string, Request>([
    {
      target: 'broken',
      when: () => {
        throw new Error('no such key');
      },
      health: healthFor(clock),
    },
    { target: 'fallback', health: healthFor(clock) },
  ]);
  assert.deepEqual(order(router.route({ user: 'x', region: 'eu' })), ['fallback']);
});

// --- shared health and the factory ---

test('routers that target the same model share its health', () => {
  const clock = fakeClock();
  const shared = healthFor(clock);
  const weighted = createVirtualModelRouter<string, unknown>(
    {
      weighted: {
        targets: [
          { target: 'shared', health: shared },
          { target: 'other', health: healthFor(clock) },
        ],
      },
    },
    { random: () => 0, now: clock.now },
  );
  const failoverRouter = createVirtualModelRouter<string, unknown>(
    {
      failover: {
        targets: [
          { target: 'shared', priority: 0, health: shared },
          { target: 'backup', priority: 1, health: healthFor(clock) },
        ],
      },
    },
    { random: () => 0, now: clock.now },
  );
  assert.equal(attemptsOf(failoverRouter.route({})).next()!.target, 'shared');
  const chosen = attemptsOf(weighted.route({})).next()!;
  assert.equal(chosen.target, 'shared');
  weighted.report(chosen, UNHEALTHY);
  assert.equal(attemptsOf(failoverRouter.route({})).next()!.target, 'backup');
});

test('the factory builds the router its routing names', () => {
  const clock = fakeClock();
  const health = healthFor(clock);
  const options = { random: () => 0, now: clock.now };
  assert.ok(
    createVirtualModelRouter({ weighted: { targets: [{ target: 1, health }] } }, options) instanceof WeightedRouter,
  );
  assert.ok(
    createVirtualModelRouter({ failover: { targets: [{ target: 1, priority: 0, health }] } }, options) instanceof
      FailoverRouter,
  );
  assert.ok(
    createVirtualModelRouter({ conditional: { targets: [{ target: 1, health }] } }, options) instanceof
      ConditionalRouter,
  );
  assert.throws(() => createVirtualModelRouter({ weighted: { targets: [] } }, options), /at least one target/);
});
