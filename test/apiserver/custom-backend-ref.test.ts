// A custom provider's backendRef through the embedded API server, with the real kubectl: an
// InferencePool, its picker's Service, the providers and the Pods are created with kubectl apply
// and the Pods' status written as a kubelet would (kubectl patch --subresource=status). gw sends
// each request to the pod the picker names, writes the pool's status back (Accepted and
// ResolvedRefs for Gateway ai), and a pod whose Ready condition turns False leaves the pool: the
// picker naming it is refused. A provider whose backendRef is a Service reaches the Service's
// address (its clusterIP, a pod's loopback address here).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Telemetry } from '../../src/dataplane/telemetry/request-telemetry.ts';
import { LocalGateway } from '../../src/run/local-gateway.ts';
import { type Processor, startProcessor } from '../dataplane/policies/ext-proc-processor.ts';
import { freePort, gatewayYaml, llmRouteYaml } from '../helpers/gateway.ts';
import { POOL_KEY, pick, pickerServiceYaml, pooledBackendYaml, poolYaml } from '../helpers/inference-pool.ts';
import { eventually } from '../helpers/until.ts';
import type { MockServer } from '../support/providers/mock-server.ts';
import { startOpenAiMock } from '../support/providers/openai-mock.ts';
import { KUBECTL, kubectlSkip } from './kubectl-session.ts';

describe('an InferencePool created with kubectl in the embedded API server', { skip: kubectlSkip }, () => {
  let podA: MockServer;
  let podB: MockServer;
  let epp: Processor;
  let gateway: LocalGateway;
  let port: number;
  let dataDir: string;
  let home: string;

  const kubectl = (...args: string[]) =>
    new Promise<string>((resolve, reject) =>
      execFile(
        KUBECTL,
        args,
        { env: { ...process.env, HOME: home, KUBECONFIG: join(dataDir, 'kubeconfig') }, timeout: 30_000 },
        (error, stdout, stderr) =>
          error ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
      ),
    );

  /** Writes a Pod's status as its kubelet would. */
  const podStatus = (name: string, ip: string, ready: boolean) =>
    kubectl(
      'patch',
      'pod',
      name,
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: { phase: 'Running', podIP: ip, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
      }),
    );

  /** Status of a request to backend `path` asking the picker for `choice`, and which pods it reached. */
  async function send(choice: string, path = '/pool'): Promise<{ status: number; reached: number[] }> {
    const before = [podA.requests.length, podB.requests.length];
    const response = await fetch(`http://127.0.0.1:${port}${path}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-pick': choice },
      body: JSON.stringify({ model: 'llama-3', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await response.arrayBuffer();
    return { status: response.status, reached: [podA.requests.length - before[0]!, podB.requests.length - before[1]!] };
  }

  before(async () => {
    podA = await startOpenAiMock({ apiKey: POOL_KEY, host: '127.0.0.2' });
    podB = await startOpenAiMock({ apiKey: POOL_KEY, host: '127.0.0.3', port: podA.port });
    const target = podA.port;
    epp = await startProcessor((conversation) => pick(conversation, target));
    dataDir = mkdtempSync(join(tmpdir(), 'gw-pool-api-'));
    home = mkdtempSync(join(tmpdir(), 'gw-pool-kubectl-'));
    port = await freePort();
    gateway = new LocalGateway({
      paths: [],
      address: '127.0.0.1',
      api: { dataDir, port: 0 },
      log: () => {},
      telemetry: new Telemetry({ sink: { write: () => {} } }),
    });
    await gateway.start();
    const objects = join(home, 'objects.yaml');
    writeFileSync(
      objects,
      [
        gatewayYaml(port),
        pickerServiceYaml('epp', epp.port),
        `apiVersion: v1
kind: Pod
metadata: {name: vllm-a, labels: {app: vllm}}
spec: {containers: [{name: vllm, image: vllm:1}]}
---
apiVersion: v1
kind: Pod
metadata: {name: vllm-b, labels: {app: vllm}}
spec: {containers: [{name: vllm, image: vllm:1}]}
---
`,
        poolYaml('vllm', target, `  endpointPickerRef: {name: epp, port: {number: ${epp.port}}}\n`),
        pooledBackendYaml('pool', 'vllm'),
        `apiVersion: v1
kind: Service
metadata: {name: vllm-a}
spec: {clusterIP: 127.0.0.2, ports: [{name: http, port: ${target}}]}
---
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: svc}
spec:
  ai: {provider: {custom: {backendRef: {name: vllm-a, port: ${target}}, formats: [{type: Completions}]}}}
  policies: {auth: {key: ${POOL_KEY}}}
---
`,
        llmRouteYaml(['pool', 'svc']),
      ].join(''),
    );
    await kubectl('apply', '-f', objects);
    await podStatus('vllm-a', '127.0.0.2', true);
    await podStatus('vllm-b', '127.0.0.3', true);
  });

  after(async () => {
    await gateway?.stop();
    await Promise.all([podA?.close(), podB?.close(), epp?.close()]);
    for (const dir of [dataDir, home]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('sends each request to the pod the picker names', async () => {
    await eventually('the pool serves', async () => (await send('b')).status === 200);
    assert.deepEqual(await send('a'), { status: 200, reached: [1, 0] });
    assert.deepEqual(await send('b'), { status: 200, reached: [0, 1] });
  });

  it("writes the pool's status for Gateway ai: Accepted and ResolvedRefs True", async () => {
    const conditions = async () => {
      const pool = JSON.parse(await kubectl('get', 'inferencepool', 'vllm', '-o', 'json'));
      const parent = pool.status?.parents?.find(
        (entry: { parentRef: { name: string } }) => entry.parentRef.name === 'ai',
      );
      return Object.fromEntries(
        (parent?.conditions ?? []).map((entry: { type: string; status: string }) => [entry.type, entry.status]),
      );
    };
    await eventually('the pool status is written', async () => (await conditions()).Accepted === 'True');
    assert.deepEqual(await conditions(), { Accepted: 'True', ResolvedRefs: 'True' });
    const pool = JSON.parse(await kubectl('get', 'inferencepool', 'vllm', '-o', 'json'));
    assert.equal(pool.status.parents[0].controllerName, 'gw.dev/gateway-controller');
  });

  it('a pod that stops being Ready leaves the pool: the picker naming it is refused, the other still served', async () => {
    await podStatus('vllm-b', '127.0.0.3', false);
    await eventually('pod b has left the pool', async () => (await send('b')).status === 503);
    assert.deepEqual(await send('b'), { status: 503, reached: [0, 0] });
    assert.deepEqual(await send('a'), { status: 200, reached: [1, 0] });
  });

  it('a provider whose backendRef is a Service reaches the address the Service names', async () => {
    assert.deepEqual(await send('b', '/svc'), { status: 200, reached: [1, 0] });
  });
});
