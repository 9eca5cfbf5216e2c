// gw run in Istio's ambient mesh, end to end (decision 0035 part 3): gw started with the mesh
// environment a provisioned pod carries, its workload certificate from a stand-in of Istio's CA,
// Services, Pods and EndpointSlices in files. A request routed to a Service of an ambient
// namespace reaches its ready pod over HBONE, through a stand-in of the pod's ztunnel, showing gw's
// SPIFFE ID; nothing reaches the Service's own address in plaintext. A Service outside the mesh is
// reached as before, plainly. A pod that is not ready is not sent to, and a Service in the mesh
// with no ready pod fails closed (503), as does a gw process without the mesh environment.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createServer as createHttp2Server, type Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { spawnGw } from '../helpers/cli.ts';
import { freePort } from '../helpers/gateway.ts';
import { type MeshCaStandIn, podSettings, skipWithoutOpenssl, startMeshCa } from '../helpers/mesh-ca-stand-in.ts';
import { issue, type Seen, startZtunnel } from '../helpers/ztunnel-stand-in.ts';

const TOKEN = 'mesh-token';
/** gw's identity: podSettings' pod (namespace team-a, ServiceAccount ai, trust domain corp.example). */
const GATEWAY_IDENTITY = 'spiffe://corp.example/ns/team-a/sa/ai';
const MODEL_IDENTITY = 'spiffe://corp.example/ns/models/sa/model';

/** An address of its own on the loopback network for the pod, so ztunnel's port 15008 is free there. */
function podAddress(): string {
  const byte = () => 2 + Math.floor(Math.random() * 250);
  return `127.${byte()}.${byte()}.${byte()}`;
}

function listen(server: Server, host: string, port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

function objectsYaml(o: {
  listenerPort: number;
  podIp: string;
  podPort: number;
  /** The pod's HTTP/2 (h2c) port, behind the Service port h2TrapPort. */
  h2Port: number;
  trapPort: number;
  h2TrapPort: number;
  plainPort: number;
  ready: boolean;
}): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gw}
spec: {controllerName: gw.dev/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ai, namespace: team-a}
spec:
  gatewayClassName: gw
  infrastructure: {parametersRef: {group: gw.dev, kind: GwParameters, name: ai}}
  listeners: [{name: http, protocol: HTTP, port: ${o.listenerPort}, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gw.dev/v1alpha1
kind: GwParameters
metadata: {name: ai, namespace: team-a}
spec: {mesh: {trustDomain: corp.example, clusterId: east}}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: v1
kind: Namespace
metadata: {name: models, labels: {istio.io/dataplane-mode: ambient}}
---
apiVersion: v1
kind: Namespace
metadata: {name: plain}
---
apiVersion: v1
kind: Service
metadata: {name: model, namespace: models}
spec:
  clusterIP: 127.0.0.1
  selector: {app: model}
  ports:
  - {name: http, port: ${o.trapPort}, targetPort: http}
  - {name: grpc, port: ${o.h2TrapPort}, targetPort: grpc, appProtocol: kubernetes.io/h2c}
---
apiVersion: v1
kind: Pod
metadata: {name: model-0, namespace: models, labels: {app: model}}
spec:
  serviceAccountName: model
  containers: [{name: model, image: model:1, ports: [{name: http, containerPort: ${o.podPort}}]}]
status:
  phase: Running
  podIP: ${o.podIp}
  conditions: [{type: Ready, status: "${o.ready ? 'True' : 'False'}"}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: model-abc12, namespace: models, labels: {kubernetes.io/service-name: model}}
addressType: IPv4
endpoints:
- addresses: [${o.podIp}]
  conditions: {ready: ${o.ready}}
  targetRef: {kind: Pod, namespace: models, name: model-0}
ports: [{name: http, port: ${o.podPort}, protocol: TCP}, {name: grpc, port: ${o.h2Port}, protocol: TCP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: model, namespace: models}
spec:
  parentRefs: [{name: ai, namespace: team-a}]
  rules:
  - {matches: [{path: {type: PathPrefix, value: /model}}], backendRefs: [{name: model, port: ${o.trapPort}}]}
  - {matches: [{path: {type: PathPrefix, value: /h2}}], backendRefs: [{name: model, port: ${o.h2TrapPort}}]}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: plain}
spec:
  clusterIP: 127.0.0.1
  selector: {app: web}
  ports: [{name: http, port: ${o.plainPort}}]
---
apiVersion: v1
kind: Pod
metadata: {name: web-0, namespace: plain, labels: {app: web}}
spec:
  containers: [{name: web, image: web:1}]
status: {phase: Running, podIP: 127.0.0.1, conditions: [{type: Ready, status: "True"}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-xyz34, namespace: plain, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
endpoints: [{addresses: [127.0.0.1], conditions: {ready: true}, targetRef: {kind: Pod, namespace: plain, name: web-0}}]
ports: [{name: http, port: ${o.plainPort}, protocol: TCP}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: plain}
spec:
  parentRefs: [{name: ai, namespace: team-a}]
  rules: [{matches: [{path: {type: PathPrefix, value: /web}}], backendRefs: [{name: web, port: ${o.plainPort}}]}]
`;
}

describe('gw run in the ambient mesh', { skip: skipWithoutOpenssl }, () => {
  let ca: MeshCaStandIn;
  let dir: string;
  let ztunnel: Http2SecureServer;
  const seen: Seen[] = [];
  const podIp = podAddress();
  let podPort: number;
  let h2Port: number;
  let trapPort: number;
  let h2TrapPort: number;
  // The pod's HTTP/2 port (prior knowledge, no TLS: the Service port's appProtocol kubernetes.io/h2c).
  const h2 = createHttp2Server((request, response) =>
    response.end(`h2 got HTTP/${request.httpVersion} ${request.url}`),
  );
  let plainPort: number;
  let trapped = 0;
  const model = createServer((request, response) => response.end(`model got ${request.method} ${request.url}`));
  const trap = createServer((_request, response) => {
    trapped++;
    response.end('plaintext reached the Service address');
  });
  const trapH2 = createServer((_request, response) => {
    trapped++;
    response.end('plaintext reached the Service address');
  });
  const plain = createServer((request, response) => response.end(`web got ${request.url}`));

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-mesh-run-'));
    ca = await startMeshCa({ token: TOKEN, clusterId: 'east', identity: MODEL_IDENTITY });
    // The destination pod: its application, and its node's ztunnel at the pod's address, port 15008.
    ztunnel = (await startZtunnel(await issue(ca, dir, MODEL_IDENTITY, TOKEN), seen, { host: podIp, port: 15008 }))
      .server;
    podPort = await listen(model, podIp);
    h2Port = await listen(h2 as unknown as Server, podIp);
    trapPort = await listen(trap, '127.0.0.1');
    h2TrapPort = await listen(trapH2, '127.0.0.1');
    plainPort = await listen(plain, '127.0.0.1');
    // From here on the CA signs for gw, as istiod does for the token of gw's ServiceAccount.
    ca.options.identity = GATEWAY_IDENTITY;
  });
  after(async () => {
    ztunnel?.close();
    for (const server of [model, trap, trapH2, plain]) server.close();
    h2.close();
    await ca?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function runGw(ready: boolean, inMesh = true, extraArgs: string[] = []) {
    const listenerPort = await freePort();
    const files = mkdtempSync(join(dir, 'files-'));
    writeFileSync(
      join(files, 'objects.yaml'),
      objectsYaml({ listenerPort, podIp, podPort, h2Port, trapPort, h2TrapPort, plainPort, ready }),
    );
    const settings = podSettings(ca, dir, TOKEN);
    // The environment of the pod gw provisions for a Gateway in the mesh (src/provisioning/mesh.ts).
    const env = {
      CA_ADDRESS: settings.caAddress.href,
      TRUST_DOMAIN: 'corp.example',
      CLUSTER_ID: 'east',
      POD_NAMESPACE: 'team-a',
      SERVICE_ACCOUNT: 'ai',
      CA_TOKEN_PATH: settings.tokenPath,
      CA_ROOT_CERT_PATH: settings.rootCertPath,
    };
    const gw = spawnGw(['run', '-f', files, '--admin-port', '0', ...extraArgs], inMesh ? env : {});
    await gw.waitForLog(/Gateway team-a\/ai: serving http HTTP :\d+/);
    if (inMesh)
      await gw.waitForLog(/mesh workload certificate for spiffe:\/\/corp\.example\/ns\/team-a\/sa\/ai: valid until/);
    return { gw, base: `http://127.0.0.1:${listenerPort}` };
  }

  it("reaches an ambient Service's ready pod over HBONE with gw's SPIFFE ID; a Service outside the mesh plainly", async () => {
    const { gw, base } = await runGw(true);
    try {
      const response = await fetch(`${base}/model/v1/models`);
      assert.equal(response.status, 200, await response.clone().text());
      assert.equal(await response.text(), 'model got GET /model/v1/models');
      assert.equal(seen.length, 1);
      assert.deepEqual(seen[0], {
        clientIdentities: [GATEWAY_IDENTITY],
        servername: false,
        authority: `${podIp}:${podPort}`,
      });
      assert.equal(trapped, 0, 'nothing reached the Service address in plaintext');
      const web = await fetch(`${base}/web/page`);
      assert.equal(await web.text(), 'web got /web/page');
      assert.equal(seen.length, 1, 'the Service outside the mesh is not reached over HBONE');
      // A Service port of appProtocol kubernetes.io/h2c: HTTP/2 by prior knowledge inside the tunnel.
      const http2 = await fetch(`${base}/h2/chat`);
      assert.equal(await http2.text(), 'h2 got HTTP/2.0 /h2/chat');
      assert.equal(seen.at(-1)?.authority, `${podIp}:${h2Port}`);
      assert.deepEqual(seen.at(-1)?.clientIdentities, [GATEWAY_IDENTITY]);
    } finally {
      gw.child.kill('SIGTERM');
    }
    assert.equal(await gw.exited, 0);
  });

  it('with --workers 2, each worker process has its own workload certificate and tunnels', async () => {
    const before = seen.length;
    const { gw, base } = await runGw(true, true, ['--workers', '2']);
    try {
      // Each worker asks the CA for its certificate: two lines, two requests at least.
      await gw.waitForLog(/valid until[\s\S]*valid until/);
      for (let i = 0; i < 4; i++) {
        const response = await fetch(`${base}/model/x${i}`, { headers: { connection: 'close' } });
        assert.equal(await response.text(), `model got GET /model/x${i}`);
      }
      assert.ok(seen.length > before);
      for (const entry of seen.slice(before)) assert.deepEqual(entry.clientIdentities, [GATEWAY_IDENTITY]);
      assert.equal(trapped, 0);
    } finally {
      gw.child.kill('SIGTERM');
    }
    assert.equal(await gw.exited, 0);
  });

  it('mesh settings that cannot work end gw run at start, naming the variable', async () => {
    const gw = spawnGw(['run', '-f', dir, '--admin-port', '0'], {
      CA_ADDRESS: 'http://istiod.istio-system.svc:15012',
      POD_NAMESPACE: 'team-a',
      SERVICE_ACCOUNT: 'ai',
    });
    assert.equal(await gw.exited, 1);
    assert.match(gw.stderr, /gw run: mesh: CA_ADDRESS must be an https:\/\/ URL/);
  });

  it('a Service in the mesh with no ready pod fails closed: 503, nothing sent in plaintext', async () => {
    const before = seen.length;
    const { gw, base } = await runGw(false);
    try {
      const response = await fetch(`${base}/model/v1/models`);
      assert.equal(response.status, 503);
      assert.equal(seen.length, before);
      assert.equal(trapped, 0);
    } finally {
      gw.child.kill('SIGTERM');
    }
    assert.equal(await gw.exited, 0);
  });

  it('a gw process without the mesh environment sends nothing to a Service in the mesh (503) and says why', async () => {
    const before = seen.length;
    const { gw, base } = await runGw(true, false);
    try {
      const response = await fetch(`${base}/model/v1/models`);
      assert.equal(response.status, 503);
      await gw.waitForLog(/Service models\/model: the Service is in the ambient mesh .* no mesh workload identity/);
      assert.equal(seen.length, before);
      assert.equal(trapped, 0);
      const web = await fetch(`${base}/web/page`);
      assert.equal(await web.text(), 'web got /web/page');
    } finally {
      gw.child.kill('SIGTERM');
    }
    assert.equal(await gw.exited, 0);
  });
});
