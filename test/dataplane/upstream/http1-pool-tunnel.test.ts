// gw's HTTP/1.1 pool through a CONNECT proxy (test/support/connect-proxy.ts, a real relay). Plain
// through a plain proxy, a tunnel reads into the pool's shared buffer (onread) as a direct plain
// connection does, so these carry what that must get right: many keep-alive requests, each answer
// its own, concurrent bodies spanning many reads, a backend closing an idle tunnel (a large body
// with backpressure through a tunnel: http1-pool.test.ts); a TLS backend reads through its stream.
// And how the pool sees a tunnel that does not open: bytes with the proxy's answer, a proxy closing
// mid-answer, the pool closed while the tunnel opens.
import assert from 'node:assert/strict';
import { describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startConnectProxy } from '../../support/connect-proxy.ts';
import {
  httpServer,
  httpsServer,
  onRequestHeads,
  poolFor,
  rawServer,
  rejection,
  TEST_CA,
  tunnelProxyAt,
  waitFor,
} from './upstream-servers.ts';

const MiB = 1024 * 1024;

/** The body the backend answers `/<size>/<label>` with: `size` bytes of the path, repeated. */
const bodyFor = (path: string) => Buffer.alloc(Number(path.split('/')[1]), path);

async function startProxy(t: TestContext) {
  const proxy = await startConnectProxy();
  t.after(() => proxy.close());
  return proxy;
}

describe("gw's HTTP/1.1 pool through a tunnel", () => {
  it('carries many keep-alive requests on one tunnel, each answer its own, bodies spanning many reads intact', async (t) => {
    const backend = await httpServer(t, (req, res) => res.end(bodyFor(req.url!)));
    const proxy = await startProxy(t);
    const pool = poolFor(t, backend.port, { tunnel: tunnelProxyAt(proxy.port) });
    for (let i = 0; i < 200; i++) {
      // Mostly small answers, some larger than the 64 KiB read buffer.
      const path = `/${i % 20 === 0 ? 300_000 + i : 10 + i}/sequential-${i}`;
      const response = await pool.request({ method: 'GET', path, headers: {} });
      assert.equal(response.statusCode, 200);
      assert.ok((await response.body.readAll(MiB)).equals(bodyFor(path)), path);
    }
    assert.equal(proxy.servedTo(`127.0.0.1:${backend.port}`), 1, 'one CONNECT for all of them');
    assert.equal(pool.size, 1);
    // Concurrent answers read only once all have arrived: what each body holds was copied out of
    // the shared buffer before the next read overwrote it.
    const paths = ['/200000/a', '/200001/b', '/200002/c'];
    const responses = await Promise.all(paths.map((path) => pool.request({ method: 'GET', path, headers: {} })));
    await sleep(50);
    for (const [i, response] of responses.entries())
      assert.ok((await response.body.readAll(MiB)).equals(bodyFor(paths[i]!)), paths[i]);
    assert.equal(proxy.servedTo(`127.0.0.1:${backend.port}`), 3);
    assert.equal(pool.size, 3);
  });

  it('lets go of a tunnel the backend closed while idle; the next request opens another', async (t) => {
    // Closes each connection 100 ms after its answer, without announcing it (no Keep-Alive hint).
    const backend = await rawServer(t, (socket) =>
      onRequestHeads(socket, (head) => {
        const path = head.split(' ')[1];
        socket.write(`HTTP/1.1 200 OK\r\ncontent-length: ${4 + path!.length}\r\n\r\nsaw ${path}`);
        setTimeout(() => socket.end(), 100);
      }),
    );
    const proxy = await startProxy(t);
    const pool = poolFor(t, backend.port, { tunnel: tunnelProxyAt(proxy.port) });
    const first = await pool.request({ method: 'GET', path: '/a', headers: {} });
    assert.equal((await first.body.readAll(64)).toString(), 'saw /a');
    assert.equal(pool.size, 1);
    await waitFor(() => pool.size === 0, 'the closed tunnel to leave the pool');
    const second = await pool.request({ method: 'GET', path: '/b', headers: {} });
    assert.equal((await second.body.readAll(64)).toString(), 'saw /b');
    assert.equal(proxy.servedTo(`127.0.0.1:${backend.port}`), 2);
  });

  it('speaks TLS to the backend inside the tunnel, several requests on one connection', async (t) => {
    const backend = await httpsServer(t, (req, res) => res.end(`secure ${req.url}`));
    const proxy = await startProxy(t);
    const pool = poolFor(t, backend.port, {
      tunnel: tunnelProxyAt(proxy.port),
      tls: { ca: TEST_CA, servername: 'backend.example.test' },
    });
    for (const path of ['/a', '/b', '/c']) {
      const response = await pool.request({ method: 'GET', path, headers: {} });
      assert.equal((await response.body.readAll(64)).toString(), `secure ${path}`);
    }
    assert.equal(proxy.servedTo(`127.0.0.1:${backend.port}`), 1);
  });
});

describe("gw's HTTP/1.1 pool: a tunnel that does not open", () => {
  it('fails the request and keeps no connection: bytes with the proxy’s answer, a proxy closing mid-answer', async (t) => {
    const early = await rawServer(t, (socket) =>
      onRequestHeads(socket, () => socket.write('HTTP/1.1 200 OK\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n')),
    );
    const midAnswer = await rawServer(t, (socket) =>
      onRequestHeads(socket, () => socket.end('HTTP/1.1 200 Connection established\r\n')),
    );
    for (const [proxy, message] of [
      [early, /sent bytes before gw's request/],
      [midAnswer, /closed the connection before answering CONNECT/],
    ] as const) {
      const pool = poolFor(t, 9, { tunnel: tunnelProxyAt(proxy.port) });
      const error = await rejection(pool.request({ method: 'GET', path: '/', headers: {} }));
      assert.equal(error.code, 'UPSTREAM_TUNNEL_FAILED');
      assert.match(error.message, message);
      assert.equal(pool.size, 0);
      await waitFor(() => proxy.closed === proxy.accepted, 'the tunnel to close');
    }
  });

  it('a pool closed while its tunnel opens fails the request and keeps no connection', async (t) => {
    const slowProxy = await rawServer(t, (socket) =>
      onRequestHeads(socket, () => setTimeout(() => socket.write('HTTP/1.1 200 OK\r\n\r\n'), 100)),
    );
    const pool = poolFor(t, 9, { tunnel: tunnelProxyAt(slowProxy.port) });
    const pending = pool.request({ method: 'GET', path: '/', headers: {} });
    await sleep(20);
    await pool.close();
    assert.equal((await rejection(pending)).code, 'UPSTREAM_POOL_CLOSED');
    assert.equal(pool.size, 0);
    await waitFor(() => slowProxy.closed === slowProxy.accepted, 'the tunnel to close');
  });
});
