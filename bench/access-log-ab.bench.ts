// A/B benchmark of the access log line's construction (AccessLogger.format, no I/O): this tree's
// against another checkout's (e.g. `git archive main | tar -x -C /tmp/base`, node_modules linked),
// both loaded in one process, in rounds that alternate so that a busy machine slows both alike.
// Times are this process's CPU time (user + system), not wall time: on a shared machine the time
// spent descheduled is not the code's. Medians of 9 rounds of 200,000 lines each.
// Run: ./node_modules/.bin/node bench/access-log-ab.bench.ts /tmp/base
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AccessLogger } from '../src/dataplane/telemetry/access-log.ts';
import type { RequestRecord } from '../src/dataplane/telemetry/request-record.ts';
import { makeRecord, type RecordModule } from './telemetry-records.ts';

type AccessLogModule = typeof import('../src/dataplane/telemetry/access-log.ts');

const other = process.argv[2];
if (!other) {
  console.error('usage: node bench/access-log-ab.bench.ts OTHER_CHECKOUT');
  process.exit(2);
}

const ROUNDS = 9;
const LINES = 200_000;

/** The telemetry benchmark's requests, built with one tree's classes. */
function records(module: RecordModule, llm: boolean): RequestRecord[] {
  return Array.from({ length: 1000 }, (_, i) => makeRecord(module, i, llm));
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
