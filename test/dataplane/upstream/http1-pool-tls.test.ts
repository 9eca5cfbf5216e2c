// gw's HTTP/1.1 upstream pool over TLS (the fixture CA and backend certificate, a pinned server
// name) and over a Unix domain socket.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createSecureServer } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TLSSocket } from 'node:tls';
import {
  BACKEND_CERT,
  httpServer,
  httpsServer,
  listenServer,
  poolFor,
  rawServer,
  rejection,
  silent,
  TEST_CA,
  waitFor,
} from './upstream-servers.ts';

const PINNED = { ca: TEST_CA, servername: 'backend.example.test' };

describe('Http1Pool over TLS', () => {
  it('speaks HTTPS with the fixture CA and the pinned server name, reusing one connection', async (t) => {
    const upstream = await httpsServer(t, (req, res) => {
      const socket = req.socket as TLSSocket;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ servername: socket.servername, port: socket.remotePort, host: req.headers.host }));
    });
    const pool = poolFor(t, upstream.port, { tls: PINNED, hostHeader: 'provider.example' });
    const answers = [];
    for (let i = 0; i < 3; i++) {
      const response = await pool.request({ method: 'GET', path: '/', headers: {} });
      assert.equal(response.statusCode, 200);
      answers.push(JSON.parse((await response.body.readAll(1024)).toString()));
    }
    assert.equal(answers[0].servername, 'backend.example.test');
    assert.equal(answers[0].host, 'provider.example');
    assert.equal(new Set(answers.map((answer) => answer.port)).size, 1);
    assert.equal(upstream.accepted, 1);
    assert.equal(pool.size, 1);
  });

  it('delivers a large body both ways over TLS', async (t) => {
    const upstream = await httpsServer(t, async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      res.end(Buffer.concat(chunks).reverse());
    });
    const pool = poolFor(t, upstream.port, { tls: PINNED });
    const body = Buffer.from(Array.from({ length: 300_000 }, (_, i) => i % 251));
    const response = await pool.request({ method: 'PUT', path: '/', headers: {}, body });
    assert.deepEqual(await response.body.readAll(1024 * 1024), Buffer.from(body).reverse());
  });

  it('resumes the TLS session on a new connection', async (t) => {
    const upstream = await httpsServer(t, (req, res) => res.end(String((req.socket as TLSSocket).isSessionReused())));
    const pool = poolFor(t, upstream.port, { tls: PINNED, keepAliveMs: 50 });
    assert.equal(
      (await (await pool.request({ method: 'GET', path: '/', headers: {} })).body.readAll(10)).toString(),
      'false',
    );
    await sleep(100);
    assert.equal(
      (await (await pool.request({ method: 'GET', path: '/', headers: {} })).body.readAll(10)).toString(),
      'true',
    );
    assert.equal(upstream.accepted, 2);
  });

  it('fails with a certificate error for a server it does not trust', async (t) => {
    const upstream = await httpsServer(t, (_req, res) => res.end('never'));
    const pool = poolFor(t, upstream.port, { tls: { servername: 'backend.example.test' } });
    const error = await rejection(pool.request({ method: 'GET', path: '/', headers: {} }));
    assert.match(String(error.code), /^(UNABLE_TO_|SELF_SIGNED_|CERT_|DEPTH_ZERO)/);
    assert.equal(pool.size, 0);
  });

  it('fails when the certificate does not name the pinned server', async (t) => {
    const upstream = await httpsServer(t, (_req, res) => res.end('never'));
    const pool = poolFor(t, upstream.port, { tls: { ca: TEST_CA, servername: 'other.example.test' } });
    const error = await rejection(pool.request({ method: 'GET', path: '/', headers: {} }));
    assert.equal(error.code, 'ERR_TLS_CERT_ALTNAME_INVALID');
  });

  it('fails with UPSTREAM_CONNECT_TIMEOUT when the server accepts TCP but never answers the handshake', async (t) => {
    const upstream = await rawServer(t, silent);
    const pool = poolFor(t, upstream.port, { tls: PINNED, connectTimeoutMs: 300 });
    const started = performance.now();
    const error = await rejection(pool.request({ method: 'GET', path: '/', headers: {} }));
    const elapsed = performance.now() - started;
    assert.equal(error.code, 'UPSTREAM_CONNECT_TIMEOUT');
    assert.ok(elapsed >= 290 && elapsed < 1000, `failed after ${Math.round(elapsed)} ms`);
    assert.equal(pool.size, 0);
    await waitFor(() => upstream.closed === 1, 'the upstream connection to close');
  });

  it('refuses a connection on which the server chose HTTP/2', async (t) => {
    const server = createSecureServer({ ...BACKEND_CERT, allowHTTP1: false });
    server.on('stream', (stream) => {
      stream.respond({ ':status': 200 });
      stream.end('h2');
    });
    const upstream = await listenServer(t, server);
    const pool = poolFor(t, upstream.port, { tls: { ...PINNED, ALPNProtocols: ['h2', 'http/1.1'] } });
    const error = await rejection(pool.request({ method: 'GET', path: '/', headers: {} }));
    assert.equal(error.code, 'UPSTREAM_PROTOCOL_ERROR');
    assert.equal(pool.size, 0);
  });
});

describe('Http1Pool over a Unix domain socket', () => {
  it('sends requests over the socket and reuses the connection', async (t) => {
    const directory = mkdtempSync(join(tmpdir(), 'gw-upstream-'));
    t.after(() => rmSync(directory, { recursive: true, force: true }));
    const path = join(directory, 'upstream.sock');
    const upstream = await httpServer(
      t,
      (req, res) => res.end(`${req.method} ${req.url} ${req.headers.host}`),
      undefined,
      path,
    );
    const pool = poolFor(t, 0, { socketPath: path, host: 'localhost', hostHeader: 'provider.local' });
    for (const url of ['/one', '/two?x=1']) {
      const response = await pool.request({ method: 'POST', path: url, headers: {}, body: Buffer.from('{}') });
      assert.equal((await response.body.readAll(100)).toString(), `POST ${url} provider.local`);
    }
    assert.equal(upstream.accepted, 1);
    assert.equal(pool.size, 1);
  });
});
