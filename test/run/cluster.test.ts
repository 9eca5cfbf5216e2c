// gw run --workers 2 as a user runs it: a child process whose two workers both serve the
// listener, take a configuration edit, survive one of them being killed, report the sum of
// their requests on /metrics, and stop cleanly on SIGTERM.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseRunArgs } from '../../src/cli/run.ts';
import { MAX_WORKERS, parseWorkers } from '../../src/run/run-settings.ts';
import { find, parseExposition } from '../dataplane/telemetry/prometheus-text.ts';
import { freePort, gatewayYaml } from '../helpers/gateway.ts';
import { getOnNewConnection as get, routeYaml } from './helpers.ts';

const GW = new URL('../../bin/gw.js', import.meta.url).pathname;

interface Output {
  text: string;
}

/** Resolves with the match when `pattern` appears in the child's stderr; rejects after `ms`. */
function waitForLog(child: ChildProcess, output: Output, pattern: RegExp, ms = 15_000): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.stderr!.off('data', check);
      reject(new Error(`no log line like ${pattern} in:\n${output.text}`));
    }, ms);
    function check() {
      const match = output.text.match(pattern);
      if (match) {
        clearTimeout(timer);
        child.stderr!.off('data', check);
        resolve(match);
      }
    }
    child.stderr!.on('data', check);
    check();
  });
}

async function getMany(url: string, count: number): Promise<string[]> {
  const bodies: string[] = [];
  // A few at a time: enough connections in flight for both workers to be busy.
  for (let i = 0; i < count; i += 5) {
    const batch = await Promise.all(Array.from({ length: Math.min(5, count - i) }, () => get(url)));
    for (const answer of batch) bodies.push(`${answer.status} ${answer.body}`);
  }
  return bodies;
}

interface Scrape {
  requests: number;
  perWorker: Map<string, number>;
  restarts: number;
}

async function scrape(adminUrl: string): Promise<Scrape> {
  const { status, body } = await get(`${adminUrl}/metrics`);
  assert.equal(status, 200);
  const text = parseExposition(body);
  const requests = find(text, 'gw_requests_total').reduce((sum, sample) => sum + sample.value, 0);
  const perWorker = new Map(
    find(text, 'gw_worker_requests_total').map((sample) => [sample.labels.worker as string, sample.value]),
  );
  const restarts = find(text, 'gw_worker_restarts_total')[0]?.value ?? Number.NaN;
  return { requests, perWorker, restarts };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

describe('gw run --workers 2', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-cluster-'));
  const first = createServer((_req, res) => res.end('first upstream'));
  const second = createServer((_req, res) => res.end('second upstream'));
  after(() => {
    first.close();
    second.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves on both workers, reloads both, restarts a killed one, sums /metrics and stops on SIGTERM', async () => {
    const firstPort = await listen(first);
    const secondPort = await listen(second);
    const port = await freePort();
    const adminPort = await freePort();
    writeFileSync(join(dir, 'gateway.yaml'), gatewayYaml(port));
    writeFileSync(join(dir, 'route.yaml'), routeYaml(firstPort));
    const child = spawn(process.execPath, [GW, 'run', '-f', dir, '--admin-port', String(adminPort), '--workers', '2'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let accessLog = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      accessLog += chunk.toString();
    });
    const output: Output = { text: '' };
    child.stderr!.on('data', (chunk: Buffer) => {
      output.text += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const url = `http://127.0.0.1:${port}/`;
    const pids: number[] = [];
    try {
      const admin = await waitForLog(child, output, /admin endpoints on (http:\/\/[\d.]+:\d+)/);
      const adminUrl = admin[1] as string;
      await waitForLog(child, output, /serving with 2 worker processes/);
      for (const slot of ['1', '2']) {
        const started = await waitForLog(child, output, new RegExp(`worker ${slot} started \\(pid (\\d+)\\)`));
        pids.push(Number(started[1]));
      }
      assert.notEqual(pids[0], pids[1]);
      assert.equal((await get(`${adminUrl}/healthz/ready`)).status, 200);

      // Both workers take traffic; the primary's /metrics is their sum.
      const answers = await getMany(url, 100);
      assert.deepEqual(new Set(answers), new Set(['200 first upstream']));
      let metrics = await scrape(adminUrl);
      assert.equal(metrics.requests, 100);
      const one = metrics.perWorker.get('1') ?? 0;
      const two = metrics.perWorker.get('2') ?? 0;
      assert.ok(one > 0 && two > 0, `both workers served requests (worker 1: ${one}, worker 2: ${two})`);
      assert.equal(one + two, 100);

      // A configuration edit reaches both workers before it is reported as served.
      const served = () => output.text.match(/Gateway default\/ai: serving/g)?.length ?? 0;
      const servedBefore = served();
      writeFileSync(join(dir, 'route.yaml'), routeYaml(secondPort));
      await waitForLog(child, output, new RegExp(`(Gateway default/ai: serving[^]*){${servedBefore + 1}}`));
      assert.deepEqual(new Set(await getMany(url, 60)), new Set(['200 second upstream']));
      const afterEdit = await scrape(adminUrl);
      assert.ok((afterEdit.perWorker.get('1') ?? 0) > one, 'worker 1 served the edited configuration');
      assert.ok((afterEdit.perWorker.get('2') ?? 0) > two, 'worker 2 served the edited configuration');
      metrics = afterEdit;

      // A worker killed outright: the other keeps serving, readiness waits for the replacement,
      // and the sum keeps what the killed worker had reported.
      process.kill(pids[0] as number, 'SIGKILL');
      await waitForLog(child, output, /worker 1 \(pid \d+\) was killed by SIGKILL; starting another/);
      assert.equal((await get(`${adminUrl}/healthz/ready`)).status, 503, 'not ready while a worker is missing');
      assert.deepEqual(new Set(await getMany(url, 20)), new Set(['200 second upstream']));
      const replaced = await waitForLog(child, output, /worker 1 \(pid (\d+)\) serves the current configuration/);
      const replacement = Number(replaced[1]);
      assert.ok(replacement !== pids[0] && alive(replacement));
      pids.push(replacement);
      assert.equal((await get(`${adminUrl}/healthz/ready`)).status, 200);
      assert.deepEqual(new Set(await getMany(url, 100)), new Set(['200 second upstream']));
      const afterRestart = await scrape(adminUrl);
      assert.equal(afterRestart.restarts, 1);
      assert.equal(afterRestart.requests, metrics.requests + 120, 'no request is lost from the sum');
      assert.ok((afterRestart.perWorker.get('1') ?? 0) > 0, 'the replacement serves requests');
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0);
    assert.match(output.text, /stopping/);
    for (const pid of pids) assert.equal(alive(pid), false, `worker ${pid} has exited`);
    // Every worker writes its own access log lines to the shared standard output, whole.
    const lines = accessLog.split('\n').filter((line) => line !== '');
    assert.equal(lines.length, 280);
    for (const line of lines) assert.equal(JSON.parse(line).gateway, 'default/ai');
  });

  it('parses --workers: a number, or auto for one per core', () => {
    assert.equal(parseWorkers(undefined), 1);
    assert.equal(parseWorkers('4'), 4);
    assert.equal(parseWorkers('auto', 6), 6);
    assert.equal(parseWorkers('auto', 1), 1);
    assert.match(String(parseWorkers('0')), /--workers must be/);
    assert.match(String(parseWorkers('2.5')), /--workers must be/);
    assert.match(String(parseWorkers(String(MAX_WORKERS + 1))), /--workers must be/);
    const options = parseRunArgs(['-f', 'x', '--workers', '3']);
    assert.equal(typeof options === 'object' && options.workers, 3);
    assert.match(String(parseRunArgs(['-f', 'x', '--workers', 'many'])), /--workers must be/);
  });
});
