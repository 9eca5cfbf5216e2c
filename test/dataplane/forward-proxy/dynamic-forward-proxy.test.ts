// GwBackend dynamicForwardProxy with real traffic: each request goes to the host:port its Host
// header names (two upstreams on 127.0.0.1, allowed by allowedAddresses), TLS to the destination
// is for the name the client sent, a CONNECT (Frontend.connect Route) goes to its authority. The
// safe defaults refuse each address class with 403 naming the rule and only what the client sent:
// loopback, link-local, unspecified, cloud metadata (IPv4 and IPv6, even inside an allowed range),
// the gateway's own listener, deniedAddresses; a name resolving to a refused address is refused
// too, and the connection goes to the address checked (a name only the test's resolver knows).
// Backend policies apply as to any backend: TLS, a tunnel (whose CONNECT names the checked
// address) and backend auth.
import assert from 'node:assert/strict';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import {
  type AddressInfo,
  connect as connectTcp,
  createServer as createTcpServer,
  type Server,
  type Socket,
} from 'node:net';
import { after, before, describe, it } from 'node:test';
import { systemLookup } from '../../../src/dataplane/upstream/address-lookup.ts';
import { freePort, gatewayYaml, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { closeServer } from '../../helpers/http-server.ts';
import { type ConnectProxy, startConnectProxy } from '../../support/connect-proxy.ts';
import { fixture } from '../frontend/helpers.ts';

interface Answer {
  status: number;
  body: string;
}

/** GET `path` on gw with Host `host` (node's client: the Host is sent as given). */
function get(port: number, path: string, host: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { host }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      // gw's plain-text answers end with a newline.
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString().trimEnd() }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A CONNECT to `authority` through gw: the status, and the tunnel when it is 200. */
function connect(port: number, authority: string): Promise<{ status: number; body: string; socket?: Socket }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: 'CONNECT', path: authority, agent: false });
    // node's client takes every answer to a CONNECT as one: the body of a refusal is on the socket.
    req.on('connect', (response, socket: Socket, head: Buffer) => {
      if (head.length > 0) socket.unshift(head);
      if (response.statusCode === 200) return resolve({ status: 200, body: '', socket });
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** An HTTP upstream on `address` answering with its name, the Host it got and the path. */
async function namedUpstream(name: string, address = '127.0.0.1'): Promise<{ server: Server; port: number }> {
  const server = createHttpServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({ server: name, host: req.headers.host, url: req.url, authorization: req.headers.authorization }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** GwBackend `name` (dynamicForwardProxy `spec`, spec.policies `policies`) and a rule for PathPrefix /`name`. */
function proxyRoute(name: string, spec: string, policies = '{}'): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: ${name}}
spec: {dynamicForwardProxy: ${spec}, policies: ${policies}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}}
spec:
  parentRefs: [{name: ai}]
  rules: [{matches: [{path: {type: PathPrefix, value: /${name}}}], backendRefs: [{group: gw.dev, kind: GwBackend, name: ${name}}]}]
---
`;
}

describe('GwBackend dynamicForwardProxy', () => {
  let gw: TestGateway;
  let port: number;
  let a: { server: Server; port: number };
  let b: { server: Server; port: number };
  let local: { server: Server; port: number };
  let tls: Server;
  let tlsPort: number;
  let echo: Server;
  let echoPort: number;
  let proxy: ConnectProxy;
  const lookups: string[] = [];

  before(async () => {
    a = await namedUpstream('a');
    b = await namedUpstream('b');
    // Listening where `localhost` resolves first: the address a forward proxy connects to.
    local = await namedUpstream('local', 'localhost');
    tls = createHttpsServer({ key: fixture('a.key'), cert: fixture('a.crt') }, (req, res) => {
      res.end(JSON.stringify({ server: 'tls', host: req.headers.host }));
    });
    await new Promise<void>((resolve) => tls.listen(0, '127.0.0.1', resolve));
    tlsPort = (tls.address() as AddressInfo).port;
    echo = createTcpServer((socket) => {
      socket.on('data', (chunk: Buffer) => socket.write(`echo:${chunk}`));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    echoPort = (echo.address() as AddressInfo).port;
    proxy = await startConnectProxy();
    port = await freePort();
    // Names only this resolver knows (the system's would fail them): a 200 proves gw connected to
    // the address it checked, not to the name again.
    const names: Record<string, string[]> = {
      'a.upstream.test': ['127.0.0.1'],
      'a.example.test': ['127.0.0.1'],
      'metadata.test': ['169.254.169.254'],
      'v6-metadata.test': ['fd00:ec2::254'],
      // A refused address first, a permitted one after: the permitted one is used.
      'mixed.test': ['169.254.169.254', '127.0.0.1'],
    };
    const resolveHost = async (host: string) => {
      lookups.push(host);
      return names[host] ?? (await systemLookup(host));
    };
    gw = await startTestGateway(
      {
        'gw.yaml': `${gatewayYaml(port)}apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: frontend}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai}]
  frontend: {connect: {mode: Route}}
---
apiVersion: v1
kind: Secret
metadata: {name: upstream-key}
stringData: {Authorization: Bearer upstream-secret}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ca}
data: {ca.crt: ${JSON.stringify(fixture('ca.crt'))}}
---
${proxyRoute('open', '{allowedAddresses: [127.0.0.1/32, 169.254.0.0/16, "fd00::/8"]}')}${proxyRoute('strict', '{}')}${proxyRoute(
  'named',
  '{allowedHosts: [localhost]}',
)}${proxyRoute('denied', '{allowedAddresses: [127.0.0.0/8], deniedAddresses: [127.0.0.2/32]}')}${proxyRoute(
  'tls',
  '{allowedAddresses: [127.0.0.1/32]}',
  '{tls: {caCertificateRefs: [{name: ca}]}}',
)}${proxyRoute(
  'tunnelled',
  '{allowedAddresses: [127.0.0.1/32]}',
  `{tunnel: {url: "${proxy.url}"}, auth: {secretRef: {name: upstream-key}}}`,
)}apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: connect}
spec:
  parentRefs: [{name: ai}]
  rules: [{matches: [{method: CONNECT}], backendRefs: [{group: gw.dev, kind: GwBackend, name: open}]}]
`,
      },
      undefined,
      resolveHost,
    );
  });

  after(async () => {
    await gw?.stop();
    for (const server of [a?.server, b?.server, local?.server, tls]) await closeServer(server as never);
    echo?.close();
    await proxy?.close();
  });

  it('sends each request to the host:port its Host header names, with that Host', async () => {
    const toA = await get(port, '/open/x?q=1', `127.0.0.1:${a.port}`);
    const toB = await get(port, '/open/y', `127.0.0.1:${b.port}`);
    assert.equal(toA.status, 200, toA.body);
    assert.deepEqual(JSON.parse(toA.body), { server: 'a', host: `127.0.0.1:${a.port}`, url: '/open/x?q=1' });
    assert.equal(toB.status, 200, toB.body);
    assert.deepEqual(JSON.parse(toB.body), { server: 'b', host: `127.0.0.1:${b.port}`, url: '/open/y' });
  });

  it('connects to the address it resolved and checked, resolving once per request', async () => {
    lookups.length = 0;
    const answer = await get(port, '/open', `a.upstream.test:${a.port}`);
    assert.equal(answer.status, 200, answer.body);
    assert.deepEqual(JSON.parse(answer.body), { server: 'a', host: `a.upstream.test:${a.port}`, url: '/open' });
    assert.deepEqual(lookups, ['a.upstream.test']);
    const mixed = await get(port, '/open', `mixed.test:${b.port}`);
    assert.equal(mixed.status, 200, mixed.body);
    assert.equal(JSON.parse(mixed.body).server, 'b');
  });

  it('refuses loopback without an allow rule, naming the rule and only what the client sent', async () => {
    for (const host of [
      `127.0.0.1:${a.port}`,
      `[::1]:${a.port}`,
      `[::ffff:127.0.0.1]:${a.port}`,
      `127.1.2.3:${a.port}`,
    ]) {
      const answer = await get(port, '/strict', host);
      assert.equal(answer.status, 403, host);
      assert.match(answer.body, /refused: it is a loopback address/, host);
      assert.match(answer.body, /allowedAddresses or allowedHosts/);
    }
  });

  it('refuses a name that resolves to a refused address, without saying the address', async () => {
    const answer = await get(port, '/strict', `localhost:${local.port}`);
    assert.equal(answer.status, 403);
    assert.equal(
      answer.body,
      `destination localhost:${local.port} refused: it is a loopback address (allow it with dynamicForwardProxy.allowedAddresses or allowedHosts)`,
    );
    assert.doesNotMatch(answer.body, /127\.0\.0\.1|::1/);
    // The log has what was resolved.
    assert.ok(gw.accessLog.some((line) => line.includes('refused (loopback): resolved to')));
    const metadata = await get(port, '/open', 'metadata.test');
    assert.equal(metadata.status, 403);
    assert.match(metadata.body, /^destination metadata\.test:80 refused: it is a cloud metadata service/);
  });

  it('allowedHosts lifts the loopback default for the names it lists', async () => {
    const answer = await get(port, '/named', `localhost:${local.port}`);
    assert.equal(answer.status, 200, answer.body);
    assert.equal(JSON.parse(answer.body).server, 'local');
    // Another name resolving to loopback is not listed.
    assert.equal((await get(port, '/named', `a.upstream.test:${a.port}`)).status, 403);
  });

  it('refuses cloud metadata addresses, IPv4 and IPv6, even inside an allowed range', async () => {
    for (const host of [
      '169.254.169.254',
      '169.254.169.254:8080',
      '[fd00:ec2::254]',
      'v6-metadata.test',
      '[fd20:ce::254]',
    ]) {
      const answer = await get(port, '/open', host);
      assert.equal(answer.status, 403, host);
      assert.match(answer.body, /refused: it is a cloud metadata service/, host);
    }
  });

  it('refuses link-local and unspecified addresses', async () => {
    for (const [host, rule] of [
      ['169.254.10.10:80', 'link-local'],
      ['[fe80::1]:80', 'link-local'],
      [`0.0.0.0:${a.port}`, 'unspecified'],
      [`[::]:${a.port}`, 'unspecified'],
    ] as const) {
      const answer = await get(port, '/strict', host);
      assert.equal(answer.status, 403, host);
      assert.match(answer.body, new RegExp(`it is an? ${rule} address`), host);
    }
  });

  it("refuses the gateway's own listener even where loopback is allowed", async () => {
    const answer = await get(port, '/open', `127.0.0.1:${port}`);
    assert.equal(answer.status, 403);
    assert.equal(answer.body, `destination 127.0.0.1:${port} refused: it is one of the gateway's own listeners`);
  });

  it('answers 508 to a request that comes back through an address the rules cannot know (a relay to gw)', async () => {
    // What a Service's ClusterIP or a load balancer in front of gw would be: another address that leads to gw.
    const relay = createTcpServer((inbound) => {
      const outbound = connectTcp(port, '127.0.0.1');
      inbound.pipe(outbound).pipe(inbound);
      inbound.on('error', () => outbound.destroy());
      outbound.on('error', () => inbound.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    try {
      const relayPort = (relay.address() as AddressInfo).port;
      const answer = await get(port, '/open/loop', `127.0.0.1:${relayPort}`);
      assert.equal(answer.status, 508);
      assert.match(answer.body, /came back to this gateway through its own forward proxy/);
    } finally {
      relay.close();
    }
  });

  it('adds its Via entry to what it forwards, after the ones the request came with, without naming the Gateway', async () => {
    let head = '';
    const recorder = createTcpServer((socket) => {
      socket.once('data', (chunk: Buffer) => {
        head = chunk.toString('latin1');
        socket.end('HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n');
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
    try {
      const recorderPort = (recorder.address() as AddressInfo).port;
      const answer = await new Promise<number>((resolve, reject) => {
        const req = httpRequest(
          {
            host: '127.0.0.1',
            port,
            path: '/open/via',
            headers: { host: `127.0.0.1:${recorderPort}`, via: '1.0 corporate-proxy' },
            agent: false,
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end();
      });
      assert.equal(answer, 204);
      const via = /^via: (.*)$/im.exec(head)?.[1]?.trim();
      assert.match(via ?? '', /^1\.0 corporate-proxy, 1\.1 gw-[0-9a-f]{16}$/);
      assert.doesNotMatch(head, /\bai\b.*default|default\/ai/);
    } finally {
      recorder.close();
    }
  });

  it('deniedAddresses refuses addresses an allow rule admits', async () => {
    assert.equal((await get(port, '/denied', `127.0.0.1:${a.port}`)).status, 200);
    const answer = await get(port, '/denied', `127.0.0.2:${a.port}`);
    assert.equal(answer.status, 403);
    assert.match(answer.body, /its address is in dynamicForwardProxy\.deniedAddresses/);
  });

  it('answers 503 for a name that cannot be resolved', async () => {
    const answer = await get(port, '/open', 'nowhere.invalid');
    assert.equal(answer.status, 503);
    assert.equal(answer.body, 'nowhere.invalid:80 could not be resolved');
  });

  it('originates TLS for the name the client sent (SNI, certificate) while connecting to its address', async () => {
    const answer = await get(port, '/tls', `a.example.test:${tlsPort}`);
    assert.equal(answer.status, 200, answer.body);
    assert.deepEqual(JSON.parse(answer.body), { server: 'tls', host: `a.example.test:${tlsPort}` });
  });

  it("goes through the backend policy's tunnel to the checked address, with backend auth", async () => {
    const answer = await get(port, '/tunnelled', `a.upstream.test:${b.port}`);
    assert.equal(answer.status, 200, answer.body);
    assert.deepEqual(JSON.parse(answer.body), {
      server: 'b',
      host: `a.upstream.test:${b.port}`,
      url: '/tunnelled',
      authorization: 'Bearer upstream-secret',
    });
    // The CONNECT names the address gw resolved and checked, not the name (no second resolution there).
    assert.equal(proxy.servedTo(`127.0.0.1:${b.port}`), 1);
    // A refused destination is refused before the tunnel: the proxy is never asked.
    assert.equal((await get(port, '/tunnelled', 'metadata.test')).status, 403);
    assert.equal(proxy.connects.length, 1);
  });

  it('tunnels a CONNECT (Frontend.connect Route) to its authority, under the same rules', async () => {
    const tunnel = await connect(port, `127.0.0.1:${echoPort}`);
    assert.equal(tunnel.status, 200);
    const reply = await new Promise<string>((resolve) => {
      tunnel.socket!.once('data', (chunk: Buffer) => resolve(chunk.toString()));
      tunnel.socket!.write('hello');
    });
    assert.equal(reply, 'echo:hello');
    tunnel.socket!.destroy();
    const metadata = await connect(port, '169.254.169.254:80');
    assert.equal(metadata.status, 403);
    assert.match(metadata.body, /refused: it is a cloud metadata service/);
    const own = await connect(port, `127.0.0.1:${port}`);
    assert.equal(own.status, 403);
  });
});
