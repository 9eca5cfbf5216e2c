// Where the kernel does not spread SO_REUSEPORT connections (macOS, Windows), the workers listen
// through node:cluster's socket shared by the primary; the same code path, forced here on Linux.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ClusterGateway, kernelBalancesReusePort } from '../../src/run/cluster-primary.ts';
import { find, parseExposition } from '../dataplane/telemetry/prometheus-text.ts';
import { freePort, gatewayYaml } from '../helpers/gateway.ts';
import { getOnNewConnection, routeYaml } from './helpers.ts';

async function get(url: string): Promise<string> {
  const { status, body } = await getOnNewConnection(url);
  return `${status} ${body}`;
}

test('SO_REUSEPORT is used where the kernel balances it', () => {
  assert.equal(kernelBalancesReusePort('linux'), true);
  assert.equal(kernelBalancesReusePort('darwin'), false);
  assert.equal(kernelBalancesReusePort('win32'), false);
});

test('without SO_REUSEPORT the workers share the primary socket and both serve', async () => {
  const upstream = createServer((_req, res) => res.end('upstream'));
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const upstreamPort = (upstream.address() as { port: number }).port;
  const dir = mkdtempSync(join(tmpdir(), 'gw-fallback-'));
  const port = await freePort();
  writeFileSync(
    join(dir, 'gateway.yaml'),
    `${gatewayYaml(port)}${routeYaml(upstreamPort)}---
# The workers share the test's standard output: no access log lines there.
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: quiet}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai}]
  frontend: {accessLog: {filter: 'false'}}
`,
  );
  const logs: string[] = [];
  const gateway = new ClusterGateway({
    paths: [dir],
    workers: 2,
    reusePort: false,
    watch: false,
    log: (line) => logs.push(line),
  });
  try {
    await gateway.start();
    assert.equal(gateway.ready(), true);
    const answers = await Promise.all(Array.from({ length: 40 }, () => get(`http://127.0.0.1:${port}/`)));
    assert.deepEqual(new Set(answers), new Set(['200 upstream']));
    const text = parseExposition(await gateway.renderMetrics());
    const perWorker = find(text, 'gw_worker_requests_total').map((sample) => sample.value);
    assert.equal(perWorker.length, 2);
    assert.ok(
      perWorker.every((requests) => requests > 0),
      `both workers served: ${perWorker.join(', ')}`,
    );
  } finally {
    await gateway.stop();
    upstream.close();
    rmSync(dir, { recursive: true, force: true });
  }
  assert.deepEqual(gateway.workerPids(), [0, 0]);
});
