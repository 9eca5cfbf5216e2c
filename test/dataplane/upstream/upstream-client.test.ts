// The UpstreamClient interface the LLM path sends provider requests through: gw's HTTP/1.1 pool
// and the undici pool behind UndiciUpstreamClient must give a response the same way.
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';
import { BodyTooLargeError } from '../../../src/dataplane/proxy/body.ts';
import { UndiciUpstreamClient, type UpstreamClient } from '../../../src/dataplane/upstream/client.ts';
import { httpServer, poolFor, rejection } from './upstream-servers.ts';

const clients: [string, (t: TestContext, port: number) => UpstreamClient][] = [
  ['Http1Pool', (t, port) => poolFor(t, port)],
  [
    'UndiciUpstreamClient',
    (t, port) => {
      const pool = new Pool(`http://127.0.0.1:${port}`);
      t.after(() => pool.destroy());
      return new UndiciUpstreamClient(pool);
    },
  ],
];

for (const [name, makeClient] of clients)
  describe(`UpstreamClient: ${name}`, () => {
    it('gives status, lowercased headers (repeated ones as arrays) and the whole body', async (t) => {
      const upstream = await httpServer(t, async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        res.statusCode = 201;
        res.setHeader('X-Echo-Method', req.method ?? '');
        res.setHeader('set-cookie', ['a=1', 'b=2']);
        res.end(`${req.url}|${req.headers['content-type']}|${Buffer.concat(chunks).toString()}`);
      });
      const client = makeClient(t, upstream.port);
      const response = await client.request({
        method: 'POST',
        path: '/v1/messages?beta=true',
        headers: { 'content-type': 'application/json' },
        body: Buffer.from('{"model":"m"}'),
      });
      assert.equal(response.statusCode, 201);
      assert.equal(response.headers['x-echo-method'], 'POST');
      assert.deepEqual(response.headers['set-cookie'], ['a=1', 'b=2']);
      assert.equal(
        (await response.body.readAll(1024)).toString(),
        '/v1/messages?beta=true|application/json|{"model":"m"}',
      );
    });

    it('streams the body to an iterating reader', async (t) => {
      const upstream = await httpServer(t, async (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (let i = 0; i < 4; i++) {
          res.write(`data: ${i}\n\n`);
          await sleep(10);
        }
        res.end();
      });
      const client = makeClient(t, upstream.port);
      const response = await client.request({ method: 'GET', path: '/', headers: {} });
      let text = '';
      for await (const chunk of response.body) text += chunk.toString();
      assert.equal(text, 'data: 0\n\ndata: 1\n\ndata: 2\n\ndata: 3\n\n');
    });

    it('rejects readAll past the limit with BodyTooLargeError', async (t) => {
      const upstream = await httpServer(t, (_req, res) => res.end(Buffer.alloc(200_000)));
      const client = makeClient(t, upstream.port);
      const response = await client.request({ method: 'GET', path: '/', headers: {} });
      const error = await rejection(response.body.readAll(10_000));
      assert.ok(error instanceof BodyTooLargeError);
      assert.equal(error.limit, 10_000);
    });

    it('lets a discarded body go and serves the next request', async (t) => {
      const upstream = await httpServer(t, (req, res) => res.end(req.url === '/big' ? Buffer.alloc(300_000) : 'next'));
      const client = makeClient(t, upstream.port);
      (await client.request({ method: 'GET', path: '/big', headers: {} })).body.discard();
      const next = await client.request({ method: 'GET', path: '/small', headers: {} });
      assert.equal((await next.body.readAll(100)).toString(), 'next');
    });
  });
