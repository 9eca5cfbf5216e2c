// pipeBody: a body piped to a real HTTP response reaches the client whole and done() hears no
// error; a source that fails or is cut midway destroys the response (the client sees a reset, not a
// short body passed as whole); a client that goes away destroys the source; done() is called once.
import assert from 'node:assert/strict';
import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough, Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { PrematureCloseError, pipeBody } from '../../../src/dataplane/proxy/pipe-body.ts';

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
