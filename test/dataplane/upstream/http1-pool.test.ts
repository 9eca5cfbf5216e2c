// gw's HTTP/1.1 upstream pool against real servers: connection reuse and keep-alive, request and
// response bodies (whole, streamed with backpressure — direct and through a CONNECT proxy — over
// the limit, discarded).
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BodyTooLargeError } from '../../../src/dataplane/proxy/body.ts';
import type { TunnelProxy } from '../../../src/dataplane/upstream/connect-tunnel.ts';
import { InvalidUpstreamRequestError } from '../../../src/dataplane/upstream/http1/request-head.ts';
import { startConnectProxy } from '../../support/connect-proxy.ts';
import {
  httpServer,
  largeBodyServer,
  onRequestHeads,
  poolFor,
  rawServer,
  rejection,
  tunnelProxyAt,
  waitFor,
} from './upstream-servers.ts';

const MiB = 1024 * 1024;

/** Answers with the client's port: which connection carried the request. */
function answerWithPort(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('content-type', 'text/plain');
  res.end(String(req.socket.remotePort));
}

async function readRequestBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('Http1Pool: connections', () => {
  it('carries sequential requests on one connection', async (t) => {
    const upstream = await httpServer(t, answerWithPort);
    const pool = poolFor(t, upstream.port);
    const ports = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const response = await pool.request({ method: 'GET', path: `/r/${i}`, headers: {} });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['content-type'], 'text/plain');
      ports.add((await response.body.readAll(1024)).toString());
      assert.equal(pool.size, 1);
    }
    assert.equal(ports.size, 1);
    assert.equal(upstream.accepted, 1);
  });

  it('opens a connection per concurrent request, then reuses them', async (t) => {
    const upstream = await httpServer(t, (req, res) => setTimeout(() => answerWithPort(req, res), 50));
    const pool = poolFor(t, upstream.port);
    const first = await Promise.all(
      [1, 2, 3].map(async () => (await pool.request({ method: 'GET', path: '/', headers: {} })).body.readAll(1024)),
    );
    assert.equal(new Set(first.map(String)).size, 3);
    assert.equal(pool.size, 3);
    const again = await pool.request({ method: 'GET', path: '/', headers: {} });
    assert.ok(first.map(String).includes((await again.body.readAll(1024)).toString()));
    assert.equal(upstream.accepted, 3);
  });

  it("gives up an idle connection before the upstream's Keep-Alive timeout: a later request goes on a new one", async (t) => {
    // The server closes connections idle for 2 s and says `Keep-Alive: timeout=2`; the client
    // keeps them one second less.
    const upstream = await httpServer(t, answerWithPort, (server) => {
      server.keepAliveTimeout = 2000;
      server.keepAliveTimeoutBuffer = 0;
    });
    const pool = poolFor(t, upstream.port);
    const first = await pool.request({ method: 'GET', path: '/', headers: {} });
    assert.equal(first.headers['keep-alive'], 'timeout=2');
    const port1 = (await first.body.readAll(64)).toString();
    const second = await pool.request({ method: 'GET', path: '/', headers: {} });
    assert.equal((await second.body.readAll(64)).toString(), port1, 'reused while well within the hint');
    // Past the hint less the margin, before the server's own timeout.
    await sleep(1150);
    const third = await pool.request({ method: 'GET', path: '/', headers: {} });
    assert.equal(third.statusCode, 200);
    assert.notEqual((await third.body.readAll(64)).toString(), port1);
    assert.equal(upstream.accepted, 2);
  });

  it('does not keep a connection whose Keep-Alive timeout leaves no time (timeout=1), and every request succeeds', async (t) => {
    const upstream = await httpServer(t, answerWithPort, (server) => {
      server.keepAliveTimeout = 1500;
      server.keepAliveTimeoutBuffer = 0;
    });
    const pool = poolFor(t, upstream.port);
    for (let i = 0; i < 3; i++) {
      const response = await pool.request({ method: 'GET', path: '/', headers: {} });
      assert.equal(response.headers['keep-alive'], 'timeout=1');
      await response.body.readAll(64);
      assert.equal(pool.size, 0);
      await sleep(i === 1 ? 1100 : 0);
    }
    assert.equal(upstream.accepted, 3);
  });

  it("does not reuse a connection idle longer than the pool's own keepAliveMs", async (t) => {
    const upstream = await httpServer(t, answerWithPort);
    const pool = poolFor(t, upstream.port, { keepAliveMs: 150 });
    const port1 = (await (await pool.request({ method: 'GET', path: '/', headers: {} })).body.readAll(64)).toString();
    await sleep(250);
    const port2 = (await (await pool.request({ method: 'GET', path: '/', headers: {} })).body.readAll(64)).toString();
    assert.notEqual(port2, port1);
    assert.equal(upstream.accepted, 2);
  });

  it('closes a connection after a `connection: close` response and opens a new one for the next request', async (t) => {
    const upstream = await httpServer(t, (req, res) => {
      res.setHeader('connection', 'close');
      answerWithPort(req, res);
    });
    const pool = poolFor(t, upstream.port);
    const first = await pool.request({ method: 'GET', path: '/', headers: {} });
    assert.equal(first.headers.connection, 'close');
    const port1 = (await first.body.readAll(64)).toString();
    assert.equal(pool.size, 0);
    const second = await pool.request({ method: 'GET', path: '/', headers: {} });
    assert.notEqual((await second.body.readAll(64)).toString(), port1);
    assert.equal(upstream.accepted, 2);
  });

  it('reads no body for HEAD and reuses the connection for the next request', async (t) => {
    const upstream = await httpServer(t, (req, res) => {
      res.setHeader('content-length', '4096');
      res.setHeader('x-port', String(req.socket.remotePort));
      res.end(req.method === 'HEAD' ? undefined : 'x'.repeat(4096));
    });
    const pool = poolFor(t, upstream.port);
    const head = await pool.request({ method: 'HEAD', path: '/', headers: {} });
    assert.equal(head.headers['content-length'], '4096');
    assert.equal((await head.body.readAll(10)).length, 0);
    const get = await pool.request({ method: 'GET', path: '/', headers: {} });
    assert.equal((await get.body.readAll(8192)).length, 4096);
    assert.equal(get.headers['x-port'], head.headers['x-port']);
    assert.equal(upstream.accepted, 1);
  });

  it('does not open a connection for a request it cannot write', async (t) => {
    const upstream = await httpServer(t, answerWithPort);
    const pool = poolFor(t, upstream.port);
    const error = await rejection(
      pool.request({ method: 'GET', path: '/', headers: { 'x-evil': 'a\r\n\r\nGET /admin HTTP/1.1' } }),
    );
    assert.ok(error instanceof InvalidUpstreamRequestError);
    assert.equal(error.code, 'UPSTREAM_INVALID_REQUEST');
    assert.equal(pool.size, 0);
    await sleep(20);
    assert.equal(upstream.accepted, 0);
  });
});

describe('Http1Pool: request and response', () => {
  it('sends the default Host, or the caller’s, and the caller’s fields', async (t) => {
    const upstream = await httpServer(t, (req, res) => res.end(JSON.stringify(req.headers)));
    const pool = poolFor(t, upstream.port, { hostHeader: 'provider.example:8443' });
    const seen = async (headers: Record<string, string | string[]>) =>
      JSON.parse((await (await pool.request({ method: 'GET', path: '/', headers })).body.readAll(4096)).toString());
    assert.equal((await seen({})).host, 'provider.example:8443');
    const own = await seen({ host: 'other.example', 'x-list': ['a', 'b'], authorization: 'Bearer t' });
    assert.equal(own.host, 'other.example');
    assert.equal(own['x-list'], 'a, b');
    assert.equal(own.authorization, 'Bearer t');
  });

  for (const [label, size] of [
    ['small', 1000],
    ['larger than 64 KiB', 3 * MiB + 17],
  ] as const)
    it(`delivers a ${label} POST body intact`, async (t) => {
      const upstream = await httpServer(t, async (req, res) => {
        const body = await readRequestBody(req);
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            method: req.method,
            url: req.url,
            length: body.length,
            declared: req.headers['content-length'],
            chunked: req.headers['transfer-encoding'] ?? null,
            sha256: sha256(body),
          }),
        );
      });
      const pool = poolFor(t, upstream.port);
      const body = randomBytes(size);
      for (let i = 0; i < 2; i++) {
        const response = await pool.request({
          method: 'POST',
          path: '/v1/chat/completions?stream=false',
          headers: { 'content-type': 'application/octet-stream' },
          body,
        });
        assert.deepEqual(JSON.parse((await response.body.readAll(4096)).toString()), {
          method: 'POST',
          url: '/v1/chat/completions?stream=false',
          length: size,
          declared: String(size),
          chunked: null,
          sha256: sha256(body),
        });
      }
      assert.equal(upstream.accepted, 1);
    });

  it('sends content-length: 0 for a POST without a body', async (t) => {
    const upstream = await httpServer(t, async (req, res) => {
      const body = await readRequestBody(req);
      res.end(`${req.headers['content-length']}:${body.length}`);
    });
    const pool = poolFor(t, upstream.port);
    const response = await pool.request({ method: 'POST', path: '/', headers: {} });
    assert.equal((await response.body.readAll(64)).toString(), '0:0');
  });

  it('gives a repeated response field as an array', async (t) => {
    const upstream = await httpServer(t, (_req, res) => {
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.end();
    });
    const pool = poolFor(t, upstream.port);
    const response = await pool.request({ method: 'GET', path: '/', headers: {} });
    assert.deepEqual(response.headers['set-cookie'], ['a=1', 'b=2']);
    response.body.discard();
  });

  it('skips 103 Early Hints and gives the final response', async (t) => {
    const upstream = await httpServer(t, (_req, res) => {
      res.writeEarlyHints({ link: '</style.css>; rel=preload' });
      res.end('final');
    });
    const pool = poolFor(t, upstream.port);
    const response = await pool.request({ method: 'GET', path: '/', headers: {} });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers.link, undefined);
    assert.equal((await response.body.readAll(64)).toString(), 'final');
  });

  it('streams a chunked response to an iterating reader as it arrives, intact', async (t) => {
    const parts = Array.from({ length: 8 }, (_, i) => `data: {"part":${i},"text":"${'x'.repeat(i * 100)}"}\n\n`);
    const upstream = await httpServer(t, async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const part of parts) {
        res.write(part);
        await sleep(15);
      }
      res.end();
    });
    const pool = poolFor(t, upstream.port);
    const response = await pool.request({ method: 'GET', path: '/stream', headers: {} });
    assert.equal(response.headers['transfer-encoding'], 'chunked');
    const received: string[] = [];
    for await (const chunk of response.body) received.push(chunk.toString());
    assert.equal(received.join(''), parts.join(''));
    assert.ok(received.length >= 4, `read in several pieces as they arrived (${received.length})`);
    // The stream ended cleanly: the connection is reused.
    const next = await pool.request({ method: 'GET', path: '/stream', headers: {} });
    let length = 0;
    for await (const chunk of next.body) length += chunk.length;
    assert.equal(length, parts.join('').length);
    assert.equal(upstream.accepted, 1);
  });

  // Through a tunnel too: plain through a plain proxy it reads into the shared buffer as a direct
  // connection does, and a paused reader must stop that reading as well.
  for (const route of ['direct', 'through a CONNECT proxy'] as const)
    it(`applies backpressure (${route}): a slow reader of a large body stalls the upstream instead of buffering it`, async (t) => {
      const total = 32 * MiB;
      const upstream = await largeBodyServer(t, total);
      let tunnel: TunnelProxy | undefined;
      if (route !== 'direct') {
        const proxy = await startConnectProxy();
        t.after(() => proxy.close());
        tunnel = tunnelProxyAt(proxy.port);
      }
      const pool = poolFor(t, upstream.port, { tunnel });
      const response = await pool.request({ method: 'GET', path: '/large', headers: {} });
      // The reader does not read for a while: the upstream gets only as far as the buffers allow
      // (through the proxy, its two relayed hops too).
      await sleep(400);
      const stalledAt = upstream.written;
      await sleep(200);
      assert.equal(upstream.written, stalledAt, 'no progress while nobody reads');
      assert.ok(upstream.written < total / 2, `the upstream could write only ${upstream.written} of ${total} bytes`);
      assert.ok(upstream.blockedWrites > 0, "the upstream's write() returned false");
      // A slow iterating reader, then a fast one: still no more than a bounded amount ahead of it, and every byte in order.
      const received = createHash('sha256');
      let read = 0;
      let maxAhead = 0;
      for await (const chunk of response.body) {
        received.update(chunk);
        read += chunk.length;
        maxAhead = Math.max(maxAhead, upstream.written - read);
        if (read < 2 * MiB) await sleep(1);
      }
      assert.equal(read, total);
      assert.equal(received.digest('hex'), upstream.digest());
      assert.ok(maxAhead < total / 2, `the upstream was at most ${maxAhead} bytes ahead of the reader`);
    });

  it('rejects readAll past the limit with BodyTooLargeError and closes the connection', async (t) => {
    const upstream = await httpServer(t, (req, res) => {
      if (req.url === '/small') answerWithPort(req, res);
      else res.end(Buffer.alloc(2 * MiB, 'a'));
    });
    const pool = poolFor(t, upstream.port);
    const large = await pool.request({ method: 'GET', path: '/large', headers: {} });
    const error = await rejection(large.body.readAll(1000));
    assert.ok(error instanceof BodyTooLargeError);
    assert.equal(error.limit, 1000);
    assert.equal(pool.size, 0);
    await waitFor(() => upstream.closed === 1, 'the upstream connection to close');
    await pool.request({ method: 'GET', path: '/small', headers: {} }).then((r) => r.body.readAll(64));
    assert.equal(upstream.accepted, 2);
  });

  it('rejects readAll past the limit when the excess arrives after reading started', async (t) => {
    const upstream = await rawServer(t, (socket) => {
      onRequestHeads(socket, () => {
        socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\n');
        setTimeout(() => socket.write('10\r\n0123456789abcdef\r\n0\r\n\r\n'), 50);
      });
    });
    const pool = poolFor(t, upstream.port);
    const response = await pool.request({ method: 'GET', path: '/', headers: {} });
    const error = await rejection(response.body.readAll(20));
    assert.ok(error instanceof BodyTooLargeError);
    await waitFor(() => upstream.closed === 1, 'the upstream connection to close');
    assert.equal(pool.size, 0);
  });

  it('reads a body exactly at the limit', async (t) => {
    const upstream = await httpServer(t, (_req, res) => res.end('x'.repeat(1000)));
    const pool = poolFor(t, upstream.port);
    const response = await pool.request({ method: 'GET', path: '/', headers: {} });
    assert.equal((await response.body.readAll(1000)).length, 1000);
  });

  it('closes the connection when an unfinished body is discarded', async (t) => {
    const upstream = await rawServer(t, (socket) => {
      onRequestHeads(socket, () => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nten bytes.'));
    });
    const pool = poolFor(t, upstream.port);
    const response = await pool.request({ method: 'GET', path: '/', headers: {} });
    response.body.discard();
    assert.equal(pool.size, 0);
    await waitFor(() => upstream.closed === 1, 'the upstream connection to close');
  });

  it('keeps the connection when a finished body is discarded', async (t) => {
    const upstream = await httpServer(t, answerWithPort);
    const pool = poolFor(t, upstream.port);
    const first = await pool.request({ method: 'GET', path: '/', headers: {} });
    first.body.discard();
    assert.equal(pool.size, 1);
    const second = await pool.request({ method: 'GET', path: '/', headers: {} });
    await second.body.readAll(64);
    assert.equal(upstream.accepted, 1);
  });

  it('closes the connection when an iterating reader leaves the loop early', async (t) => {
    const upstream = await rawServer(t, (socket) => {
      onRequestHeads(socket, () => {
        socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nfirst\r\n');
        // The rest never comes: the reader must not wait for it.
      });
    });
    const pool = poolFor(t, upstream.port);
    const response = await pool.request({ method: 'GET', path: '/', headers: {} });
    for await (const chunk of response.body) {
      assert.equal(chunk.toString(), 'first');
      break;
    }
    assert.equal(pool.size, 0);
    await waitFor(() => upstream.closed === 1, 'the upstream connection to close');
  });

  it('refuses to read one body two ways', async (t) => {
    const upstream = await httpServer(t, answerWithPort);
    const pool = poolFor(t, upstream.port);
    const response = await pool.request({ method: 'GET', path: '/', headers: {} });
    const whole = response.body.readAll(64);
    assert.throws(() => response.body[Symbol.asyncIterator]());
    await whole;
  });
});
