import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compileExpression, type Expression, ExpressionError } from '../../../src/dataplane/cel/expression.ts';
import { celContext } from '../../../src/dataplane/telemetry/cel-context.ts';
import { RequestRecord } from '../../../src/dataplane/telemetry/request-record.ts';
import { httpRecord, llmRecord } from './fixtures.ts';

function run(source: string, record: RequestRecord): unknown {
  const expression = compileExpression(source);
  assert.ok(!(expression instanceof ExpressionError), source);
  return (expression as Expression).evaluate(celContext(record));
}

test('request variables: method, host, path, query, uri, version, lower-case headers', () => {
  const record = httpRecord();
  assert.equal(run('request.method', record), 'GET');
  assert.equal(run('request.host', record), 'app.example.com');
  assert.equal(run('request.path', record), '/items');
  assert.equal(run('request.pathAndQuery', record), '/items?page=2');
  assert.equal(run('request.uri', record), 'http://app.example.com/items?page=2');
  assert.equal(run('request.scheme', record), 'http');
  assert.equal(run('request.version', record), 'HTTP/1.1');
  assert.equal(run('request.headers["user-agent"]', record), 'test/1.0');
  assert.equal(run('has(request.headers.authorization)', record), false);
  assert.equal(run('request.startTime == timestamp("2026-03-01T12:00:00Z")', record), true);
  assert.equal(run('request.endTime - request.startTime == duration("42ms")', record), true);
  assert.equal(run('request.version', httpRecord({ httpVersion: '2.0' })), 'HTTP/2');
});

test('response variables: code is a CEL int; header names are lower-cased and repeats joined', () => {
  const record = httpRecord();
  assert.equal(run('response.code', record), 200n);
  assert.equal(run('response.code == 200 && response.code < 300', record), true);
  assert.equal(run('response.headers["content-type"]', record), 'application/json');
  assert.equal(run('response.headers["set-cookie"]', record), 'a=1, b=2');
});

test('response is absent until a status is known', () => {
  const record = httpRecord({ status: 0 });
  assert.throws(() => run('response.code', record), /response/);
});

test('source, backend and proxy variables', () => {
  const record = httpRecord();
  assert.equal(run('source.address', record), '10.0.0.7');
  assert.equal(run('source.port', record), 51234n);
  assert.equal(run('backend.name', record), 'default/web-svc');
  assert.equal(run('backend.type', record), 'service');
  assert.equal(run('backend.protocol', record), 'http');
  assert.equal(run('has(backend.name)', httpRecord({ backend: '' })), false);
  assert.equal(run('proxy.gateway.namespace + "/" + proxy.gateway.name', record), 'default/public');
  assert.equal(run('proxy.listener.name', record), 'http');
  assert.equal(run('proxy.route.name', record), 'web');
  assert.equal(run('proxy.route.rule', record), 'rule-0');
  assert.equal(run('proxy.upstreamDuration == duration("30ms")', record), true);
  assert.equal(run('proxy.requestProcessingDuration == duration("5ms")', record), true);
});

test('llm variables: ints for tokens, a duration for time to first token; empty when not an LLM request', () => {
  const record = llmRecord();
  assert.equal(run('llm.provider', record), 'alpha');
  assert.equal(run('llm.providerName', record), 'primary');
  assert.equal(run('llm.requestModel', record), 'gpt-4o');
  assert.equal(run('llm.responseModel', record), 'gpt-4o-2024-08-06');
  assert.equal(run('llm.streaming', record), true);
  assert.equal(run('llm.operation', record), 'chat');
  assert.equal(run('llm.inputTokens + llm.outputTokens == llm.totalTokens', record), true);
  assert.equal(run('llm.cachedInputTokens', record), 100n);
  assert.equal(run('has(llm.reasoningTokens)', record), false);
  assert.equal(run('llm.timeToFirstToken == duration("250ms")', record), true);
  assert.equal(run('backend.protocol', record), 'llm');
  assert.equal(run('has(llm.requestModel)', httpRecord()), false);
  assert.throws(() => run('llm.requestModel', httpRecord()));
});

test('jwt and apiKey: claims as CEL values, empty maps when not authenticated', () => {
  const record = httpRecord({ jwtClaims: { sub: 'user-1', groups: ['a', 'b'], level: 3 }, apiKey: { name: 'ci' } });
  assert.equal(run('jwt.sub', record), 'user-1');
  assert.equal(run('"b" in jwt.groups', record), true);
  assert.equal(run('jwt.level == 3', record), true);
  assert.equal(run('apiKey.name', record), 'ci');
  assert.equal(run('has(jwt.sub)', httpRecord()), false);
  assert.equal(run('has(apiKey.name)', httpRecord()), false);
});

test('a context is a view of the record when it is made: parts are built once and kept', () => {
  const record = httpRecord();
  const context = celContext(record) as { request: unknown };
  assert.equal(context.request, context.request);
  const before = new RequestRecord();
  before.method = 'GET';
  const early = celContext(before);
  assert.equal((early as { response?: unknown }).response, undefined, 'no response before a status');
});

test('extra variables sit beside the request ones and may replace one', () => {
  const record = llmRecord();
  const variables = celContext(record, { llmRequest: { model: 'gpt-4o' }, source: { address: 'override' } });
  const expression = compileExpression('llmRequest.model == llm.requestModel && source.address == "override"');
  assert.ok(!(expression instanceof ExpressionError));
  assert.equal(expression.evaluate(variables), true);
});

test('a2a variables: the call an a2a backend named, protocol a2a; empty for other requests and the card', () => {
  const record = httpRecord();
  assert.equal(run('has(a2a.method)', record), false);
  record.a2a = { method: 'SendMessage', taskId: 'task-1' };
  assert.equal(run('a2a.method', record), 'SendMessage');
  assert.equal(run('a2a.taskId', record), 'task-1');
  assert.equal(run('backend.protocol', record), 'a2a');
  const card = httpRecord();
  card.a2a = {};
  assert.equal(run('has(a2a.method)', card), false);
  assert.equal(run('backend.protocol', card), 'a2a');
});
