import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AccessLogger, DEFAULT_ACCESS_LOG_FIELDS } from '../../../src/dataplane/telemetry/access-log.ts';
import type { LogSink } from '../../../src/dataplane/telemetry/log-sink.ts';
import { httpRecord, llmRecord } from './fixtures.ts';

class MemorySink implements LogSink {
  lines: string[] = [];
  write(line: string): void {
    this.lines.push(line);
  }
  entries(): Record<string, unknown>[] {
    return this.lines.map((line) => JSON.parse(line));
  }
}

test('a plain HTTP request: one JSON line with the default fields (OpenTelemetry HTTP names), no gen_ai fields', () => {
  const sink = new MemorySink();
  const logger = new AccessLogger(undefined, sink);
  assert.equal(logger.log(httpRecord()), true);
  assert.equal(sink.lines.length, 1);
  assert.ok(!sink.lines[0]?.includes('\n'), 'one line');
  const entry = sink.entries()[0] as Record<string, unknown>;
  assert.equal(entry.level, 'info');
  assert.equal(entry.scope, 'request');
  assert.ok(!Number.isNaN(Date.parse(entry.time as string)));
  const { time: _time, ...rest } = entry;
  assert.deepEqual(rest, {
    level: 'info',
    scope: 'request',
    message: 'GET /items 200',
    gateway: 'default/public',
    listener: 'http',
    route_rule: 'rule-0',
    route: 'default/web',
    backend: 'default/web-svc',
    endpoint: '10.1.0.3:8080',
    'client.address': '10.0.0.7',
    'client.port': 51234,
    'http.request.method': 'GET',
    'url.scheme': 'http',
    'server.address': 'app.example.com',
    'url.path': '/items',
    'network.protocol.version': '1.1',
    'user_agent.original': 'test/1.0',
    'http.response.status_code': 200,
    'http.response.body.size': 512,
    protocol: 'http',
    duration_ms: 42,
  });
  assert.deepEqual(
    Object.keys(entry).slice(0, 4),
    ['time', 'level', 'scope', 'message'],
    'the record starts each line',
  );
  assert.ok(!Object.keys(entry).some((key) => key.startsWith('gen_ai.')));
});

test('an LLM request: gen_ai fields from the OpenTelemetry conventions, usage as numbers', () => {
  const sink = new MemorySink();
  new AccessLogger(undefined, sink).log(llmRecord());
  const entry = sink.entries()[0] as Record<string, unknown>;
  assert.equal(entry.protocol, 'llm');
  assert.equal(entry['gen_ai.operation.name'], 'chat');
  assert.equal(entry['gen_ai.provider.name'], 'openai', 'the OpenTelemetry name of the vendor, not the family');
  assert.equal(entry['gw.ai.provider'], 'primary');
  assert.equal(entry['gen_ai.request.model'], 'gpt-4o');
  assert.equal(entry['gen_ai.response.model'], 'gpt-4o-2024-08-06');
  assert.equal(entry['gw.ai.streaming'], true);
  assert.equal(entry['gen_ai.usage.input_tokens'], 120);
  assert.equal(entry['gen_ai.usage.cache_read.input_tokens'], 100);
  assert.equal(entry['gen_ai.usage.output_tokens'], 40);
  assert.equal(entry['gw.ai.time_to_first_token'], 0.25);
  assert.equal(entry['http.request.body.size'], 300);
  assert.equal(entry.duration_ms, 1500);
  assert.ok(!('gen_ai.usage.reasoning_tokens' in entry), 'absent values are left out, not null');
});

test('fields without a value are left out: a request that failed before a response', () => {
  const sink = new MemorySink();
  const record = httpRecord({ status: 0, backend: '', upstreamHost: '', error: 'no route', bytesOut: 0 });
  new AccessLogger(undefined, sink).log(record);
  const entry = sink.entries()[0] as Record<string, unknown>;
  assert.equal(entry.error, 'no route');
  assert.equal(entry.message, 'GET /items', 'no status in the message either');
  for (const key of ['http.response.status_code', 'backend', 'endpoint', 'protocol', 'http.response.body.size']) {
    assert.ok(!(key in entry), key);
  }
});

test('strings are JSON-escaped: a hostile path cannot break the line or add fields', () => {
  const sink = new MemorySink();
  new AccessLogger(undefined, sink).log(httpRecord({ path: '/a"b\n","http.response.status_code":999' }));
  assert.equal(sink.lines.length, 1);
  assert.ok(!sink.lines[0]?.includes('\n'));
  const entry = sink.entries()[0] as Record<string, unknown>;
  assert.equal(entry['url.path'], '/a"b\n","http.response.status_code":999');
  assert.equal(entry['http.response.status_code'], 200);
});

test('filter: a line only when the expression is true; false, an error or a non-bool drop it', () => {
  const cases: [string, boolean][] = [
    ['response.code >= 400', false],
    ['response.code == 200', true],
    ['request.headers["x-tenant"] == "acme"', true],
    ['request.headers["x-missing"] == "x"', false], // evaluation error
    ['llm.inputTokens > 10', false], // no llm part: an error, not a line
    ['"yes"', false], // not a bool
    ['request.path ==', false], // does not compile
  ];
  for (const [filter, logged] of cases) {
    const sink = new MemorySink();
    new AccessLogger({ filter }, sink).log(httpRecord());
    assert.equal(sink.lines.length, logged ? 1 : 0, filter);
  }
  const sink = new MemorySink();
  new AccessLogger({ filter: 'llm.inputTokens > 100' }, sink).log(llmRecord());
  assert.equal(sink.lines.length, 1, 'ints are CEL ints');
});

test('a filter that does not compile is reported', () => {
  const logger = new AccessLogger({ filter: 'request.path ==' }, new MemorySink());
  assert.equal(logger.problems.length, 1);
  assert.match(logger.problems[0] as string, /filter/);
});

test('attributes.remove drops default fields; unknown names are ignored', () => {
  const sink = new MemorySink();
  new AccessLogger(
    { attributes: { remove: ['client.address', 'server.address', 'duration_ms', 'no.such.field'] } },
    sink,
  ).log(httpRecord());
  const entry = sink.entries()[0] as Record<string, unknown>;
  assert.ok(!('client.address' in entry) && !('server.address' in entry) && !('duration_ms' in entry));
  assert.equal(entry['http.request.method'], 'GET');
});

test('attributes.add: CEL values as JSON, a failing expression omits its pair, a default name is replaced', () => {
  const sink = new MemorySink();
  const logger = new AccessLogger(
    {
      attributes: {
        add: [
          { name: 'tenant', expression: 'request.headers["x-tenant"]' },
          { name: 'tokens', expression: 'llm.totalTokens' },
          { name: 'slow', expression: 'llm.timeToFirstToken > duration("100ms")' },
          { name: 'ttft', expression: 'llm.timeToFirstToken' },
          { name: 'started', expression: 'request.startTime' },
          { name: 'summary', expression: '{"model": llm.requestModel, "cached": llm.cachedInputTokens}' },
          { name: 'missing', expression: 'request.headers["x-nope"]' },
          { name: 'user', expression: 'jwt.sub' },
          { name: 'broken', expression: 'request.path ==' },
          { name: 'url.path', expression: '"redacted"' },
        ],
      },
    },
    sink,
  );
  assert.equal(logger.problems.length, 1, 'the expression that does not compile is reported');
  logger.log(llmRecord());
  const entry = sink.entries()[0] as Record<string, unknown>;
  assert.equal(entry.tenant, 'acme');
  assert.equal(entry.tokens, 160);
  assert.equal(entry.slow, true);
  assert.equal(entry.ttft, '0.25s');
  assert.equal(entry.started, '2026-03-01T12:00:00.000Z');
  assert.deepEqual(entry.summary, { model: 'gpt-4o', cached: 100 });
  assert.equal(entry['url.path'], 'redacted');
  for (const key of ['missing', 'user', 'broken']) assert.ok(!(key in entry), key);
  // The replaced default is written once, where the added attributes go.
  assert.equal(sink.lines[0]?.split('"url.path"').length, 2);
});

test('an added name that was also removed is still added', () => {
  const sink = new MemorySink();
  new AccessLogger(
    {
      attributes: {
        remove: ['http.request.method'],
        add: [{ name: 'http.request.method', expression: 'request.method + "!"' }],
      },
    },
    sink,
  ).log(httpRecord());
  assert.equal((sink.entries()[0] as Record<string, unknown>)['http.request.method'], 'GET!');
});

test('JWT subject is a default field when a JWT was verified', () => {
  const sink = new MemorySink();
  new AccessLogger({ attributes: { add: [{ name: 'level.of.user', expression: 'jwt.tier' }] } }, sink).log(
    httpRecord({ jwtClaims: { sub: 'user-1', tier: 'gold' } }),
  );
  const entry = sink.entries()[0] as Record<string, unknown>;
  assert.equal(entry['jwt.sub'], 'user-1');
  assert.equal(entry['level.of.user'], 'gold');
});

test('the documented default field list is what is written', () => {
  assert.ok(DEFAULT_ACCESS_LOG_FIELDS.includes('gen_ai.usage.input_tokens'));
  const sink = new MemorySink();
  new AccessLogger(undefined, sink).log(llmRecord({ jwtClaims: { sub: 'u' }, error: 'upstream reset' }));
  const keys = Object.keys(sink.entries()[0] as object).filter(
    (key) => !['level', 'time', 'scope', 'message'].includes(key),
  );
  for (const key of keys) assert.ok(DEFAULT_ACCESS_LOG_FIELDS.includes(key), key);
});

test('server.address and server.port come from the Host header; IPv6 clients and hosts lose their brackets', () => {
  const sink = new MemorySink();
  const logger = new AccessLogger(undefined, sink);
  logger.log(httpRecord({ host: '[::1]:8080', clientAddress: '::1', clientPort: 40000, httpVersion: '2.0' }));
  logger.log(httpRecord({ host: 'api.example.com:443' }));
  const [v6, named] = sink.entries() as Record<string, unknown>[];
  assert.equal(v6?.['server.address'], '::1');
  assert.equal(v6?.['server.port'], 8080);
  assert.equal(v6?.['client.address'], '::1');
  assert.equal(v6?.['client.port'], 40000);
  assert.equal(v6?.['network.protocol.version'], '2', "OpenTelemetry's HTTP/2 version");
  assert.equal(named?.['server.address'], 'api.example.com');
  assert.equal(named?.['server.port'], 443);
});

test('the duration is a number of milliseconds, microseconds in the fraction', () => {
  const sink = new MemorySink();
  const record = httpRecord();
  record.endTime = record.startTime + 11_274_600n; // 11.2746 ms
  new AccessLogger(undefined, sink).log(record);
  assert.equal((sink.entries()[0] as Record<string, unknown>).duration_ms, 11.275);
});

test('text format: time, LEVEL, scope, the request in the message, then name=value; values quoted when they must be', () => {
  const sink = new MemorySink();
  new AccessLogger(
    { attributes: { add: [{ name: 'tenant', expression: 'request.headers["x-tenant"] + " corp"' }] } },
    sink,
    'text',
  ).log(llmRecord({ path: '/v1/chat completions' }));
  const line = sink.lines[0] as string;
  assert.match(
    line,
    /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO {2}request: POST \/v1\/chat completions 200 gateway=default\/public /,
  );
  assert.match(line, / gen_ai\.provider\.name=openai /);
  assert.match(line, / gen_ai\.usage\.input_tokens=120 /);
  assert.match(line, / duration_ms=1500 /);
  assert.match(line, / tenant="acme corp"$/, 'a value with a space is quoted');
  assert.doesNotMatch(line, /url\.path=|http\.request\.method=|status_code=/, 'the message says them already');
  assert.ok(!line.includes('\n'));
});

test('text format: a hostile value cannot add a field or a line', () => {
  const sink = new MemorySink();
  new AccessLogger(undefined, sink, 'text').log(httpRecord({ error: 'x error=none\nfake line' }));
  const line = sink.lines[0] as string;
  assert.ok(!line.includes('\n'));
  assert.match(line, / error="x error=none\\nfake line"/);
});
