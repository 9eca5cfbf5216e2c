// TLS through gw, both sides: HTTPS listeners terminating TLS with the certificate of their
// Secret (chosen by SNI when several share a port), and TLS originated to a backend as its
// backend policy says (a CA from a ConfigMap, the system CAs, insecureSkipVerify, SNI). The test
// CA and certificates are fixtures (test/fixtures/tls/README.md).
import assert from 'node:assert/strict';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import { createServer, request as httpsRequest, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { TLSSocket } from 'node:tls';
import { request } from 'undici';
import { freePort, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { tlsFixture as fixture, httpsGet } from '../../helpers/https-get.ts';

const CA = fixture('ca.crt');

/** A YAML flow mapping of PEM strings (JSON strings are YAML double-quoted scalars). */
function pemData(entries: Record<string, string>): string {
  return `{${Object.entries(entries)
    .map(([key, value]) => `${JSON.stringify(key)}: ${JSON.stringify(value)}`)
    .join(', ')}}`;
}

/** An HTTPS backend that answers with the SNI name its client sent (or null). */
async function httpsBackend(): Promise<{ server: Server; port: number }> {
  const server = createServer({ cert: fixture('backend.crt'), key: fixture('backend.key') }, (req, res) => {
    const servername = (req.socket as TLSSocket).servername || null;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ servername, path: req.url }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** An HTTPS backend that speaks only HTTP/2 and answers with the ALPN protocol and SNI name it saw. */
async function http2Backend(): Promise<{ server: Http2SecureServer; port: number }> {
  const server = createSecureServer({ cert: fixture('backend.crt'), key: fixture('backend.key') });
  server.on('stream', (stream) => {
    const socket = stream.session?.socket as TLSSocket | undefined;
    stream.respond({ ':status': 200, 'content-type': 'application/json' });
    stream.end(JSON.stringify({ alpn: socket?.alpnProtocol ?? null, servername: socket?.servername || null }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** GET over plain HTTP; `host` sets the Host header (undici's request: fetch does not let a client set it). */
async function httpGet(port: number, path: string, host?: string): Promise<{ status: number; body: string }> {
  const response = await request(`http://127.0.0.1:${port}${path}`, host ? { headers: { host } } : {});
  return { status: response.statusCode, body: await response.body.text() };
}

describe('TLS through gw', () => {
  let backend: Awaited<ReturnType<typeof httpsBackend>>;
  let h2Backend: Awaited<ReturnType<typeof http2Backend>>;
  let gw: TestGateway;
  let httpsPort: number;
  let httpPort: number;

  before(async () => {
    backend = await httpsBackend();
    h2Backend = await http2Backend();
    httpsPort = await freePort();
    httpPort = await freePort();
    // Static backends by name: the backend policy's tls (and http) sections; each is served at /<name>.
    const backends: { name: string; policies: string; port?: number }[] = [
      { name: 'with-ca', policies: '{tls: {caCertificateRefs: [{name: ca}]}}' },
      { name: 'system-cas', policies: '{tls: {}}' },
      { name: 'insecure', policies: '{tls: {insecureSkipVerify: All}}' },
      { name: 'with-sni', policies: '{tls: {caCertificateRefs: [{name: ca}], sni: backend.example.test}}' },
      { name: 'wrong-sni', policies: '{tls: {caCertificateRefs: [{name: ca}], sni: other.example.test}}' },
      {
        name: 'h2',
        policies: '{tls: {caCertificateRefs: [{name: ca}], sni: backend.example.test}, http: {version: HTTP2}}',
        port: h2Backend.port,
      },
    ];
    const backendYaml = backends
      .map(
        ({ name, policies, port }) => `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: ${name}}
spec:
  static: {host: 127.0.0.1, port: ${port ?? backend.port}}
  policies: ${policies}
---
`,
      )
      .join('');
    const rules = backends
      .map(
        ({ name }) => `    - matches: [{path: {type: PathPrefix, value: /${name}}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: ${name}}]`,
      )
      .join('\n');
    gw = await startTestGateway({
      'gateway.yaml': `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gw}
spec: {controllerName: gw.dev/gateway-controller}
---
apiVersion: v1
kind: Secret
metadata: {name: cert-a}
type: kubernetes.io/tls
stringData: ${pemData({ 'tls.crt': fixture('a.crt'), 'tls.key': fixture('a.key') })}
---
apiVersion: v1
kind: Secret
metadata: {name: cert-b}
type: kubernetes.io/tls
stringData: ${pemData({ 'tls.crt': fixture('b.crt'), 'tls.key': fixture('b.key') })}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: ca}
data: ${pemData({ 'ca.crt': CA })}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ai}
spec:
  gatewayClassName: gw
  listeners:
    - name: a
      protocol: HTTPS
      port: ${httpsPort}
      hostname: a.example.test
      tls: {mode: Terminate, certificateRefs: [{name: cert-a}]}
    - name: b
      protocol: HTTPS
      port: ${httpsPort}
      hostname: b.example.test
      tls: {mode: Terminate, certificateRefs: [{name: cert-b}]}
    - {name: http, protocol: HTTP, port: ${httpPort}}
---
${backendYaml}apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec:
  parentRefs: [{name: ai}]
  rules:
${rules}
`,
    });
    assert.deepEqual(
      gw.logs.filter((line) => /problem|cannot|not served/i.test(line)),
      [],
    );
  });

  after(async () => {
    await gw?.stop();
    backend?.server.close();
    h2Backend?.server.close();
  });

  describe('HTTPS listeners', () => {
    it('terminate TLS with the certificate of the listener the SNI names', async () => {
      for (const name of ['a.example.test', 'b.example.test']) {
        const answer = await httpsGet(httpsPort, name, name, '/with-ca');
        assert.equal(answer.peer, name);
        assert.equal(answer.status, 200, answer.body);
        assert.equal((JSON.parse(answer.body) as { path: string }).path, '/with-ca');
      }
    });

    it('give a client without SNI the first certificate, and route it by Host', async () => {
      const answer = await httpsGet(httpsPort, '', 'b.example.test', '/with-ca');
      assert.equal(answer.peer, 'a.example.test');
      assert.equal(answer.status, 200);
      const unknownHost = await httpsGet(httpsPort, '', 'c.example.test', '/with-ca');
      assert.equal(unknownHost.status, 404);
    });

    it('refuse a client that does not trust the certificate', async () => {
      await assert.rejects(
        new Promise((resolve, reject) => {
          const req = httpsRequest(
            { host: '127.0.0.1', port: httpsPort, servername: 'a.example.test', agent: false },
            resolve,
          );
          req.on('error', reject);
          req.end();
        }),
        (error: NodeJS.ErrnoException) => /SELF_SIGNED|UNABLE_TO|CERT/.test(error.code ?? ''),
      );
    });
  });

  describe('TLS to a backend', () => {
    it('verifies the backend with the CA of a ConfigMap (no SNI for an IP address)', async () => {
      const answer = await httpGet(httpPort, '/with-ca');
      assert.equal(answer.status, 200, answer.body);
      assert.equal((JSON.parse(answer.body) as { servername: string | null }).servername, null);
    });

    it('refuses a backend the system CAs do not trust with 503', async () => {
      const answer = await httpGet(httpPort, '/system-cas');
      assert.equal(answer.status, 503, answer.body);
    });

    it('accepts any certificate with insecureSkipVerify All', async () => {
      const answer = await httpGet(httpPort, '/insecure');
      assert.equal(answer.status, 200, answer.body);
    });

    it('sends the configured SNI and verifies the certificate against it', async () => {
      const answer = await httpGet(httpPort, '/with-sni');
      assert.equal(answer.status, 200, answer.body);
      assert.equal((JSON.parse(answer.body) as { servername: string }).servername, 'backend.example.test');
      const mismatch = await httpGet(httpPort, '/wrong-sni');
      assert.equal(mismatch.status, 503, mismatch.body);
    });

    it('speaks HTTP/2 to a TLS backend (ALPN) with the configured SNI', async () => {
      for (const host of ['127.0.0.1', 'client.example.com']) {
        const answer = await httpGet(httpPort, '/h2', host);
        assert.equal(answer.status, 200, answer.body);
        assert.deepEqual(JSON.parse(answer.body), { alpn: 'h2', servername: 'backend.example.test' });
      }
    });

    it("takes the server name from the backend, never from the client's Host header", async () => {
      // The Host header goes upstream unchanged, but SNI and the certificate check stay the backend's.
      for (const host of ['client-one.example.com', 'client-two.example.com']) {
        const named = await httpGet(httpPort, '/with-sni', host);
        assert.equal(named.status, 200, named.body);
        assert.equal((JSON.parse(named.body) as { servername: string }).servername, 'backend.example.test');
        const byAddress = await httpGet(httpPort, '/with-ca', host);
        assert.equal(byAddress.status, 200, byAddress.body);
        assert.equal((JSON.parse(byAddress.body) as { servername: string | null }).servername, null);
      }
    });
  });
});
