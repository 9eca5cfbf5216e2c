// Issue 17 #8: a 5xx of gw's own tells the client nothing of the configuration. The client gets a
// generic message and a request id (body and x-request-id); the detail is in the access log under
// `request.id`, in gw's log (once per window, with a count of the requests that failed the same
// way in between) and, for a refused object, in its status.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { FAILURE_LOG_WINDOW_MS, FailureLog, MAX_LINES_PER_WINDOW } from '../../../src/dataplane/server/failure-log.ts';
import { RequestRecord } from '../../../src/dataplane/telemetry/request-record.ts';
import { runGw } from '../../helpers/cli.ts';
import {
  freePort,
  gatewayYaml,
  llmRouteYaml,
  loggedFailure,
  ownFailureDetail,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { until } from '../../helpers/until.ts';

describe('a GwBackend whose credential Secret does not exist', () => {
  let gw: TestGateway;
  let port: number;

  before(async () => {
    port = await freePort();
    // The backend's key is read from a Secret that is not there: every request to it is refused.
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: leaky}
spec:
  ai: {provider: {host: 127.0.0.1, port: 9, alpha: {}}}
  policies: {auth: {secretRef: {name: provider-credentials}}}
---
${llmRouteYaml(['leaky'])}`,
    });
  });

  after(() => gw?.stop());

  it('answers the OpenAI SDK a 500 with a request id and nothing of the configuration', async () => {
    const client = new OpenAI({ apiKey: 'k', baseURL: `http://127.0.0.1:${port}/leaky/v1`, maxRetries: 0 });
    const error = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
      .then(
        () => assert.fail('expected a 500'),
        (caught: unknown) => caught,
      );
    assert.ok(error instanceof OpenAI.APIError);
    assert.equal(error.status, 500);
    const id = error.headers?.get('x-request-id');
    assert.match(id ?? '', /^[0-9a-f-]{36}$/);
    assert.match(error.message, new RegExp(`^500 gw could not serve this request.*${id}`));
    for (const leak of ['Secret', 'provider-credentials', 'default/', 'secretRef', 'GwBackend'])
      assert.ok(!error.message.includes(leak), `the client must not read ${leak}: ${error.message}`);
    // The operator finds the reason under the id, with the namespace written once.
    const detail = await loggedFailure(gw, id!);
    assert.match(detail, /GwBackend default\/leaky spec\.ai\.provider\.policies\.auth\.secretRef\.name/);
    assert.match(detail, /Secret default\/provider-credentials was not found/);
    assert.ok(!detail.includes('default/default'), detail);
    assert.ok(
      gw.logs.some((line) => line.includes(`request ${id} answered 500:`) && line.includes('provider-credentials')),
      gw.logs.join('\n'),
    );
  });

  it('a plain HTTP client reads the same: text with the id, the detail only in the logs', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/leaky/v1/models`);
    assert.equal(response.status, 500);
    assert.match(await ownFailureDetail(gw, response), /provider-credentials was not found/);
  });

  it('gw logs a failure that repeats once, not once per request', async () => {
    const before = gw.logs.filter((line) => line.includes('answered 500')).length;
    for (let i = 0; i < 20; i++) await (await fetch(`http://127.0.0.1:${port}/leaky/v1/models`)).arrayBuffer();
    // Each request is in the access log under its own id ...
    await until(() => gw.accessLog.length >= 22, 1000);
    const ids = gw.accessLog.map((line) => (JSON.parse(line) as Record<string, unknown>)['request.id']);
    assert.equal(new Set(ids.filter(Boolean)).size, ids.filter(Boolean).length, 'ids are unique');
    // ... and gw's own log did not grow with them (the window is a minute).
    assert.equal(gw.logs.filter((line) => line.includes('answered 500')).length, before);
  });

  it('the status names the field', async () => {
    const status = await runGw(['status', '-f', gw.dir]);
    assert.match(
      status.stdout,
      /GwBackend default\/leaky[\s\S]*ResolvedRefs=False \(RefNotFound\): spec\.policies\.auth\.secretRef/,
    );
  });
});

describe('the failure log window', () => {
  const failed = (detail: string, gateway = 'default/ai') => {
    const record = new RequestRecord();
    record.gateway = gateway;
    record.status = 500;
    record.error = detail;
    record.requestId = `id-${Math.random()}`;
    return record;
  };

  it('logs a failure once per window, then says how many failed the same way in between', () => {
    let now = 1_000_000;
    const lines: string[] = [];
    const log = new FailureLog(
      (line) => lines.push(line),
      () => now,
    );
    log.report(failed('backend refused'));
    log.report(failed('backend refused'));
    log.report(failed('another reason'));
    assert.equal(lines.length, 2);
    now += FAILURE_LOG_WINDOW_MS - 1;
    log.report(failed('backend refused'));
    assert.equal(lines.length, 2, 'still inside the window');
    now += 1;
    log.report(failed('backend refused'));
    assert.equal(lines.length, 3);
    assert.match(lines[2]!, /answered 500: backend refused \(and 2 more like it since the last line\)$/);
  });

  it('writes at most MAX_LINES_PER_WINDOW lines a window, however many reasons, and counts the rest', () => {
    let now = 0;
    const lines: string[] = [];
    const log = new FailureLog(
      (line) => lines.push(line),
      () => now,
    );
    for (let i = 0; i < MAX_LINES_PER_WINDOW + 50; i++) log.report(failed(`reason ${i}`));
    assert.equal(lines.length, MAX_LINES_PER_WINDOW);
    now += FAILURE_LOG_WINDOW_MS;
    log.report(failed('one more'));
    assert.match(lines.at(-1)!, /one more \(50 other failures were not logged: too many in a minute\)$/);
  });

  it('cuts a long detail', () => {
    const lines: string[] = [];
    new FailureLog((line) => lines.push(line)).report(failed('x'.repeat(100_000)));
    assert.ok(lines[0]!.length < 1200, `${lines[0]!.length} characters`);
    assert.ok(lines[0]!.endsWith('…'));
  });
});
