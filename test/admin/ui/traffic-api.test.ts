// The web UI's live traffic over HTTP (docs/ui.md "Traffic"): gw in front of the scripted
// provider (11 input and 7 output tokens an answer) with a model catalog pricing the model, the UI
// on its admin listener. Nobody watching, requests cost the tap nothing (counted: no record
// captured, no ring allocated, nothing delivered); a subscriber gets each request as it completes
// with the access log's fields (route, status, model, tokens, cost); the recent list filters;
// a subscriber that stops reading is dropped, the number of subscribers is capped; the time
// series counts requests, errors, tokens and cost; a recorded request's CEL variables come with
// credentials redacted.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  MAX_SUBSCRIBER_BUFFER_BYTES,
  MAX_SUBSCRIBERS,
  WATCH_LEASE_MS,
} from '../../../src/admin/ui/traffic/traffic-hub.ts';
import { RequestRecord } from '../../../src/dataplane/telemetry/request-record.ts';
import { MAX_ENTRIES_PER_FLUSH } from '../../../src/dataplane/telemetry/traffic-forwarder.ts';
import {
  aiBackendYaml,
  catalogConfigMapYaml,
  freePort,
  llmRouteYaml,
  pricedGatewayYaml,
} from '../../helpers/gateway.ts';
import { answeringModel, type ScriptedProvider, startScriptedProvider } from '../../helpers/scripted-provider.ts';
import { until } from '../../helpers/until.ts';
import { followEvents, type LiveUi, startLiveUi, uiApi } from './live-helpers.ts';

const PRICES = { providers: { openai: { models: { 'gpt-4o': { rates: { input: '2.5', output: '10' } } } } } };

describe('live traffic on the admin listener', () => {
  let provider: ScriptedProvider;
  let ui: LiveUi;
  let port: number;

  before(async () => {
    provider = await startScriptedProvider();
    port = await freePort();
    ui = await startLiveUi(
      {
        'gateway.yaml': [
          pricedGatewayYaml(port),
          aiBackendYaml('openai', provider.port, 'alpha: {}', 'sk-upstream', undefined),
          llmRouteYaml(['openai']),
        ].join(''),
        'prices.yaml': catalogConfigMapYaml('prices', PRICES),
      },
      100,
    );
  });

  after(async () => {
    await ui?.stop();
    await provider?.close();
  });

  const chat = (model = 'gpt-4o', headers: Record<string, string> = {}) =>
    fetch(`http://127.0.0.1:${port}/openai/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer client-secret-key', ...headers },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }] }),
    }).then(async (response) => {
      await response.text();
      return response.status;
    });

  it('captures nothing while nobody watches: no record, no ring, nothing delivered', async () => {
    const tap = ui.gw.telemetry.traffic;
    for (let i = 0; i < 20; i++) assert.equal(await chat(), 200);
    await fetch(`http://127.0.0.1:${port}/nowhere`).then((r) => r.text());
    assert.equal(tap.watching, false);
    assert.equal(tap.captured, 0);
    assert.equal(tap.allocated, false);
    assert.equal(ui.live.traffic.received, 0);
  });

  it('streams each completed request to a subscriber, with route, status, model, tokens and cost', async () => {
    const follower = await followEvents(`${ui.base}/ui/api/traffic/events`);
    try {
      assert.equal(follower.response.statusCode, 200);
      assert.match(String(follower.response.headers['content-type']), /^text\/event-stream/);
      assert.ok(await until(() => ui.gw.telemetry.traffic.watching, 2000));
      assert.equal(await chat(), 200);
      assert.equal(await chat(), 200);
      const [first] = await follower.waitFor('request', 2);
      const fields = first.fields;
      assert.equal(fields.route, 'default/llm');
      assert.equal(fields.backend, 'GwBackend default/openai');
      assert.equal(fields['http.response.status_code'], 200);
      assert.equal(fields['gen_ai.request.model'], 'gpt-4o');
      assert.equal(fields['gen_ai.response.model'], answeringModel('gpt-4o'));
      assert.equal(fields['gen_ai.usage.input_tokens'], 11);
      assert.equal(fields['gen_ai.usage.output_tokens'], 7);
      // (11 × 2.5 + 7 × 10) / 1,000,000 USD
      assert.ok(Math.abs((fields['gw.ai.usage.cost.total'] as number) - 0.0000975) < 1e-12);
      assert.equal(typeof fields.duration_ms, 'number');
      assert.match(first.id, /^\d+-\d+$/);
      // The access log writes no headers, and neither does the entry.
      assert.doesNotMatch(JSON.stringify(first), /client-secret-key/);
      assert.equal(ui.gw.telemetry.traffic.captured, 2);
    } finally {
      follower.close();
    }
    // The last subscriber gone (and no recent list asked for), capture stops.
    assert.ok(await until(() => !ui.gw.telemetry.traffic.watching, 2000));
    assert.equal(await chat(), 200);
    assert.equal(ui.gw.telemetry.traffic.captured, 2);
  });

  it('lists the recent requests newest first, filtered by route, status class, model and text', async () => {
    // Asking for the list turns capture on for a while.
    const first = await uiApi(ui.base, 'traffic/recent');
    assert.equal(first.status, 200);
    assert.equal(first.body.watching, true);
    await chat('gpt-4o');
    await chat('gpt-4.1');
    await fetch(`http://127.0.0.1:${port}/nowhere`).then((r) => r.text());
    const listed = async (query: string) => {
      await until(async () => (await uiApi(ui.base, 'traffic/recent')).body.entries.length >= 5, 2000);
      const answer = await uiApi(ui.base, `traffic/recent?${query}`);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return answer.body.entries as { fields: Record<string, unknown> }[];
    };
    const all = await listed('');
    assert.equal(all[0]!.fields['url.path'], '/nowhere');
    assert.deepEqual(
      (await listed('status=4xx')).map((e) => e.fields['http.response.status_code']),
      [404],
    );
    assert.ok((await listed('model=gpt-4.1')).every((e) => e.fields['gen_ai.request.model'] === 'gpt-4.1'));
    assert.equal((await listed('model=gpt-4.1')).length, 1);
    assert.ok((await listed('route=default%2Fllm')).every((e) => e.fields.route === 'default/llm'));
    assert.equal((await listed('q=NOWHERE')).length, 1);
    const bad = await uiApi(ui.base, 'traffic/recent?status=2xxx');
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /^status: /);
    assert.ok(WATCH_LEASE_MS > 0);
  });

  it(`lists at most ${MAX_ENTRIES_PER_FLUSH} requests a batch and counts the others, whatever the rate`, async () => {
    const follower = await followEvents(`${ui.base}/ui/api/traffic/events`);
    try {
      assert.ok(await until(() => ui.gw.telemetry.traffic.watching, 2000));
      // Earlier tests' requests may still be on their way.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const before = follower.named('request').length;
      const record = new RequestRecord();
      record.method = 'GET';
      record.path = '/burst';
      record.status = 200;
      record.finish();
      // One burst within one batch interval: 3 batches' worth.
      for (let i = 0; i < 3 * MAX_ENTRIES_PER_FLUSH; i++) ui.gw.telemetry.traffic.capture(record);
      const [skipped] = await follower.waitFor('skipped', 1);
      assert.equal(skipped, 2 * MAX_ENTRIES_PER_FLUSH);
      assert.equal(follower.named('request').length - before, MAX_ENTRIES_PER_FLUSH);
      assert.ok((await uiApi(ui.base, 'traffic/recent')).body.skipped >= 2 * MAX_ENTRIES_PER_FLUSH);
    } finally {
      follower.close();
    }
  });

  it('drops a subscriber that stops reading instead of buffering for it', async () => {
    const socket = connect({ host: '127.0.0.1', port: ui.admin.port });
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(`GET /ui/api/traffic/events HTTP/1.1\r\nHost: 127.0.0.1:${ui.admin.port}\r\n\r\n`);
    // Never read: the socket is paused, the kernel's buffers fill, then the server's.
    socket.pause();
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    assert.ok(await until(() => ui.live.traffic.subscriberCount === 1, 2000));
    const dropped = ui.live.traffic.droppedSubscribers;
    const tap = ui.gw.telemetry.traffic;
    const record = new RequestRecord();
    record.method = 'POST';
    // Every text field at the access log's bound: a few KiB an entry.
    record.path = `/${'x'.repeat(1000)}`;
    record.error = 'e'.repeat(1000);
    record.backend = 'b'.repeat(1000);
    record.upstreamHost = 'h'.repeat(1000);
    record.requestHeaders = { 'user-agent': 'u'.repeat(1000) };
    record.route = 'default/llm';
    record.status = 200;
    record.finish();
    // Far more than the bound and any socket buffer; each burst is delivered as a batch.
    for (let burst = 0; burst < 200 && ui.live.traffic.droppedSubscribers === dropped; burst++) {
      for (let i = 0; i < 100; i++) tap.capture(record);
      await new Promise((resolve) => setTimeout(resolve, 120));
    }
    assert.equal(ui.live.traffic.droppedSubscribers, dropped + 1);
    assert.equal(ui.live.traffic.subscriberCount, 0);
    socket.resume();
    await closed;
    assert.ok(MAX_SUBSCRIBER_BUFFER_BYTES < 1024 * 1024);
  });

  it(`caps the subscribers at ${MAX_SUBSCRIBERS}`, async () => {
    const followers = await Promise.all(
      Array.from({ length: MAX_SUBSCRIBERS }, () => followEvents(`${ui.base}/ui/api/traffic/events`)),
    );
    try {
      assert.ok(followers.every((f) => f.response.statusCode === 200));
      const refused = await uiApi(ui.base, 'traffic/events');
      assert.equal(refused.status, 503);
      assert.match(refused.body.error, /pages follow the traffic already/);
    } finally {
      for (const follower of followers) follower.close();
    }
  });

  it('counts requests, errors, tokens and cost per interval from the metrics', async () => {
    await uiApi(ui.base, 'traffic/series');
    await new Promise((resolve) => setTimeout(resolve, 150));
    await chat();
    await chat();
    await fetch(`http://127.0.0.1:${port}/nowhere`).then((r) => r.text());
    const sum = async () => {
      const { body } = await uiApi(ui.base, 'traffic/series');
      assert.equal(body.intervalMs, 100);
      const total = { requests: 0, clientErrors: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };
      for (const point of body.points)
        for (const key of Object.keys(total) as (keyof typeof total)[]) total[key] += point[key];
      return total;
    };
    assert.ok(await until(async () => (await sum()).requests >= 3, 3000));
    const total = await sum();
    assert.ok(total.clientErrors >= 1);
    assert.ok(total.inputTokens >= 22);
    assert.ok(total.outputTokens >= 14);
    assert.ok(total.costUsd >= 2 * 0.0000975 - 1e-12);
  });

  it("gives a recorded request's CEL variables with the credentials redacted", async () => {
    const follower = await followEvents(`${ui.base}/ui/api/traffic/events`);
    try {
      await until(() => ui.gw.telemetry.traffic.watching, 2000);
      // Requests of the tests before may still be on their way (capture is on since the recent list).
      await new Promise((resolve) => setTimeout(resolve, 300));
      const before = follower.named('request').length;
      await chat('gpt-4o', { 'x-tenant': 'acme' });
      const entry = (await follower.waitFor('request', before + 1))[before];
      const answer = await uiApi(ui.base, `traffic/record?id=${entry.id}`);
      assert.equal(answer.status, 200);
      const { request, llm } = answer.body.variables;
      assert.equal(request.path, '/openai/v1/chat/completions');
      assert.equal(request.headers['x-tenant'], 'acme');
      assert.equal(request.headers.authorization, '<redacted>');
      assert.equal(llm.inputTokens, 11);
      assert.doesNotMatch(JSON.stringify(answer.body), /client-secret-key/);
      const missing = await uiApi(ui.base, 'traffic/record?id=1-999999');
      assert.equal(missing.status, 404);
    } finally {
      follower.close();
    }
  });
});
