// The one way gw calls a guard service (src/dataplane/ai/guards/service-call.ts), against real
// HTTP servers on 127.0.0.1: a JSON answer is parsed, with the call's headers, a base path and the
// policies' credentials on the request; every failure — a deadline passed, a status that is not
// 2xx, a body that is not JSON or is too large, nobody listening, the client going away — is a
// GuardFailure naming the service; a tunnel whose proxy is not there is refused when compiled.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { GuardFailure } from '../../../src/dataplane/ai/guards/guard.ts';
import {
  compileGuardService,
  type GuardService,
  type GuardServicePolicies,
  MAX_GUARD_ANSWER_BYTES,
} from '../../../src/dataplane/ai/guards/service-call.ts';
import { UpstreamPools } from '../../../src/dataplane/upstream/pools.ts';
import { freePort } from '../../helpers/gateway.ts';
import { guardInput } from '../../helpers/guards.ts';

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

describe('guard service calls', () => {
  const pools = new UpstreamPools();
  const received: Received[] = [];
  let server: Server;
  let port: number;
  const input = guardInput({ client: (settings) => pools.client(settings) });
  /** The answers by path. */
  const routes: Record<string, (res: ServerResponse) => void> = {
    '/guard/ok': (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"verdict":"fine"}'),
    '/guard/down': (res) => res.writeHead(502).end('{"error":"upstream"}'),
    '/guard/html': (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hi</html>'),
    '/guard/huge': (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(Buffer.alloc(MAX_GUARD_ANSWER_BYTES + 1024, 0x20));
    },
    '/guard/never': () => {},
  };

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        (routes[req.url ?? ''] ?? ((r: ServerResponse) => r.writeHead(404).end()))(res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await pools.close();
  });

  const serviceAt = (at: number, policies?: GuardServicePolicies): GuardService => {
    const service = compileGuardService(
      {
        name: 'the test guard',
        destination: { protocol: 'http:', host: '127.0.0.1', port: at },
        basePath: '/guard',
        policies,
        path: 'ai.promptGuard.request[0].webhook',
      },
      input,
    );
    assert.ok(!('path' in service), JSON.stringify(service));
    return service;
  };
  const call = (service: GuardService, path: string, signal = new AbortController().signal) =>
    service.post({
      path,
      body: { texts: ['hello'] },
      headers: { 'x-one': 'a', 'x-many': ['b', 'c'], 'content-type': 'text/plain' },
      incoming: { headers: {}, variables: {} },
      signal,
    });
  /** The GuardFailure `promise` rejects with; fails the test otherwise. */
  const failure = async (promise: Promise<unknown>): Promise<GuardFailure> => {
    const error = await promise.then(
      () => assert.fail('the call succeeded'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof GuardFailure, String(error));
    return error;
  };

  it('POSTs JSON under the base path with its headers and the key, and parses a JSON answer', async () => {
    const answer = await call(serviceAt(port, { auth: { key: 'sk-guard' } }), '/ok');
    assert.deepEqual(answer, { verdict: 'fine' });
    const request = received.at(-1)!;
    assert.equal(request.path, '/guard/ok');
    assert.deepEqual(JSON.parse(request.body), { texts: ['hello'] });
    assert.equal(request.headers['content-type'], 'application/json', 'gw’s content-type wins');
    assert.equal(request.headers['x-one'], 'a');
    assert.equal(request.headers['x-many'], 'b, c');
    assert.equal(request.headers.authorization, 'Bearer sk-guard');
  });

  it('a status that is not 2xx, a body that is not JSON, an answer over the bound: GuardFailures naming the service', async () => {
    const service = serviceAt(port);
    assert.equal((await failure(call(service, '/down'))).message, 'the test guard answered HTTP 502');
    assert.equal(
      (await failure(call(service, '/html'))).message,
      'the test guard answered with a body that is not JSON',
    );
    assert.equal(
      (await failure(call(service, '/huge'))).message,
      `the test guard answered more than ${MAX_GUARD_ANSWER_BYTES} bytes`,
    );
  });

  it('a service that does not answer within http.requestTimeout: a GuardFailure at the deadline', async () => {
    const started = performance.now();
    const error = await failure(call(serviceAt(port, { http: { requestTimeout: '200ms' } }), '/never'));
    const waited = performance.now() - started;
    assert.equal(error.message, 'the test guard did not answer within 200 ms');
    assert.ok(waited >= 190 && waited < 2000, `waited ${waited} ms`);
  });

  it('the client going away stops the call', async () => {
    const gone = new AbortController();
    const pending = call(serviceAt(port), '/never', gone.signal);
    setTimeout(() => gone.abort(), 50);
    const error = await failure(pending);
    assert.match(error.message, /^the client went away while the test guard was asked$/);
  });

  it('nobody listening: a GuardFailure saying it could not be reached', async () => {
    const error = await failure(call(serviceAt(await freePort()), '/ok'));
    assert.match(error.message, /^the test guard could not be reached \(/);
  });

  it('a tunnel whose proxy is not there is refused when compiled, naming the field', () => {
    const problem = compileGuardService(
      {
        name: 'the test guard',
        destination: { protocol: 'http:', host: '127.0.0.1', port },
        policies: {
          tunnel: { backendRef: { group: 'gw.dev', kind: 'GwBackend', name: 'nowhere' } },
        } as GuardServicePolicies,
        path: 'ai.promptGuard.request[0].alphaModeration',
      },
      input,
    );
    assert.ok('path' in problem);
    assert.equal(problem.path, 'ai.promptGuard.request[0].alphaModeration.policies.tunnel.backendRef');
    assert.match(problem.message, /GwBackend \S+\/nowhere is not available/);
  });
});
