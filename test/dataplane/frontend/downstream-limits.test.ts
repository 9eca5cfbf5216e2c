// What a client may cost gw (issue 17, items 1, 7 and 11): the request-header deadline, the
// request-body deadlines (idle; whole for a body gw buffers), the response write deadline, the
// budget of request-body bytes buffered while they arrive, 431 for header overflow, and the
// bounded cost of HTTP/2 streams (concurrency, resets). gw runs with short deadlines, as the
// `gw run` options set them, and real clients: raw sockets for what fetch cannot do, node's
// HTTP/2 client. (The memory these limits bound, measured in a gw run process:
// downstream-memory.test.ts.)
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { type ClientHttp2Session, constants, connect as http2Connect } from 'node:http2';
import { type AddressInfo, connect as netConnect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { EVICTABLE_IDLE_MS } from '../../../src/dataplane/server/buffer-budget.ts';
import {
  type DownstreamLimits,
  downstreamLimits,
  HTTP2_MAX_CONCURRENT_STREAMS,
  HTTP2_STREAM_RESET_BURST,
  HTTP2_STREAM_RESET_RATE,
} from '../../../src/dataplane/server/downstream-limits.ts';
import { aiBackendYaml, freePort, gatewayYaml, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { prefixRouteYaml, trafficPolicyYaml } from '../../helpers/policy-yaml.ts';
import { until } from '../../helpers/until.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';
import { rawExchange, statusOf } from './helpers.ts';

const MiB = 1024 * 1024;

function limitsOf(overrides: Partial<DownstreamLimits>): DownstreamLimits {
  const limits = downstreamLimits(overrides);
  assert.ok(typeof limits !== 'string', limits as string);
  return limits;
}

/** Short deadlines (the watchdog looks every 125 ms) and a budget of a few MiB. */
const SHORT = limitsOf({
  requestHeaderTimeoutMs: 500,
  requestBodyIdleTimeoutMs: 500,
  requestBodyTimeoutMs: 1500,
  responseWriteTimeoutMs: 500,
  maxBufferedBytes: 8 * MiB,
  maxBufferedBytesPerListener: 6 * MiB,
});

/** An HTTP upstream: /upload reads a body, /big streams 64 MiB, /hang never answers, anything else is "ok". */
interface WebUpstream {
  port: number;
  /** Paths of requests whose response was cut before it finished. */
  cut: string[];
  /** Requests to /hang now, and the most at once. */
  hanging: number;
  peakHanging: number;
  server: Server;
}

const BIG_BYTES = 64 * MiB;

async function startWebUpstream(): Promise<WebUpstream> {
  const upstream: WebUpstream = { port: 0, cut: [], hanging: 0, peakHanging: 0, server: undefined as never };
  upstream.server = createServer((req, res) => {
    const path = req.url ?? '/';
    res.once('close', () => {
      if (!res.writableFinished) upstream.cut.push(path);
    });
    if (path.startsWith('/upload')) {
      let received = 0;
      req.on('data', (chunk: Buffer) => {
        received += chunk.length;
      });
      req.on('end', () => res.end(String(received)));
      return;
    }
    req.resume();
    if (path.startsWith('/big')) return void streamBig(res);
    if (path === '/hang') {
      upstream.hanging++;
      upstream.peakHanging = Math.max(upstream.peakHanging, upstream.hanging);
      res.once('close', () => upstream.hanging--);
      return;
    }
    res.end('ok');
  });
  await new Promise<void>((resolve) => upstream.server.listen(0, '127.0.0.1', resolve));
  upstream.port = (upstream.server.address() as AddressInfo).port;
  return upstream;
}

/** BIG_BYTES in 64 KiB writes, each after the last has drained. */
function streamBig(res: import('node:http').ServerResponse): void {
  const chunk = Buffer.alloc(64 * 1024, 'x');
  let sent = 0;
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': BIG_BYTES });
  const more = () => {
    while (sent < BIG_BYTES && !res.destroyed) {
      sent += chunk.length;
      if (sent >= BIG_BYTES) return void res.end(chunk);
      if (!res.write(chunk)) return void res.once('drain', more);
    }
  };
  more();
}

interface LimitsGateway {
  gw: TestGateway;
  port: number;
  provider: MockServer;
  web: WebUpstream;
  stop(): Promise<void>;
}

/**
 * gw with `limits`: the OpenAI mock at /v1 (HTTPRoute llm: bodies read whole), the web upstream
 * for the rest (HTTPRoute web: bodies streamed); `extra` adds YAML documents (ending with ---).
 */
async function startLimitsGateway(limits: DownstreamLimits, extra = ''): Promise<LimitsGateway> {
  const provider = await startOpenAiMock({ apiKey: 'sk-upstream' });
  const web = await startWebUpstream();
  const port = await freePort();
  const gw = await startTestGateway(
    {
      'gateway.yaml': `${gatewayYaml(port)}${aiBackendYaml('openai', provider.port, 'alpha: {}', 'sk-upstream', '{/v1/chat/completions: Completions}')}${prefixRouteYaml('llm', { prefix: '/v1', backend: 'openai' })}apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: web}
spec: {static: {host: 127.0.0.1, port: ${web.port}}}
---
${prefixRouteYaml('web', { prefix: '/', backend: 'web' })}${extra}`,
    },
    limits,
  );
  return {
    gw,
    port,
    provider,
    web,
    async stop() {
      await gw.stop();
      await provider.close();
      web.server.closeAllConnections();
      web.server.close();
    },
  };
}

const CHAT_BODY = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });

/** The head of a chat completion request whose body will be `length` bytes. */
function chatHead(length: number, path = '/v1/chat/completions'): string {
  return `POST ${path} HTTP/1.1\r\nhost: gw.test\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`;
}

/** A raw connection to gw that collects what comes back. */
async function rawConnection(port: number): Promise<{ socket: Socket; received(): string; closed: Promise<number> }> {
  const started = performance.now();
  const socket = netConnect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  let data = '';
  socket.on('data', (chunk: Buffer) => {
    data += chunk.toString('latin1');
  });
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(performance.now() - started)));
  await new Promise((resolve) => socket.once('connect', resolve));
  return { socket, received: () => data, closed };
}

/** The body of a raw HTTP/1.1 answer. */
function bodyText(data: string): string {
  return data.slice(data.indexOf('\r\n\r\n') + 4);
}

function h2Session(port: number): Promise<ClientHttp2Session> {
  const session = http2Connect(`http://127.0.0.1:${port}`);
  session.on('error', () => undefined);
  return new Promise((resolve) => session.once('remoteSettings', () => resolve(session)));
}

describe('downstream deadlines', () => {
  let gateway: LimitsGateway;
  before(async () => {
    gateway = await startLimitsGateway(SHORT);
  });
  after(async () => {
    await gateway?.stop();
  });

  it('answers 408 in the client’s format to a stalled body gw reads whole, at the idle deadline, and closes the connection', async () => {
    const client = await rawConnection(gateway.port);
    client.socket.write(`${chatHead(1000)}{"model":"gpt-4o-mini","messages":[`);
    const elapsed = await client.closed;
    const data = client.received();
    assert.equal(statusOf(data), 408, data);
    const error = JSON.parse(bodyText(data)) as { error: { message: string } };
    assert.match(error.error.message, /No request body bytes arrived for 500 ms/);
    assert.ok(elapsed >= 450 && elapsed < 2000, `closed after ${elapsed} ms`);
    assert.equal(gateway.provider.requests.length, 0, 'nothing reached the provider');
  });

  it('answers 408 to a stalled body streamed to an HTTP backend before it answered, and cuts the upstream request', async () => {
    const client = await rawConnection(gateway.port);
    client.socket.write(`${chatHead(1000, '/upload/stalled')}0123456789`);
    const elapsed = await client.closed;
    assert.equal(statusOf(client.received()), 408, client.received());
    assert.ok(elapsed >= 450 && elapsed < 2000, `closed after ${elapsed} ms`);
    assert.ok(await until(() => gateway.web.cut.includes('/upload/stalled'), 2000), 'the upstream request was not cut');
  });

  it('answers 408 on an HTTP/2 stream whose body stalls, resets the stream and serves on on the connection', async () => {
    const session = await h2Session(gateway.port);
    try {
      const stalled = session.request({
        ':method': 'POST',
        ':path': '/v1/chat/completions',
        'content-type': 'application/json',
      });
      stalled.on('error', () => undefined);
      stalled.write('{"model":"gpt-4o-mini",');
      const started = performance.now();
      const status = await new Promise((resolve) => stalled.once('response', (headers) => resolve(headers[':status'])));
      let text = '';
      stalled.setEncoding('utf8');
      stalled.on('data', (chunk: string) => {
        text += chunk;
      });
      await new Promise((resolve) => stalled.once('close', resolve));
      const elapsed = performance.now() - started;
      assert.equal(status, 408);
      assert.match(text, /No request body bytes arrived/);
      assert.ok(elapsed >= 400 && elapsed < 2000, `answered after ${elapsed} ms`);
      const fine = session.request({ ':path': '/' });
      fine.resume();
      const next = await new Promise((resolve) => fine.once('response', (headers) => resolve(headers[':status'])));
      assert.equal(next, 200);
    } finally {
      session.destroy();
    }
  });

  it('lets a body that keeps coming take longer than the idle deadline', async () => {
    const body = Buffer.alloc(8, 'a');
    const client = await rawConnection(gateway.port);
    client.socket.write(chatHead(body.length, '/upload/slow'));
    for (const byte of body) {
      client.socket.write(Buffer.of(byte));
      await sleep(100);
    }
    assert.ok(await until(() => client.received().includes('\r\n\r\n8'), 2000), client.received());
    assert.equal(statusOf(client.received()), 200);
    client.socket.destroy();
  });

  it('answers 408 to a body gw reads whole that trickles past the whole-body deadline', async () => {
    const client = await rawConnection(gateway.port);
    client.socket.write(chatHead(1000));
    const trickle = setInterval(() => client.socket.write(' '), 150);
    try {
      const elapsed = await client.closed;
      const data = client.received();
      assert.equal(statusOf(data), 408, data);
      assert.match(bodyText(data), /did not arrive within 1500 ms/);
      assert.ok(elapsed >= 1450 && elapsed < 3000, `closed after ${elapsed} ms`);
    } finally {
      clearInterval(trickle);
    }
  });

  it('answers 408 to request headers that trickle past the header deadline', async () => {
    const head = 'GET / HTTP/1.1\r\nhost: gw.test\r\nx-slow: 0123456789012345678901234567890123456789\r\n\r\n';
    const client = await rawConnection(gateway.port);
    let sent = 0;
    const trickle = setInterval(() => client.socket.write(head[sent++ % head.length]!), 50);
    try {
      const elapsed = await client.closed;
      assert.equal(statusOf(client.received()), 408, client.received());
      assert.ok(elapsed >= 450 && elapsed < 1500, `closed after ${elapsed} ms`);
    } finally {
      clearInterval(trickle);
    }
  });

  it('closes a connection that sends nothing (HTTP/1 or HTTP/2) at the header deadline', async () => {
    const silent = await rawConnection(gateway.port);
    const elapsed = await silent.closed;
    assert.equal(silent.received(), '');
    assert.ok(elapsed >= 450 && elapsed < 1500, `closed after ${elapsed} ms`);

    const started = performance.now();
    const session = await h2Session(gateway.port);
    await new Promise((resolve) => session.once('close', resolve));
    const h2Elapsed = performance.now() - started;
    assert.ok(h2Elapsed >= 450 && h2Elapsed < 1500, `HTTP/2 connection closed after ${h2Elapsed} ms`);
  });

  it('keeps a kept-alive connection between requests past the header deadline (http1IdleTimeout governs it)', async () => {
    const client = await rawConnection(gateway.port);
    client.socket.write('GET / HTTP/1.1\r\nhost: gw.test\r\n\r\n');
    assert.ok(await until(() => client.received().endsWith('ok'), 2000));
    await sleep(800);
    client.socket.write('GET /again HTTP/1.1\r\nhost: gw.test\r\nconnection: close\r\n\r\n');
    await client.closed;
    assert.equal(client.received().match(/HTTP\/1\.1 200/g)?.length, 2, client.received());
  });

  it('cuts an HTTP/1 response the client stops reading at the write deadline, and its upstream request', async () => {
    const client = await rawConnection(gateway.port);
    client.socket.pause();
    client.socket.write('GET /big HTTP/1.1\r\nhost: gw.test\r\n\r\n');
    assert.ok(await until(() => gateway.web.cut.includes('/big'), 5000), 'the response was not cut');
    let received = 0;
    client.socket.removeAllListeners('data');
    client.socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
    });
    client.socket.resume();
    await client.closed;
    assert.ok(received < BIG_BYTES, `the client got ${received} bytes`);
  });

  it('closes an HTTP/2 connection whose client reads nothing at all past the write deadline, and aborts its upstream request', async () => {
    const socket = greedyHttp2Request(gateway.port, '/big?greedy');
    try {
      assert.ok(await until(() => gateway.web.cut.includes('/big?greedy'), 5000), 'the upstream request was not cut');
    } finally {
      socket.destroy();
    }
  });

  it('resets an HTTP/2 stream whose client withholds flow control past the write deadline; the connection serves on', async () => {
    const session = await h2Session(gateway.port);
    try {
      const stalled = session.request({ ':path': '/big' });
      stalled.on('error', () => undefined);
      stalled.pause();
      const code = await new Promise<number>((resolve) => stalled.once('close', () => resolve(stalled.rstCode)));
      assert.equal(code, constants.NGHTTP2_CANCEL);
      const fine = session.request({ ':path': '/' });
      let text = '';
      fine.setEncoding('utf8');
      fine.on('data', (chunk: string) => {
        text += chunk;
      });
      await new Promise((resolve) => fine.once('end', resolve));
      assert.equal(text, 'ok');
    } finally {
      session.destroy();
    }
  });
});

/**
 * An HTTP/2 connection opened with raw frames: the client preface, SETTINGS with the largest
 * stream window, a connection WINDOW_UPDATE to match, and a GET of `path` on stream 1 — a client
 * that lets gw send as much as it likes and then reads none of it.
 */
function greedyHttp2Request(port: number, path: string): Socket {
  const frame = (type: number, flags: number, stream: number, payload: Buffer) => {
    const head = Buffer.alloc(9);
    head.writeUIntBE(payload.length, 0, 3);
    head[3] = type;
    head[4] = flags;
    head.writeUInt32BE(stream, 5);
    return Buffer.concat([head, payload]);
  };
  const settings = Buffer.alloc(6);
  settings.writeUInt16BE(0x4, 0); // SETTINGS_INITIAL_WINDOW_SIZE
  settings.writeUInt32BE(2 ** 31 - 1, 2);
  const increment = Buffer.alloc(4);
  increment.writeUInt32BE(2 ** 31 - 1 - 65_535, 0);
  // HPACK: :method GET, :scheme http (static table), :path and :authority as literals with indexed names.
  const block = Buffer.concat([
    Buffer.from([0x82, 0x86, 0x44, path.length]),
    Buffer.from(path),
    Buffer.from([0x41, 7]),
    Buffer.from('gw.test'),
  ]);
  const socket = netConnect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  socket.write(
    Buffer.concat([
      Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
      frame(0x4, 0, 0, settings),
      frame(0x8, 0, 0, increment),
      frame(0x1, 0x5, 1, block), // HEADERS, END_STREAM | END_HEADERS
    ]),
  );
  socket.pause();
  return socket;
}

describe('the buffer budget', () => {
  it('refuses with 503 the bodies beyond a listener’s share, at once, and gives the bytes back when the stalled ones are cut', async () => {
    const gateway = await startLimitsGateway(SHORT);
    const clients: Awaited<ReturnType<typeof rawConnection>>[] = [];
    try {
      // Six 1 MiB bodies fill the port's 6 MiB; the seventh cannot have its declared length.
      for (let i = 0; i < 7; i++) {
        const client = await rawConnection(gateway.port);
        client.socket.write(`${chatHead(MiB)}${' '.repeat(1000)}`);
        clients.push(client);
        await sleep(20);
      }
      const budget = gateway.gw.gateway.dataPlane.bufferBudget;
      assert.ok(await until(() => statusOf(clients[6]!.received()) === 503, 300), clients[6]!.received());
      assert.match(bodyText(clients[6]!.received()), /buffering too many request bodies/);
      // In the client's format: an OpenAI server error (Anthropic clients get overloaded_error).
      assert.equal(
        (JSON.parse(bodyText(clients[6]!.received())) as { error: { type: string } }).error.type,
        'server_error',
      );
      assert.equal(budget.used, 6 * MiB);
      for (const client of clients.slice(0, 6)) assert.equal(client.received(), '');
      // The six stall: cut at the idle deadline, and the budget is empty again.
      await Promise.all(clients.map((client) => client.closed));
      for (const client of clients.slice(0, 6)) assert.equal(statusOf(client.received()), 408);
      assert.equal(budget.used, 0);
      assert.equal([...budget.reservations()].length, 0);
    } finally {
      for (const client of clients) client.socket.destroy();
      await gateway.stop();
    }
  });

  it('serves a body that arrived whole while gw was busy before reading it (the watchdog has let it go)', async () => {
    const gateway = await startLimitsGateway(SHORT, trafficPolicyYaml('slow', 'llm', 'delay: {duration: 400ms}'));
    try {
      const response = await fetch(`http://127.0.0.1:${gateway.port}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: CHAT_BODY,
      });
      assert.equal(response.status, 200, await response.clone().text());
      assert.equal(gateway.gw.gateway.dataPlane.bufferBudget.used, 0);
    } finally {
      await gateway.stop();
    }
  });

  it('serves a small body that arrives whole without the budget, evicts a body silent for a while (408) for one that comes in pieces', async () => {
    const gateway = await startLimitsGateway(
      limitsOf({ requestBodyIdleTimeoutMs: 10_000, maxBufferedBytes: 2 * MiB, maxBufferedBytesPerListener: 2 * MiB }),
    );
    /** A chat completion whose body comes in two pieces (so it is buffered, through the budget); its status. */
    const inPieces = async () => {
      const client = await rawConnection(gateway.port);
      const half = CHAT_BODY.length >> 1;
      client.socket.write(
        `${chatHead(CHAT_BODY.length).replace('\r\n\r\n', '\r\nconnection: close\r\n\r\n')}${CHAT_BODY.slice(0, half)}`,
      );
      await sleep(50);
      client.socket.write(CHAT_BODY.slice(half));
      await client.closed;
      return statusOf(client.received());
    };
    try {
      const stalled = await rawConnection(gateway.port);
      stalled.socket.write(`${chatHead(2 * MiB)}{`);
      assert.ok(await until(() => gateway.gw.gateway.dataPlane.bufferBudget.used === 2 * MiB, 1000));
      // A body that arrives in one piece is in memory already: served, whatever the budget.
      const whole = await fetch(`http://127.0.0.1:${gateway.port}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: CHAT_BODY,
      });
      assert.equal(whole.status, 200);
      // One in pieces needs room; the stalled body has not been silent for long enough yet.
      assert.equal(await inPieces(), 503);
      await sleep(EVICTABLE_IDLE_MS + 100);
      assert.equal(await inPieces(), 200);
      await stalled.closed;
      assert.equal(statusOf(stalled.received()), 408);
      assert.match(bodyText(stalled.received()), /stalled while other clients needed the buffer/);
    } finally {
      await gateway.stop();
    }
  });
});

describe('request header overflow', () => {
  let gateway: LimitsGateway;
  before(async () => {
    gateway = await startLimitsGateway(SHORT);
  });
  after(async () => {
    await gateway?.stop();
  });

  it('answers 431 to more header fields than http1MaxHeaders (100 by default)', async () => {
    let fields = '';
    for (let index = 0; index < 150; index++) fields += `x-field-${index}: ${index}\r\n`;
    const { data, closed } = await rawExchange(gateway.port, `GET / HTTP/1.1\r\nhost: gw.test\r\n${fields}\r\n`);
    assert.equal(statusOf(data), 431, data);
    assert.ok(closed);
  });

  it('answers 431 to a header over the 16 KiB node allows', async () => {
    const { data, closed } = await rawExchange(
      gateway.port,
      `GET / HTTP/1.1\r\nhost: gw.test\r\nx-big: ${'a'.repeat(20 * 1024)}\r\n\r\n`,
    );
    assert.equal(statusOf(data), 431, data);
    assert.ok(closed);
  });

  it('still serves 100 header fields', async () => {
    let fields = '';
    for (let index = 0; index < 98; index++) fields += `x-field-${index}: ${index}\r\n`;
    const { data } = await rawExchange(
      gateway.port,
      `GET / HTTP/1.1\r\nhost: gw.test\r\nconnection: close\r\n${fields}\r\n`,
    );
    assert.equal(statusOf(data), 200, data);
  });
});

describe('HTTP/2 stream limits', () => {
  let gateway: LimitsGateway;
  before(async () => {
    gateway = await startLimitsGateway(limitsOf({}));
  });
  after(async () => {
    await gateway?.stop();
  });

  it(`advertises and keeps ${HTTP2_MAX_CONCURRENT_STREAMS} concurrent streams per connection; a client that leaves cancels them upstream`, async () => {
    const session = await h2Session(gateway.port);
    try {
      assert.equal(session.remoteSettings.maxConcurrentStreams, HTTP2_MAX_CONCURRENT_STREAMS);
      for (let index = 0; index < 150; index++) session.request({ ':path': '/hang' }).on('error', () => undefined);
      assert.ok(
        await until(() => gateway.web.hanging === HTTP2_MAX_CONCURRENT_STREAMS, 3000),
        `${gateway.web.hanging}`,
      );
      await sleep(200);
      assert.equal(gateway.web.peakHanging, HTTP2_MAX_CONCURRENT_STREAMS);
    } finally {
      session.destroy();
    }
    assert.ok(await until(() => gateway.web.hanging === 0, 3000), 'the upstream requests were not cancelled');
  });

  it('closes a connection that opens and resets streams faster than the reset rate (rapid reset)', async () => {
    const served = gateway.gw.accessLog.length;
    const session = await h2Session(gateway.port);
    const closed = new Promise((resolve) => session.once('close', resolve));
    const started = performance.now();
    let opened = 0;
    for (; opened < 2000 && !session.closed && !session.destroyed; opened++) {
      const stream = session.request({ ':method': 'POST', ':path': '/v1/chat/completions' });
      stream.on('error', () => undefined);
      stream.end(CHAT_BODY);
      stream.close(constants.NGHTTP2_CANCEL);
      if (opened % 50 === 49) await new Promise((resolve) => setImmediate(resolve));
    }
    await closed;
    assert.ok(opened < 2000, 'the connection was never closed');
    const handled = gateway.gw.accessLog.length - served;
    // The burst, what the rate refilled meanwhile (a loaded machine takes longer), and the streams
    // in flight: nghttp2 reads a connection 64 KiB at a time and the streams of one read all reach
    // gw before the reset count of that read closes it (a stream here is its HEADERS, its DATA and
    // its RST_STREAM: about 50 bytes of frames besides the body).
    const refilled = (HTTP2_STREAM_RESET_RATE * (performance.now() - started)) / 1000;
    const inOneRead = Math.ceil((64 * 1024) / (Buffer.byteLength(CHAT_BODY) + 50));
    assert.ok(
      handled <= HTTP2_STREAM_RESET_BURST + refilled + inOneRead,
      `gw handled ${handled} streams of that connection (${refilled.toFixed(0)} refilled)`,
    );
    // The next connection is served.
    const next = await h2Session(gateway.port);
    try {
      const ok = next.request({ ':path': '/' });
      ok.resume();
      const status = await new Promise((resolve) => ok.once('response', (headers) => resolve(headers[':status'])));
      assert.equal(status, 200);
    } finally {
      next.destroy();
    }
  });
});
