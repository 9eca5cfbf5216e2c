// Benchmark: what telemetry costs per request on the data plane's hot path. A request record is
// created and filled as the proxy would, then finished: metrics recorded and the access log line
// (JSON; one row in the text format too) written through the buffered sink to /dev/null (fs.write on the thread pool, as for
// standard output). The loop yields to the event loop every 100 requests so the sink's batches
// are written and counted. Also prints the metrics alone next to prom-client recording the same
// observations, which is why src/dataplane/telemetry/metrics.ts is hand-written.
// Run: ./node_modules/.bin/node bench/telemetry.bench.ts
import { closeSync, openSync } from 'node:fs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import client from 'prom-client';
import type { Frontend } from '../src/api/types/frontend.ts';
import { AccessLogger } from '../src/dataplane/telemetry/access-log.ts';
import { BufferedLogSink, fileDescriptorWriter } from '../src/dataplane/telemetry/log-sink.ts';
import {
  DataPlaneMetrics,
  GEN_AI_DURATION_BUCKETS,
  GEN_AI_TOKEN_BUCKETS,
  GEN_AI_TTFT_BUCKETS,
  HTTP_DURATION_BUCKETS,
} from '../src/dataplane/telemetry/metrics.ts';
import type { RequestRecord } from '../src/dataplane/telemetry/request-record.ts';
import * as recordClasses from '../src/dataplane/telemetry/request-record.ts';
import { Telemetry } from '../src/dataplane/telemetry/request-telemetry.ts';
import { makeRecord as makeRecordOf } from './telemetry-records.ts';

const makeRecord = (i: number, llm: boolean): RequestRecord => makeRecordOf(recordClasses, i, llm);

async function nsPerRequest(run: (i: number) => void, iterations: number): Promise<number> {
  for (let i = 0; i < 50_000; i++) {
    run(i);
    if (i % 100 === 99) await yieldToLoop();
  }
  const runs: number[] = [];
  for (let round = 0; round < 5; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) {
      run(i);
      if (i % 100 === 99) await yieldToLoop();
    }
    runs.push(Number(process.hrtime.bigint() - start) / iterations);
  }
  return runs.sort((a, b) => a - b)[2] as number;
}

// prom-client recording the same observations as DataPlaneMetrics.record.
function promClientRecorder(): (record: RequestRecord) => void {
  const registry = new client.Registry();
  const httpLabels = ['gateway', 'listener', 'route', 'backend', 'method', 'status'];
  const genAiLabels = [
    'gateway',
    'listener',
    'route',
    'gen_ai_operation_name',
    'gen_ai_provider_name',
    'gen_ai_request_model',
    'gen_ai_response_model',
  ];
  const registers = [registry];
  const requests = new client.Counter({ name: 'requests', help: '-', labelNames: httpLabels, registers });
  const duration = new client.Histogram({
    name: 'duration',
    help: '-',
    labelNames: httpLabels,
    buckets: [...HTTP_DURATION_BUCKETS],
    registers,
  });
  const upstream = new client.Histogram({
    name: 'upstream',
    help: '-',
    labelNames: httpLabels,
    buckets: [...HTTP_DURATION_BUCKETS],
    registers,
  });
  const tokens = new client.Histogram({
    name: 'tokens',
    help: '-',
    labelNames: [...genAiLabels, 'gen_ai_token_type'],
    buckets: [...GEN_AI_TOKEN_BUCKETS],
    registers,
  });
  const genAiDuration = new client.Histogram({
    name: 'gen_ai_duration',
    help: '-',
    labelNames: genAiLabels,
    buckets: [...GEN_AI_DURATION_BUCKETS],
    registers,
  });
  const ttft = new client.Histogram({
    name: 'ttft',
    help: '-',
    labelNames: genAiLabels,
    buckets: [...GEN_AI_TTFT_BUCKETS],
    registers,
  });
  return (record) => {
    const http = {
      gateway: record.gateway,
      listener: record.listener,
      route: record.route,
      backend: record.backend,
      method: record.method,
      status: record.status,
    };
    const seconds = record.durationSeconds();
    requests.inc(http);
    duration.observe(http, seconds);
    upstream.observe(http, record.upstreamSeconds());
    const llm = record.llm;
    if (!llm?.usage) return;
    const genAi = {
      gateway: record.gateway,
      listener: record.listener,
      route: record.route,
      gen_ai_operation_name: llm.operation,
      gen_ai_provider_name: llm.genAiProvider,
      gen_ai_request_model: llm.requestModel,
      gen_ai_response_model: llm.responseModel,
    };
    tokens.observe({ ...genAi, gen_ai_token_type: 'input' }, llm.usage.inputTokens);
    tokens.observe({ ...genAi, gen_ai_token_type: 'output' }, llm.usage.outputTokens);
    genAiDuration.observe(genAi, seconds);
    ttft.observe(genAi, record.timeToFirstTokenSeconds());
  };
}

const CONFIGURED: Frontend = {
  accessLog: {
    filter: 'response.code >= 200',
    attributes: {
      remove: ['client.address', 'client.port'],
      add: [
        { name: 'tenant', expression: 'request.headers["x-tenant"]' },
        { name: 'user_agent', expression: 'request.headers["user-agent"]' },
      ],
    },
  },
  metrics: { attributes: { add: [{ name: 'tenant', expression: 'request.headers["x-tenant"]' }] } },
};

const devNull = openSync('/dev/null', 'w');
const ITERATIONS = 200_000;
const http = Array.from({ length: 1000 }, (_, i) => makeRecord(i, false));
const llm = Array.from({ length: 1000 }, (_, i) => makeRecord(i, true));
const lineSink = new BufferedLogSink(fileDescriptorWriter(devNull));
const sink = new BufferedLogSink(fileDescriptorWriter(devNull));
const pick = (records: RequestRecord[], i: number) => records[i % records.length] as RequestRecord;

const rows: [string, number, string][] = [];
// Lines the sinks dropped during one measurement (a dropped line skips its share of the write).
let droppedBefore = 0;
const droppedSince = (): string => {
  const now = lineSink.dropped + sink.dropped;
  const text = String(now - droppedBefore);
  droppedBefore = now;
  return text;
};
rows.push([
  'create and fill a RequestRecord (LLM request)',
  await nsPerRequest((i) => makeRecord(i, true), ITERATIONS),
  droppedSince(),
]);

const metrics = new DataPlaneMetrics();
const prom = promClientRecorder();
rows.push([
  'metrics, HTTP request (3 observations), gw',
  await nsPerRequest((i) => metrics.record(pick(http, i)), ITERATIONS),
  droppedSince(),
]);
rows.push([
  'metrics, HTTP request (3 observations), prom-client',
  await nsPerRequest((i) => prom(pick(http, i)), ITERATIONS),
  droppedSince(),
]);
rows.push([
  'metrics, LLM request (7 observations), gw',
  await nsPerRequest((i) => metrics.record(pick(llm, i)), ITERATIONS),
  droppedSince(),
]);
rows.push([
  'metrics, LLM request (7 observations), prom-client',
  await nsPerRequest((i) => prom(pick(llm, i)), ITERATIONS),
  droppedSince(),
]);

const defaultLog = new AccessLogger(undefined, lineSink);
rows.push([
  'access log line, HTTP request, default fields',
  await nsPerRequest((i) => defaultLog.log(pick(http, i)), ITERATIONS),
  droppedSince(),
]);
rows.push([
  'access log line, LLM request, default fields',
  await nsPerRequest((i) => defaultLog.log(pick(llm, i)), ITERATIONS),
  droppedSince(),
]);
const textLog = new AccessLogger(undefined, lineSink, 'text');
rows.push([
  'access log line, LLM request, default fields, --log-format text',
  await nsPerRequest((i) => textLog.log(pick(llm, i)), ITERATIONS),
  droppedSince(),
]);

const telemetry = new Telemetry({ sink });
const plain = telemetry.forFrontend(undefined);
const configured = telemetry.forFrontend(CONFIGURED);
rows.push([
  'whole request: record + metrics + log line (HTTP, no Frontend policy)',
  await nsPerRequest((i) => plain.finish(makeRecord(i, false)), ITERATIONS),
  droppedSince(),
]);
rows.push([
  'whole request: record + metrics + log line (LLM, no Frontend policy)',
  await nsPerRequest((i) => plain.finish(makeRecord(i, true)), ITERATIONS),
  droppedSince(),
]);
rows.push([
  'whole request: record + metrics + log line (LLM, filter + 2 attributes + 1 label in CEL)',
  await nsPerRequest((i) => configured.finish(makeRecord(i, true)), ITERATIONS),
  droppedSince(),
]);
await lineSink.drained();
await sink.drained();
closeSync(devNull);

console.log('| what | ns/request | log lines dropped |');
console.log('|---|---|---|');
for (const [name, ns, dropped] of rows) console.log(`| ${name} | ${ns.toFixed(0)} | ${dropped} |`);
