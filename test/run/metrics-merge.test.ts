// The primary of `gw run --workers N` renders the sum of its workers' registries: snapshots are
// plain data that survive JSON (IPC), and merging them adds every series with the same labels.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DataPlaneMetrics,
  type MetricsSnapshot,
  mergeMetricsSnapshots,
  renderMetricsSnapshot,
} from '../../src/dataplane/telemetry/metrics.ts';
import { httpRecord, llmRecord } from '../dataplane/telemetry/fixtures.ts';
import { find, parseExposition, value } from '../dataplane/telemetry/prometheus-text.ts';

/** What a worker's snapshot looks like after the trip over IPC. */
function overIpc(metrics: DataPlaneMetrics): MetricsSnapshot {
  return JSON.parse(JSON.stringify(metrics.snapshot())) as MetricsSnapshot;
}

test('a snapshot renders exactly like the registry it was taken from', () => {
  const metrics = new DataPlaneMetrics();
  metrics.record(httpRecord());
  metrics.record(httpRecord({ status: 503, upstreamStartTime: 0n, upstreamEndTime: 0n }));
  metrics.record(llmRecord());
  metrics.registerCounterFunction('gw_access_log_dropped_lines_total', 'Dropped lines.', () => 3);
  assert.equal(renderMetricsSnapshot(overIpc(metrics)), metrics.render());
});

test('merging adds counters, histogram buckets, sums and counts of series with the same labels', () => {
  const one = new DataPlaneMetrics();
  const two = new DataPlaneMetrics();
  one.record(httpRecord());
  one.record(httpRecord({ method: 'POST' }));
  two.record(httpRecord());
  two.record(httpRecord({ endTime: httpRecord().startTime + 3_000_000_000n })); // 3 s
  two.record(llmRecord());
  one.registerCounterFunction('gw_access_log_dropped_lines_total', 'Dropped lines.', () => 2);
  two.registerCounterFunction('gw_access_log_dropped_lines_total', 'Dropped lines.', () => 5);
  const fetches = (success: number, failure: number) => () => [
    { labels: { kind: 'gcp', outcome: 'success' }, value: success },
    { labels: { kind: 'gcp', outcome: 'failure' }, value: failure },
  ];
  one.registerCounterFunction('gw_backend_auth_token_fetches_total', 'Fetches.', fetches(1, 0));
  two.registerCounterFunction('gw_backend_auth_token_fetches_total', 'Fetches.', fetches(2, 3));

  const text = parseExposition(renderMetricsSnapshot(mergeMetricsSnapshots([overIpc(one), overIpc(two)])));
  const get = { gateway: 'default/public', route: 'default/web', method: 'GET', status: '200' };
  assert.equal(value(text, 'gw_requests_total', get), 3);
  assert.equal(value(text, 'gw_requests_total', { ...get, method: 'POST' }), 1);
  assert.equal(value(text, 'gw_request_duration_seconds_bucket', { ...get, le: '0.05' }), 2);
  assert.equal(value(text, 'gw_request_duration_seconds_bucket', { ...get, le: '5' }), 3);
  assert.equal(value(text, 'gw_request_duration_seconds_count', get), 3);
  assert.ok(Math.abs(value(text, 'gw_request_duration_seconds_sum', get) - (0.042 * 2 + 3)) < 1e-9);
  assert.equal(value(text, 'gw_upstream_call_duration_seconds_count', get), 3);
  assert.equal(value(text, 'gen_ai_client_token_usage_count', { gen_ai_token_type: 'input' }), 1);
  assert.equal(value(text, 'gw_access_log_dropped_lines_total'), 7);
  assert.equal(value(text, 'gw_backend_auth_token_fetches_total', { kind: 'gcp', outcome: 'success' }), 3);
  assert.equal(value(text, 'gw_backend_auth_token_fetches_total', { kind: 'gcp', outcome: 'failure' }), 3);
});

test('the merged series are bounded like a registry: label sets past the bound go to the overflow series', () => {
  const snapshots = [0, 1, 2].map((worker) => {
    const metrics = new DataPlaneMetrics();
    metrics.record(httpRecord({ route: `default/route-${worker}` }));
    metrics.record(httpRecord({ route: 'default/shared' }));
    return overIpc(metrics);
  });
  const merged = mergeMetricsSnapshots(snapshots, 2);
  assert.equal(merged.http.length, 3);
  const text = parseExposition(renderMetricsSnapshot(merged));
  assert.equal(value(text, 'gw_requests_total', { route: 'default/route-0' }), 1);
  assert.equal(value(text, 'gw_requests_total', { route: 'default/shared' }), 3);
  assert.equal(value(text, 'gw_requests_total', { route: 'overflow', status: 'overflow' }), 2);
  assert.equal(find(text, 'gw_requests_total').length, 3);
});

test('merging nothing renders every family with no series', () => {
  const text = parseExposition(renderMetricsSnapshot(mergeMetricsSnapshots([])));
  assert.equal(text.types.get('gw_requests_total'), 'counter');
  assert.equal(text.samples.length, 0);
});
