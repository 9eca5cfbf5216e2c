// traffic.timeouts.request end to end: one deadline for the whole request, counted from its
// arrival — so a delay policy's wait is inside it — answered 504 when the backend is too slow.
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
    ]);
    // ?wait=N answers after N ms.
    g.upstream.answer((req, res) => {
      const wait = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('wait') ?? 0);
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

  it("counts a delay policy's wait inside the deadline", async () => {
    // 150 ms of delay plus 150 ms at the backend is past 250 ms, though either alone is not.
    assert.equal((await g.send('GET', '/delayed/a?wait=150')).status, 504);
    assert.equal((await g.send('GET', '/delayed/b?wait=0')).status, 200);
  });
});
