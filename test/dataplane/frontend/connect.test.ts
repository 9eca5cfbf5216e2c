// Frontend.connect: Deny answers CONNECT with 405; Route matches it against the routes (host from
// the authority), runs the route's traffic policies and tunnels to the chosen backend's address;
// Tunnel hands the tunnel to the gw listener on the port the authority names, as a new
// connection (here: TLS and HTTP inside the tunnel, served by the HTTPS listener). A backend with
// a tunnel of its own is reached through its CONNECT proxy; a backend's extAuth decides whether
// its tunnel opens (an HTTP authorization server is asked with the method CONNECT, as Envoy does).
import assert from 'node:assert/strict';
import {
  createServer as createHttpServer,
  type Server as HttpServer,
  request as httpRequest,
  type IncomingHttpHeaders,
} from 'node:http';
import { connect as http2Connect } from 'node:http2';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { type TLSSocket, connect as tlsConnect } from 'node:tls';
import type * as grpc from '@grpc/grpc-js';
import {
  AUTHORIZATION_SERVICE,
  type CheckResponse,
  EXT_AUTHZ_PROTO,
} from '../../../src/dataplane/policies/ext-authz/grpc-mode.ts';
import { serviceConstructor } from '../../../src/dataplane/policies/grpc/client.ts';
import { freePort, refusedPort } from '../../helpers/gateway.ts';
import { type GrpcTestServer, startGrpcServer } from '../../helpers/grpc-server.ts';
import { keepaliveReadbackUnavailable, socketKeepalive } from '../../helpers/socket-keepalive.ts';
import { until } from '../../helpers/until.ts';
import { type ConnectProxy, startConnectProxy } from '../../support/connect-proxy.ts';
import {
  accessEntries,
  bodyOf,
  CA,
  type Echo,
  type FrontendGateway,
  fixture,
  getRequest,
  rawExchange,
  startFrontendGateway,
  statusOf,
} from './helpers.ts';

interface Connected {
  status: number;
  headers: IncomingHttpHeaders;
  socket: Socket | undefined;
}

/** An HTTP/1.1 CONNECT (with `headers`): the status, and the tunnel when it is 200. */
function connectRequest(port: number, authority: string, headers: Record<string, string> = {}): Promise<Connected> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: 'CONNECT', path: authority, agent: false, headers });
    req.on('connect', (response, socket: Socket, head: Buffer) => {
      if (head.length > 0) socket.unshift(head);
      if (response.statusCode !== 200) socket.destroy();
      resolve({
        status: response.statusCode ?? 0,
        headers: response.headers,
        socket: response.statusCode === 200 ? socket : undefined,
      });
    });
    req.on('response', (response) => {
      response.resume();
      resolve({ status: response.statusCode ?? 0, headers: response.headers, socket: undefined });
    });
    req.on('error', reject);
    req.end();
  });
}

/** Writes `bytes` into a stream and reads until it ends. */
function exchange(stream: Duplex, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks).toString()));
    stream.on('error', reject);
    stream.write(bytes);
  });
}

/** A TCP server answering each chunk with "echo:" and the chunk, then closing when asked ("bye"). */
async function tcpEcho(): Promise<{ server: Server; port: number }> {
  const server = createServer((socket) => {
    socket.on('data', (chunk: Buffer) => {
      socket.write(`echo:${chunk}`);
      if (chunk.toString().includes('bye')) socket.end();
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/**
 * GwBackend `name` (127.0.0.1:`port`, spec.policies `policies`) and HTTPRoute `name` sending
 * CONNECTs for `name`.example.test to it.
 */
function connectRouteYaml(name: string, port: number, policies: string): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: ${name}}
spec: {static: {host: 127.0.0.1, port: ${port}}, policies: ${policies}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}}
spec:
  parentRefs: [{name: ai}]
  hostnames: [${name}.example.test]
  rules: [{matches: [{method: CONNECT}], backendRefs: [{group: gw.dev, kind: GwBackend, name: ${name}}]}]
---
`;
}

describe('Frontend.connect Route', () => {
  let gateway: FrontendGateway;
  let echo: Awaited<ReturnType<typeof tcpEcho>>;

  before(async () => {
    echo = await tcpEcho();
    gateway = await startFrontendGateway(
      '{connect: {mode: Route}}',
      `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: tcp-echo}
spec: {static: {host: 127.0.0.1, port: ${echo.port}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: tunnel}
spec:
  parentRefs: [{name: ai}]
  hostnames: [tunnel.example.test]
  rules: [{matches: [{method: CONNECT}], backendRefs: [{group: gw.dev, kind: GwBackend, name: tcp-echo}]}]
---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: two-tunnels}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: tunnel}]
  traffic: {rateLimit: {local: [{requests: 2, unit: Minutes}]}}
---
`,
    );
  });

  after(async () => {
    await gateway?.stop();
    echo?.server.close();
  });

  it('routes CONNECT by its authority and tunnels to the chosen backend', async () => {
    const tunnel = await connectRequest(gateway.httpPort, 'tunnel.example.test:443');
    assert.equal(tunnel.status, 200);
    assert.equal(await exchange(tunnel.socket!, 'hello bye'), 'echo:hello bye');
    assert.ok(
      await until(() => accessEntries(gateway.gw).some((entry) => entry['http.request.method'] === 'CONNECT'), 2000),
    );
    const entry = accessEntries(gateway.gw).find((line) => line['http.request.method'] === 'CONNECT')!;
    assert.equal(entry.route, 'default/tunnel');
    assert.equal(entry['http.response.status_code'], 200);
    assert.equal(entry['server.address'], 'tunnel.example.test');
    assert.equal(entry['server.port'], 443);

    // Another host takes route web: the tunnel reaches the HTTP echo upstream.
    const web = await connectRequest(gateway.httpPort, 'other.example.test:80');
    assert.equal(web.status, 200);
    const answer = await exchange(web.socket!, getRequest('/through-the-tunnel'));
    assert.equal(bodyOf<Echo>(answer).url, '/through-the-tunnel');
  });

  it('runs the route’s traffic policies on the CONNECT (a rate limit here)', async () => {
    // The first test used one of the two tunnels a minute.
    const second = await connectRequest(gateway.httpPort, 'tunnel.example.test:443');
    assert.equal(second.status, 200);
    second.socket!.destroy();
    const third = await connectRequest(gateway.httpPort, 'tunnel.example.test:443');
    assert.equal(third.status, 429);
  });

  it('answers 400 without a host:port authority and 503 when the backend cannot be reached', async () => {
    assert.equal((await connectRequest(gateway.httpPort, 'no-port.example.test')).status, 400);
    const closed = await refusedPort();
    gateway.gw.write(
      'dead.yaml',
      `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: dead}
spec: {static: {host: 127.0.0.1, port: ${closed}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: dead}
spec:
  parentRefs: [{name: ai}]
  hostnames: [dead.example.test]
  rules: [{backendRefs: [{group: gw.dev, kind: GwBackend, name: dead}]}]
`,
    );
    // Polled until the new route is loaded (404 before).
    let status = 0;
    const deadline = Date.now() + 5000;
    while (status !== 503 && Date.now() < deadline) {
      status = (await connectRequest(gateway.httpPort, 'dead.example.test:443')).status;
      if (status !== 503) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.equal(status, 503);
  });

  it('with Deny, answers CONNECT with 405 (HTTP/1.1 and HTTP/2)', async () => {
    await gateway.reconfigure(
      '{connect: {mode: Deny}}',
      async () => (await connectRequest(gateway.httpPort, 'tunnel.example.test:443')).status === 405,
    );
    const denied = await connectRequest(gateway.httpPort, 'tunnel.example.test:443');
    assert.equal(denied.status, 405);
    assert.match(String(denied.headers.allow), /GET/);
    const session = http2Connect(`https://127.0.0.1:${gateway.httpsPort}`, { ca: CA, servername: 'a.example.test' });
    try {
      const status = await new Promise<number>((resolve, reject) => {
        const stream = session.request({ ':method': 'CONNECT', ':authority': 'tunnel.example.test:443' });
        stream.on('response', (headers) => resolve(Number(headers[':status'])));
        stream.on('error', reject);
      });
      assert.equal(status, 405);
    } finally {
      session.close();
    }
  });
});

describe('Frontend.connect Route to a backend with extAuth (a backend policy)', () => {
  let gateway: FrontendGateway;
  let echo: Awaited<ReturnType<typeof tcpEcho>>;
  let authz: GrpcTestServer;
  let accepted = 0;

  before(async () => {
    echo = await tcpEcho();
    echo.server.on('connection', () => accepted++);
    // An Envoy ext_authz gRPC server allowing the blue team only.
    authz = await startGrpcServer(serviceConstructor(EXT_AUTHZ_PROTO, AUTHORIZATION_SERVICE).service, {
      // biome-ignore lint/suspicious/noExplicitAny: CheckRequest as proto-loader decodes it
      Check: (call: grpc.ServerUnaryCall<any, CheckResponse>, callback: grpc.sendUnaryData<CheckResponse>) => {
        const team = call.request.attributes.request.http.headers['x-team'];
        callback(null, { status: { code: team === 'blue' ? 0 : 7 } });
      },
    });
    gateway = await startFrontendGateway(
      '{connect: {mode: Route}}',
      connectRouteYaml('guarded', echo.port, `{extAuth: {url: "http://127.0.0.1:${authz.port}"}}`),
    );
  });

  after(async () => {
    await gateway?.stop();
    echo?.server.close();
    await authz?.close();
  });

  it('opens the tunnel only when the authorization server allows it', async () => {
    const refused = await connectRequest(gateway.httpPort, 'guarded.example.test:443', { 'x-team': 'red' });
    assert.equal(refused.status, 403);
    assert.equal(accepted, 0, 'no connection to the backend for a refused CONNECT');
    const allowed = await connectRequest(gateway.httpPort, 'guarded.example.test:443', { 'x-team': 'blue' });
    assert.equal(allowed.status, 200);
    assert.equal(await exchange(allowed.socket!, 'hi bye'), 'echo:hi bye');
  });
});

describe('Frontend.connect Route to a backend with an HTTP authorization server (extAuth http)', () => {
  let gateway: FrontendGateway;
  let echo: Awaited<ReturnType<typeof tcpEcho>>;
  let authz: HttpServer;
  const checks: { method: string; url: string; headers: IncomingHttpHeaders }[] = [];

  before(async () => {
    echo = await tcpEcho();
    // Envoy's HTTP ext_authz sends the downstream method: a CONNECT is checked with a CONNECT,
    // which a node server sees as its 'connect' event. The blue team is allowed.
    authz = createHttpServer((_req, res) => res.writeHead(405).end());
    authz.on('connect', (req, socket: Socket) => {
      checks.push({ method: req.method!, url: req.url!, headers: req.headers });
      const status = req.headers['x-team'] === 'blue' ? '200 OK' : '403 Forbidden';
      socket.end(`HTTP/1.1 ${status}\r\nx-checked: yes\r\ncontent-length: 0\r\n\r\n`);
    });
    await new Promise<void>((resolve) => authz.listen(0, '127.0.0.1', resolve));
    const authzPort = (authz.address() as AddressInfo).port;
    gateway = await startFrontendGateway(
      '{connect: {mode: Route}}',
      connectRouteYaml(
        'guarded',
        echo.port,
        `{extAuth: {url: "http://127.0.0.1:${authzPort}", http: {allowedRequestHeaders: [x-team]}}}`,
      ),
    );
  });

  after(async () => {
    await gateway?.stop();
    echo?.server.close();
    authz?.closeAllConnections();
    authz?.close();
  });

  it('checks the CONNECT with method CONNECT, as Envoy does, and opens the tunnel only when allowed', async () => {
    const refused = await connectRequest(gateway.httpPort, 'guarded.example.test:443', { 'x-team': 'red' });
    assert.equal(refused.status, 403);
    const allowed = await connectRequest(gateway.httpPort, 'guarded.example.test:443', { 'x-team': 'blue' });
    assert.equal(allowed.status, 200);
    assert.equal(await exchange(allowed.socket!, 'hi bye'), 'echo:hi bye');
    assert.equal(checks.length, 2);
    assert.deepEqual(
      checks.map((check) => [check.method, check.headers['x-team']]),
      [
        ['CONNECT', 'red'],
        ['CONNECT', 'blue'],
      ],
    );
  });
});

describe('Frontend.connect Route to a TLS backend', () => {
  let gateway: FrontendGateway;
  let backend: { server: HttpsServer; port: number; clientPorts: number[] };

  before(async () => {
    // An HTTPS backend accepting only the X25519MLKEM768 group, noting gw's port of each handshake.
    const clientPorts: number[] = [];
    const server = createHttpsServer(
      { cert: fixture('backend.crt'), key: fixture('backend.key'), ecdhCurve: 'X25519MLKEM768' },
      (req, res) => res.end(JSON.stringify({ url: req.url })),
    );
    server.on('secureConnection', (socket: TLSSocket) => clientPorts.push(socket.remotePort ?? 0));
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    backend = { server, port: (server.address() as AddressInfo).port, clientPorts };
    const tunnelTo = (name: string, policies: string) => connectRouteYaml(name, backend.port, policies);
    gateway = await startFrontendGateway(
      '{connect: {mode: Route}}',
      `apiVersion: v1
kind: ConfigMap
metadata: {name: ca}
data: {ca.crt: ${JSON.stringify(CA)}}
---
${tunnelTo('mlkem', '{tls: {caCertificateRefs: [{name: ca}], keyExchangeGroups: [X25519_MLKEM768]}, tcp: {keepalive: {time: 7s, interval: 3s, retries: 4}}}')}${tunnelTo('classic', '{tls: {caCertificateRefs: [{name: ca}], keyExchangeGroups: [X25519, P-256]}}')}`,
    );
  });

  after(async () => {
    await gateway?.stop();
    backend?.server.close();
  });

  it('tunnels over TLS with the backend’s key exchange group and TCP keepalive on the upstream socket', async (t) => {
    const connections = backend.clientPorts.length;
    const tunnel = await connectRequest(gateway.httpPort, 'mlkem.example.test:443');
    assert.equal(tunnel.status, 200);
    assert.ok(await until(() => backend.clientPorts.length > connections, 2000), 'no handshake with the backend');
    const unavailable = keepaliveReadbackUnavailable();
    if (unavailable) t.diagnostic(`keepalive not read back: ${unavailable}`);
    else
      assert.deepEqual(await socketKeepalive(backend.clientPorts.at(-1)!), {
        enabled: true,
        idleSeconds: 7,
        intervalSeconds: 3,
        probes: 4,
      });
    const answer = await exchange(tunnel.socket!, getRequest('/inside'));
    assert.equal(statusOf(answer), 200, answer);
    assert.deepEqual(bodyOf(answer), { url: '/inside' });
  });

  it('answers 503 when the backend’s groups are not the server’s (the handshake fails)', async () => {
    assert.equal((await connectRequest(gateway.httpPort, 'classic.example.test:443')).status, 503);
  });
});

describe("Frontend.connect Route through the backend's own CONNECT proxy (backend tunnel)", () => {
  let gateway: FrontendGateway;
  let echo: Awaited<ReturnType<typeof tcpEcho>>;
  let proxy: ConnectProxy;

  before(async () => {
    echo = await tcpEcho();
    proxy = await startConnectProxy();
    gateway = await startFrontendGateway(
      '{connect: {mode: Route}}',
      connectRouteYaml('far', echo.port, `{tunnel: {url: "${proxy.url}"}}`),
    );
  });

  after(async () => {
    await gateway?.stop();
    await proxy?.close();
    echo?.server.close();
  });

  it("the client's tunnel is carried inside a tunnel the backend's proxy opened", async () => {
    const tunnel = await connectRequest(gateway.httpPort, 'far.example.test:443');
    assert.equal(tunnel.status, 200);
    assert.equal(await exchange(tunnel.socket!, 'hello bye'), 'echo:hello bye');
    assert.equal(proxy.servedTo(`127.0.0.1:${echo.port}`), 1);
  });
});

describe('Frontend.connect Tunnel', () => {
  let gateway: FrontendGateway;

  before(async () => {
    gateway = await startFrontendGateway('{connect: {mode: Tunnel}}', '', ({ httpPort }) => httpPort);
  });

  after(async () => {
    await gateway?.stop();
  });

  /** A GET to the HTTPS listener, over TLS inside `stream`. */
  function tlsGet(stream: Duplex, path: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const secure = tlsConnect({ socket: stream, servername: 'a.example.test', ca: CA }, () =>
        secure.write(getRequest(path)),
      );
      const chunks: Buffer[] = [];
      secure.on('data', (chunk: Buffer) => chunks.push(chunk));
      secure.on('end', () => resolve(Buffer.concat(chunks).toString()));
      secure.on('error', reject);
    });
  }

  it('feeds the tunnel to the listener on the addressed port as a new connection', async () => {
    const tunnel = await connectRequest(gateway.httpPort, `127.0.0.1:${gateway.httpsPort}`);
    assert.equal(tunnel.status, 200);
    const answer = await tlsGet(tunnel.socket!, '/tunneled');
    assert.equal(statusOf(answer), 200, answer);
    assert.equal(bodyOf<Echo>(answer).url, '/tunneled');
    assert.ok(await until(() => accessEntries(gateway.gw).some((entry) => entry['url.path'] === '/tunneled'), 2000));
    const entry = accessEntries(gateway.gw).find((line) => line['url.path'] === '/tunneled')!;
    assert.equal(entry.listener, 'https');
    assert.equal(entry['client.address'], '127.0.0.1');
  });

  it('carries tunnels in HTTP/2 CONNECT streams too', async () => {
    const session = http2Connect(`http://127.0.0.1:${gateway.httpPort}`);
    try {
      const stream = session.request({ ':method': 'CONNECT', ':authority': `127.0.0.1:${gateway.httpsPort}` });
      const status = await new Promise<number>((resolve) =>
        stream.on('response', (headers) => resolve(Number(headers[':status']))),
      );
      assert.equal(status, 200);
      const answer = await tlsGet(stream, '/over-h2');
      assert.equal(bodyOf<Echo>(answer).url, '/over-h2');
    } finally {
      session.close();
    }
  });

  it('answers 404 for a port no listener serves, and 405 to anything but CONNECT', async () => {
    assert.equal((await connectRequest(gateway.httpPort, `127.0.0.1:${await freePort()}`)).status, 404);
    const plain = await rawExchange(gateway.httpPort, getRequest('/plain'));
    assert.equal(statusOf(plain.data), 405);
  });
});
