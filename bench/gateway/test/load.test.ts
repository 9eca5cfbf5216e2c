// The load runs against the real mocks (in their own process): the open-loop generator holds
// its rate, the closed loop and the streaming probe count what they measure, and a target that
// cannot start or answers wrongly becomes an "unavailable" row instead of stopping the run.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CHAT_BODY, CHAT_HEADERS, CHAT_PATH, CHAT_STREAM_BODY } from '../chat-request.ts';
import { runLoad } from '../load.ts';
import { type MeasureSettings, measureTarget } from '../measure.ts';
import { directOpenAi } from '../targets/direct.ts';
import { gwTarget } from '../targets/gw.ts';
import { type TargetDefinition, TargetUnavailable } from '../targets/target.ts';
import { startUpstream, upstreamUrl } from '../upstream.ts';

const settings: MeasureSettings = {
  connections: 4,
  durationSeconds: 0.5,
  warmupSeconds: 0.2,
  rate: 100,
  rateSeconds: 0.5,
  rateWarmupSeconds: 0.1,
  peakConnections: 8,
  peakSeconds: 0.3,
  firstByteWarmup: 2,
  firstByteRequests: 10,
};

test('the load jobs measure the mocks', async (t) => {
  const upstream = await startUpstream();
  t.after(() => upstream.stop());
  const load = { url: upstreamUrl(upstream.ports.openaiFixed) + CHAT_PATH, headers: CHAT_HEADERS, body: CHAT_BODY };

  const paced = await runLoad({
    kind: 'rate',
    endpoint: load,
    connections: 8,
    rate: 200,
    warmupSeconds: 0.2,
    durationSeconds: 1,
  });
  assert.equal(paced.failed, 0);
  assert.ok(paced.ok >= 195 && paced.ok <= 205, `sent ${paced.ok} in 1 s at 200/s`);
  assert.ok(paced.achievedRate > 180 && paced.achievedRate <= 201, `achieved ${paced.achievedRate}/s`);
  assert.ok(paced.p50Ms > 0 && paced.p50Ms <= paced.p99Ms);

  const closed = await runLoad({ kind: 'saturate', endpoint: load, connections: 4, durationSeconds: 1 });
  assert.equal(closed.non2xx, 0);
  assert.equal(closed.errors, 0);
  assert.ok(closed.ok > 100 && Math.abs(closed.requestsPerSecond - closed.ok / closed.durationSeconds) < 1e-6);

  const streamed = await runLoad({
    kind: 'first-byte',
    endpoint: {
      url: upstreamUrl(upstream.ports.openaiStream) + CHAT_PATH,
      headers: CHAT_HEADERS,
      body: CHAT_STREAM_BODY,
    },
    warmup: 2,
    requests: 20,
  });
  assert.deepEqual([streamed.ok, streamed.failed], [20, 0]);
  assert.ok(streamed.p50Ms > 0);
});

test('a target that cannot start, or answers wrongly, is reported unavailable with the reason', async (t) => {
  const upstream = await startUpstream();
  t.after(() => upstream.stop());
  const log = () => {};

  const missing: TargetDefinition = {
    ...directOpenAi,
    id: 'nginx',
    start: async () => {
      throw new TargetUnavailable('nginx is not installed');
    },
  };
  assert.deepEqual(await measureTarget(missing, upstream.ports, settings, log), {
    status: 'unavailable',
    id: 'nginx',
    label: directOpenAi.label,
    reason: 'nginx is not installed',
  });

  // The streaming mock is not in fixed mode: pointed at the wrong path it answers 404.
  const wrong: TargetDefinition = {
    ...directOpenAi,
    start: async (ports) => ({
      ...(await directOpenAi.start(ports)),
      load: { url: `${upstreamUrl(ports.openaiStream)}/v1/nowhere`, headers: CHAT_HEADERS, body: CHAT_BODY },
    }),
  };
  const outcome = await measureTarget(wrong, upstream.ports, settings, log);
  assert.equal(outcome.status, 'unavailable');
  assert.match(outcome.status === 'unavailable' ? outcome.reason : '', /^answers wrongly: a request got status 404/);

  // gw with a command line it refuses ends at once: its own message is the reason.
  const refused = await measureTarget(
    gwTarget('alpha', { accessLog: false, extraArgs: ['--no-such-flag'] }),
    upstream.ports,
    settings,
    log,
  );
  assert.equal(refused.status, 'unavailable');
  assert.match(refused.status === 'unavailable' ? refused.reason : '', /^gw ended \(exit code \d+\): .*no-such-flag/);
});

test('a target measured end to end gets every figure', async (t) => {
  const upstream = await startUpstream();
  t.after(() => upstream.stop());
  const outcome = await measureTarget(directOpenAi, upstream.ports, settings, () => {});
  assert.equal(outcome.status, 'measured');
  if (outcome.status !== 'measured') return;
  assert.ok(outcome.saturate.ok > 0 && outcome.rate.ok > 0);
  assert.equal(outcome.firstByte?.ok, settings.firstByteRequests);
  // The direct path has no process of its own: no CPU or memory figures.
  assert.equal(outcome.peak, undefined);
  assert.equal(outcome.cpuUsPerRequest, undefined);
});
