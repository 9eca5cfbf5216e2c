// The memory stalled request bodies can take from gw (issue 17, item 1), measured as the real
// resident size of a `gw run` process: 100 clients each send most of a 2 MiB chat completion and
// stall. With a 32 MiB buffer budget, 16 bodies are read and the rest are refused (503) before
// gw reads any of them; gw's memory grows by about the budget, not by 200 MiB, and comes back
// down once the clients have gone. Reads /proc (Linux).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type GwProcess, spawnGw } from '../helpers/cli.ts';
import { aiBackendYaml, freePort, gatewayYaml } from '../helpers/gateway.ts';
import { prefixRouteYaml } from '../helpers/policy-yaml.ts';
import { until } from '../helpers/until.ts';
import type { MockServer } from '../support/providers/mock-server.ts';
import { startOpenAiMock } from '../support/providers/openai-mock.ts';

const MiB = 1024 * 1024;
const BUDGET_MIB = 32;
const CLIENTS = 100;
const BODY_BYTES = 2 * MiB;

const linux = process.platform === 'linux';

function residentMiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match![1]) / 1024;
}

const CHAT = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });

describe('memory under stalled request bodies (gw run)', { skip: !linux && 'reads /proc (Linux)' }, () => {
  let gw: GwProcess | undefined;
  let provider: MockServer | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'gw-memory-'));
  after(async () => {
    if (gw) {
      gw.child.kill('SIGTERM');
      await gw.exited;
    }
    await provider?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(`stays within the budget under ${CLIENTS} stalled 2 MiB bodies and gives the memory back when they go`, async () => {
    provider = await startOpenAiMock({ apiKey: 'sk-upstream', maxRecordedRequests: 1 });
    const port = await freePort();
    writeFileSync(
      join(dir, 'gateway.yaml'),
      `${gatewayYaml(port)}${aiBackendYaml('openai', provider.port, 'alpha: {}', 'sk-upstream', '{/v1/chat/completions: Completions}')}${prefixRouteYaml('llm', { prefix: '/v1', backend: 'openai' })}`,
    );
    gw = spawnGw([
      'run',
      '-f',
      dir,
      '--admin-port',
      '0',
      '--max-buffered-bytes',
      `${BUDGET_MIB}Mi`,
      '--max-buffered-bytes-per-listener',
      `${BUDGET_MIB}Mi`,
    ]);
    gw.child.stdout!.resume(); // the access log
    await gw.waitForLog(/Gateway default\/ai: serving/);
    const pid = gw.child.pid!;
    const url = `http://127.0.0.1:${port}/v1/chat/completions`;
    for (let i = 0; i < 50; i++) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: CHAT,
      });
      assert.equal(response.status, 200);
      await response.arrayBuffer();
    }
    await sleep(300);
    const baseline = residentMiB(pid);

    const body = Buffer.alloc(BODY_BYTES - 10, ' ');
    const sockets: Socket[] = [];
    const answers: string[] = [];
    for (let i = 0; i < CLIENTS; i++) {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      socket.on('data', (chunk: Buffer) => answers.push(chunk.toString('latin1', 0, 12)));
      socket.write(
        `POST /v1/chat/completions HTTP/1.1\r\nhost: gw.test\r\ncontent-type: application/json\r\ncontent-length: ${BODY_BYTES}\r\n\r\n`,
      );
      socket.write(body);
      sockets.push(socket);
    }
    const refused = CLIENTS - BUDGET_MIB / 2;
    assert.ok(
      await until(() => answers.filter((answer) => answer === 'HTTP/1.1 503').length === refused, 5000),
      `${answers.length} answers: ${answers.join(', ')}`,
    );
    let peak = 0;
    for (let i = 0; i < 10; i++) {
      peak = Math.max(peak, residentMiB(pid));
      await sleep(100);
    }
    assert.ok(
      peak - baseline <= BUDGET_MIB + 40,
      `resident ${baseline.toFixed(0)} MiB before, ${peak.toFixed(0)} MiB under the stalled bodies`,
    );

    for (const socket of sockets) socket.destroy();
    const settled = () => residentMiB(pid) - baseline <= 32;
    assert.ok(
      await until(settled, 3000),
      `resident ${baseline.toFixed(0)} MiB before, ${residentMiB(pid).toFixed(0)} MiB after the clients left`,
    );
    const after = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: CHAT });
    assert.equal(after.status, 200);
  });
});
