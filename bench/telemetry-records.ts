// The requests the telemetry benchmarks record: filled as the proxy fills them, through to their
// end, with fixed clock values (no clock reads). The classes are passed in so that
// bench/access-log-ab.bench.ts can build the same requests with another checkout's classes.
import type * as RecordClasses from '../src/dataplane/telemetry/request-record.ts';
import type { RequestRecord } from '../src/dataplane/telemetry/request-record.ts';

export type RecordModule = typeof RecordClasses;

const ROUTES = Array.from({ length: 50 }, (_, i) => `default/route-${i}`);
const HEADERS = { host: 'api.example.com', 'user-agent': 'bench/1.0', 'x-tenant': 'acme', accept: '*/*' };
const MS = 1_000_000n;

/** Request `i` of a benchmark: an LLM chat completion or a plain HTTP GET. */
export function makeRecord(classes: RecordModule, i: number, llm: boolean): RequestRecord {
  const record = new classes.RequestRecord(1_000n * MS, 1_767_225_600_000);
  record.gateway = 'default/public';
  record.listener = 'http';
  record.route = ROUTES[i % ROUTES.length] as string;
  record.rule = 'rule-0';
  record.method = llm ? 'POST' : 'GET';
  record.host = 'api.example.com';
  record.path = llm ? '/v1/chat/completions' : '/items';
  record.httpVersion = '1.1';
  record.requestHeaders = HEADERS;
  record.clientAddress = '10.0.0.7';
  record.clientPort = 40_000 + (i % 1000);
  record.backend = llm ? 'default/openai' : 'default/web';
  record.backendType = llm ? 'ai' : 'service';
  record.upstreamHost = '10.1.0.3:8080';
  record.upstreamStartTime = 1_001n * MS;
  record.upstreamFirstByteTime = 1_010n * MS;
  record.upstreamEndTime = 1_020n * MS;
  record.status = i % 50 === 0 ? 503 : 200;
  record.bytesIn = llm ? 300 : 0;
  record.bytesOut = 1024;
  record.endTime = 1_021n * MS;
  if (llm) {
    const part = new classes.LlmRecord();
    part.providerFamily = 'alpha';
    part.genAiProvider = 'openai';
    part.providerName = 'primary';
    part.requestModel = 'gpt-4o';
    part.responseModel = 'gpt-4o-2024-08-06';
    part.streaming = true;
    part.usage = { inputTokens: 120 + (i % 7), outputTokens: 40, totalTokens: 160 + (i % 7) };
    part.firstTokenTime = 1_008n * MS;
    record.llm = part;
  }
  return record;
}
