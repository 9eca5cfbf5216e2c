// How gw's HTTP/1.1 upstream pool fails: refused connections, silent and closing upstreams,
// malformed responses, the caller's abort, and the pool closed or destroyed under a request.
import assert from 'node:assert/strict';
import { type AddressInfo, createServer, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { httpServer, onRequestHeads, poolFor, rawServer, rejection, silent, waitFor } from './upstream-servers.ts';

/** A server that answers every request with `response` (raw bytes, as given). */
function answering(response: string | Buffer) {
  return (socket: Socket) => onRequestHeads(socket, () => socket.write(response));
}

const OK = 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok';

describe('Http1Pool: connecting', () => {
  it('rejects with ECONNREFUSED when nothing listens', async (t) => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const pool = poolFor(t, port);
    const error = await rejection(pool.request({ method: 'GET', path: '/', headers: {} }));
    assert.equal(error.code, 'ECONNREFUSED');
    assert.equal(pool.size, 0);
  });
});

describe('Http1Pool: silent and closing upstreams', () => {
  it('fails with UPSTREAM_RESPONSE_TIMEOUT when the upstream never answers', async (t) => {
    const upstream = await rawServer(t, silent);
    const pool = poolFor(t, upstream.port, { responseIdleMs: 300 });
    const started = performance.now();
    const error = await rejection(pool.request({ method: 'GET', path: '/', headers: {} }));
    const elapsed = performance.now() - started;
    assert.equal(error.code, 'UPSTREAM_RESPONSE_TIMEOUT');
    // The pool checks once a second.
    assert.ok(elapsed >= 300 && elapsed < 2500, `failed after ${Math.round(elapsed)} ms`);
    assert.equal(pool.size, 0);
    await waitFor(() => upstream.closed === 1, 'the upstream connection to close');
  });

  it('fails the body with UPSTREAM_RESPONSE_TIMEOUT when the upstream goes silent in the middle of it', async (t) => {
    const upstream = await rawServer(t, answering('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nstarted'));
    const pool = poolFor(t, upstream.port, { responseIdleMs: 300 });
    const response = await pool.request({ method: 'GET', path: '/', headers: {} });
    const error = await rejection(response.body.readAll(1000));
    assert.equal(error.code, 'UPSTREAM_RESPONSE_TIMEOUT');
    await waitFor(() => upstream.closed === 1, 'the upstream connection to close');
  });

  it('does not take a reader that is behind for a silent upstream', async (t) => {
    const size = 4 * 1024 * 1024;
    const upstream = await rawServer(
      t,
      answering(
        Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\ncontent-length: ${size}\r\n\r\n`), Buffer.alloc(size, 'z')]),
      ),
    );
    const pool = poolFor(t, upstream.port, { responseIdleMs: 300 });
    const response = await pool.request({ method: 'GET', path: '/', headers: {} });
    // Longer than the silence allowed plus a sweep; the upstream is waiting for the reader.
    await sleep(1400);
    let read = 0;
    for await (const chunk of response.body) read += chunk.length;
    assert.equal(read, size);
  });

  it('fails the reader when the upstream closes in the middle of a Content-Length body', async (t) => {
    const upstream = await rawServer(t, (socket) =>
      onRequestHeads(socket, () => socket.end('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly ten..')),
    );
    const pool = poolFor(t, upstream.port);
    const response = await pool.request({ method: 'GET', path: '/', headers: {} });
    const error = await rejection(response.body.readAll(1000));
    assert.ok(['UPSTREAM_PROTOCOL_ERROR', 'UPSTREAM_CLOSED'].includes(error.code!), error.message);
    assert.equal(pool.size, 0);
  });

  it('fails an iterating reader when the upstream closes in the middle of a chunked body', async (t) => {
    const upstream = await rawServer(t, (socket) =>
      onRequestHeads(socket, () => {
        socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nfirst\r\n');
        setTimeout(() => socket.destroy(), 50);
      }),
    );
    const pool = poolFor(t, upstream.port);
    const response = await pool.request({ method: 'GET', path: '/', headers: {} });
    const chunks: string[] = [];
    const error = await rejection(
      (async () => {
        for await (const chunk of response.body) chunks.push(chunk.toString());
      })(),
    );
    assert.deepEqual(chunks, ['first']);
    assert.ok(['UPSTREAM_PROTOCOL_ERROR', 'UPSTREAM_CLOSED', 'ECONNRESET'].includes(error.code!), error.message);
  });

  it('rejects when the upstream closes without answering', async (t) => {
    const upstream = await rawServer(t, (socket) => onRequestHeads(socket, () => socket.end()));
    const pool = poolFor(t, upstream.port);
    const error = await rejection(pool.request({ method: 'GET', path: '/', headers: {} }));
    assert.ok(['UPSTREAM_PROTOCOL_ERROR', 'UPSTREAM_CLOSED'].includes(error.code!), error.message);
    assert.equal(pool.size, 0);
  });

  it('completes a body read until the upstream closes, and does not keep that connection', async (t) => {
    const upstream = await rawServer(t, (socket) =>
      onRequestHeads(socket, () => {
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nall of it');
        setTimeout(() => socket.end(' until the end'), 30);
      }),
    );
    const pool = poolFor(t, upstream.port);
    const response = await pool.request({ method: 'GET', path: '/', headers: {} });
    assert.equal((await response.body.readAll(1000)).toString(), 'all of it until the end');
    assert.equal(pool.size, 0);
  });

  it('does not hand out an idle connection the upstream closed: the next request works', async (t) => {
    const upstream = await httpServer(t, (req, res) => res.end(String(req.socket.remotePort)));
    const pool = poolFor(t, upstream.port);
    const port1 = (await (await pool.request({ method: 'GET', path: '/', headers: {} })).body.readAll(64)).toString();
    assert.equal(pool.size, 1);
    upstream.server.closeIdleConnections();
    await waitFor(() => pool.size === 0, 'the pool to notice the close');
    const response = await pool.request({ method: 'GET', path: '/', headers: {} });
    assert.equal(response.statusCode, 200);
    assert.notEqual((await response.body.readAll(64)).toString(), port1);
    assert.equal(upstream.accepted, 2);
  });
});

describe('Http1Pool: malformed responses', () => {
  // A response whose framing is invalid is not given to the caller at all: its status must not
  // be taken for the provider's answer (retries, health) nor its head forwarded before the failure.
  for (const [label, response] of [
    ['a malformed status line', 'HTTP/1.1 OK 200\r\ncontent-length: 0\r\n\r\n'],
    ['a header line without a colon', 'HTTP/1.1 200 OK\r\nno colon\r\ncontent-length: 0\r\n\r\n'],
    ['an obs-fold', 'HTTP/1.1 200 OK\r\nx-a: 1\r\n folded\r\ncontent-length: 0\r\n\r\n'],
    ['Content-Length values that differ', 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nok'],
    ['an invalid Content-Length', 'HTTP/1.1 503 Unavailable\r\ncontent-length: 2x\r\n\r\nok'],
    [
      '101 Switching Protocols',
      'HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: upgrade\r\n\r\n',
    ],
    ['not HTTP at all', 'SSH-2.0-OpenSSH_9.6\r\n\r\n'],
  ] as const)
    it(`rejects ${label} with UPSTREAM_PROTOCOL_ERROR and closes the connection`, async (t) => {
      const upstream = await rawServer(t, answering(response));
      const pool = poolFor(t, upstream.port);
      const error = await rejection(pool.request({ method: 'GET', path: '/', headers: {} }));
      assert.equal(error.code, 'UPSTREAM_PROTOCOL_ERROR');
      assert.equal(pool.size, 0);
      await waitFor(() => upstream.closed === 1, 'the upstream connection to close');
    });

  it('fails the body on a bad chunk after the head was given', async (t) => {
    const upstream = await rawServer(
      t,
      answering('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\nxyz\r\n0\r\n\r\n'),
    );
    const pool = poolFor(t, upstream.port);
    const response = await pool.request({ method: 'GET', path: '/', headers: {} });
    const error = await rejection(response.body.readAll(1000));
    assert.equal(error.code, 'UPSTREAM_PROTOCOL_ERROR');
    assert.equal(pool.size, 0);
  });

  it('does not reuse a connection that sent bytes after the response', async (t) => {
    const upstream = await rawServer(t, answering(`${OK}HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n`));
    const pool = poolFor(t, upstream.port);
    const first = await pool.request({ method: 'GET', path: '/', headers: {} });
    assert.equal((await first.body.readAll(10)).toString(), 'ok');
    const second = await pool.request({ method: 'GET', path: '/', headers: {} });
    assert.equal((await second.body.readAll(10)).toString(), 'ok');
    assert.equal(upstream.accepted, 2);
  });

  it('does not reuse a connection that sent bytes while idle', async (t) => {
    const upstream = await rawServer(t, (socket) =>
      onRequestHeads(socket, () => {
        socket.write(OK);
        setTimeout(() => socket.write('HTTP/1.1 200 OK\r\n\r\n'), 30);
      }),
    );
    const pool = poolFor(t, upstream.port);
    await (await pool.request({ method: 'GET', path: '/', headers: {} })).body.readAll(10);
    await waitFor(() => pool.size === 0, 'the connection to be dropped');
    const second = await pool.request({ method: 'GET', path: '/', headers: {} });
    assert.equal((await second.body.readAll(10)).toString(), 'ok');
    assert.equal(upstream.accepted, 2);
  });
});

describe('Http1Pool: aborts', () => {
  it('rejects with AbortError when the signal aborts before the head arrives, and closes the connection', async (t) => {
    const upstream = await rawServer(t, silent);
    const pool = poolFor(t, upstream.port);
    const controller = new AbortController();
    const pending = pool.request({ method: 'GET', path: '/', headers: {}, signal: controller.signal });
    await waitFor(() => upstream.accepted === 1, 'the connection');
    controller.abort();
    const error = await rejection(pending);
    assert.equal(error.name, 'AbortError');
    assert.equal(pool.size, 0);
    await waitFor(() => upstream.closed === 1, 'the upstream connection to close');
  });

  it('rejects at once, without connecting, for a signal already aborted', async (t) => {
    const upstream = await rawServer(t, answering(OK));
    const pool = poolFor(t, upstream.port);
    const error = await rejection(pool.request({ method: 'GET', path: '/', headers: {}, signal: AbortSignal.abort() }));
    assert.equal(error.name, 'AbortError');
    await sleep(20);
    assert.equal(upstream.accepted, 0);
  });

  it('rejects with AbortError while connecting', async (t) => {
    const upstream = await rawServer(t, answering(OK));
    const pool = poolFor(t, upstream.port);
    const controller = new AbortController();
    const pending = pool.request({ method: 'GET', path: '/', headers: {}, signal: controller.signal });
    controller.abort();
    assert.equal((await rejection(pending)).name, 'AbortError');
    assert.equal(pool.size, 0);
  });

  it('fails the iterating reader when the signal aborts during the body, and closes the connection', async (t) => {
    const upstream = await rawServer(
      t,
      answering('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nfirst\r\n'),
    );
    const pool = poolFor(t, upstream.port);
    const controller = new AbortController();
    const response = await pool.request({ method: 'GET', path: '/', headers: {}, signal: controller.signal });
    const iterator = response.body[Symbol.asyncIterator]();
    assert.equal((await iterator.next()).value?.toString(), 'first');
    const next = iterator.next();
    controller.abort();
    const error = await rejection(next);
    assert.equal(error.name, 'AbortError');
    assert.equal(pool.size, 0);
    await waitFor(() => upstream.closed === 1, 'the upstream connection to close');
  });

  it('fails readAll when the signal aborts during the body', async (t) => {
    const upstream = await rawServer(t, answering('HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\nfirst'));
    const pool = poolFor(t, upstream.port);
    const controller = new AbortController();
    const response = await pool.request({ method: 'GET', path: '/', headers: {}, signal: controller.signal });
    const whole = response.body.readAll(100);
    setTimeout(() => controller.abort(), 20);
    assert.equal((await rejection(whole)).name, 'AbortError');
    assert.equal(pool.size, 0);
  });

  it('ignores an abort after the response is complete: the body is still read and the connection kept', async (t) => {
    const upstream = await httpServer(t, (_req, res) => res.end('complete'));
    const pool = poolFor(t, upstream.port);
    const controller = new AbortController();
    const response = await pool.request({ method: 'GET', path: '/', headers: {}, signal: controller.signal });
    controller.abort();
    assert.equal((await response.body.readAll(100)).toString(), 'complete');
    assert.equal(pool.size, 1);
    await (await pool.request({ method: 'GET', path: '/', headers: {} })).body.readAll(100);
    assert.equal(upstream.accepted, 1);
  });
});

describe('Http1Pool: close and destroy', () => {
  it('close() waits for the request in flight, then closes its connection; new requests are refused', async (t) => {
    const upstream = await httpServer(t, (_req, res) => setTimeout(() => res.end('late'), 200));
    const pool = poolFor(t, upstream.port);
    const pending = pool.request({ method: 'GET', path: '/', headers: {} });
    await waitFor(() => upstream.accepted === 1, 'the connection');
    let closed = false;
    const closing = pool.close().then(() => {
      closed = true;
    });
    const refused = await rejection(pool.request({ method: 'GET', path: '/', headers: {} }));
    assert.equal(refused.code, 'UPSTREAM_POOL_CLOSED');
    await sleep(100);
    assert.equal(closed, false, 'still waiting for the request in flight');
    const response = await pending;
    assert.equal((await response.body.readAll(100)).toString(), 'late');
    await closing;
    assert.equal(pool.size, 0);
    await waitFor(() => upstream.closed === 1, 'the upstream connection to close');
  });

  it('close() waits for a body still streaming', async (t) => {
    const upstream = await httpServer(t, async (_req, res) => {
      res.write('one,');
      await sleep(150);
      res.end('two');
    });
    const pool = poolFor(t, upstream.port);
    const response = await pool.request({ method: 'GET', path: '/', headers: {} });
    let closed = false;
    const closing = pool.close().then(() => {
      closed = true;
    });
    await sleep(50);
    assert.equal(closed, false);
    assert.equal((await response.body.readAll(100)).toString(), 'one,two');
    await closing;
    assert.equal(pool.size, 0);
  });

  it('close() closes idle connections at once', async (t) => {
    const upstream = await httpServer(t, (_req, res) => res.end('ok'));
    const pool = poolFor(t, upstream.port);
    await (await pool.request({ method: 'GET', path: '/', headers: {} })).body.readAll(10);
    assert.equal(pool.size, 1);
    await pool.close();
    assert.equal(pool.size, 0);
    await waitFor(() => upstream.closed === 1, 'the upstream connection to close');
  });

  it('close() called twice: both calls resolve once the request in flight is done', async (t) => {
    const upstream = await httpServer(t, (_req, res) => setTimeout(() => res.end('ok'), 100));
    const pool = poolFor(t, upstream.port);
    const pending = pool.request({ method: 'GET', path: '/', headers: {} });
    await waitFor(() => upstream.accepted === 1, 'the connection');
    const first = pool.close();
    const second = pool.close();
    await (await pending).body.readAll(10);
    const outcome = await Promise.race([
      Promise.all([first, second]).then(() => 'both resolved'),
      sleep(1000).then(() => 'still waiting'),
    ]);
    assert.equal(outcome, 'both resolved');
  });

  it('destroy() fails the request in flight and ends a close() that was waiting', async (t) => {
    const upstream = await rawServer(t, silent);
    const pool = poolFor(t, upstream.port);
    const pending = pool.request({ method: 'GET', path: '/', headers: {} });
    await waitFor(() => upstream.accepted === 1, 'the connection');
    const closing = pool.close();
    await pool.destroy();
    const error = await rejection(pending);
    assert.equal(error.code, 'UPSTREAM_POOL_CLOSED');
    await closing;
    assert.equal(pool.size, 0);
    await waitFor(() => upstream.closed === 1, 'the upstream connection to close');
  });

  it('destroy() fails a body being read', async (t) => {
    const upstream = await rawServer(t, answering('HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\nfirst'));
    const pool = poolFor(t, upstream.port);
    const response = await pool.request({ method: 'GET', path: '/', headers: {} });
    const whole = response.body.readAll(100);
    await pool.destroy();
    assert.equal((await rejection(whole)).code, 'UPSTREAM_POOL_CLOSED');
    assert.equal(
      (await rejection(pool.request({ method: 'GET', path: '/', headers: {} }))).code,
      'UPSTREAM_POOL_CLOSED',
    );
  });
});
