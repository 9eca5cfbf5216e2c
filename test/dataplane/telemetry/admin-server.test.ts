import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { test } from 'node:test';
import { startAdminServer } from '../../../src/dataplane/telemetry/admin-server.ts';
import { DataPlaneMetrics } from '../../../src/dataplane/telemetry/metrics.ts';
import { httpRecord } from './fixtures.ts';
import { parseExposition, value } from './prometheus-text.ts';

test('the admin server serves metrics, readiness and liveness over HTTP', async (t) => {
  const metrics = new DataPlaneMetrics();
  metrics.record(httpRecord());
  let ready = false;
  const server = await startAdminServer({ port: 0, ready: () => ready, metrics });
  t.after(() => server.close());
  assert.equal(server.host, '127.0.0.1');
  const base = `http://127.0.0.1:${server.port}`;

  const scrape = await fetch(`${base}/metrics`);
  assert.equal(scrape.status, 200);
  assert.match(scrape.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const text = parseExposition(await scrape.text());
  assert.equal(value(text, 'gw_requests_total', { route: 'default/web', status: '200' }), 1);

  assert.equal((await fetch(`${base}/healthz/ready`)).status, 503);
  ready = true;
  assert.equal((await fetch(`${base}/healthz/ready`)).status, 200);
  assert.equal((await fetch(`${base}/healthz/live`)).status, 200);
  assert.equal((await fetch(`${base}/metrics?name[]=x`)).status, 200, 'a query string is ignored');

  assert.equal((await fetch(`${base}/`)).status, 404);
  assert.equal((await fetch(`${base}/metrics/extra`)).status, 404);
  assert.equal((await fetch(`${base}/constructor`)).status, 404);
  const post = await fetch(`${base}/metrics`, { method: 'POST', body: 'x'.repeat(100_000) });
  assert.equal(post.status, 405);
  assert.equal(post.headers.get('allow'), 'GET, HEAD');
  const head = await fetch(`${base}/healthz/live`, { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(await head.text(), '');
});

test('readiness is 503 when the ready callback throws, and metrics failures are a 500, not a crash', async (t) => {
  const server = await startAdminServer({
    port: 0,
    ready: () => {
      throw new Error('config not loaded');
    },
    metrics: {
      render: () => {
        throw new Error('render failed');
      },
    },
  });
  t.after(() => server.close());
  const base = `http://127.0.0.1:${server.port}`;
  assert.equal((await fetch(`${base}/healthz/ready`)).status, 503);
  assert.equal((await fetch(`${base}/metrics`)).status, 500);
  assert.equal((await fetch(`${base}/healthz/live`)).status, 200);
});

test('garbage and oversized headers get a 400 and the server keeps serving', async (t) => {
  const server = await startAdminServer({ port: 0, ready: () => true, metrics: new DataPlaneMetrics() });
  t.after(() => server.close());
  const raw = (payload: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(server.port, '127.0.0.1');
      let received = '';
      socket.on('data', (chunk) => {
        received += chunk;
      });
      socket.on('end', () => resolve(received));
      socket.on('close', () => resolve(received));
      socket.on('error', reject);
      socket.write(payload);
    });
  assert.match(await raw('NOT HTTP AT ALL\r\n\r\n'), /^HTTP\/1\.1 400/);
  assert.match(
    await raw(`GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    /^HTTP\/1\.1 (400|431)/,
  );
  assert.equal((await fetch(`http://127.0.0.1:${server.port}/healthz/live`)).status, 200);
});

test('close() stops the server even with a keep-alive connection open', async () => {
  const server = await startAdminServer({ port: 0, ready: () => true, metrics: new DataPlaneMetrics() });
  const response = await fetch(`http://127.0.0.1:${server.port}/healthz/live`);
  await response.text();
  await server.close();
  await assert.rejects(fetch(`http://127.0.0.1:${server.port}/healthz/live`));
});
