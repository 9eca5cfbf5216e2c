// A backend policy's tunnel in connection settings (src/dataplane/upstream/connection-settings.ts,
// tunnel-proxy.ts): every client gw opens from them goes through the CONNECT proxy — its own
// HTTP/1.1 pool and undici pools, HTTP/1.1 and HTTP/2, plain and TLS — and what cannot be used is
// refused when compiled, naming the field: a url with a path, a host a CONNECT cannot name, a GwBackend proxy with policies gw
// would not apply to it or a credential other than a fixed one, a Secret that is missing, a
// backend on a Unix socket, a place with no backends to resolve the proxy in. The proxy's
// credential is a Proxy-Authorization: Bearer header by default and never part of a pool key.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { createServer as createHttp2Server, createSecureServer, type Http2ServerRequest } from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import type { Server } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import type { DataPlaneConfig } from '../../../src/contract/dataplane-config.ts';
import {
  type BackendConnectionPolicy,
  ConnectionSettingsError,
  connectionSettings,
} from '../../../src/dataplane/upstream/connection-settings.ts';
import { UpstreamPools } from '../../../src/dataplane/upstream/pools.ts';
import { startConnectProxy } from '../../support/connect-proxy.ts';
import { BACKEND_CERT, CONNECTION_KINDS, httpServer, listenServer, TEST_CA } from './upstream-servers.ts';

const DATA = (ref: string): Record<string, string> | undefined =>
  ({
    'ConfigMap default/ca': { 'ca.crt': TEST_CA },
    'Secret default/proxy-key': { Authorization: 'Bearer s3cret' },
  })[ref];

/** GwBackend `name` (static 127.0.0.1:`port`) with `policies`, as the configuration holds it. */
function backends(name: string, port: number, policies: object): DataPlaneConfig['backends'] {
  return {
    [`GwBackend default/${name}`]: {
      kind: 'GwBackend',
      spec: { static: { host: '127.0.0.1', port }, policies },
    },
  } as DataPlaneConfig['backends'];
}

function compile(policy: BackendConnectionPolicy, config: DataPlaneConfig['backends'] = {}) {
  return connectionSettings({ protocol: 'http:', host: 'backend.test', port: 80 }, policy, DATA, 'default', {
    backends: config,
    namespace: 'default',
  });
}

function refusal(policy: BackendConnectionPolicy, config?: DataPlaneConfig['backends']): ConnectionSettingsError {
  try {
    compile(policy, config);
  } catch (error) {
    if (error instanceof ConnectionSettingsError) return error;
    throw error;
  }
  assert.fail('not refused');
}

const BY_BACKEND = { tunnel: { backendRef: { group: 'gw.dev', kind: 'GwBackend', name: 'egress' } } };

describe('every client through the tunnel', () => {
  for (const { name, tls, http2, client } of CONNECTION_KINDS)
    it(name, async (t: TestContext) => {
      const answer = (req: IncomingMessage | Http2ServerRequest, res: { end(body: string): void }) =>
        res.end(req.httpVersion);
      const server = http2 ? (tls ? createSecureServer(BACKEND_CERT, answer) : createHttp2Server(answer)) : undefined;
      const port = server
        ? (await listenServer(t, server as unknown as Server)).port
        : tls
          ? (await listenServer(t, createHttpsServer(BACKEND_CERT, answer) as unknown as Server)).port
          : (await httpServer(t, answer)).port;
      const proxy = await startConnectProxy();
      t.after(() => proxy.close());
      const settings = connectionSettings(
        { protocol: tls ? 'https:' : 'http:', host: '127.0.0.1', port },
        {
          ...(tls ? { tls: { caCertificateRefs: [{ name: 'ca' }] } } : {}),
          ...(http2 ? { http: { version: 'HTTP2' } } : {}),
          tunnel: { url: proxy.url },
        },
        DATA,
        'default',
        { backends: {}, namespace: 'default' },
      );
      const pools = new UpstreamPools();
      t.after(() => pools.close());
      let version: string;
      if (client === 'gw') {
        const response = await pools.client(settings).request({ method: 'GET', path: '/', headers: {} });
        version = (await response.body.readAll(64)).toString();
      } else version = await (await pools.get(settings).request({ method: 'GET', path: '/' })).body.text();
      assert.equal(version, http2 ? '2.0' : '1.1');
      assert.equal(proxy.servedTo(`127.0.0.1:${port}`), 1);
    });
});

describe('a tunnel compiled', () => {
  it('a url proxy: plain or TLS by its scheme; a path refused', () => {
    assert.equal(compile({ tunnel: { url: 'http://proxy.test:3128' } }).socket.tunnel?.tls, undefined);
    const secure = compile({ tunnel: { url: 'https://proxy.test' } }).socket.tunnel!;
    assert.deepEqual([secure.port, secure.tls?.servername], [443, 'proxy.test']);
    const pathed = refusal({ tunnel: { url: 'http://proxy.test:3128/egress' } });
    assert.equal(pathed.field, 'tunnel.url');
    assert.match(pathed.message, /named by scheme, host and port only/);
  });

  it("a GwBackend proxy: its tcp and tls apply to the proxy; the backend's keepalive when it sets none", () => {
    const proxy = compile(
      { tcp: { keepalive: { time: '30s' } }, ...BY_BACKEND },
      backends('egress', 3128, { tls: { caCertificateRefs: [{ name: 'ca' }] }, tcp: { connectTimeout: '2s' } }),
    ).socket.tunnel!;
    assert.equal(proxy.tls?.ca, TEST_CA);
    assert.equal(proxy.connectTimeoutMs, 2000);
    assert.equal(proxy.keepalive?.initialDelayMs, 30_000);
    const missingCa = refusal(
      BY_BACKEND,
      backends('egress', 3128, { tls: { caCertificateRefs: [{ name: 'absent' }] } }),
    );
    assert.equal(missingCa.field, 'tunnel.backendRef');
    assert.match(
      missingCa.message,
      /GwBackend default\/egress policies\.tls\.caCertificateRefs\[0\]: .* has no ca\.crt/,
    );
  });

  it('a GwBackend proxy with policies gw does not apply to it, or a tunnel of its own, is refused', () => {
    for (const policies of [{ http: { requestTimeout: '1s' } }, { tunnel: { url: 'http://other:3128' } }]) {
      const refused = refusal(BY_BACKEND, backends('egress', 3128, policies));
      assert.equal(refused.field, 'tunnel.backendRef');
      assert.match(refused.message, /sets policies\.(http|tunnel), which gw does not apply/);
    }
  });

  it('the proxy credential: Proxy-Authorization: Bearer by default, a header location as given, nothing else', () => {
    const headersOf = (auth: object) => compile(BY_BACKEND, backends('egress', 3128, { auth })).socket.tunnel!.headers;
    assert.deepEqual(headersOf({ key: 'k1' }), [['proxy-authorization', 'Bearer k1']]);
    assert.deepEqual(headersOf({ secretRef: { name: 'proxy-key' } }), [['proxy-authorization', 'Bearer s3cret']]);
    assert.deepEqual(
      headersOf({ key: 'dTpw', location: { header: { name: 'Proxy-Authorization', prefix: 'Basic ' } } }),
      [['proxy-authorization', 'Basic dTpw']],
    );
    for (const [auth, field, message] of [
      [{ cloudone: {} }, 'auth.cloudone', /a fixed credential only/],
      [{ key: 'k', location: { queryParameter: { name: 'k' } } }, 'auth.location', /in a header/],
      [{ secretRef: { name: 'absent' } }, 'auth.secretRef.name', /was not found/],
      [{ key: 'bad\r\nvalue' }, 'auth.key', /cannot carry/],
    ] as const) {
      const refused = refusal(BY_BACKEND, backends('egress', 3128, { auth }));
      assert.equal(refused.field, 'tunnel.backendRef', JSON.stringify(auth));
      assert.match(refused.message, new RegExp(`policies\\.${field.replace('.', '\\.')}: `));
      assert.match(refused.message, message);
    }
  });

  it('pools differ by the proxy and its credential, and the key never holds the credential', () => {
    const keyOf = (key: string) => compile(BY_BACKEND, backends('egress', 3128, { auth: { key } })).key;
    assert.notEqual(keyOf('first-secret'), keyOf('second-secret'));
    assert.doesNotMatch(keyOf('first-secret'), /first-secret/);
    assert.notEqual(compile({ tunnel: { url: 'http://a.test:3128' } }).key, compile({}).key);
  });

  it('refused: a backend on a Unix socket, a host a CONNECT cannot name, a place with no backends in scope', () => {
    let error: unknown;
    try {
      connectionSettings(
        { protocol: 'http:', host: 'localhost', port: 80, socketPath: '/tmp/x.sock' },
        { tunnel: { url: 'http://proxy.test:3128' } },
        DATA,
        'default',
        { backends: {}, namespace: 'default' },
      );
    } catch (caught) {
      error = caught;
    }
    assert.ok(error instanceof ConnectionSettingsError);
    assert.match(error.message, /Unix domain socket/);
    const scope = { backends: {}, namespace: 'd' };
    const bad = { protocol: 'http:' as const, host: 'a b\r\nX: y', port: 80 };
    assert.throws(
      () => connectionSettings(bad, { tunnel: { url: 'http://p:1' } }, DATA, 'd', scope),
      (thrown: ConnectionSettingsError) =>
        thrown.field === 'tunnel' && /not a host a CONNECT request can name/.test(thrown.message),
    );
    assert.throws(
      () =>
        connectionSettings({ protocol: 'http:', host: 'b', port: 80 }, { tunnel: { url: 'http://p:1' } }, DATA, 'd'),
      (thrown: ConnectionSettingsError) => thrown.field === 'tunnel' && /no backends are in scope/.test(thrown.message),
    );
  });
});
