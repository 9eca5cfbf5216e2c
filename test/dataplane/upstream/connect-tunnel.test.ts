// Dialling through a CONNECT proxy (src/dataplane/upstream/connect-tunnel.ts) against raw proxies
// on 127.0.0.1 that answer exactly what each case needs: an HTTP/1.0 200 with the backend's
// first bytes after it (kept for the reader), bytes before a TLS handshake, an answer that is not
// HTTP, a proxy that closes or stays silent past its own deadline, a caller that gives up; and gw's
// HTTP/1.1 pool through a tunnel: one CONNECT for several requests, a pool closed while its
// tunnel is being opened.
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import {
  dialThroughProxy,
  type TunnelProxy,
  type TunnelTarget,
} from '../../../src/dataplane/upstream/connect-tunnel.ts';
import { startConnectProxy } from '../../support/connect-proxy.ts';
import { httpServer, onRequestHeads, poolFor, rawServer, rejection, TEST_CA } from './upstream-servers.ts';

function proxyAt(port: number, more: Partial<TunnelProxy> = {}): TunnelProxy {
  return {
    name: `http://127.0.0.1:${port}`,
    host: '127.0.0.1',
    port,
    socketPath: undefined,
    tls: undefined,
    connectTimeoutMs: undefined,
    keepalive: undefined,
    headers: [],
    key: String(port),
    ...more,
  };
}

function target(proxyPort: number, more: Partial<TunnelTarget> = {}): TunnelTarget {
  return {
    host: 'backend.example.test',
    port: 443,
    tls: undefined,
    connectTimeoutMs: 2000,
    proxy: proxyAt(proxyPort),
    ...more,
  };
}

/** A proxy that answers each CONNECT head with `answer` (and records the heads it got). */
async function scriptedProxy(t: TestContext, answer: string | undefined, heads: string[] = []) {
  return rawServer(t, (socket) =>
    onRequestHeads(socket, (head) => {
      heads.push(head);
      if (answer === undefined) return;
      if (answer === 'close') return void socket.end();
      socket.write(answer, 'latin1');
    }),
  );
}

async function firstBytes(socket: Socket): Promise<string> {
  socket.resume();
  const [chunk] = (await new Promise((resolve) => socket.once('data', (data) => resolve([data])))) as [Buffer];
  return chunk.toString('latin1');
}

describe('dialling through a CONNECT proxy', () => {
  it('sends CONNECT with Host and the proxy headers; an HTTP/1.0 200 opens it, and bytes after it stay the reader’s', async (t) => {
    const heads: string[] = [];
    const proxy = await scriptedProxy(t, 'HTTP/1.0 200 Connection established\r\nVia: test\r\n\r\nhello', heads);
    const socket = await dialThroughProxy(
      target(proxy.port, { proxy: proxyAt(proxy.port, { headers: [['proxy-authorization', 'Bearer k']] }) }),
    );
    t.after(() => socket.destroy());
    assert.equal(await firstBytes(socket), 'hello');
    assert.equal(
      heads[0],
      'CONNECT backend.example.test:443 HTTP/1.1\r\nHost: backend.example.test:443\r\nproxy-authorization: Bearer k',
    );
  });

  it('an IPv6 destination is named in brackets', async (t) => {
    const heads: string[] = [];
    const proxy = await scriptedProxy(t, 'HTTP/1.1 200 OK\r\n\r\n', heads);
    const socket = await dialThroughProxy(target(proxy.port, { host: '::1', port: 8080 }));
    socket.destroy();
    assert.match(heads[0]!, /^CONNECT \[::1\]:8080 HTTP\/1\.1\r\nHost: \[::1\]:8080$/);
  });

  it('refuses what is not a tunnel: bytes before the backend’s TLS, an answer that is not HTTP, a proxy that closes', async (t) => {
    const early = await scriptedProxy(t, 'HTTP/1.1 200 OK\r\n\r\nearly');
    const tls = { ca: TEST_CA, servername: 'backend.example.test' };
    const tooEarly = await rejection(dialThroughProxy(target(early.port, { tls })));
    assert.equal(tooEarly.code, 'UPSTREAM_TUNNEL_FAILED');
    assert.match(tooEarly.message, /sent bytes before the backend's TLS handshake/);
    const nonsense = await scriptedProxy(t, 'SSH-2.0-OpenSSH\r\n\r\n');
    assert.match(
      (await rejection(dialThroughProxy(target(nonsense.port)))).message,
      /did not answer CONNECT with HTTP\/1\.1/,
    );
    const closing = await scriptedProxy(t, 'close');
    assert.match(
      (await rejection(dialThroughProxy(target(closing.port)))).message,
      /closed the connection before answering CONNECT/,
    );
  });

  it('the proxy’s own deadline, the whole deadline, and a caller that gives up', async (t) => {
    const silentProxy = await scriptedProxy(t, undefined);
    const own = await rejection(
      dialThroughProxy(target(silentProxy.port, { proxy: proxyAt(silentProxy.port, { connectTimeoutMs: 50 }) })),
    );
    assert.equal(own.code, 'UPSTREAM_TUNNEL_FAILED');
    assert.match(own.message, /did not answer within 50 ms/);
    const whole = await rejection(dialThroughProxy(target(silentProxy.port, { connectTimeoutMs: 50 })));
    assert.equal(whole.code, 'UPSTREAM_CONNECT_TIMEOUT');
    const abort = new AbortController();
    const dialling = dialThroughProxy(target(silentProxy.port), { signal: abort.signal });
    setTimeout(() => abort.abort(), 20);
    assert.equal((await rejection(dialling)).code, 'ABORT_ERR');
    // Every connection the dials opened is closed.
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(silentProxy.closed, silentProxy.accepted);
  });
});

describe("gw's HTTP/1.1 pool through a tunnel", () => {
  it('carries several requests on one tunnel', async (t) => {
    const backend = await httpServer(t, (req, res) => res.end(`saw ${req.url}`));
    const proxy = await startConnectProxy();
    t.after(() => proxy.close());
    const pool = poolFor(t, backend.port, { tunnel: proxyAt(proxy.port) });
    for (const path of ['/a', '/b']) {
      const response = await pool.request({ method: 'GET', path, headers: {} });
      assert.equal(response.statusCode, 200);
      assert.equal((await response.body.readAll(1024)).toString(), `saw ${path}`);
    }
    assert.equal(proxy.servedTo(`127.0.0.1:${backend.port}`), 1);
    assert.equal(pool.size, 1);
  });

  it('a pool closed while its tunnel opens fails the request and keeps no connection', async (t) => {
    const slowProxy = await rawServer(t, (socket) =>
      onRequestHeads(socket, () => setTimeout(() => socket.write('HTTP/1.1 200 OK\r\n\r\n'), 100)),
    );
    const pool = poolFor(t, 9, { tunnel: proxyAt(slowProxy.port) });
    const pending = pool.request({ method: 'GET', path: '/', headers: {} });
    await new Promise((resolve) => setTimeout(resolve, 20));
    await pool.close();
    assert.equal((await rejection(pending)).code, 'UPSTREAM_POOL_CLOSED');
    assert.equal(pool.size, 0);
  });
});
