// traffic.timeouts.request end to end: one deadline for the whole request, counted from its
// arrival — so a delay policy's wait is inside it — answered 504 when the backend is too slow,
// also when its head came in time and the body being buffered (traffic.buffer.response) did not.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { UpstreamGateway } from '../../helpers/upstream-gateway.ts';
import { startForwardingGateway } from './forwarding-setup.ts';

describe('traffic.timeouts', () => {
  let g: UpstreamGateway;
  before(async () => {
    g = await startForwardingGateway([
      { name: 'slow', traffic: 'timeouts: {request: 200ms}' },
      { name: 'delayed', traffic: 'timeouts: {request: 250ms}\ndelay: {duration: 150ms}' },
      { name: 'buffered', traffic: 'timeouts: {request: 200ms}\nbuffer: {response: {}}' },
    ]);
    // ?wait=N answers after N ms; with &head, the head and a first chunk come at once.
    g.upstream.answer((req, res) => {
      const query = new URL(req.url ?? '/', 'http://x').searchParams;
      const wait = Number(query.get('wait') ?? 0);
      if (query.has('head')) res.writeHead(200, { 'content-type': 'text/plain' }).write('first ');
      setTimeout(() => {
        if (!res.destroyed) res.end('late enough');
      }, wait);
    });
  });
  after(() => g.stop());

  it('answers 504 when the backend takes longer than the request deadline', async () => {
    const started = performance.now();
    const reply = await g.send('GET', '/slow/a?wait=2000');
    assert.equal(reply.status, 504);
    assert.match(reply.body, /upstream request timeout/);
    assert.ok(performance.now() - started < 1000);
    assert.equal((await g.send('GET', '/slow/b?wait=0')).status, 200);
  });

  it('answers 504 when the deadline passes while the response body is being buffered', async () => {
    const reply = await g.send('GET', '/buffered/a?wait=2000&head');
    assert.equal(reply.status, 504);
    assert.match(reply.body, /upstream request timeout/);
    const fits = await g.send('GET', '/buffered/b?wait=0&head');
    assert.equal(fits.status, 200);
    assert.equal(fits.body, 'first late enough');
  });

  it("counts a delay policy's wait inside the deadline", async () => {
    // 150 ms of delay plus 150 ms at the backend is past 250 ms, though either alone is not.
    assert.equal((await g.send('GET', '/delayed/a?wait=150')).status, 504);
    assert.equal((await g.send('GET', '/delayed/b?wait=0')).status, 200);
  });
});
