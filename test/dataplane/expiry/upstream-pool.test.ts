// Time and gw's HTTP/1.1 upstream connections (Http1Pool), on a clock the test moves (the pool's
// once-a-second sweep mocked with it), against real servers on loopback: an idle connection is
// reused until its keep-alive runs out and never after; the sweep closes one idle that long
// without waiting for a request; a response the upstream has gone silent on fails at its idle
// timeout, not before.
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, it, mock, type TestContext } from 'node:test';
import { UpstreamResponseTimeoutError } from '../../../src/dataplane/upstream/http1/errors.ts';
import { type FakeClock, fakeClock } from '../../helpers/fake-clock.ts';
import { httpServer, poolFor, rawServer, rejection, silent, waitFor } from '../upstream/upstream-servers.ts';

/** How often the pool sweeps its connections. */
const SWEEP_MS = 1000;

/** Answers with the client's port: which connection carried the request. */
function answerWithPort(req: IncomingMessage, res: ServerResponse): void {
  res.end(String(req.socket.remotePort));
}

/** A server keeping idle connections a minute (its Keep-Alive hint leaves the pool's 10 s in charge). */
const patientServer = (t: TestContext) =>
  httpServer(t, answerWithPort, (server) => {
    server.keepAliveTimeout = 60_000;
  });

describe('upstream connections over time', () => {
  let clock: FakeClock;
  afterEach(() => {
    mock.timers.reset();
  });

  /** Moves the clock `ms` and runs one sweep at the new time. */
  const sweepAfter = (ms: number) => {
    clock.advance(ms);
    mock.timers.tick(SWEEP_MS);
  };

  it('reuses an idle connection until its keep-alive has passed, and opens a new one from then on', async (t) => {
    clock = fakeClock();
    mock.timers.enable({ apis: ['setInterval'] });
    const upstream = await patientServer(t);
    const pool = poolFor(t, upstream.port, { keepAliveMs: 10_000, now: clock.monotonicMs });
    const portOf = async () =>
      (await (await pool.request({ method: 'GET', path: '/', headers: {} })).body.readAll(64)).toString();
    const first = await portOf();
    clock.advance(9_999);
    assert.equal(await portOf(), first, 'idle 9.999 s: reused');
    clock.advance(10_000);
    const next = await portOf();
    assert.notEqual(next, first, 'idle 10 s: a new connection');
    assert.equal(upstream.accepted, 2);
    await waitFor(() => upstream.closed === 1, 'the stale connection closed');
  });

  it('closes a connection idle for its keep-alive at the next sweep, with no request to notice', async (t) => {
    clock = fakeClock();
    mock.timers.enable({ apis: ['setInterval'] });
    const upstream = await patientServer(t);
    const pool = poolFor(t, upstream.port, { keepAliveMs: 10_000, now: clock.monotonicMs });
    await (await pool.request({ method: 'GET', path: '/', headers: {} })).body.readAll(64);
    sweepAfter(9_999);
    assert.equal(pool.size, 1, 'idle 9.999 s: kept');
    sweepAfter(1);
    await waitFor(() => pool.size === 0 && upstream.closed === 1, 'the idle connection closed');
  });

  it('fails a response the upstream stays silent on for the response idle time, and not before', async (t) => {
    clock = fakeClock();
    mock.timers.enable({ apis: ['setInterval'] });
    const upstream = await rawServer(t, silent);
    const pool = poolFor(t, upstream.port, { responseIdleMs: 30_000, now: clock.monotonicMs });
    let settled = false;
    const response = pool.request({ method: 'GET', path: '/', headers: {} });
    response.then(
      () => (settled = true),
      () => (settled = true),
    );
    await waitFor(() => upstream.accepted === 1, 'the request sent');
    sweepAfter(30_000);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, false, 'silent for exactly 30 s: still waiting');
    sweepAfter(1);
    await waitFor(() => settled, 'the response failed');
    const error = await rejection(response);
    assert.ok(error instanceof UpstreamResponseTimeoutError, String(error));
  });
});
