// Dialling through a CONNECT proxy (src/dataplane/upstream/connect-tunnel.ts) against raw proxies
// on 127.0.0.1 that answer exactly what each case needs: an HTTP/1.0 200 with the backend's
// first bytes after it (kept for the reader), bytes before a TLS handshake, an answer that is not
// HTTP, a proxy that closes or stays silent past its own deadline, a caller that gives up; and
// reading into the caller's buffer (onread, plain through a plain proxy): the answer over many
// small reads and over the head limit, the backend's bytes to the caller's callback and never a
// 'data' event, bytes with the answer refused, onread ignored when the backend speaks TLS.
// gw's HTTP/1.1 pool through a tunnel: http1-pool-tunnel.test.ts.
import assert from 'node:assert/strict';
import type { OnReadOpts, Socket } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import {
  dialThroughProxy,
  MAX_PROXY_ANSWER_HEAD,
  type TunnelTarget,
} from '../../../src/dataplane/upstream/connect-tunnel.ts';
import { startConnectProxy } from '../../support/connect-proxy.ts';
import {
  httpsServer,
  onRequestHeads,
  rawServer,
  rejection,
  TEST_CA,
  tunnelProxyAt,
  waitFor,
} from './upstream-servers.ts';

function target(proxyPort: number, more: Partial<TunnelTarget> = {}): TunnelTarget {
  return {
    host: 'backend.example.test',
    port: 443,
    tls: undefined,
    connectTimeoutMs: 2000,
    proxy: tunnelProxyAt(proxyPort),
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
      target(proxy.port, { proxy: tunnelProxyAt(proxy.port, { headers: [['proxy-authorization', 'Bearer k']] }) }),
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
      dialThroughProxy(target(silentProxy.port, { proxy: tunnelProxyAt(silentProxy.port, { connectTimeoutMs: 50 }) })),
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

/** A caller's buffer of `size` bytes and a callback that keeps (a copy of) every read. */
function readsInto(size: number): { onread: OnReadOpts; reads: Buffer[]; text: () => string } {
  const reads: Buffer[] = [];
  const onread = {
    buffer: Buffer.alloc(size),
    callback: (bytes: number, buffer: Uint8Array) => {
      reads.push(Buffer.from(buffer.subarray(0, bytes)));
      return true;
    },
  };
  return { onread, reads, text: () => Buffer.concat(reads).toString('latin1') };
}

describe("dialling through a CONNECT proxy into the caller's buffer (onread)", () => {
  it("reads the answer over many small reads, then gives the backend's bytes to the caller's callback, never as 'data'", async (t) => {
    // The proxy relays nothing: it answers CONNECT, then answers what comes through the tunnel itself.
    const proxy = await rawServer(t, (socket) =>
      onRequestHeads(socket, (_head, index) =>
        socket.write(
          index === 0
            ? 'HTTP/1.1 200 Connection established\r\nVia: 1.1 test-proxy-1\r\n\r\n'
            : 'HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello',
        ),
      ),
    );
    // Five bytes a read: the answer head takes a dozen, its blank line (bytes 58 to 61) straddles
    // two, and each read overwrites the last (what the answer keeps, it must have copied).
    const caller = readsInto(5);
    const socket = await dialThroughProxy(target(proxy.port), { onread: caller.onread });
    t.after(() => socket.destroy());
    let dataEvents = 0;
    socket.on('data', () => dataEvents++);
    assert.equal(caller.reads.length, 0, 'the answer is not the caller’s');
    socket.write('GET / HTTP/1.1\r\nHost: backend.example.test\r\n\r\n');
    await waitFor(() => caller.text().endsWith('hello'), 'the backend’s answer');
    assert.equal(caller.text(), 'HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello');
    assert.ok(caller.reads.every((read) => read.length <= 5));
    assert.equal(dataEvents, 0);
  });

  it('an answer head just under the limit opens the tunnel; over it, read in pieces, is refused', async (t) => {
    // startConnectProxy's headBytes: `HTTP/1.1 200 OK\r\nx-filler: <n bytes>\r\n\r\n`, the head ending at n + 27.
    const under = await startConnectProxy({ headBytes: MAX_PROXY_ANSWER_HEAD - 27 });
    const over = await startConnectProxy({ headBytes: MAX_PROXY_ANSWER_HEAD });
    t.after(() => Promise.all([under.close(), over.close()]));
    const socket = await dialThroughProxy(target(under.port), { onread: readsInto(1000).onread });
    socket.destroy();
    const refused = await rejection(dialThroughProxy(target(over.port), { onread: readsInto(1000).onread }));
    assert.equal(refused.code, 'UPSTREAM_TUNNEL_FAILED');
    assert.match(refused.message, /answered CONNECT with a head over 16384 bytes/);
  });

  it('refuses bytes with the answer (no HTTP server speaks first), a refusal, nonsense, and a proxy closing mid-answer', async (t) => {
    const caller = readsInto(64 * 1024);
    const dial = (port: number) => rejection(dialThroughProxy(target(port), { onread: caller.onread }));
    const early = await scriptedProxy(t, 'HTTP/1.1 200 OK\r\n\r\nearly');
    const tooEarly = await dial(early.port);
    assert.equal(tooEarly.code, 'UPSTREAM_TUNNEL_FAILED');
    assert.equal(tooEarly.message, `the tunnel proxy http://127.0.0.1:${early.port} sent bytes before gw's request`);
    const authProxy = await startConnectProxy({ requireAuthorization: 'Basic dTpw' });
    t.after(() => authProxy.close());
    const refused = (await dial(authProxy.port)) as Error & { proxyStatus?: number };
    assert.equal(refused.proxyStatus, 407);
    assert.match(refused.message, /refused CONNECT backend\.example\.test:443 with 407 \(it wants credentials/);
    const nonsense = await scriptedProxy(t, 'SSH-2.0-OpenSSH\r\n\r\n');
    assert.match((await dial(nonsense.port)).message, /did not answer CONNECT with HTTP\/1\.1/);
    const midAnswer = await rawServer(t, (socket) =>
      onRequestHeads(socket, () => socket.end('HTTP/1.1 200 Connection established\r\nVia: x\r\n')),
    );
    assert.match((await dial(midAnswer.port)).message, /closed the connection before answering CONNECT/);
    assert.equal(caller.reads.length, 0, 'nothing reached the caller');
    await waitFor(
      () => early.closed === early.accepted && midAnswer.closed === midAnswer.accepted,
      'the tunnels to close',
    );
  });

  it("is ignored when the backend speaks TLS: the backend's TLS socket reads through its stream", async (t) => {
    const backend = await httpsServer(t, (_req, res) => res.end('over tls'));
    const proxy = await startConnectProxy();
    t.after(() => proxy.close());
    const caller = readsInto(64 * 1024);
    const socket = await dialThroughProxy(
      target(proxy.port, {
        host: '127.0.0.1',
        port: backend.port,
        tls: { ca: TEST_CA, servername: 'backend.example.test' },
      }),
      { onread: caller.onread },
    );
    t.after(() => socket.destroy());
    socket.write('GET / HTTP/1.1\r\nHost: backend.example.test\r\nConnection: close\r\n\r\n');
    let answer = '';
    for await (const chunk of socket) answer += (chunk as Buffer).toString('latin1');
    assert.match(answer, /^HTTP\/1\.1 200 OK\r\n[\s\S]*over tls$/);
    assert.equal(caller.reads.length, 0);
  });
});
