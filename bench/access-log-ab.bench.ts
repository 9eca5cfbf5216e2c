// A/B benchmark of the access log line's construction (AccessLogger.format, no I/O): this tree's
// against another checkout's (e.g. `git archive main | tar -x -C /tmp/base`, node_modules linked),
// both loaded in one process, in rounds that alternate so that a busy machine slows both alike.
// Times are this process's CPU time (user + system), not wall time: on a shared machine the time
// spent descheduled is not the code's. Medians of 9 rounds of 200,000 lines each.
// Run: ./node_modules/.bin/node bench/access-log-ab.bench.ts /tmp/base
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AccessLogger } from '../src/dataplane/telemetry/access-log.ts';
import type { LlmRecord, RequestRecord } from '../src/dataplane/telemetry/request-record.ts';

type AccessLogModule = typeof import('../src/dataplane/telemetry/access-log.ts');
type RecordModule = typeof import('../src/dataplane/telemetry/request-record.ts');

const other = process.argv[2];
if (!other) {
  console.error('usage: node bench/access-log-ab.bench.ts OTHER_CHECKOUT');
  process.exit(2);
}

const MS = 1_000_000n;
const HEADERS = { host: 'api.example.com', 'user-agent': 'bench/1.0', 'x-tenant': 'acme', accept: '*/*' };
const ROUNDS = 9;
const LINES = 200_000;

/** The bench's requests (as bench/telemetry.bench.ts fills them) with one tree's classes. */
function records(module: RecordModule, llm: boolean): RequestRecord[] {
  return Array.from({ length: 1000 }, (_, i) => {
    const record = new module.RequestRecord(1_000n * MS, 1_767_225_600_000);
    Object.assign(record, {
      gateway: 'default/public',
      listener: 'http',
      route: `default/route-${i % 50}`,
      rule: 'rule-0',
      method: llm ? 'POST' : 'GET',
      host: 'api.example.com',
      path: llm ? '/v1/chat/completions' : '/items',
      httpVersion: '1.1',
      requestHeaders: HEADERS,
      clientAddress: '10.0.0.7',
      clientPort: 40_000 + (i % 1000),
      backend: llm ? 'default/openai' : 'default/web',
      backendType: llm ? 'ai' : 'service',
      upstreamHost: '10.1.0.3:8080',
      status: i % 50 === 0 ? 503 : 200,
      bytesIn: llm ? 300 : 0,
      bytesOut: 1024,
      endTime: 1_021n * MS,
    });
    if (llm) {
      const part: LlmRecord = new module.LlmRecord();
      // Both fields: a tree without one of them ignores it.
      Object.assign(part, { providerFamily: 'alpha', genAiProvider: 'openai', providerName: 'primary' });
      part.requestModel = 'gpt-4o';
      part.responseModel = 'gpt-4o-2024-08-06';
      part.streaming = true;
      part.usage = { inputTokens: 120 + (i % 7), outputTokens: 40, totalTokens: 160 + (i % 7) };
      part.firstTokenTime = 1_008n * MS;
      record.llm = part;
    }
    return record;
  });
}

async function load(root: string) {
  const url = (path: string) => pathToFileURL(resolve(root, path)).href;
  return {
    log: (await import(url('src/dataplane/telemetry/access-log.ts'))) as AccessLogModule,
    record: (await import(url('src/dataplane/telemetry/request-record.ts'))) as RecordModule,
  };
}

const here = await load(new URL('..', import.meta.url).pathname);
const there = await load(other);
const sink = { write: () => {} };
const variants: [string, AccessLogger, RecordModule][] = [
  ['other, json', new there.log.AccessLogger(undefined, sink), there.record],
  ['this, json', new here.log.AccessLogger(undefined, sink), here.record],
  ['this, text', new here.log.AccessLogger(undefined, sink, 'text'), here.record],
];
const times = new Map<string, number[]>();
const chars = new Map<string, number>();
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, logger, module] of variants) {
    for (const llm of [false, true]) {
      const key = `${name}, ${llm ? 'LLM' : 'HTTP'} request`;
      const batch = records(module, llm);
      let total = 0;
      const start = process.cpuUsage();
      for (let i = 0; i < LINES; i++) total += logger.format(batch[i % batch.length] as RequestRecord)?.length ?? 0;
      const used = process.cpuUsage(start);
      times.set(key, [...(times.get(key) ?? []), ((used.user + used.system) * 1000) / LINES]);
      chars.set(key, total / LINES);
    }
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
console.log('| line | ns/line (median) | characters |\n|---|---|---|');
for (const [key, values] of times)
  console.log(`| ${key} | ${median(values).toFixed(0)} | ${chars.get(key)?.toFixed(0)} |`);
