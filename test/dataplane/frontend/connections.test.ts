// Frontend.tcp and the connection-level Frontend.http fields: TCP keepalive on accepted sockets,
// HTTP/1 header count and idle timeout, and maxConnectionDuration (HTTP/1: `connection: close`
// after the in-flight request, idle connections closed; HTTP/2: GOAWAY). Also how the fields
// compile (defaults, bounds) and what gw says about what it cannot do as configured.
import assert from 'node:assert/strict';
import { connect as http2Connect } from 'node:http2';
import { connect as netConnect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Frontend } from '../../../src/api/types/frontend.ts';
import {
  compileConnectionOptions,
  DEFAULT_CONNECTION_OPTIONS,
} from '../../../src/dataplane/server/listener-options.ts';
import { keepaliveReadbackUnavailable, socketKeepalive } from '../../helpers/socket-keepalive.ts';
import { until } from '../../helpers/until.ts';
import {
  bodyOf,
  closedWithin,
  type Echo,
  type FrontendGateway,
  rawExchange,
  startFrontendGateway,
  statusOf,
} from './helpers.ts';

/** An open keep-alive connection to send HTTP/1.1 requests on, one at a time. */
async function keepAliveConnection(
  port: number,
): Promise<{ socket: Socket; get(path: string, headerLines?: string): Promise<string> }> {
  const socket = netConnect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  await new Promise((resolve) => socket.once('connect', resolve));
  let buffered = '';
  socket.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('latin1');
  });
  return {
    socket,
    async get(path, headerLines = '') {
      buffered = '';
      socket.write(`GET ${path} HTTP/1.1\r\nhost: gw.test\r\n${headerLines}\r\n`);
      // One response: its head, then content-length bytes of body.
      const complete = () => {
        const end = buffered.indexOf('\r\n\r\n');
        if (end === -1) return false;
        const length = /content-length: (\d+)/i.exec(buffered.slice(0, end));
        return length !== null && buffered.length >= end + 4 + Number(length[1]);
      };
      assert.ok(await until(complete, 3000), `no complete response to ${path}: ${buffered}`);
      return buffered;
    },
  };
}

describe('Frontend connection settings', () => {
  it('compile with the spec defaults', () => {
    const compiled = compileConnectionOptions({ http: {}, tcp: { keepalive: {} } } as Frontend);
    assert.deepEqual(compiled.problems, []);
    assert.deepEqual(compiled.options.keepalive, { initialDelayMs: 180_000, intervalMs: 180_000, count: 9 });
    assert.equal(compiled.options.http1MaxHeaders, 100);
    assert.equal(compiled.options.http1IdleTimeoutMs, 600_000);
    assert.deepEqual(compiled.options.http2.settings, {
      maxFrameSize: 16_384,
      maxHeaderListSize: 16_384,
      maxConcurrentStreams: 100,
    });
    assert.equal(compiled.options.http2.keepaliveIntervalMs, undefined);
    assert.equal(compiled.options.maxConnectionDurationMs, undefined);
    assert.equal(compiled.options.proxyProtocol, undefined);
    assert.equal(compiled.options.connect, undefined);
    assert.deepEqual(compileConnectionOptions(undefined).options, DEFAULT_CONNECTION_OPTIONS);
    assert.deepEqual(compileConnectionOptions({ proxyProtocol: {} } as Frontend).options.proxyProtocol, {
      v1: false,
      v2: true,
      strict: true,
    });
  });

  it('refuse keepalive values the kernel cannot take, naming the field', () => {
    const subSecond = compileConnectionOptions({ tcp: { keepalive: { time: '500ms' } } } as Frontend);
    assert.equal(subSecond.options.keepalive, undefined);
    assert.deepEqual(subSecond.problems, [
      "frontend.tcp.keepalive.time: 500ms is not a whole number of seconds from 1s to 32767s, which is what the kernel's TCP keepalive takes",
    ]);
    const tooLong = compileConnectionOptions({ tcp: { keepalive: { interval: '10h' } } } as Frontend);
    assert.match(tooLong.problems.join(), /^frontend\.tcp\.keepalive\.interval: 10h is not a whole number of seconds/);
  });

  it('bring HTTP/2 sizes into HTTP/2’s bounds and say so', () => {
    const compiled = compileConnectionOptions({ http: { http2FrameSize: '16kb', http2WindowSize: '4Gi' } } as Frontend);
    assert.equal(compiled.options.http2.settings.maxFrameSize, 16_384);
    assert.equal(compiled.options.http2.settings.initialWindowSize, 2 ** 31 - 1);
    assert.equal(compiled.notes.length, 2);
    assert.match(compiled.notes[0]!, /http2FrameSize 16kb is outside HTTP\/2's 16384-16777215 bytes; 16384 is used/);
  });
});

describe('Frontend.tcp and Frontend.http on connections', () => {
  let gateway: FrontendGateway;

  before(async () => {
    gateway = await startFrontendGateway(
      '{tcp: {keepalive: {time: 7s, interval: 3s, retries: 4}}, http: {http1MaxHeaders: 5, http1IdleTimeout: 400ms, http1HeaderCase: Preserve}}',
    );
  });

  after(async () => {
    await gateway?.stop();
  });

  it('turns TCP keepalive on for accepted connections, with the configured time, interval and retries', async (t) => {
    const unavailable = keepaliveReadbackUnavailable();
    if (unavailable) return void t.skip(unavailable);
    const client = await keepAliveConnection(gateway.httpPort);
    try {
      await client.get('/ka');
      // gw's end of this connection: local port the listener's, remote port the client's.
      assert.deepEqual(await socketKeepalive(gateway.httpPort, client.socket.localPort), {
        enabled: true,
        idleSeconds: 7,
        intervalSeconds: 3,
        probes: 4,
      });
    } finally {
      client.socket.destroy();
    }
  });

  it('answers 431 to more than http1MaxHeaders headers', async () => {
    const { data, closed } = await rawExchange(
      gateway.httpPort,
      'GET / HTTP/1.1\r\nhost: gw.test\r\na: 1\r\nb: 2\r\nc: 3\r\nd: 4\r\ne: 5\r\n\r\n',
    );
    assert.equal(statusOf(data), 431, data);
    assert.ok(closed);
    const fine = await keepAliveConnection(gateway.httpPort);
    try {
      assert.equal(statusOf(await fine.get('/few')), 200);
    } finally {
      fine.socket.destroy();
    }
  });

  it('closes HTTP/1 connections idle for http1IdleTimeout', async () => {
    const client = await keepAliveConnection(gateway.httpPort);
    assert.equal(statusOf(await client.get('/idle')), 200);
    const started = Date.now();
    assert.ok(await closedWithin(client.socket, 3000));
    assert.ok(Date.now() - started >= 300, `closed after ${Date.now() - started} ms`);
  });

  it('http1HeaderCase Preserve: request header names reach the backend as the client spelled them', async () => {
    const client = await keepAliveConnection(gateway.httpPort);
    try {
      const echo = bodyOf<Echo>(await client.get('/case', 'X-Tenant-ID: acme\r\n'));
      assert.ok(echo.rawHeaders.includes('X-Tenant-ID'), JSON.stringify(echo.rawHeaders));
      assert.equal(echo.headers['x-tenant-id'], 'acme');
    } finally {
      client.socket.destroy();
    }
    assert.ok(
      gateway.gw.logs.some((line) => /http1HeaderCase Preserve: request header names go to HTTP backends/.test(line)),
      gateway.gw.logs.join('\n'),
    );
  });
});

describe('Frontend.http.maxConnectionDuration', () => {
  let gateway: FrontendGateway;

  before(async () => {
    gateway = await startFrontendGateway('{http: {maxConnectionDuration: 300ms}}');
  });

  after(async () => {
    await gateway?.stop();
  });

  it('HTTP/1: serves a young connection, closes an idle one once it has lived that long', async () => {
    const client = await keepAliveConnection(gateway.httpPort);
    const young = await client.get('/young');
    assert.equal(statusOf(young), 200);
    assert.doesNotMatch(young, /connection: close/i);
    const opened = Date.now();
    assert.ok(await closedWithin(client.socket, 2000));
    assert.ok(Date.now() - opened >= 200, `closed after ${Date.now() - opened} ms`);
  });

  it('HTTP/1: lets the request in flight finish, then closes the connection', async () => {
    const client = await keepAliveConnection(gateway.httpPort);
    const started = Date.now();
    const answer = await client.get('/slow?delay=600');
    assert.equal(statusOf(answer), 200);
    assert.ok(Date.now() - started >= 550);
    assert.ok(await closedWithin(client.socket, 1000));
  });

  it('HTTP/2: sends GOAWAY once the connection has lived that long', async () => {
    const session = http2Connect(`http://127.0.0.1:${gateway.httpPort}`);
    let goaway = false;
    session.on('goaway', () => {
      goaway = true;
    });
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const stream = session.request({ ':path': '/h2' });
        stream.on('response', (headers) => resolve(Number(headers[':status'])));
        stream.on('error', reject);
        stream.resume();
      });
      assert.equal(status, 200);
      assert.equal(goaway, false);
      assert.ok(await until(() => goaway, 2000), 'no GOAWAY');
    } finally {
      session.destroy();
    }
  });
});
