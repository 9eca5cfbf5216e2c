import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DataPlaneMetrics,
  GEN_AI_TOKEN_BUCKETS,
  GEN_AI_TTFT_BUCKETS,
  HTTP_DURATION_BUCKETS,
  MAX_LABEL_VALUE_LENGTH,
} from '../../../src/dataplane/telemetry/metrics.ts';
import { httpRecord, llmRecord } from './fixtures.ts';
import { find, parseExposition, value } from './prometheus-text.ts';

const route = { gateway: 'default/public', listener: 'http', route: 'default/web' };

test('requests are counted by gateway, listener, route, backend, method and status', () => {
  const metrics = new DataPlaneMetrics();
  metrics.record(httpRecord());
  metrics.record(httpRecord());
  metrics.record(httpRecord({ status: 503 }));
  metrics.record(httpRecord({ method: 'POST' }));
  const text = parseExposition(metrics.render());
  assert.equal(text.types.get('gw_requests_total'), 'counter');
  const ok = { ...route, backend: 'default/web-svc', method: 'GET', status: '200' };
  assert.equal(value(text, 'gw_requests_total', ok), 2);
  assert.equal(value(text, 'gw_requests_total', { ...ok, status: '503' }), 1);
  assert.equal(value(text, 'gw_requests_total', { ...ok, method: 'POST' }), 1);
  assert.equal(find(text, 'gw_requests_total').length, 3);
});

test('request and upstream durations are histograms with cumulative buckets, sum and count', () => {
  const metrics = new DataPlaneMetrics();
  metrics.record(httpRecord()); // 42 ms, upstream 30 ms
  metrics.record(httpRecord({ endTime: httpRecord().startTime + 3_000_000_000n })); // 3 s
  const text = parseExposition(metrics.render());
  assert.equal(text.types.get('gw_request_duration_seconds'), 'histogram');
  const labels = { ...route, method: 'GET', status: '200' };
  const bucket = (le: string) => value(text, 'gw_request_duration_seconds_bucket', { ...labels, le });
  assert.equal(bucket('0.025'), 0);
  assert.equal(bucket('0.05'), 1);
  assert.equal(bucket('2.5'), 1);
  assert.equal(bucket('5'), 2);
  assert.equal(bucket('+Inf'), 2);
  assert.equal(find(text, 'gw_request_duration_seconds_bucket', labels).length, HTTP_DURATION_BUCKETS.length + 1);
  assert.equal(value(text, 'gw_request_duration_seconds_count', labels), 2);
  assert.ok(Math.abs(value(text, 'gw_request_duration_seconds_sum', labels) - 3.042) < 1e-9);
  assert.equal(value(text, 'gw_upstream_call_duration_seconds_bucket', { ...labels, le: '0.025' }), 0);
  assert.equal(value(text, 'gw_upstream_call_duration_seconds_bucket', { ...labels, le: '0.05' }), 2);
});

test('a request that never reached an upstream has no upstream observation; no status is "unknown"', () => {
  const metrics = new DataPlaneMetrics();
  metrics.record(httpRecord({ status: 0, backend: '', upstreamStartTime: 0n, upstreamEndTime: 0n }));
  const text = parseExposition(metrics.render());
  assert.equal(value(text, 'gw_requests_total', { status: 'unknown', backend: 'unknown' }), 1);
  assert.equal(find(text, 'gw_upstream_call_duration_seconds_count').length, 0);
});

test('gen_ai token usage is one histogram split by gen_ai_token_type, with the conventions buckets', () => {
  const metrics = new DataPlaneMetrics();
  metrics.record(llmRecord()); // 120 in, 40 out
  metrics.record(llmRecord()); // again
  metrics.record(httpRecord()); // not an LLM request: no gen_ai series
  const text = parseExposition(metrics.render());
  assert.equal(text.types.get('gen_ai_client_token_usage'), 'histogram');
  const labels = {
    gateway: 'default/public',
    listener: 'http',
    route: 'default/chat',
    gen_ai_operation_name: 'chat',
    gen_ai_provider_name: 'openai',
    gen_ai_request_model: 'gpt-4o',
    gen_ai_response_model: 'gpt-4o-2024-08-06',
  };
  const input = { ...labels, gen_ai_token_type: 'input' };
  const output = { ...labels, gen_ai_token_type: 'output' };
  assert.equal(value(text, 'gen_ai_client_token_usage_sum', input), 240);
  assert.equal(value(text, 'gen_ai_client_token_usage_count', input), 2);
  assert.equal(value(text, 'gen_ai_client_token_usage_sum', output), 80);
  assert.equal(value(text, 'gen_ai_client_token_usage_bucket', { ...input, le: '64' }), 0);
  assert.equal(value(text, 'gen_ai_client_token_usage_bucket', { ...input, le: '256' }), 2);
  assert.equal(value(text, 'gen_ai_client_token_usage_bucket', { ...output, le: '16' }), 0);
  assert.equal(value(text, 'gen_ai_client_token_usage_bucket', { ...output, le: '64' }), 2);
  const les = find(text, 'gen_ai_client_token_usage_bucket', input).map((sample) => sample.labels.le);
  assert.deepEqual(les, [...GEN_AI_TOKEN_BUCKETS.map(String), '+Inf']);
  assert.equal(find(text, 'gen_ai_client_token_usage_count').length, 2, 'only the LLM requests');

  assert.equal(value(text, 'gen_ai_server_request_duration_seconds_count', labels), 2);
  assert.equal(value(text, 'gen_ai_server_request_duration_seconds_bucket', { ...labels, le: '1.28' }), 0);
  assert.equal(value(text, 'gen_ai_server_request_duration_seconds_bucket', { ...labels, le: '2.56' }), 2);
  const ttft = find(text, 'gen_ai_server_time_to_first_token_seconds_bucket', labels);
  assert.equal(ttft.length, GEN_AI_TTFT_BUCKETS.length + 1);
  assert.equal(value(text, 'gen_ai_server_time_to_first_token_seconds_bucket', { ...labels, le: '0.1' }), 0);
  assert.equal(value(text, 'gen_ai_server_time_to_first_token_seconds_bucket', { ...labels, le: '0.25' }), 2);
});

test('an LLM request without usage or first token records its duration only', () => {
  const metrics = new DataPlaneMetrics();
  const record = llmRecord();
  if (record.llm) {
    record.llm.usage = undefined;
    record.llm.firstTokenTime = 0n;
    record.llm.responseModel = '';
  }
  metrics.record(record);
  const text = parseExposition(metrics.render());
  assert.equal(find(text, 'gen_ai_client_token_usage_count').length, 0);
  assert.equal(find(text, 'gen_ai_server_time_to_first_token_seconds_count').length, 0);
  assert.equal(value(text, 'gen_ai_server_request_duration_seconds_count', { gen_ai_response_model: 'unknown' }), 1);
});

test('custom labels from Frontend.metrics: CEL values, "unknown" when the expression fails', () => {
  const metrics = new DataPlaneMetrics();
  const labels = metrics.compileLabels({
    attributes: {
      add: [
        { name: 'tenant', expression: 'request.headers["x-tenant"]' },
        { name: 'user.tier', expression: 'jwt.tier' },
        { name: 'big', expression: 'response.code >= 500' },
        { name: 'tokens', expression: 'llm.totalTokens' },
      ],
    },
  });
  assert.deepEqual(labels.names, ['tenant', 'user_tier', 'big', 'tokens']);
  metrics.record(httpRecord(), labels);
  metrics.record(llmRecord({ jwtClaims: { tier: 'gold' } }), labels);
  const text = parseExposition(metrics.render());
  assert.equal(
    value(text, 'gw_requests_total', {
      route: 'default/web',
      tenant: 'acme',
      user_tier: 'unknown',
      big: 'false',
      tokens: 'unknown',
    }),
    1,
  );
  assert.equal(
    value(text, 'gw_requests_total', { route: 'default/chat', tenant: 'acme', user_tier: 'gold', tokens: '160' }),
    1,
  );
  assert.equal(
    value(text, 'gen_ai_client_token_usage_count', { tenant: 'acme', user_tier: 'gold', gen_ai_token_type: 'input' }),
    1,
  );
});

test('custom label values that are not text, numbers or bools, or are empty, are "unknown"', () => {
  const metrics = new DataPlaneMetrics();
  const labels = metrics.compileLabels({
    attributes: {
      add: [
        { name: 'list', expression: '[1, 2]' },
        { name: 'empty', expression: '""' },
        { name: 'broken', expression: 'request.path ==' },
      ],
    },
  });
  assert.equal(labels.problems.length, 1, 'the expression that does not compile is reported');
  metrics.record(httpRecord(), labels);
  const text = parseExposition(metrics.render());
  assert.equal(value(text, 'gw_requests_total', { list: 'unknown', empty: 'unknown', broken: 'unknown' }), 1);
});

test('custom label names that clash with built-in labels or each other are left out and reported', () => {
  const metrics = new DataPlaneMetrics();
  const labels = metrics.compileLabels({
    attributes: {
      add: [
        { name: 'route', expression: '"x"' },
        { name: 'le', expression: '"x"' },
        { name: 'a.b', expression: '"1"' },
        { name: 'a-b', expression: '"2"' },
        { name: '9lives', expression: '"3"' },
      ],
    },
  });
  assert.deepEqual(labels.names, ['a_b', '_9lives']);
  assert.equal(labels.problems.length, 3);
  metrics.record(httpRecord(), labels);
  parseExposition(metrics.render()); // no repeated label names
});

test('frontends with different custom labels share the metric families without clashing', () => {
  const metrics = new DataPlaneMetrics();
  const a = metrics.compileLabels({ attributes: { add: [{ name: 'tenant', expression: '"a"' }] } });
  const b = metrics.compileLabels({ attributes: { add: [{ name: 'region', expression: '"a"' }] } });
  metrics.record(httpRecord(), a);
  metrics.record(httpRecord(), b);
  metrics.record(httpRecord());
  const text = parseExposition(metrics.render());
  assert.equal(value(text, 'gw_requests_total', { tenant: 'a' }), 1);
  assert.equal(value(text, 'gw_requests_total', { region: 'a' }), 1);
  assert.equal(find(text, 'gw_requests_total').length, 3);
});

test('cardinality is bounded: past maxSeries label sets, requests go to one "overflow" series', () => {
  const metrics = new DataPlaneMetrics({ maxSeries: 10 });
  for (let i = 0; i < 1_000; i++) {
    const record = llmRecord();
    if (record.llm) record.llm.requestModel = `model-${i}`; // a client inventing model names
    metrics.record(record);
  }
  const text = parseExposition(metrics.render());
  assert.equal(find(text, 'gw_requests_total').length, 1);
  assert.equal(find(text, 'gen_ai_server_request_duration_seconds_count').length, 11);
  assert.equal(value(text, 'gen_ai_server_request_duration_seconds_count', { gen_ai_request_model: 'overflow' }), 990);
  assert.equal(value(text, 'gen_ai_server_request_duration_seconds_count', { gen_ai_request_model: 'model-3' }), 1);
});

test('long label values are cut and marked, and values are escaped in the text format', () => {
  const metrics = new DataPlaneMetrics();
  const long = 'r'.repeat(MAX_LABEL_VALUE_LENGTH + 50);
  metrics.record(httpRecord({ route: `${long}-a` }));
  metrics.record(httpRecord({ route: `${long}-b` }));
  const odd = 'a"b\\c\nd';
  metrics.record(httpRecord({ route: odd }));
  const text = parseExposition(metrics.render());
  assert.equal(value(text, 'gw_requests_total', { route: `${'r'.repeat(MAX_LABEL_VALUE_LENGTH)}…` }), 2);
  assert.equal(value(text, 'gw_requests_total', { route: odd }), 1);
});

test('counter functions are read at scrape time', () => {
  const metrics = new DataPlaneMetrics();
  let dropped = 0;
  metrics.registerCounterFunction('gw_access_log_dropped_lines_total', 'Dropped lines.', () => dropped);
  dropped = 7;
  const text = parseExposition(metrics.render());
  assert.equal(text.types.get('gw_access_log_dropped_lines_total'), 'counter');
  assert.equal(value(text, 'gw_access_log_dropped_lines_total'), 7);
});

test('a labelled counter function renders a series per label set under one family', () => {
  const metrics = new DataPlaneMetrics();
  let failures = 1;
  metrics.registerCounterFunction('gw_backend_auth_token_fetches_total', 'Fetches.', () => [
    { labels: { kind: 'aws', outcome: 'success' }, value: 4 },
    { labels: { kind: 'aws', outcome: 'failure' }, value: failures },
  ]);
  failures = 2;
  const rendered = metrics.render();
  assert.equal(rendered.match(/# TYPE gw_backend_auth_token_fetches_total counter/g)?.length, 1);
  const text = parseExposition(rendered);
  assert.equal(value(text, 'gw_backend_auth_token_fetches_total', { kind: 'aws', outcome: 'success' }), 4);
  assert.equal(value(text, 'gw_backend_auth_token_fetches_total', { kind: 'aws', outcome: 'failure' }), 2);
});

test('an empty registry renders valid text with every family declared', () => {
  const text = parseExposition(new DataPlaneMetrics().render());
  assert.equal(text.samples.length, 0);
  for (const name of [
    'gw_requests_total',
    'gw_request_duration_seconds',
    'gw_upstream_call_duration_seconds',
    'gen_ai_client_token_usage',
    'gen_ai_server_request_duration_seconds',
    'gen_ai_server_time_to_first_token_seconds',
  ]) {
    assert.ok(text.types.has(name), name);
  }
});
