// traffic.directResponse, traffic.delay and traffic.headerModifiers end to end.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import type { UpstreamGateway } from '../../helpers/upstream-gateway.ts';
import { startPolicyGateway } from './http-policies-setup.ts';

describe('traffic.directResponse', () => {
  let g: UpstreamGateway;

  before(async () => {
    g = await startPolicyGateway([
      {
        name: 'fixed',
        traffic: `directResponse:
  status: 418
  body: "short and stout"
  headers:
    - {name: content-type, value: "'text/plain'"}
    - {name: x-path, value: request.path}
    - {name: x-count, value: "size(request.path)"}
    - {name: x-missing, value: 'request.headers["x-absent"]'}
    - {name: x-map, value: "{'a': 1}"}`,
      },
      { name: 'text', traffic: `directResponse: {status: 200, bodyExpression: '"hello " + request.path'}` },
      {
        name: 'json',
        traffic: `directResponse: {status: 200, bodyExpression: '{"path": request.path, "n": 2, "ok": true}'}`,
      },
      { name: 'bytes', traffic: `directResponse: {status: 200, bodyExpression: 'b"\\x00\\x01"'}` },
      { name: 'echo', traffic: `directResponse: {status: 201, bodyExpression: 'string(request.body) + "!"'}` },
      { name: 'broken', traffic: `directResponse: {status: 200, bodyExpression: 'request.headers["x-absent"]'}` },
      { name: 'empty', traffic: `directResponse: {status: 204, body: ignored}` },
      {
        name: 'cond',
        traffic: `directResponse:
  conditional:
    - condition: request.headers["x-mode"] == "maintenance"
      policy: {status: 503, body: down for maintenance}
    - condition: request.headers["x-mode"] == "teapot"
      policy: {status: 418}`,
      },
      {
        name: 'fallback',
        traffic: `directResponse:
  conditional:
    - condition: 'request.path.endsWith("/a")'
      policy: {status: 200, body: a}
    - policy: {status: 202, body: fallback}`,
      },
    ]);
  });
  after(() => g?.stop());

  const reached = (path: string) => g.upstream.seen.some((seen) => seen.url === path);

  it('answers with the status, the body as it is and CEL headers, without calling the backend', async () => {
    const response = await g.send('GET', '/fixed/x');
    assert.equal(response.status, 418);
    assert.equal(response.body, 'short and stout', 'no newline or other change');
    assert.equal(response.headers['content-type'], 'text/plain');
    assert.equal(response.headers['x-path'], '/fixed/x');
    assert.equal(response.headers['x-count'], '8');
    assert.equal(response.headers['content-length'], '15');
    assert.equal(reached('/fixed/x'), false);
  });

  it('leaves out a header whose expression fails or gives no header value', async () => {
    const response = await g.send('GET', '/fixed/y');
    assert.equal(response.headers['x-missing'], undefined);
    assert.equal(response.headers['x-map'], undefined);
  });

  it('writes a bodyExpression string as text, bytes as they are, other values as JSON', async () => {
    assert.equal((await g.send('GET', '/text/p')).body, 'hello /text/p');
    const json = await g.send('GET', '/json/j');
    assert.deepEqual(JSON.parse(json.body), { path: '/json/j', n: 2, ok: true });
    const response = await request(`${g.base}/bytes`);
    assert.deepEqual([...Buffer.from(await response.body.arrayBuffer())], [0, 1]);
  });

  it('reads the request body for request.body', async () => {
    const response = await g.send('POST', '/echo', { body: 'ping' });
    assert.equal(response.status, 201);
    assert.equal(response.body, 'ping!');
    assert.equal(reached('/echo'), false);
  });

  it('answers 500 with a plain reason when the bodyExpression fails', async () => {
    const response = await g.send('GET', '/broken');
    assert.equal(response.status, 500);
    assert.equal(response.body, 'the direct response bodyExpression failed\n');
    assert.match(String(response.headers['content-type']), /^text\/plain/);
  });

  it('sends no body with 204', async () => {
    const response = await g.send('GET', '/empty');
    assert.equal(response.status, 204);
    assert.equal(response.body, '');
  });

  it('answers with the first entry whose condition holds, and goes to the backend when none does', async () => {
    const down = await g.send('GET', '/cond/1', { headers: { 'x-mode': 'maintenance' } });
    assert.deepEqual([down.status, down.body], [503, 'down for maintenance']);
    assert.equal((await g.send('GET', '/cond/2', { headers: { 'x-mode': 'teapot' } })).status, 418);
    // No x-mode header: both conditions fail to evaluate, which counts as false.
    const passed = await g.send('GET', '/cond/3');
    assert.equal(passed.status, 200);
    assert.ok(reached('/cond/3'));
  });

  it('uses the last entry without condition as the fallback', async () => {
    assert.deepEqual(await g.send('GET', '/fallback/a').then((r) => [r.status, r.body]), [200, 'a']);
    assert.deepEqual(await g.send('GET', '/fallback/b').then((r) => [r.status, r.body]), [202, 'fallback']);
  });
});

describe('traffic.delay', () => {
  let g: UpstreamGateway;

  before(async () => {
    g = await startPolicyGateway([
      { name: 'fixed', traffic: 'delay: {duration: 200ms}' },
      { name: 'cel', traffic: `delay: {duration: 'duration("150ms")'}` },
      { name: 'ms', traffic: `delay: {duration: 'int(request.headers["x-delay"])'}` },
      { name: 'string', traffic: `delay: {duration: '"150ms"'}` },
      { name: 'long', traffic: 'delay: {duration: 1s}' },
    ]);
  });
  after(() => g?.stop());

  const timed = async (path: string, headers: Record<string, string> = {}) => {
    const started = performance.now();
    const response = await g.send('GET', path, { headers });
    assert.equal(response.status, 200);
    return performance.now() - started;
  };

  it('holds the request for a literal duration', async () => {
    assert.ok((await timed('/fixed')) >= 195);
  });

  it('takes a CEL duration, a number of milliseconds or a duration string', async () => {
    assert.ok((await timed('/cel')) >= 145);
    assert.ok((await timed('/ms', { 'x-delay': '150' })) >= 145);
    assert.ok((await timed('/string')) >= 145);
  });

  it('adds no delay for zero, a negative number or a failing expression', async () => {
    // Well under a second, not under a few milliseconds: a loaded machine takes tens of them to
    // answer at all; a delay applied (2 s for the negative value's magnitude) would show anyway.
    assert.ok((await timed('/ms', { 'x-delay': '0' })) < 1000);
    assert.ok((await timed('/ms', { 'x-delay': '-2000' })) < 1000);
    assert.ok((await timed('/ms')) < 1000, 'no x-delay header: the expression fails');
  });

  it('stops waiting when the client goes away: the request never reaches the backend', async () => {
    await assert.rejects(request(`${g.base}/long/gone`, { signal: AbortSignal.timeout(50) }));
    await sleep(1100);
    assert.equal(
      g.upstream.seen.some((seen) => seen.url === '/long/gone'),
      false,
    );
  });
});

describe('traffic.headerModifiers', () => {
  let g: UpstreamGateway;

  before(async () => {
    g = await startPolicyGateway([
      {
        name: 'mod',
        traffic: `headerModifiers:
  request:
    set: [{name: X-Set, value: set-value}]
    add: [{name: x-add, value: added}]
    remove: [x-secret]
  response:
    set: [{name: x-served-by, value: gw}]
    add: [{name: x-list, value: two}]
    remove: [x-internal]`,
      },
      {
        name: 'local',
        traffic: `headerModifiers: {response: {set: [{name: x-served-by, value: gw}]}}
directResponse: {status: 200, body: local}`,
      },
    ]);
  });
  after(() => g?.stop());

  it('changes the request as it goes upstream', async () => {
    await g.send('GET', '/mod/r', { headers: { 'x-set': 'client', 'x-add': 'first', 'x-secret': 's' } });
    const seen = g.upstream.seen.find((entry) => entry.url === '/mod/r')!;
    assert.equal(seen.headers['x-set'], 'set-value');
    assert.equal(seen.headers['x-add'], 'first,added');
    assert.equal(seen.headers['x-secret'], undefined);
  });

  it("changes the backend's response", async () => {
    const response = await g.send('GET', '/mod/s', {
      headers: { 'x-reply-x-internal': 'hidden', 'x-reply-x-list': 'one', 'x-reply-x-served-by': 'backend' },
    });
    assert.equal(response.headers['x-internal'], undefined);
    assert.equal(response.headers['x-list'], 'one,two');
    assert.equal(response.headers['x-served-by'], 'gw');
  });

  it("changes gw's own answers too", async () => {
    const response = await g.send('GET', '/local');
    assert.equal(response.body, 'local');
    assert.equal(response.headers['x-served-by'], 'gw');
  });
});
