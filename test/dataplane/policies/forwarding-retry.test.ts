// traffic.retry end to end: which attempts are retried (codes, condition, connect failures,
// resets, an attempt's own deadline), how many, with what wait, the precondition, the request
// body replayed on every attempt (and no retries for a body too large to keep), only the last
// attempt's response reaching the client, and the request deadline covering every retry.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { compileRetry } from '../../../src/dataplane/policies/forwarding/retry.ts';
import { isProblem, type PolicyCompileContext } from '../../../src/dataplane/policies/types.ts';
import { refusedPort } from '../../helpers/gateway.ts';
import { GATEWAY_AI, gwPolicyYaml, staticBackendYaml } from '../../helpers/policy-yaml.ts';
import { until } from '../../helpers/until.ts';
import type { UpstreamGateway } from '../../helpers/upstream-gateway.ts';
import { chunked, chunkedBytes, startForwardingGateway } from './forwarding-setup.ts';

describe('traffic.retry', () => {
  let g: UpstreamGateway;
  before(async () => {
    const deadPort = await refusedPort();
    g = await startForwardingGateway(
      [
        { name: 'codes', traffic: 'retry: {codes: [503, 502], attempts: 2}' },
        { name: 'default', traffic: 'retry: {codes: [503]}' },
        { name: 'backoff', traffic: 'retry: {codes: [503], attempts: 2, backoff: 150ms}' },
        { name: 'cond', traffic: `retry: {attempts: 1, condition: 'response.headers["x-retry-me"] == "yes"'}` },
        { name: 'pre', traffic: `retry: {codes: [503], attempts: 3, precondition: 'request.method == "GET"'}` },
        { name: 'failures', traffic: 'retry: {attempts: 2}' },
        { name: 'dead', backend: 'dead', traffic: 'retry: {attempts: 2}' },
        {
          name: 'attempt',
          traffic: 'retry: {attempts: 2}',
          extra: '      timeouts: {request: 5s, backendRequest: 200ms}\n',
        },
        {
          name: 'deadline',
          traffic: 'retry: {codes: [503], attempts: 20, backoff: 100ms}\ntimeouts: {request: 350ms}',
        },
        { name: 'none' },
      ],
      staticBackendYaml('dead', deadPort) +
        gwPolicyYaml('buffers', GATEWAY_AI, 'frontend', '{http: {maxBufferSize: 4Ki}}'),
    );
    // ?fail=N: the first N requests to this URL fail as ?how= says (a status, reset, hang, flag,
    // big: a 503 with a 200 KB body); later ones answer 200 "ok <n>".
    const counts = new Map<string, number>();
    g.upstream.answer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const n = (counts.get(req.url ?? '') ?? 0) + 1;
      counts.set(req.url ?? '', n);
      if (n > Number(url.searchParams.get('fail') ?? 0)) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        return void res.end(`ok ${n}`);
      }
      const how = url.searchParams.get('how') ?? '503';
      if (how === 'reset') return void req.socket.destroy();
      if (how === 'hang') return;
      if (how === 'flag') {
        res.writeHead(200, { 'x-retry-me': 'yes' });
        return void res.end(`flagged ${n}`);
      }
      if (how === 'big') {
        res.writeHead(503, { 'content-type': 'text/plain' });
        return void res.end('b'.repeat(200_000));
      }
      res.writeHead(Number(how), { 'content-type': 'text/plain', 'x-attempt': String(n) });
      res.end(`fail ${n}`);
    });
  });
  after(() => g.stop());

  const seenFor = (path: string) => g.upstream.seen.filter((seen) => seen.url === path);

  it('retries a listed status and sends the client only the last attempt', async () => {
    const reply = await g.send('GET', '/codes/a?fail=2');
    assert.equal(reply.status, 200);
    assert.equal(reply.body, 'ok 3');
    const seen = seenFor('/codes/a?fail=2');
    assert.equal(seen.length, 3);
    assert.deepEqual(
      seen.map((request) => request.headers['x-retry-attempt']),
      [undefined, '1', '2'],
    );
  });

  it('gives up after `attempts` retries with the last response, its body and headers', async () => {
    const reply = await g.send('GET', '/codes/b?fail=9&how=502');
    assert.equal(reply.status, 502);
    assert.equal(reply.body, 'fail 3');
    assert.equal(reply.headers['x-attempt'], '3');
    assert.equal(seenFor('/codes/b?fail=9&how=502').length, 3);
  });

  it('does not retry a status that is not listed', async () => {
    const reply = await g.send('GET', '/codes/c?fail=1&how=500');
    assert.equal(reply.status, 500);
    assert.equal(seenFor('/codes/c?fail=1&how=500').length, 1);
  });

  it('retries once when attempts is unset', async () => {
    assert.equal((await g.send('GET', '/default/a?fail=5')).status, 503);
    assert.equal(seenFor('/default/a?fail=5').length, 2);
  });

  it('drops a large discarded response and still answers from the next attempt', async () => {
    const reply = await g.send('GET', '/codes/d?fail=1&how=big');
    assert.equal(reply.status, 200);
    assert.equal(reply.body, 'ok 2');
  });

  it('sends the same request body on every attempt, a chunked one too', async () => {
    const reply = await g.send('POST', '/codes/e?fail=2', { body: chunked(10, 100) });
    assert.equal(reply.status, 200);
    const seen = seenFor('/codes/e?fail=2');
    assert.equal(seen.length, 3);
    for (const request of seen) {
      assert.deepEqual(request.body, chunkedBytes(10, 100));
      assert.equal(request.headers['content-length'], '1000');
    }
  });

  it("sends a body larger than the listener's buffer limit once, streamed, without retries", async () => {
    const body = Buffer.alloc(5000, 'z');
    const reply = await g.send('POST', '/codes/f?fail=1', { body });
    assert.equal(reply.status, 503);
    const seen = seenFor('/codes/f?fail=1');
    assert.equal(seen.length, 1);
    assert.deepEqual(seen[0]!.body, body);
  });

  it('waits the backoff before each retry', async () => {
    const started = performance.now();
    assert.equal((await g.send('GET', '/backoff/a?fail=2')).status, 200);
    assert.ok(performance.now() - started >= 290, 'two retries wait 150 ms each');
  });

  it('retries a response the condition matches, seeing response.headers', async () => {
    const reply = await g.send('GET', '/cond/a?fail=1&how=flag');
    assert.equal(reply.body, 'ok 2');
    assert.equal(seenFor('/cond/a?fail=1&how=flag').length, 2);
    // Without a codes list, a 503 the condition does not match is the answer.
    assert.equal((await g.send('GET', '/cond/b?fail=1')).status, 503);
    assert.equal(seenFor('/cond/b?fail=1').length, 1);
  });

  it('makes no retries when the precondition is false', async () => {
    assert.equal((await g.send('POST', '/pre/a?fail=1', { body: 'x' })).status, 503);
    assert.equal(seenFor('/pre/a?fail=1').length, 1);
    assert.equal((await g.send('GET', '/pre/b?fail=1')).status, 200);
    assert.equal(seenFor('/pre/b?fail=1').length, 2);
  });

  it('retries a connection reset by the backend', async () => {
    const reply = await g.send('GET', '/failures/a?fail=2&how=reset');
    assert.equal(reply.status, 200);
    assert.equal(reply.body, 'ok 3');
  });

  it('retries a failed connect, then answers 503 and logs the retries', async () => {
    const reply = await g.send('GET', '/dead/a');
    assert.equal(reply.status, 503);
    assert.ok(
      await until(() => g.gw.accessLog.some((line) => line.includes('upstream connect after 2 retries')), 2000),
      g.gw.accessLog.at(-1),
    );
  });

  it('retries an attempt that passes its own deadline (backendRequest)', async () => {
    const started = performance.now();
    const reply = await g.send('GET', '/attempt/a?fail=1&how=hang');
    assert.equal(reply.status, 200);
    assert.equal(reply.body, 'ok 2');
    assert.ok(performance.now() - started >= 190);
  });

  it('keeps every retry within the request deadline (timeouts.request)', async () => {
    const started = performance.now();
    const reply = await g.send('GET', '/deadline/a?fail=99');
    const elapsed = performance.now() - started;
    assert.equal(reply.status, 504);
    assert.ok(elapsed >= 330 && elapsed < 1500, `answered after ${elapsed} ms`);
    const attempts = seenFor('/deadline/a?fail=99').length;
    assert.ok(attempts >= 2 && attempts <= 5, `${attempts} attempts`);
  });

  it('leaves a route without the policy to one attempt', async () => {
    assert.equal((await g.send('GET', '/none/a?fail=1')).status, 503);
    assert.equal(seenFor('/none/a?fail=1').length, 1);
  });
});

describe('compileRetry', () => {
  const context = { path: 'traffic' } as PolicyCompileContext;

  it('refuses CEL that does not compile, naming the field', () => {
    const problem = compileRetry({ condition: 'response.code ==' }, context);
    assert.ok(isProblem(problem));
    assert.equal(problem.field, 'traffic.retry.condition');
    const pre = compileRetry({ precondition: '(' }, context);
    assert.ok(isProblem(pre));
    assert.equal(pre.field, 'traffic.retry.precondition');
  });

  it('compiles codes, attempts (one by default) and backoff', () => {
    const compiled = compileRetry({ codes: [503], backoff: '1s' }, context);
    assert.ok(!isProblem(compiled));
    const retry = compiled.forwarding!.retry!;
    assert.equal(retry.attempts, 1);
    assert.equal(retry.backoffMs, 1000);
    assert.ok(retry.codes.has(503) && !retry.codes.has(500));
  });
});
