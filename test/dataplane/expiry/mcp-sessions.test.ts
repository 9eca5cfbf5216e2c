// Time and the MCP sessions a replica holds in memory (SessionRegistry), on a clock the test moves:
// a session nobody used for 30 minutes is dropped then and not before, counted from its last use
// or from when its listener left; ended answer streams are kept 5 minutes for a resuming client;
// the registry sweeps by itself every minute. The GET streams are real HTTP responses on loopback.
import assert from 'node:assert/strict';
import { createServer, get, type ServerResponse } from 'node:http';
import { after, afterEach, before, describe, it, mock } from 'node:test';
import { EventStream } from '../../../src/dataplane/mcp/event-stream.ts';
import {
  type RegisteredSession,
  SESSION_IDLE_MS,
  SessionRegistry,
  STREAM_RETENTION_MS,
  SWEEP_MS,
} from '../../../src/dataplane/mcp/session-registry.ts';
import { type FakeClock, fakeClock } from '../../helpers/fake-clock.ts';
import { closeServer, listen } from '../../helpers/http-server.ts';
import { until } from '../../helpers/until.ts';

/** A session as the registry sees it, recording how it was closed. */
class TestSession implements RegisteredSession {
  readonly id: string;
  lastUsed = 0;
  readonly standalone: EventStream;
  readonly streams = new Map<string, EventStream>();
  legacySink: unknown;
  /** close()'s deleteUpstream; undefined while open. */
  closed: boolean | undefined;

  constructor(id: string, registry: SessionRegistry<TestSession>) {
    this.id = id;
    this.standalone = new EventStream(registry.now);
  }

  close(deleteUpstream: boolean): void {
    this.closed = deleteUpstream;
  }
}

// A loopback server whose responses become GET streams: each request's response is handed to the
// test, and a client leaving closes it.
let server: ReturnType<typeof createServer>;
let port = 0;
const waiting: ((res: ServerResponse) => void)[] = [];
before(async () => {
  server = createServer((_req, res) => waiting.shift()?.(res));
  port = await listen(server);
});
after(async () => {
  await closeServer(server);
});

/** Opens a GET stream to `stream` (as a listening client does); the result ends it from the client side. */
async function listenTo(stream: EventStream): Promise<() => Promise<void>> {
  const response = new Promise<ServerResponse>((resolve) => waiting.push(resolve));
  const request = get(`http://127.0.0.1:${port}/mcp`);
  request.on('error', () => undefined);
  const res = await response;
  stream.attach(res, undefined, false);
  return async () => {
    request.destroy();
    assert.ok(await until(() => !stream.attached, 2000), 'the stream noticed the client leaving');
  };
}

describe('MCP sessions over time', () => {
  let clock: FakeClock;
  const registries: SessionRegistry<TestSession>[] = [];
  const registryOn = (moving: FakeClock) => {
    const registry = new SessionRegistry<TestSession>(moving.monotonicMs);
    registries.push(registry);
    return registry;
  };
  afterEach(() => {
    for (const registry of registries.splice(0)) registry.close();
    mock.timers.reset();
  });

  it('drops a session 30 minutes after its last use and not a millisecond before', () => {
    clock = fakeClock();
    const registry = registryOn(clock);
    const used = new TestSession('used', registry);
    const unused = new TestSession('unused', registry);
    registry.add(used);
    registry.add(unused);
    clock.advance(10 * 60_000);
    assert.equal(registry.get('used'), used);
    clock.advance(20 * 60_000);
    registry.sweep();
    assert.equal(unused.closed, undefined, 'exactly 30 minutes unused: kept');
    clock.advance(1);
    registry.sweep();
    assert.equal(unused.closed, false, 'dropped from memory, its upstream sessions left alone');
    assert.equal(registry.get('unused'), undefined);
    assert.equal(used.closed, undefined, 'used 10 minutes in: 20 minutes idle');
    clock.advance(10 * 60_000 - 1);
    registry.sweep();
    assert.equal(used.closed, undefined);
    clock.advance(1);
    registry.sweep();
    assert.equal(used.closed, false);
    assert.equal(registry.size, 0);
  });

  it('keeps a session while a client listens, and counts its idle time from when the listener left', async () => {
    clock = fakeClock();
    const registry = registryOn(clock);
    const session = new TestSession('listened', registry);
    registry.add(session);
    const leave = await listenTo(session.standalone);
    for (let minute = 1; minute <= 120; minute++) {
      clock.advance(SWEEP_MS);
      registry.sweep();
    }
    assert.equal(session.closed, undefined, 'two hours without a request, listened to all along');
    await leave();
    clock.advance(SESSION_IDLE_MS);
    registry.sweep();
    assert.equal(session.closed, undefined, 'the listener left 30 minutes ago, a sweep after the last one');
    clock.advance(SWEEP_MS);
    registry.sweep();
    assert.equal(session.closed, false);
  });

  it('keeps an ended answer stream 5 minutes after its last activity for a resuming client', async () => {
    clock = fakeClock();
    const registry = registryOn(clock);
    const session = new TestSession('streams', registry);
    registry.add(session);
    const ended = new EventStream(registry.now);
    const open = new EventStream(registry.now);
    const listened = new EventStream(registry.now);
    for (const stream of [ended, open, listened]) session.streams.set(stream.key, stream);
    const leave = await listenTo(listened);
    ended.push({ jsonrpc: '2.0', id: 1, result: {} });
    ended.end();
    listened.end();
    await leave();
    clock.advance(STREAM_RETENTION_MS);
    registry.sweep();
    assert.deepEqual([...session.streams.values()], [ended, open, listened], 'exactly 5 minutes: kept');
    clock.advance(1);
    registry.sweep();
    assert.deepEqual([...session.streams.values()], [open], 'ended ones dropped, the open one kept');
  });

  it('sweeps by itself every minute, on its own clock', () => {
    mock.timers.enable({ apis: ['setInterval'] });
    clock = fakeClock();
    const registry = registryOn(clock);
    const session = new TestSession('swept', registry);
    registry.add(session);
    clock.advance(SESSION_IDLE_MS + 1);
    mock.timers.tick(SWEEP_MS - 1);
    assert.equal(session.closed, undefined, 'no sweep yet');
    mock.timers.tick(1);
    assert.equal(session.closed, false, 'the first sweep dropped it');
  });
});
