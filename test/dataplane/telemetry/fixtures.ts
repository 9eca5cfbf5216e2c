// Requests as the proxy would have recorded them, with fixed clocks so durations are exact.
import { LlmRecord, RequestRecord } from '../../../src/dataplane/telemetry/request-record.ts';

const MS = 1_000_000n;
/** A wall-clock start far from any test's "now". */
export const STARTED_AT = Date.parse('2026-03-01T12:00:00.000Z');

/** A completed GET of a plain HTTP backend: 42 ms in all, 30 ms of it upstream. */
export function httpRecord(overrides: Partial<RequestRecord> = {}): RequestRecord {
  const record = new RequestRecord(1_000n * MS, STARTED_AT);
  record.gateway = 'default/public';
  record.listener = 'http';
  record.route = 'default/web';
  record.rule = 'rule-0';
  record.method = 'GET';
  record.host = 'app.example.com';
  record.path = '/items';
  record.query = 'page=2';
  record.httpVersion = '1.1';
  record.requestHeaders = { host: 'app.example.com', 'user-agent': 'test/1.0', 'x-tenant': 'acme' };
  record.clientAddress = '10.0.0.7';
  record.clientPort = 51234;
  record.backend = 'default/web-svc';
  record.backendType = 'service';
  record.upstreamHost = '10.1.0.3:8080';
  record.upstreamStartTime = 1_005n * MS;
  record.upstreamFirstByteTime = 1_020n * MS;
  record.upstreamEndTime = 1_035n * MS;
  record.status = 200;
  record.responseHeaders = { 'Content-Type': 'application/json', 'set-cookie': ['a=1', 'b=2'] };
  record.bytesOut = 512;
  record.endTime = 1_042n * MS;
  Object.assign(record, overrides);
  return record;
}

/** A completed streamed chat completion: 1.5 s in all, first token after 250 ms. */
export function llmRecord(overrides: Partial<RequestRecord> = {}): RequestRecord {
  const record = httpRecord({
    route: 'default/chat',
    method: 'POST',
    path: '/v1/chat/completions',
    query: '',
    backend: 'default/openai',
    backendType: 'ai',
    upstreamHost: 'api.alpha.example:443',
    bytesIn: 300,
    bytesOut: 2048,
    ...overrides,
  });
  record.endTime = record.startTime + 1_500n * MS;
  record.upstreamEndTime = record.startTime + 1_495n * MS;
  const llm = new LlmRecord();
  llm.providerFamily = 'alpha';
  llm.genAiProvider = 'openai';
  llm.providerName = 'primary';
  llm.requestModel = 'gpt-4o';
  llm.responseModel = 'gpt-4o-2024-08-06';
  llm.streaming = true;
  llm.usage = { inputTokens: 120, outputTokens: 40, totalTokens: 160, cachedInputTokens: 100 };
  llm.firstTokenTime = record.startTime + 250n * MS;
  record.llm = llm;
  return record;
}
