// What each prompt guard did, in the metrics (gw_ai_guard_duration_seconds by guard and action,
// error_type for a guard that could not check; gw_ai_guard_matches_total by name) and as child
// spans of the request's span, recorded from the outcomes on the LLM record whatever the guard
// kind; never the text a guard read, a service's reason or a failure's message as a label.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { GuardOutcome } from '../../../src/dataplane/ai/guards/outcome.ts';
import { traceGuards } from '../../../src/dataplane/telemetry/guard-spans.ts';
import {
  DataPlaneMetrics,
  GUARD_DURATION_BUCKETS,
  type MetricsSnapshot,
  mergeMetricsSnapshots,
  renderMetricsSnapshot,
} from '../../../src/dataplane/telemetry/metrics.ts';
import type { RequestRecord } from '../../../src/dataplane/telemetry/request-record.ts';
import { llmRecord, STARTED_AT } from './fixtures.ts';
import { find, parseExposition, value } from './prometheus-text.ts';

const TIMEOUT = 'the webhook guard (Service default/guard:8000) did not answer within 10000 ms';
const REASON = 'the prompt says 4111-1111-1111-1111';

/** performance.now() at `ms` after the record's start (a guard's startedAt). */
function performanceAt(record: RequestRecord, ms: number): number {
  return Number(record.startTime) / 1e6 + (performance.now() - Number(process.hrtime.bigint()) / 1e6) + ms;
}

/** A request whose guards masked, failed closed (a timeout) and passed. */
function guardedRecord(): RequestRecord {
  const record = llmRecord();
  const guards: GuardOutcome[] = [
    {
      side: 'request',
      index: 0,
      kind: 'regex',
      action: 'mask',
      matched: ['CREDIT_CARD', 'EMAIL_ADDRESS'],
      ms: 0.02,
      startedAt: performanceAt(record, 1),
    },
    {
      side: 'request',
      index: 1,
      kind: 'webhook',
      action: 'reject',
      reason: REASON,
      error: TIMEOUT,
      errorType: 'timeout',
      ms: 10_000,
      startedAt: performanceAt(record, 2),
    },
    { side: 'response', index: 0, kind: 'regex', action: 'pass', ms: 0.5 },
  ];
  record.llm!.guards = guards;
  return record;
}

const WHERE = {
  gateway: 'default/public',
  listener: 'http',
  route: 'default/chat',
  backend: 'default/openai',
  gen_ai_provider_name: 'openai',
};

test('each guard is a duration by guard and action; a failed one carries error_type, never its message or reason', () => {
  const metrics = new DataPlaneMetrics();
  const tenant = metrics.compileLabels({ attributes: { add: [{ name: 'tenant', expression: '"acme"' }] } });
  metrics.record(guardedRecord(), tenant);
  metrics.record(guardedRecord(), tenant);
  const exposition = metrics.render();
  const text = parseExposition(exposition);
  assert.equal(text.types.get('gw_ai_guard_duration_seconds'), 'histogram');
  assert.equal(text.types.get('gw_ai_guard_matches_total'), 'counter');

  const mask = {
    ...WHERE,
    gw_ai_guard_side: 'request',
    gw_ai_guard_index: '0',
    gw_ai_guard_kind: 'regex',
    gw_ai_guard_action: 'mask',
    tenant: 'acme',
  };
  assert.equal(value(text, 'gw_ai_guard_duration_seconds_count', mask), 2);
  assert.equal(value(text, 'gw_ai_guard_duration_seconds_bucket', { ...mask, le: '0.0001' }), 2, '0.02 ms');
  const [maskCount] = find(text, 'gw_ai_guard_duration_seconds_count', mask);
  assert.equal(maskCount!.labels.error_type, undefined, 'a guard that did not fail has no error_type');
  assert.equal(
    find(text, 'gw_ai_guard_duration_seconds_bucket', mask).length,
    GUARD_DURATION_BUCKETS.length + 1,
    'the guard buckets and +Inf',
  );

  const failed = {
    ...WHERE,
    gw_ai_guard_side: 'request',
    gw_ai_guard_index: '1',
    gw_ai_guard_kind: 'webhook',
    gw_ai_guard_action: 'reject',
    error_type: 'timeout',
  };
  assert.equal(value(text, 'gw_ai_guard_duration_seconds_count', failed), 2);
  assert.equal(value(text, 'gw_ai_guard_duration_seconds_bucket', { ...failed, le: '5' }), 0);
  assert.equal(value(text, 'gw_ai_guard_duration_seconds_bucket', { ...failed, le: '10' }), 2);
  assert.equal(value(text, 'gw_ai_guard_duration_seconds_sum', failed), 20);

  const response = { gw_ai_guard_side: 'response', gw_ai_guard_kind: 'regex', gw_ai_guard_action: 'pass' };
  assert.equal(value(text, 'gw_ai_guard_duration_seconds_count', response), 2);

  assert.equal(value(text, 'gw_ai_guard_matches_total', { ...mask, gw_ai_guard_match: 'CREDIT_CARD' }), 2);
  assert.equal(value(text, 'gw_ai_guard_matches_total', { ...mask, gw_ai_guard_match: 'EMAIL_ADDRESS' }), 2);
  assert.equal(find(text, 'gw_ai_guard_matches_total').length, 2, 'only masks and rejections name matches');

  assert.ok(!exposition.includes('did not answer') && !exposition.includes('4111'), 'no message, no reason');
});

test('a guard that failed without a type of failure is counted under error_type _OTHER', () => {
  const metrics = new DataPlaneMetrics();
  const record = llmRecord();
  record.llm!.guards = [
    { side: 'request', index: 0, kind: 'webhook', action: 'pass', error: 'the guard failed unexpectedly', ms: 3 },
  ];
  metrics.record(record);
  const text = parseExposition(metrics.render());
  assert.equal(
    value(text, 'gw_ai_guard_duration_seconds_count', { gw_ai_guard_action: 'pass', error_type: '_OTHER' }),
    1,
  );
});

test('guard metrics are bounded: past maxSeries new match names go to the overflow series', () => {
  const metrics = new DataPlaneMetrics({ maxSeries: 2 });
  for (let i = 0; i < 5; i++) {
    const record = llmRecord();
    record.llm!.guards = [
      { side: 'response', index: 0, kind: 'webhook', action: 'reject', matched: [`category-${i}`], ms: 1 },
    ];
    metrics.record(record);
  }
  const text = parseExposition(metrics.render());
  assert.equal(find(text, 'gw_ai_guard_matches_total').length, 3);
  assert.equal(value(text, 'gw_ai_guard_matches_total', { gw_ai_guard_match: 'overflow' }), 3);
});

test('guard series travel over IPC and add up across workers', () => {
  const overIpc = (metrics: DataPlaneMetrics) => JSON.parse(JSON.stringify(metrics.snapshot())) as MetricsSnapshot;
  const one = new DataPlaneMetrics();
  const two = new DataPlaneMetrics();
  one.record(guardedRecord());
  two.record(guardedRecord());
  assert.equal(renderMetricsSnapshot(overIpc(one)), one.render());
  const text = parseExposition(renderMetricsSnapshot(mergeMetricsSnapshots([overIpc(one), overIpc(two)])));
  assert.equal(value(text, 'gw_ai_guard_duration_seconds_count', { error_type: 'timeout' }), 2);
  assert.equal(value(text, 'gw_ai_guard_matches_total', { gw_ai_guard_match: 'CREDIT_CARD' }), 2);
});

test('each guard is a child span of the request span: where it ran, what it did, a failure as an error status', async () => {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const tracer = provider.getTracer('test');
  const record = guardedRecord();
  const parent = tracer.startSpan('POST default/chat', { startTime: record.startedAt });
  const endedAt = STARTED_AT + 1500;
  traceGuards(tracer, parent, record, record.llm!.guards!, endedAt);
  parent.end(endedAt);
  await provider.forceFlush();

  const spans = exporter.getFinishedSpans();
  const request = spans.find((span) => span.name === 'POST default/chat')!;
  const guards = spans.filter((span) => span !== request);
  assert.deepEqual(
    guards.map((span) => span.name),
    ['guard request[0].regex', 'guard request[1].webhook', 'guard response[0].regex'],
  );
  const ms = (time: [number, number]) => time[0] * 1000 + time[1] / 1e6;
  for (const span of guards) {
    assert.equal(span.parentSpanContext?.spanId, request.spanContext().spanId);
    assert.equal(span.spanContext().traceId, request.spanContext().traceId);
  }
  const [mask, failed, streamed] = guards as [(typeof guards)[0], (typeof guards)[0], (typeof guards)[0]];
  assert.deepEqual(mask.attributes, {
    'gw.ai.guard.side': 'request',
    'gw.ai.guard.index': 0,
    'gw.ai.guard.kind': 'regex',
    'gw.ai.guard.action': 'mask',
    'gw.ai.guard.matched': ['CREDIT_CARD', 'EMAIL_ADDRESS'],
  });
  assert.ok(Math.abs(ms(mask.startTime) - (STARTED_AT + 1)) < 1, `starts 1 ms into the request: ${ms(mask.startTime)}`);
  assert.ok(Math.abs(ms(mask.duration) - 0.02) < 0.001);
  assert.equal(mask.status.code, SpanStatusCode.UNSET, 'masking is not an error');

  assert.equal(failed.attributes['error.type'], 'timeout');
  assert.equal(failed.attributes['gw.ai.guard.action'], 'reject');
  assert.deepEqual(failed.status, { code: SpanStatusCode.ERROR, message: TIMEOUT });
  assert.ok(Math.abs(ms(failed.duration) - 10_000) < 0.001);
  assert.ok(!JSON.stringify(failed.attributes).includes('4111'), 'a reason may quote the prompt: not written');

  // A streamed answer's guard has no start of its own: its span ends with the request.
  assert.ok(Math.abs(ms(streamed.endTime) - endedAt) < 0.001);
  assert.ok(Math.abs(ms(streamed.duration) - 0.5) < 0.001);
});
