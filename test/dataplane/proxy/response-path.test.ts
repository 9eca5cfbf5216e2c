// The response path's capture on its own, between a real node:http server and client: a kind
// writing through it gets backpressure, sees the client leave as it would without it, and a kind
// or an interceptor giving up never leaves the client waiting (no hang, no leak either way).
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { PolicyExchange } from '../../../src/dataplane/policies/exchange.ts';
import type { ForwardingPolicy } from '../../../src/dataplane/policies/types.ts';
import type { ClientResponse } from '../../../src/dataplane/proxy/client-response.ts';
import {
  interceptResponse,
  openResponsePath,
  type ResponseInterceptor,
} from '../../../src/dataplane/proxy/response-path.ts';
import { RequestRecord } from '../../../src/dataplane/telemetry/request-record.ts';
import { closeServer, listen } from '../../helpers/http-server.ts';
import { until } from '../../helpers/until.ts';

/** What one test's kind does with the response it is given. */
type Kind = (res: ClientResponse) => Promise<void>;

interface Setup {
  kind: Kind;
  interceptor?: ResponseInterceptor;
  forwarding?: ForwardingPolicy;
}

/** What a request ended as, on the client's side. */
interface Outcome {
  status?: number;
  headers?: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** The response (or the connection) failed before it was complete. */
  reset: boolean;
}

const PASS: ResponseInterceptor = async (response) => response;

/** Resolves when `res` closes: true when it closed before it was finished (as when the client goes away). */
function closedUnfinished(res: ClientResponse): Promise<boolean> {
  return new Promise((resolve) => res.once('close', () => resolve(!res.writableFinished)));
}

describe('the response path capture', () => {
  let server: Server;
  let port: number;
  let setup: Setup;
  let record: RequestRecord;

  before(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      record = new RequestRecord();
      const exchange = new PolicyExchange(req, res, record, { path: '/', query: '', headers: {} });
      if (setup.interceptor) interceptResponse(exchange, setup.interceptor);
      const path = openResponsePath(res, exchange, setup.forwarding ?? {}, undefined);
      assert.ok(path, 'body-level work applies: the kind gets a capture');
      // As the request handler does: a kind that throws is answered 500 by the server.
      let threw = true;
      setup
        .kind(path.capture)
        .then(() => {
          threw = false;
        })
        .finally(() => path.served(threw))
        .catch(() => {
          if (!res.headersSent) res.writeHead(500).end('internal error');
          else res.destroy();
        });
    });
    port = await listen(server);
  });

  after(() => closeServer(server));

  /**
   * GETs / and reads the whole answer; `onFirst` runs on the first body chunk (and may abort);
   * with `giveUpMs`, the client leaves after that long.
   */
  function get(onFirst?: (abort: () => void) => void, giveUpMs?: number, method = 'GET'): Promise<Outcome> {
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      const req = request({ port, host: '127.0.0.1', path: '/', method, agent: false }, (res) => {
        res.on('data', (chunk: Buffer) => {
          if (chunks.length === 0) onFirst?.(() => req.destroy());
          chunks.push(chunk);
        });
        res.on('end', () =>
          resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks), reset: false }),
        );
        res.on('error', () =>
          resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks), reset: true }),
        );
      });
      req.on('error', () => resolve({ body: Buffer.concat(chunks), reset: true }));
      if (giveUpMs !== undefined) setTimeout(() => req.destroy(), giveUpMs);
      req.end();
    });
  }

  it('passes a large body through an interceptor with backpressure', async () => {
    const size = 8 * 1024 * 1024;
    let waitedForDrain = 0;
    setup = {
      interceptor: PASS,
      kind: async (res) => {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const chunk = Buffer.alloc(64 * 1024, 'x');
        for (let sent = 0; sent < size; sent += chunk.length) {
          if (!res.write(chunk)) {
            waitedForDrain++;
            await new Promise<void>((resolve) => res.once('drain', resolve));
          }
          assert.ok(res.writableLength <= 128 * 1024, 'the capture holds little: the kind waits for the client');
        }
        res.end();
      },
    };
    const outcome = await get();
    assert.equal(outcome.status, 200);
    assert.equal(outcome.body.length, size);
    assert.ok(waitedForDrain > 0, 'the kind was told to wait');
  });

  it('shows the kind a client that leaves mid-body as a closed response, and ends the interceptor read', async () => {
    let kindSawClose = false;
    let interceptorBodyFailed = false;
    setup = {
      interceptor: async (response) => {
        response.body.once('error', () => {
          interceptorBodyFailed = true;
        });
        return response;
      },
      kind: async (res) => {
        res.writeHead(200);
        res.write('first');
        kindSawClose = await closedUnfinished(res);
      },
    };
    const outcome = await get((abort) => abort());
    assert.equal(outcome.reset, true);
    assert.ok(await until(() => kindSawClose, 2000), 'the kind saw the client go');
    assert.ok(await until(() => interceptorBodyFailed, 2000), 'the body read failed rather than ending');
  });

  it('shows the kind a client that leaves while the response is held (buffered), before any of it is sent', async () => {
    let kindSawClose = false;
    setup = {
      forwarding: { responseBuffer: { maxBytes: 1024 * 1024, failOpen: false } },
      kind: async (res) => {
        res.writeHead(200);
        res.write('the start of a body that never ends');
        kindSawClose = await closedUnfinished(res);
      },
    };
    const outcome = await get(undefined, 100);
    assert.equal(outcome.reset, true);
    assert.equal(outcome.status, undefined, 'nothing was sent');
    assert.ok(await until(() => kindSawClose, 2000), 'the kind saw the client go');
  });

  it('resets the client when the kind destroys the response midway', async () => {
    setup = {
      interceptor: PASS,
      kind: async (res) => {
        res.writeHead(200, { 'content-length': '100' });
        res.write('part of it');
        setTimeout(() => res.destroy(), 20);
      },
    };
    const outcome = await get();
    assert.equal(outcome.reset, true);
    assert.equal(outcome.body.toString(), 'part of it');
  });

  it('resets the client when the kind destroys the response before writing anything', async () => {
    setup = {
      interceptor: PASS,
      kind: async (res) => {
        res.destroy();
      },
    };
    const outcome = await get();
    assert.equal(outcome.reset, true);
  });

  it('leaves the answer to the server when the kind throws, and writes nothing more', async () => {
    setup = {
      interceptor: async (response) => {
        // Slower than the kind's failure: the path must not write after the server answered.
        await new Promise((resolve) => setTimeout(resolve, 30));
        return response;
      },
      kind: async (res) => {
        res.writeHead(200);
        throw new Error('the kind broke');
      },
    };
    const outcome = await get();
    assert.equal(outcome.status, 500);
    assert.equal(outcome.body.toString(), 'internal error');
  });

  it("an interceptor's own answer replaces the response; the kind sees its response closed", async () => {
    let kindSawClose = false;
    setup = {
      interceptor: async (response) => {
        response.body.destroy();
        return {
          status: 403,
          headers: { 'content-length': '6' },
          body: Readable.from([Buffer.from('denied')]),
          error: 'denied',
        };
      },
      kind: async (res) => {
        res.writeHead(200);
        res.write('x');
        kindSawClose = await closedUnfinished(res);
      },
    };
    const outcome = await get();
    assert.equal(outcome.status, 403);
    assert.equal(outcome.body.toString(), 'denied');
    assert.ok(await until(() => kindSawClose, 2000));
    assert.equal(record.error, 'denied', "the answer's reason is the request's error");
  });

  it('answers 504 when a deadline cuts off a body being buffered, 502 for another failure', async () => {
    for (const [code, status] of [
      ['UPSTREAM_RESPONSE_TIMEOUT', 504],
      ['ECONNRESET', 502],
    ] as const) {
      setup = {
        forwarding: { responseBuffer: { maxBytes: 1024, failOpen: false } },
        kind: async (res) => {
          res.writeHead(200);
          res.write('part');
          setTimeout(() => res.destroy(Object.assign(new Error('cut'), { code })), 20);
        },
      };
      const outcome = await get();
      assert.equal(outcome.status, status, code);
    }
  });

  it('sends a buffered response with the length it came with (a HEAD answer), or its own when it came without', async () => {
    setup = {
      forwarding: { responseBuffer: { maxBytes: 1024, failOpen: false } },
      kind: async (res) => {
        res.writeHead(200, { 'content-length': '1234' });
        res.end();
      },
    };
    const head = await get(undefined, undefined, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.headers?.['content-length'], '1234');
    setup = {
      forwarding: { responseBuffer: { maxBytes: 1024, failOpen: false } },
      kind: async (res) => {
        res.writeHead(200, { 'transfer-encoding': 'chunked' });
        res.write('one ');
        res.end('two');
      },
    };
    const chunked = await get();
    assert.equal(chunked.body.toString(), 'one two');
    assert.equal(chunked.headers?.['content-length'], '7');
    assert.equal(chunked.headers?.['transfer-encoding'], undefined);
  });

  it('answers 502 for a body over the buffer limit and shows the kind a closed response', async () => {
    let kindSawClose = false;
    setup = {
      forwarding: { responseBuffer: { maxBytes: 10, failOpen: false } },
      kind: async (res) => {
        res.writeHead(200);
        res.write('more than ten bytes');
        kindSawClose = await closedUnfinished(res);
      },
    };
    const outcome = await get();
    assert.equal(outcome.status, 502);
    assert.match(outcome.body.toString(), /larger than the 10-byte buffer limit/);
    assert.ok(await until(() => kindSawClose, 2000));
  });
});
