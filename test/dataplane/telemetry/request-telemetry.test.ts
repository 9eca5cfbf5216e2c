import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LogSink } from '../../../src/dataplane/telemetry/log-sink.ts';
import { BufferedLogSink } from '../../../src/dataplane/telemetry/log-sink.ts';
import { RequestRecord } from '../../../src/dataplane/telemetry/request-record.ts';
import { Telemetry } from '../../../src/dataplane/telemetry/request-telemetry.ts';
import { httpRecord, llmRecord } from './fixtures.ts';
import { parseExposition, value } from './prometheus-text.ts';

class MemorySink implements LogSink {
  lines: string[] = [];
  write(line: string): void {
    this.lines.push(line);
  }
}

test('finish() records the metrics and writes the access log line of a Frontend', () => {
  const sink = new MemorySink();
  const telemetry = new Telemetry({ sink });
  const frontend = telemetry.forFrontend({
    accessLog: {
      filter: 'response.code >= 400 || has(llm.requestModel)',
      attributes: { add: [{ name: 'tenant', expression: 'request.headers["x-tenant"]' }] },
    },
    metrics: { attributes: { add: [{ name: 'tenant', expression: 'request.headers["x-tenant"]' }] } },
  });
  assert.deepEqual(frontend.problems, []);
  frontend.finish(httpRecord()); // 200, not logged
  frontend.finish(httpRecord({ status: 502 }));
  frontend.finish(llmRecord());
  assert.equal(sink.lines.length, 2);
  assert.equal(JSON.parse(sink.lines[0] as string)['http.response.status_code'], 502);
  assert.equal(JSON.parse(sink.lines[1] as string).tenant, 'acme');
  const text = parseExposition(telemetry.metrics.render());
  assert.equal(value(text, 'gw_requests_total', { route: 'default/web', status: '200', tenant: 'acme' }), 1);
  assert.equal(value(text, 'gw_requests_total', { route: 'default/chat', tenant: 'acme' }), 1);
});

test('without a Frontend policy every request is logged with the default fields', () => {
  const sink = new MemorySink();
  const frontend = new Telemetry({ sink }).forFrontend(undefined);
  frontend.finish(httpRecord());
  assert.equal(sink.lines.length, 1);
});

test('the access log can be turned off; metrics are still recorded', () => {
  const sink = new MemorySink();
  const telemetry = new Telemetry({ sink, accessLog: false });
  telemetry.forFrontend(undefined).finish(httpRecord());
  assert.equal(sink.lines.length, 0);
  assert.equal(value(parseExposition(telemetry.metrics.render()), 'gw_requests_total'), 1);
});

test('finish() sets the end time of a record the proxy left open', () => {
  const record = new RequestRecord();
  record.method = 'GET';
  record.status = 204;
  new Telemetry({ sink: new MemorySink() }).forFrontend(undefined).finish(record);
  assert.ok(record.endTime >= record.startTime);
});

test('a buffered sink exports its dropped-line counter', () => {
  const sink = new BufferedLogSink((_chunk, _done) => {}, { maxBufferedChars: 10 });
  const telemetry = new Telemetry({ sink });
  const frontend = telemetry.forFrontend(undefined);
  frontend.finish(httpRecord());
  frontend.finish(httpRecord());
  const text = parseExposition(telemetry.metrics.render());
  assert.equal(value(text, 'gw_access_log_dropped_lines_total'), 2);
});
