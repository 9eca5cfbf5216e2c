import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BackendEviction } from '../../../src/api/types/backend-connection.ts';
import {
  defaultUnhealthyCondition,
  EndpointHealth,
  type EndpointHealthSnapshot,
  judgeResponse,
  type ResponseOutcome,
} from '../../../src/dataplane/balancing/endpoint-health.ts';
import { fakeClock, HEALTHY, UNHEALTHY } from './fakes.ts';

const START = 1_000_000;

// A 500 the configured condition does not judge unhealthy (e.g. `response.code == 503`).
const DEFAULT_UNHEALTHY_ONLY: ResponseOutcome = { status: 500, unhealthy: false };

type Step = ResponseOutcome | { wait: number };

interface Row {
  transition: string;
  eviction?: BackendEviction;
  steps: Step[];
  expect: EndpointHealthSnapshot;
}

const fails = (n: number): Step[] => Array.from({ length: n }, () => UNHEALTHY);

// Every transition of the spec's health table (document 1, "States and transitions"), plus the rules
// gw adds around it. Scores follow the 0.2 EWMA: 100 → 80 → 64 → 51.2 → 40.96 on failures in a row.
const table: Row[] = [
  {
    transition: 'Healthy stays Healthy below consecutiveFailures, the score lowered',
    eviction: { consecutiveFailures: 3 },
    steps: fails(2),
    expect: { state: 'Healthy', score: 64, consecutiveFailures: 2, evictions: 0 },
  },
  {
    transition: 'Healthy → Evicted when consecutiveFailures is reached',
    eviction: { consecutiveFailures: 3 },
    steps: fails(3),
    expect: { state: 'Evicted', score: 51.2, consecutiveFailures: 3, evictions: 1, evictedUntil: START + 3000 },
  },
  {
    transition: 'Healthy stays Healthy while the score is at or above healthThreshold',
    eviction: { healthThreshold: 64 },
    steps: fails(2),
    expect: { state: 'Healthy', score: 64, consecutiveFailures: 2, evictions: 0 },
  },
  {
    transition: 'Healthy → Evicted when the score falls below healthThreshold',
    eviction: { healthThreshold: 60 },
    steps: fails(3),
    expect: { state: 'Evicted', score: 51.2, consecutiveFailures: 3, evictions: 1, evictedUntil: START + 3000 },
  },
  {
    transition: 'either criterion suffices: the threshold before the count',
    eviction: { consecutiveFailures: 5, healthThreshold: 70 },
    steps: fails(2),
    expect: { state: 'Evicted', score: 64, consecutiveFailures: 2, evictions: 1, evictedUntil: START + 3000 },
  },
  {
    transition: 'either criterion suffices: the count before the threshold',
    eviction: { consecutiveFailures: 2, healthThreshold: 10 },
    steps: fails(2),
    expect: { state: 'Evicted', score: 64, consecutiveFailures: 2, evictions: 1, evictedUntil: START + 3000 },
  },
  {
    transition: 'Healthy → Evicted on one unhealthy response when neither criterion is set',
    eviction: { duration: '3s' },
    steps: fails(1),
    expect: { state: 'Evicted', score: 80, consecutiveFailures: 1, evictions: 1, evictedUntil: START + 3000 },
  },
  {
    transition: 'no eviction block: the defaults, so one unhealthy response evicts for 3s',
    steps: fails(1),
    expect: { state: 'Evicted', score: 80, consecutiveFailures: 1, evictions: 1, evictedUntil: START + 3000 },
  },
  {
    transition: 'consecutiveFailures 0 is reached by the first unhealthy response',
    eviction: { consecutiveFailures: 0 },
    steps: fails(1),
    expect: { state: 'Evicted', score: 80, consecutiveFailures: 1, evictions: 1, evictedUntil: START + 3000 },
  },
  {
    transition: 'a default-unhealthy response the condition passes lowers the score without counting or evicting',
    steps: [DEFAULT_UNHEALTHY_ONLY, DEFAULT_UNHEALTHY_ONLY],
    expect: { state: 'Healthy', score: 64, consecutiveFailures: 0, evictions: 0 },
  },
  {
    transition: 'a response unhealthy only by the condition (429) also lowers the score',
    eviction: { consecutiveFailures: 5 },
    steps: [{ status: 429, unhealthy: true }],
    expect: { state: 'Healthy', score: 80, consecutiveFailures: 1, evictions: 0 },
  },
  {
    transition: 'a healthy response raises the score and resets the failure count',
    eviction: { consecutiveFailures: 3 },
    steps: [UNHEALTHY, UNHEALTHY, HEALTHY, UNHEALTHY, UNHEALTHY],
    // 100 → 80 → 64 → 71.2 → 56.96 → 45.568; the third failure overall did not evict.
    expect: { state: 'Healthy', score: 45.568, consecutiveFailures: 2, evictions: 0, latencyMs: 100 },
  },
  {
    transition: 'Evicted stays Evicted until duration × 1 has elapsed',
    eviction: { duration: '2s' },
    steps: [UNHEALTHY, { wait: 1999 }],
    expect: { state: 'Evicted', score: 80, consecutiveFailures: 1, evictions: 1, evictedUntil: START + 2000 },
  },
  {
    transition: 'Evicted → Healthy after duration × 1, with the score it had when evicted and no failures',
    eviction: { duration: '2s' },
    steps: [UNHEALTHY, { wait: 2000 }],
    expect: { state: 'Healthy', score: 80, consecutiveFailures: 0, evictions: 1 },
  },
  {
    transition: 'the second eviction lasts duration × 2',
    eviction: { duration: '2s' },
    steps: [UNHEALTHY, { wait: 2000 }, UNHEALTHY, { wait: 3999 }],
    expect: { state: 'Evicted', score: 64, consecutiveFailures: 1, evictions: 2, evictedUntil: START + 2000 + 4000 },
  },
  {
    transition: 'Evicted → Healthy after duration × 2',
    eviction: { duration: '2s' },
    steps: [UNHEALTHY, { wait: 2000 }, UNHEALTHY, { wait: 4000 }],
    expect: { state: 'Healthy', score: 64, consecutiveFailures: 0, evictions: 2 },
  },
  {
    transition: 'the third eviction lasts duration × 3',
    eviction: { duration: '2s' },
    steps: [UNHEALTHY, { wait: 2000 }, UNHEALTHY, { wait: 4000 }, UNHEALTHY, { wait: 5999 }],
    expect: {
      state: 'Evicted',
      score: 51.2,
      consecutiveFailures: 1,
      evictions: 3,
      evictedUntil: START + 2000 + 4000 + 6000,
    },
  },
  {
    transition: 'Evicted → Healthy after duration × 3',
    eviction: { duration: '2s' },
    steps: [UNHEALTHY, { wait: 2000 }, UNHEALTHY, { wait: 4000 }, UNHEALTHY, { wait: 6000 }],
    expect: { state: 'Healthy', score: 51.2, consecutiveFailures: 0, evictions: 3 },
  },
  {
    transition: 'Evicted → Healthy with restoreHealth as the score when it is set',
    eviction: { restoreHealth: 90, consecutiveFailures: 2 },
    steps: [UNHEALTHY, UNHEALTHY, { wait: 3000 }],
    expect: { state: 'Healthy', score: 90, consecutiveFailures: 0, evictions: 1 },
  },
  {
    transition: 'restore clears the failure count: the next failure starts a new run',
    eviction: { consecutiveFailures: 2 },
    steps: [UNHEALTHY, UNHEALTHY, { wait: 3000 }, UNHEALTHY],
    expect: { state: 'Healthy', score: 51.2, consecutiveFailures: 1, evictions: 1 },
  },
  {
    transition: 'responses while Evicted change nothing',
    steps: [UNHEALTHY, HEALTHY, UNHEALTHY, { wait: 1000 }],
    expect: { state: 'Evicted', score: 80, consecutiveFailures: 1, evictions: 1, evictedUntil: START + 3000 },
  },
];

for (const row of table) {
  test(`health table: ${row.transition}`, () => {
    const clock = fakeClock(START);
    const health = new EndpointHealth({ eviction: row.eviction }, clock);
    for (const step of row.steps) {
      if ('wait' in step) clock.advance(step.wait);
      else health.record(step);
    }
    const snapshot = health.snapshot();
    snapshot.score = Math.round(snapshot.score * 1e9) / 1e9;
    assert.deepEqual(snapshot, row.expect);
    assert.equal(health.evicted, row.expect.state === 'Evicted');
  });
}

test('a fresh endpoint is Healthy with a perfect score', () => {
  const health = new EndpointHealth({}, fakeClock());
  assert.deepEqual(health.snapshot(), { state: 'Healthy', score: 100, consecutiveFailures: 0, evictions: 0 });
});

test('latency is an EWMA of successful responses only', () => {
  const health = new EndpointHealth({ eviction: { consecutiveFailures: 10 } }, fakeClock());
  health.record({ status: 200, latencyMs: 100, unhealthy: false });
  assert.equal(health.latencyMs, 100);
  health.record({ status: 200, latencyMs: 200, unhealthy: false });
  assert.equal(health.latencyMs, 120);
  health.record({ status: 503, latencyMs: 5000, unhealthy: true });
  health.record({ status: 500, latencyMs: 5000, unhealthy: false });
  health.record({ connectionFailed: true, latencyMs: 9000, unhealthy: true });
  assert.equal(health.latencyMs, 120);
});

test('the default condition: any 5xx or a connection failure, nothing else', () => {
  for (const status of [500, 502, 503, 599]) assert.equal(defaultUnhealthyCondition({ status }), true, `${status}`);
  for (const status of [200, 204, 301, 400, 404, 429, 499, 600]) {
    assert.equal(defaultUnhealthyCondition({ status }), false, `${status}`);
  }
  assert.equal(defaultUnhealthyCondition({ connectionFailed: true }), true);
  assert.equal(defaultUnhealthyCondition({}), false);
});

test('judgeResponse applies the configured condition, or the default one', () => {
  assert.deepEqual(judgeResponse({ status: 502, latencyMs: 7 }), { status: 502, latencyMs: 7, unhealthy: true });
  const only429 = (response: { status?: number }) => response.status === 429;
  assert.equal(judgeResponse({ status: 429 }, only429).unhealthy, true);
  assert.equal(judgeResponse({ status: 502 }, only429).unhealthy, false);
});

test('a custom condition that passes 5xx keeps the endpoint in: the score drops, nothing evicts', () => {
  const health = new EndpointHealth({}, fakeClock());
  for (let i = 0; i < 30; i++) health.record(judgeResponse({ status: 500 }, () => false));
  assert.equal(health.state, 'Healthy');
  assert.ok(health.score < 1);
});
