// gw run's log as a user sees it, from a child process: one format for the access log (standard
// output) and gw's own messages (standard error) — JSON lines by default, --log-format text for a
// terminal — with OpenTelemetry's HTTP names and a numeric duration; and the process and runtime
// metrics on the admin port's /metrics.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseControllerArgs } from '../../src/cli/controller.ts';
import { parseRunArgs } from '../../src/cli/run.ts';
import { parseExposition, value as sampleValue } from '../dataplane/telemetry/prometheus-text.ts';
import { type GwProcess, runGw, spawnGw } from '../helpers/cli.ts';
import { freePort, gatewayYaml, webRouteYaml } from '../helpers/gateway.ts';
import { until } from '../helpers/until.ts';

/** gw run on `dir` with `extra` arguments; its standard output collected; resolves once it serves. */
async function startGw(dir: string, extra: string[]): Promise<{ gw: GwProcess; stdout: () => string; admin: string }> {
  const adminPort = await freePort();
  const gw = spawnGw(['run', '-f', dir, '--admin-port', String(adminPort), ...extra]);
  let stdout = '';
  gw.child.stdout!.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  try {
    await gw.waitForLog(/serving http HTTP :\d+/);
    // Logged once started, just before gw listens for SIGTERM.
    await gw.waitForLog(/admin endpoints on/);
  } catch (error) {
    gw.child.kill('SIGKILL');
    throw error;
  }
  return { gw, stdout: () => stdout, admin: `http://127.0.0.1:${adminPort}` };
}

async function stop(gw: GwProcess): Promise<void> {
  gw.child.kill('SIGTERM');
  assert.equal(await gw.exited, 0);
}

describe('gw run --log-format', () => {
  let upstream: Server;
  let dir: string;
  let port: number;

  before(async () => {
    upstream = createServer((_request, response) => response.end('hello'));
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    dir = mkdtempSync(join(tmpdir(), 'gw-log-format-'));
    port = await freePort();
    writeFileSync(
      join(dir, 'gateway.yaml'),
      gatewayYaml(port) + webRouteYaml((upstream.address() as { port: number }).port),
    );
  });

  after(async () => {
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('json (the default): every line of both streams is one JSON object; the access log has OpenTelemetry names and a numeric duration', async () => {
    const { gw, stdout } = await startGw(dir, []);
    try {
      const answer = await fetch(`http://127.0.0.1:${port}/items?page=2`, {
        headers: { 'user-agent': 'log-test/1.0' },
      });
      assert.equal(await answer.text(), 'hello');
      assert.ok(await until(() => stdout().includes('"url.path":"/items"'), 5000), stdout());
      const entry = JSON.parse(stdout().trim().split('\n').at(-1)!) as Record<string, unknown>;
      assert.equal(entry.level, 'info');
      assert.equal(entry.scope, 'request');
      assert.equal(entry.message, 'GET /items 200');
      assert.ok(Math.abs(Date.parse(entry.time as string) - Date.now()) < 60_000);
      assert.equal(entry['http.request.method'], 'GET');
      assert.equal(entry['http.response.status_code'], 200);
      assert.equal(entry['url.path'], '/items');
      assert.equal(entry['url.scheme'], 'http');
      assert.equal(entry['server.address'], '127.0.0.1');
      assert.equal(entry['server.port'], port);
      assert.equal(entry['client.address'], '127.0.0.1');
      assert.equal(typeof entry['client.port'], 'number');
      assert.equal(entry['network.protocol.version'], '1.1');
      assert.equal(entry['user_agent.original'], 'log-test/1.0');
      assert.equal(typeof entry.duration_ms, 'number');
      assert.ok((entry.duration_ms as number) > 0 && (entry.duration_ms as number) < 10_000);
      for (const old of ['http.method', 'http.status', 'http.path', 'http.host', 'src.addr', 'duration'])
        assert.ok(!(old in entry), `no ${old}`);
    } finally {
      await stop(gw);
    }
    const lines = gw.stderr.trim().split('\n');
    assert.ok(lines.length >= 3, gw.stderr);
    for (const line of lines) {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      assert.deepEqual(Object.keys(parsed).slice(0, 4), ['time', 'level', 'scope', 'message'], line);
      assert.equal(parsed.scope, 'run');
    }
    assert.ok(lines.some((line) => JSON.parse(line).message === 'stopping'));
  });

  it('text: a line a terminal reader takes in at a glance, on both streams', async () => {
    const { gw, stdout } = await startGw(dir, ['--log-format', 'text']);
    try {
      await (await fetch(`http://127.0.0.1:${port}/text`)).text();
      assert.ok(await until(() => stdout().includes('GET /text 200'), 5000), stdout());
      const line = stdout().trim().split('\n').at(-1)!;
      assert.match(
        line,
        /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO {2}request: GET \/text 200 gateway=default\/ai /,
      );
      assert.match(line, / client\.address=127\.0\.0\.1 /);
      assert.match(line, / duration_ms=\d+(\.\d+)?$/);
    } finally {
      await stop(gw);
    }
    assert.match(gw.stderr, /^\d{4}-\d\d-\d\dT\S+Z INFO {2}run: configuration loaded: 4 objects$/m);
    assert.match(gw.stderr, /Z INFO {2}run: Gateway default\/ai: serving http HTTP :\d+$/m);
    assert.ok(!gw.stderr.includes('{"time"'), 'no JSON');
  });

  it('refuses a format it does not know, on gw run and gw controller', async () => {
    const run = await runGw(['run', '-f', dir, '--log-format', 'xml']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--log-format must be json or text, not "xml"/);
    assert.equal((parseRunArgs(['-f', 'x', '--log-format', 'text']) as { logFormat: string }).logFormat, 'text');
    assert.equal((parseControllerArgs(['--log-format', 'text']) as { logFormat: string }).logFormat, 'text');
    assert.match(String(parseControllerArgs(['--log-format', 'yaml'])), /--log-format must be json or text/);
  });

  it('/metrics ends with the process and runtime metrics: plausible values under Prometheus names', async () => {
    const { gw, admin } = await startGw(dir, []);
    try {
      const before = Date.now() / 1000;
      // The event-loop figures need one sample (10 ms) since the admin server started.
      await new Promise((resolve) => setTimeout(resolve, 100));
      const body = await (await fetch(`${admin}/metrics`)).text();
      const exposition = parseExposition(body);
      const value = (name: string) => sampleValue(exposition, name);
      assert.ok(value('process_resident_memory_bytes') > 10 * 1024 * 1024, 'RSS of a Node process');
      assert.ok(value('process_virtual_memory_bytes') >= value('process_resident_memory_bytes'));
      const started = value('process_start_time_seconds');
      assert.ok(started <= before + 1 && started > before - 120, `started ${before - started} s ago`);
      assert.ok(value('process_cpu_seconds_total') > 0);
      assert.ok(value('process_open_fds') >= 3);
      assert.ok(value('process_max_fds') >= value('process_open_fds'));
      assert.ok(value('nodejs_heap_size_used_bytes') > 0);
      assert.ok(value('nodejs_heap_size_total_bytes') >= value('nodejs_heap_size_used_bytes'));
      const lag = value('nodejs_eventloop_lag_seconds');
      assert.ok(lag >= 0 && lag < 5, `event loop lag ${lag}`);
      assert.ok(value('nodejs_eventloop_lag_p99_seconds') >= value('nodejs_eventloop_lag_p50_seconds'));
      assert.match(body, /^# TYPE process_cpu_seconds_total counter$/m);
      assert.match(body, /^nodejs_version_info\{version="v\d+\.\d+\.\d+"\} 1$/m);
      assert.equal(exposition.types.get('process_resident_memory_bytes'), 'gauge');
      assert.ok(body.indexOf('# TYPE gw_access_log') < body.indexOf('process_cpu'), "the data plane's metrics first");
    } finally {
      await stop(gw);
    }
  });
});
