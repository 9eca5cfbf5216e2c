// Benchmark of the embedded API server, against a real `gw run` (API server, controller and data
// plane in a child process, its SQLite database on disk):
//   - `kubectl apply` of 1,000 resources (client-side, again unchanged, and --server-side);
//   - watch event latency after a write (goal: p99 ≤ 20 ms);
//   - listing 10,000 objects (goal: ≤ 200 ms).
// Run: node bench/apiserver.bench.ts   (the kubectl part is skipped when kubectl is missing)
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnChild } from './gateway/child-process.ts';

const GW = new URL('../bin/gw.js', import.meta.url).pathname;
const RESOURCES = 1_000;
const LISTED = 10_000;
const WATCHED_WRITES = 500;

const dataDir = mkdtempSync(join(tmpdir(), 'gw-apiserver-bench-'));
const home = mkdtempSync(join(tmpdir(), 'gw-apiserver-bench-home-'));
const gw = spawnChild('gw run', process.execPath, [
  GW,
  'run',
  '--api-port',
  '0',
  '--data-dir',
  dataDir,
  '--admin-port',
  '0',
]);

async function apiPort(): Promise<number> {
  for (let i = 0; i < 300; i++) {
    const match = /API server on https:\/\/127\.0\.0\.1:(\d+)/.exec(gw.outputTail());
    if (match) return Number(match[1]);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`gw run did not start its API server:\n${gw.outputTail()}`);
}

const port = await apiPort();
const ca = readFileSync(join(dataDir, 'ca.crt'), 'utf8');
const token = readFileSync(join(dataDir, 'token'), 'utf8').trim();

function call(
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { Authorization: `Bearer ${token}` };
    if (payload) {
      headers['Content-Type'] = contentType;
      headers['Content-Length'] = String(payload.length);
    }
    const request = httpsRequest({
      host: '127.0.0.1',
      port,
      method,
      path,
      headers,
      ca,
      servername: 'localhost',
      agent: keepAlive,
    });
    request.on('error', reject);
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, text: Buffer.concat(chunks).toString() }));
    });
    request.end(payload);
  });
}
const { Agent } = await import('node:https');
const keepAlive = new Agent({ keepAlive: true, maxSockets: 8, ca });

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

try {
  // ---- kubectl apply of 1,000 resources ----
  const kubectlMissing = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).error !== undefined;
  if (kubectlMissing) {
    console.log('kubectl apply: SKIPPED (kubectl is not installed)');
  } else {
    const documents: string[] = [];
    for (let i = 0; i < RESOURCES; i++) {
      if (i % 10 < 4) {
        documents.push(
          `apiVersion: gw.dev/v1alpha1\nkind: GwBackend\nmetadata: {name: backend-${i}}\nspec: {ai: {provider: {alpha: {model: gpt-4o}}}}`,
        );
      } else if (i % 10 < 7) {
        documents.push(
          `apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: route-${i}}\nspec:\n  parentRefs: [{name: ai}]\n  rules: [{backendRefs: [{group: gw.dev, kind: GwBackend, name: backend-${i - 4}}]}]`,
        );
      } else {
        documents.push(`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: config-${i}}\ndata: {index: "${i}"}`);
      }
    }
    const file = join(home, 'resources.yaml');
    writeFileSync(file, documents.join('\n---\n'));
    const kubectl = (...args: string[]) =>
      new Promise<number>((resolve, reject) => {
        const started = performance.now();
        execFile(
          'kubectl',
          args,
          {
            env: {
              ...process.env,
              HOME: home,
              KUBECONFIG: join(dataDir, 'kubeconfig'),
              KUBECACHEDIR: join(home, 'cache'),
            },
            maxBuffer: 16 * 1024 * 1024,
          },
          (error, _stdout, stderr) => (error ? reject(new Error(stderr)) : resolve(performance.now() - started)),
        );
      });
    console.log(`kubectl apply of ${RESOURCES} resources (400 GwBackends, 300 HTTPRoutes, 300 ConfigMaps):`);
    console.log(`  create, client-side:         ${(await kubectl('apply', '-f', file)).toFixed(0)} ms`);
    console.log(`  again, unchanged:            ${(await kubectl('apply', '-f', file)).toFixed(0)} ms`);
    console.log(
      `  --server-side (takes over):  ${(await kubectl('apply', '--server-side', '-f', file)).toFixed(0)} ms`,
    );
    await kubectl('delete', '--wait=false', '-f', file);
  }

  // ---- watch event latency ----
  const collection = '/api/v1/namespaces/default/configmaps';
  const list = JSON.parse((await call('GET', collection)).text);
  const arrivals = new Map<string, number>();
  const watch = httpsRequest({
    host: '127.0.0.1',
    port,
    path: `${collection}?watch=1&resourceVersion=${list.metadata.resourceVersion}`,
    headers: { Authorization: `Bearer ${token}` },
    ca,
    servername: 'localhost',
  });
  await new Promise<void>((resolve, reject) => {
    watch.on('error', reject);
    watch.on('response', (response) => {
      let buffer = '';
      response.on('data', (chunk: Buffer) => {
        const now = performance.now();
        buffer += chunk.toString();
        let newline = buffer.indexOf('\n');
        while (newline !== -1) {
          const event = JSON.parse(buffer.slice(0, newline));
          buffer = buffer.slice(newline + 1);
          if (event.type === 'ADDED') arrivals.set(event.object.metadata.name, now);
          newline = buffer.indexOf('\n');
        }
      });
      resolve();
    });
    watch.end();
  });
  const afterAck: number[] = [];
  const afterSend: number[] = [];
  for (let i = 0; i < WATCHED_WRITES; i++) {
    const name = `watched-${i}`;
    const sent = performance.now();
    const reply = await call('POST', collection, { metadata: { name }, data: { i: String(i) } });
    if (reply.status !== 201) throw new Error(reply.text);
    const acknowledged = performance.now();
    while (!arrivals.has(name)) await new Promise((resolve) => setImmediate(resolve));
    afterSend.push(arrivals.get(name)! - sent);
    afterAck.push(Math.max(0, arrivals.get(name)! - acknowledged));
  }
  watch.destroy();
  afterAck.sort((a, b) => a - b);
  afterSend.sort((a, b) => a - b);
  const p99 = percentile(afterSend, 99);
  console.log(`watch event latency, ${WATCHED_WRITES} sequential creates (from sending the write):`);
  console.log(
    `  p50 ${percentile(afterSend, 50).toFixed(2)} ms, p99 ${p99.toFixed(2)} ms, max ${afterSend.at(-1)!.toFixed(2)} ms`,
  );
  console.log(`  after the write was acknowledged: p99 ${percentile(afterAck, 99).toFixed(2)} ms`);
  console.log(`  goal p99 ≤ 20 ms: ${p99 <= 20 ? 'met' : 'MISSED'}`);

  // ---- listing 10,000 objects ----
  const start = performance.now();
  const toCreate = LISTED - WATCHED_WRITES;
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < toCreate) {
        const i = next++;
        const reply = await call('POST', collection, {
          metadata: { name: `listed-${i}`, labels: { i: String(i % 10) } },
          data: { i: String(i) },
        });
        if (reply.status !== 201) throw new Error(reply.text);
      }
    }),
  );
  const createMs = performance.now() - start;
  console.log(
    `creating ${toCreate} more ConfigMaps over HTTPS, 8 at a time: ${createMs.toFixed(0)} ms (${((createMs / toCreate) * 1000).toFixed(0)} µs each, each one fsynced)`,
  );
  const times = { json: [] as number[], table: [] as number[], selector: [] as number[] };
  let bytes = 0;
  for (let run = 0; run < 7; run++) {
    let started = performance.now();
    const reply = await call('GET', collection);
    const items = JSON.parse(reply.text).items.length;
    times.json.push(performance.now() - started);
    bytes = reply.text.length;
    if (items !== LISTED) throw new Error(`listed ${items} objects`);
    started = performance.now();
    await call('GET', `${collection}?labelSelector=i%3D3`);
    times.selector.push(performance.now() - started);
    started = performance.now();
    await new Promise<void>((resolve, reject) => {
      const request = httpsRequest({
        host: '127.0.0.1',
        port,
        path: collection,
        headers: { Authorization: `Bearer ${token}`, Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
        ca,
        servername: 'localhost',
        agent: keepAlive,
      });
      request.on('error', reject);
      request.on('response', (response) => {
        response.resume();
        response.on('end', () => resolve());
      });
      request.end();
    });
    times.table.push(performance.now() - started);
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const worst = (values: number[]) => Math.max(...values);
  console.log(
    `listing ${LISTED} ConfigMaps (${(bytes / 1e6).toFixed(1)} MB of JSON), median / worst of 7, client parse included:`,
  );
  console.log(`  JSON list:              ${median(times.json).toFixed(0)} / ${worst(times.json).toFixed(0)} ms`);
  console.log(`  as=Table (kubectl get): ${median(times.table).toFixed(0)} / ${worst(times.table).toFixed(0)} ms`);
  console.log(
    `  labelSelector (1,000):  ${median(times.selector).toFixed(0)} / ${worst(times.selector).toFixed(0)} ms`,
  );
  console.log(`  goal ≤ 200 ms: ${worst(times.json) <= 200 ? 'met' : 'MISSED'}`);
} finally {
  keepAlive.destroy();
  await gw.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
}
