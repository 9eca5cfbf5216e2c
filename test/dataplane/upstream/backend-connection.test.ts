// A backend policy's tcp.keepalive and tls.keyExchangeGroups on real sockets, for every client gw
// opens from connection settings: its own HTTP/1.1 pool (LLM providers) and undici pools (HTTP
// routes, MCP targets, HTTP/2 providers; HTTP/1.1 and HTTP/2, plain and TLS). Keepalive is read
// back from the kernel for each socket; key exchange groups meet TLS servers that accept a single
// group. Values the runtime cannot apply are refused with their field.
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { createServer as createHttp2Server, createSecureServer, type Http2ServerRequest } from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import type { Server, Socket } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import type { KeyExchangeGroup } from '../../../src/api/types/backend-connection.ts';
import {
  type BackendConnectionPolicy,
  type ConnectionSettings,
  ConnectionSettingsError,
  connectionSettings,
} from '../../../src/dataplane/upstream/connection-settings.ts';
import { UpstreamPools } from '../../../src/dataplane/upstream/pools.ts';
import { keepaliveReadbackUnavailable, socketKeepalive } from '../../helpers/socket-keepalive.ts';
import {
  BACKEND_CERT,
  type ConnectionKind,
  httpServer,
  CONNECTION_KINDS as KINDS,
  listenServer,
  rejection,
  TEST_CA,
} from './upstream-servers.ts';

const DATA = (ref: string) => (ref === 'ConfigMap default/ca' ? { 'ca.crt': TEST_CA } : undefined);
const KEEPALIVE = { time: '7s', interval: '3s', retries: 4 };

/**
 * An upstream of `kind` answering every request with the client's port (gw's end of the
 * connection); a TLS one accepts only the key exchange group `group` (an OpenSSL name).
 */
async function upstream(t: TestContext, kind: ConnectionKind, group = 'X25519MLKEM768'): Promise<number> {
  const answer = (req: IncomingMessage | Http2ServerRequest, res: { end(body: string): void }) => {
    const socket = ('stream' in req ? req.stream.session?.socket : req.socket) as Socket;
    res.end(JSON.stringify({ clientPort: socket.remotePort }));
  };
  const tls = { ...BACKEND_CERT, ecdhCurve: group };
  if (!kind.http2 && !kind.tls) return (await httpServer(t, answer)).port;
  const server = kind.http2
    ? kind.tls
      ? createSecureServer(tls, answer)
      : createHttp2Server(answer)
    : createHttpsServer(tls, answer);
  // A handshake gw gives up on must not crash the test process.
  server.on('tlsClientError', () => undefined);
  return (await listenServer(t, server as unknown as Server)).port;
}

function settingsFor(kind: ConnectionKind, port: number, policy: BackendConnectionPolicy): ConnectionSettings {
  return connectionSettings(
    { protocol: kind.tls ? 'https:' : 'http:', host: '127.0.0.1', port },
    { ...policy, ...(kind.http2 ? { http: { version: 'HTTP2' } } : {}) },
    DATA,
    'default',
  );
}

/** One GET through the client of `kind`; resolves with the port gw connected from. */
async function clientPort(pools: UpstreamPools, kind: ConnectionKind, settings: ConnectionSettings): Promise<number> {
  let body: string;
  if (kind.client === 'gw') {
    const response = await pools.client(settings).request({ method: 'GET', path: '/', headers: {} });
    assert.equal(response.statusCode, 200);
    body = (await response.body.readAll(1024)).toString();
  } else {
    const response = await pools.get(settings).request({ method: 'GET', path: '/' });
    assert.equal(response.statusCode, 200);
    body = await response.body.text();
  }
  return (JSON.parse(body) as { clientPort: number }).clientPort;
}

function withPools(t: TestContext): UpstreamPools {
  const pools = new UpstreamPools();
  t.after(() => pools.close());
  return pools;
}

const tlsPolicy = (keyExchangeGroups: KeyExchangeGroup[]) => ({
  caCertificateRefs: [{ name: 'ca' }],
  keyExchangeGroups,
});

describe('backend tcp.keepalive on the socket', { skip: keepaliveReadbackUnavailable() }, () => {
  for (const kind of KINDS) {
    it(`${kind.name}: time, interval and retries, and the spec defaults for unset fields`, async (t) => {
      const port = await upstream(t, kind);
      const pools = withPools(t);
      const tls = kind.tls ? tlsPolicy(['X25519_MLKEM768']) : undefined;
      const configured = await clientPort(pools, kind, settingsFor(kind, port, { tcp: { keepalive: KEEPALIVE }, tls }));
      assert.deepEqual(await socketKeepalive(configured), {
        enabled: true,
        idleSeconds: 7,
        intervalSeconds: 3,
        probes: 4,
      });
      const defaults = await clientPort(pools, kind, settingsFor(kind, port, { tcp: { keepalive: {} }, tls }));
      assert.deepEqual(await socketKeepalive(defaults), {
        enabled: true,
        idleSeconds: 180,
        intervalSeconds: 180,
        probes: 9,
      });
    });
  }

  it("leaves keepalive off on gw's own client when the policy sets none", async (t) => {
    const kind = KINDS[0]!;
    const port = await upstream(t, kind);
    const local = await clientPort(withPools(t), kind, settingsFor(kind, port, {}));
    assert.equal((await socketKeepalive(local)).enabled, false);
  });
});

describe('backend tls.keyExchangeGroups in the handshake', () => {
  for (const kind of KINDS.filter((candidate) => candidate.tls)) {
    it(`${kind.name}: a server accepting only X25519MLKEM768 is reached with X25519_MLKEM768, not without`, async (t) => {
      const port = await upstream(t, kind, 'X25519MLKEM768');
      const pools = withPools(t);
      await clientPort(pools, kind, settingsFor(kind, port, { tls: tlsPolicy(['X25519_MLKEM768', 'X25519']) }));
      const refused = await rejection(
        clientPort(pools, kind, settingsFor(kind, port, { tls: tlsPolicy(['X25519', 'P-256']) })),
      );
      assert.match(`${refused.code} ${refused.message}`, /HANDSHAKE_FAILURE|handshake failure/i);
    });
  }

  it('P-384 alone: reached with P-384, refused with P-256', async (t) => {
    const kind = KINDS[1]!;
    const port = await upstream(t, kind, 'P-384');
    const pools = withPools(t);
    await clientPort(pools, kind, settingsFor(kind, port, { tls: tlsPolicy(['P-384']) }));
    const refused = await rejection(clientPort(pools, kind, settingsFor(kind, port, { tls: tlsPolicy(['P-256']) })));
    assert.match(`${refused.code} ${refused.message}`, /HANDSHAKE_FAILURE|handshake failure/i);
  });

  it('passes the groups to OpenSSL in the configured order', () => {
    const settings = settingsFor(KINDS[1]!, 443, { tls: tlsPolicy(['P-384', 'X25519_MLKEM768', 'X25519']) });
    assert.equal(settings.socket.tls?.ecdhCurve, 'P-384:X25519MLKEM768:X25519');
    assert.equal(settings.http1?.tls?.ecdhCurve, 'P-384:X25519MLKEM768:X25519');
  });
});

describe('backend connection values the runtime cannot apply', () => {
  const refusal = (policy: BackendConnectionPolicy): ConnectionSettingsError => {
    try {
      settingsFor(KINDS[1]!, 443, policy);
    } catch (error) {
      assert.ok(error instanceof ConnectionSettingsError, String(error));
      return error;
    }
    assert.fail('the settings were accepted');
  };

  it('refuses keepalive times the kernel does not take, naming the field', () => {
    for (const [keepalive, field, value] of [
      [{ time: '500ms' }, 'tcp.keepalive.time', '500ms'],
      [{ time: '10h' }, 'tcp.keepalive.time', '10h'],
      [{ interval: '1500ms' }, 'tcp.keepalive.interval', '1500ms'],
      [{ interval: '0s' }, 'tcp.keepalive.interval', '0s'],
    ] as const) {
      const error = refusal({ tcp: { keepalive } });
      assert.equal(error.field, field);
      assert.match(error.message, new RegExp(`^${value} is not a whole number of seconds from 1s to 32767s`));
    }
    assert.equal(refusal({ tcp: { keepalive: { retries: 128 } } }).field, 'tcp.keepalive.retries');
  });

  it('refuses a key exchange group that is not one, naming its index', () => {
    // A value admission refuses (a newer configuration's): the data plane refuses it too.
    const error = refusal({ tls: { keyExchangeGroups: ['X25519', 'X448' as KeyExchangeGroup] } });
    assert.equal(error.field, 'tls.keyExchangeGroups[1]');
    assert.match(error.message, /X448 is not a key exchange group \(X25519, P-256, P-384, X25519_MLKEM768\)/);
  });
});
