// pipeBody: a body piped to a real HTTP response reaches the client whole and done() hears no
// error; a source that fails or is cut midway destroys the response (the client sees a reset, not a
// short body passed as whole); a client that goes away destroys the source; done() is called once.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough, Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { PrematureCloseError, pipeBody, pipeUpstreamBody } from '../../../src/dataplane/proxy/pipe-body.ts';
import { Http1Pool } from '../../../src/dataplane/upstream/http1/pool.ts';

describe('pipeBody', () => {
  let server: Server;
  let port: number;
  let handle: (res: ServerResponse) => void = () => undefined;

  before(async () => {
    server = createServer((_req, res) => handle(res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  /** GETs the server: the body it read, or the error that ended it. */
  const fetchBody = (): Promise<{ body: string; error?: Error; response: IncomingMessage }> =>
    new Promise((resolve, reject) => {
      get({ host: '127.0.0.1', port, agent: false }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ body: Buffer.concat(chunks).toString(), response }));
        response.on('error', (error) => resolve({ body: Buffer.concat(chunks).toString(), error, response }));
      }).on('error', reject);
    });

  it('sends the whole body and calls done() once, without an error', async () => {
    const calls: (Error | undefined)[] = [];
    handle = (res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      pipeBody(Readable.from(['one ', 'two ', 'three']), res, (error) => calls.push(error));
    };
    const { body, error } = await fetchBody();
    assert.equal(error, undefined);
    assert.equal(body, 'one two three');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(calls, [undefined]);
  });

  it('a source that fails midway resets the client and done() gets the error', async () => {
    const calls: (Error | undefined)[] = [];
    const source = new PassThrough();
    handle = (res) => {
      res.writeHead(200);
      pipeBody(source, res, (error) => calls.push(error));
      source.write('partial');
      setTimeout(() => source.destroy(new Error('upstream reset')), 20);
    };
    const { body, error } = await fetchBody();
    assert.equal(body, 'partial');
    assert.ok(error, 'the client sees the body cut, not ended');
    assert.equal(calls.length, 1);
    assert.equal(calls[0]?.message, 'upstream reset');
  });

  it('a source closed before its end is a premature close', async () => {
    const calls: (Error | undefined)[] = [];
    const source = new PassThrough();
    handle = (res) => {
      res.writeHead(200);
      pipeBody(source, res, (error) => calls.push(error));
      source.write('cut');
      setTimeout(() => source.destroy(), 20);
    };
    const { error } = await fetchBody();
    assert.ok(error);
    assert.equal(calls.length, 1);
    assert.ok(calls[0] instanceof PrematureCloseError);
  });

  it('a client that goes away destroys the source', async () => {
    const source = new PassThrough();
    const done = new Promise<Error | undefined>((resolve) => {
      handle = (res) => {
        res.writeHead(200);
        pipeBody(source, res, resolve);
        source.write('first');
      };
    });
    await new Promise<void>((resolve) => {
      get({ host: '127.0.0.1', port, agent: false }, (response) => {
        response.once('data', () => {
          response.destroy();
          resolve();
        });
      });
    });
    const error = await done;
    assert.ok(error instanceof PrematureCloseError);
    assert.ok(source.destroyed);
  });

  it('a source destroyed before the pipe is settled at once', () => {
    const source = new PassThrough();
    source.destroy();
    const destination = new PassThrough();
    const calls: (Error | undefined)[] = [];
    pipeBody(source, destination, (error) => calls.push(error));
    assert.equal(calls.length, 1);
    assert.ok(calls[0] instanceof PrematureCloseError);
    assert.ok(destination.destroyed);
  });
});

// pipeUpstreamBody: the same outcomes for a body of gw's own HTTP/1.1 client, read from a real
// upstream through a real pool: the whole body with backpressure (the connection kept), a body cut
// upstream resets the client (with the reason the caller names), a client gone drops the upstream
// connection.
describe('pipeUpstreamBody', () => {
  let upstream: Server;
  let upstreamPort: number;
  let answer: (res: ServerResponse) => void = () => undefined;
  let front: Server;
  let frontPort: number;
  let handle: (res: ServerResponse) => void = () => undefined;
  let pool: Http1Pool;

  before(async () => {
    upstream = createServer((_req, res) => answer(res));
    front = createServer((_req, res) => handle(res));
    for (const server of [upstream, front])
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    upstreamPort = (upstream.address() as AddressInfo).port;
    frontPort = (front.address() as AddressInfo).port;
    pool = new Http1Pool({
      host: '127.0.0.1',
      port: upstreamPort,
      hostHeader: `127.0.0.1:${upstreamPort}`,
      connectTimeoutMs: 2000,
      keepAliveMs: 10_000,
    });
  });
  after(async () => {
    await pool.destroy();
    for (const server of [upstream, front]) {
      server.closeAllConnections();
      server.close();
    }
  });

  /** The front server pipes the upstream's body to its client; resolves with done()'s calls once the client has read. */
  const relay = async (
    read: (response: IncomingMessage) => Promise<{ body: Buffer; error?: Error }>,
    reasonOf?: () => Error | undefined,
  ) => {
    const calls: (Error | undefined)[] = [];
    const settled = new Promise<void>((resolve) => {
      handle = async (res) => {
        const response = await pool.request({ method: 'GET', path: '/', headers: {} });
        res.writeHead(200);
        pipeUpstreamBody(
          response.body,
          res,
          (error) => {
            calls.push(error);
            resolve();
          },
          reasonOf,
        );
      };
    });
    const received = await new Promise<{ body: Buffer; error?: Error }>((resolve, reject) => {
      get({ host: '127.0.0.1', port: frontPort, agent: false }, (response) => void read(response).then(resolve)).on(
        'error',
        reject,
      );
    });
    await settled;
    await new Promise((resolve) => setImmediate(resolve));
    return { ...received, calls };
  };

  const readAll = (response: IncomingMessage, delayMs = 0) =>
    new Promise<{ body: Buffer; error?: Error }>((resolve) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        if (delayMs > 0) {
          response.pause();
          setTimeout(() => response.resume(), delayMs);
        }
      });
      response.on('end', () => resolve({ body: Buffer.concat(chunks) }));
      response.on('error', (error) => resolve({ body: Buffer.concat(chunks), error }));
    });

  it('sends a large body whole to a slow client, done() without an error, and keeps the connection', async () => {
    const body = Buffer.alloc(4 * 1024 * 1024, 'x');
    answer = (res) => res.end(body);
    const result = await relay((response) => readAll(response, 1));
    assert.equal(result.error, undefined);
    assert.equal(result.body.length, body.length);
    assert.deepEqual(result.calls, [undefined]);
    assert.equal(pool.size, 1, 'the connection went back to the pool');
  });

  it('a body cut upstream resets the client; done() gets the reason the caller names', async () => {
    answer = (res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial');
      setTimeout(() => res.destroy(), 20);
    };
    const reason = Object.assign(new Error('the request deadline passed'), { code: 'UPSTREAM_RESPONSE_TIMEOUT' });
    const result = await relay(
      (response) => readAll(response),
      () => reason,
    );
    assert.equal(result.body.toString(), 'partial');
    assert.ok(result.error, 'the client sees the body cut, not ended');
    assert.deepEqual(result.calls, [reason]);
  });

  it('a client that goes away drops the upstream connection', async () => {
    let upstreamClosed: Promise<unknown> | undefined;
    answer = (res) => {
      upstreamClosed = once(res.socket!, 'close');
      res.writeHead(200);
      res.write('first');
    };
    const result = await relay(
      (response) =>
        new Promise((resolve) =>
          response.once('data', (chunk: Buffer) => {
            response.destroy();
            resolve({ body: chunk });
          }),
        ),
    );
    assert.equal(result.calls.length, 1);
    assert.ok(result.calls[0] instanceof PrematureCloseError);
    // The upstream's response never ended: gw closed its connection rather than wait on it.
    await upstreamClosed;
    assert.equal(pool.size, 0);
  });
});
