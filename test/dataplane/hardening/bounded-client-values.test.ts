// Issue 17 #6: a value a client chose (a model name, a path, a tool, a JWT subject, an error it
// provoked) cannot make an access log line, a span attribute or a metric label unbounded.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AccessLogger, MAX_ATTRIBUTE_CHARS, MAX_FIELD_CHARS } from '../../../src/dataplane/telemetry/access-log.ts';
import { DataPlaneMetrics, MAX_LABEL_VALUE_LENGTH } from '../../../src/dataplane/telemetry/metrics.ts';
import { lastAccessLogLine } from '../../helpers/gateway.ts';
import { type LlmGateway, startLlmGateway } from '../../helpers/llm-gateway.ts';
import { httpRecord, llmRecord } from '../telemetry/fixtures.ts';

const HUGE = 'm'.repeat(1_000_000);

describe('a 1,000,000-character model name through gw', () => {
  let llm: LlmGateway;

  before(async () => {
    llm = await startLlmGateway('');
  });
  after(() => llm?.stop());

  it('is written to the access log cut to the field bound, marked', async () => {
    const base = new URL(llm.client.baseURL).origin;
    const response = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer client-key' },
      body: JSON.stringify({ model: HUGE, messages: [{ role: 'user', content: 'hi' }] }),
    });
    await response.arrayBuffer();
    const entry = await lastAccessLogLine(llm.gw, '/v1/chat/completions');
    const line = llm.gw.accessLog.at(-1)!;
    assert.ok(line.length < 8 * 1024, `the line has ${line.length} characters`);
    assert.equal(entry['gen_ai.request.model'], `${'m'.repeat(MAX_FIELD_CHARS)}…`);
  });
});

describe('the access log and span attributes', () => {
  it('cut every client-chosen default field', () => {
    const record = llmRecord({ path: `/${'p'.repeat(50_000)}`, host: 'h'.repeat(50_000), error: 'e'.repeat(50_000) });
    record.jwtClaims = { sub: 's'.repeat(50_000) };
    record.mcp = {
      method: 'tools/call',
      tool: { name: 't'.repeat(50_000), target: 'x' },
      error: { code: -32000, message: 'q'.repeat(50_000) },
    };
    const lines: string[] = [];
    const entry = JSON.parse(new AccessLogger(undefined, { write: (line) => lines.push(line) }).format(record)!);
    for (const field of ['url.path', 'server.address', 'error', 'jwt.sub', 'gen_ai.tool.name', 'mcp.error.message'])
      assert.equal((entry[field] as string).length, MAX_FIELD_CHARS + 1, field);
  });

  it('cut an added attribute, in the line and as a span attribute', () => {
    const logger = new AccessLogger(
      {
        attributes: {
          add: [
            { name: 'req.path', expression: 'request.path' },
            { name: 'headers', expression: 'request.headers' },
          ],
        },
      },
      { write: () => {} },
    );
    const record = httpRecord({ path: `/${'p'.repeat(100_000)}`, requestHeaders: { 'x-big': 'b'.repeat(100_000) } });
    const entry = JSON.parse(logger.format(record)!) as Record<string, unknown>;
    assert.equal((entry['req.path'] as string).length, MAX_ATTRIBUTE_CHARS + 1);
    // A map over the bound is written as its cut JSON text.
    assert.equal(typeof entry.headers, 'string');
    assert.ok((entry.headers as string).length <= MAX_ATTRIBUTE_CHARS + 1);
    const attributes = logger.attributes(record)!;
    assert.equal((attributes['req.path'] as string).length, MAX_ATTRIBUTE_CHARS + 1);
    assert.ok((attributes.headers as string).length <= MAX_ATTRIBUTE_CHARS + 1);
  });

  it('never split a surrogate pair when cutting', () => {
    const record = httpRecord({ path: `/${'p'.repeat(MAX_FIELD_CHARS - 2)}😀tail` });
    const entry = JSON.parse(new AccessLogger(undefined, { write: () => {} }).format(record)!) as Record<
      string,
      string
    >;
    assert.ok(!/[\ud800-\udbff]…$/.test(entry['url.path']!), 'no lone high surrogate before the mark');
  });
});

describe('metric labels', () => {
  it('are cut to the label bound whatever the model name', () => {
    const metrics = new DataPlaneMetrics();
    const record = llmRecord();
    record.llm!.requestModel = HUGE;
    metrics.record(record);
    const text = metrics.render();
    assert.ok(text.length < 64 * 1024, `${text.length} characters`);
    assert.ok(text.includes(`gen_ai_request_model="${'m'.repeat(MAX_LABEL_VALUE_LENGTH)}…"`));
  });
});
