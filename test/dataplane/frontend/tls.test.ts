// Frontend.tls on HTTPS listeners: protocol versions, cipher suites (IANA names, the configured
// order preferred), key exchange groups and the handshake deadline, applied to new connections
// when the policy changes.
import assert from 'node:assert/strict';
import { connect as netConnect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type ConnectionOptions, connect as tlsConnect } from 'node:tls';
import { compileTlsSettings } from '../../../src/dataplane/server/tls-options.ts';
import { CA, closedWithin, type FrontendGateway, startFrontendGateway } from './helpers.ts';

interface Negotiated {
  protocol: string | null;
  cipher: string;
  group: string | undefined;
}

/** A TLS handshake with gw's HTTPS port: what was negotiated, or the error code. */
function handshake(port: number, options: ConnectionOptions = {}): Promise<Negotiated | string> {
  return new Promise((resolve) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, servername: 'a.example.test', ca: CA, ...options }, () => {
      resolve({
        protocol: socket.getProtocol(),
        cipher: socket.getCipher().name,
        group: (socket.getEphemeralKeyInfo() as { name?: string } | null)?.name,
      });
      socket.destroy();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

describe('Frontend.tls settings', () => {
  it('map cipher suite and group names to OpenSSL and keep the versions the suites allow', () => {
    const only12 = compileTlsSettings({ cipherSuites: ['TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256'] });
    assert.equal(only12.settings.context.ciphers, 'ECDHE-RSA-CHACHA20-POLY1305');
    assert.equal(only12.settings.context.maxVersion, 'TLSv1.2');
    const only13 = compileTlsSettings({
      cipherSuites: ['TLS13_AES_128_GCM_SHA256'],
      keyExchangeGroups: ['X25519_MLKEM768', 'P-256'],
    });
    assert.equal(only13.settings.context.ciphers, 'TLS_AES_128_GCM_SHA256');
    assert.equal(only13.settings.context.minVersion, 'TLSv1.3');
    assert.equal(only13.settings.context.ecdhCurve, 'X25519MLKEM768:P-256');
    assert.deepEqual(only13.problems, []);
    const unknownGroup = compileTlsSettings({ keyExchangeGroups: ['X25519', 'X448' as 'X25519'] });
    assert.deepEqual(unknownGroup.problems, [
      'frontend.tls.keyExchangeGroups[1]: X448 is not a key exchange group (X25519, P-256, P-384, X25519_MLKEM768)',
    ]);
    const conflict = compileTlsSettings({ cipherSuites: ['TLS13_AES_128_GCM_SHA256'], maxProtocolVersion: '1.2' });
    assert.match(conflict.problems.join(), /only TLS 1\.3 suites but maxProtocolVersion is 1\.2/);
  });

  it('offer only the ALPN protocols gw serves, and refuse a list with none of them', () => {
    const some = compileTlsSettings({ alpnProtocols: ['http/1.1', 'h3'] });
    assert.deepEqual(some.settings.alpnProtocols, ['http/1.1']);
    assert.match(some.notes.join(), /h3 not offered/);
    assert.match(compileTlsSettings({ alpnProtocols: ['h3'] }).problems.join(), /neither h2 nor http\/1\.1/);
    assert.equal(compileTlsSettings({ handshakeTimeout: '2s' }).settings.handshakeTimeoutMs, 2000);
    assert.equal(compileTlsSettings(undefined).settings.handshakeTimeoutMs, 15_000);
  });
});

describe('Frontend.tls on an HTTPS listener', () => {
  let gateway: FrontendGateway;

  before(async () => {
    gateway = await startFrontendGateway('{tls: {minProtocolVersion: "1.3"}}');
  });

  after(async () => {
    await gateway?.stop();
  });

  it('refuses clients below minProtocolVersion', async () => {
    assert.equal(typeof (await handshake(gateway.httpsPort, { maxVersion: 'TLSv1.2' })), 'string');
    assert.equal(((await handshake(gateway.httpsPort)) as Negotiated).protocol, 'TLSv1.3');
  });

  it('holds connections to maxProtocolVersion', async () => {
    await gateway.reconfigure(
      '{tls: {maxProtocolVersion: "1.2"}}',
      async () => ((await handshake(gateway.httpsPort)) as Negotiated).protocol === 'TLSv1.2',
    );
    assert.equal(typeof (await handshake(gateway.httpsPort, { minVersion: 'TLSv1.3' })), 'string');
  });

  it('allows only the configured cipher suites, preferring them in the configured order', async () => {
    const suites = ['TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256'];
    await gateway.reconfigure(`{tls: {cipherSuites: [${suites.join(', ')}]}}`, async () => {
      const negotiated = await handshake(gateway.httpsPort);
      return typeof negotiated !== 'string' && negotiated.cipher === 'ECDHE-ECDSA-AES256-GCM-SHA384';
    });
    // The client prefers AES-128; the server's order wins. No TLS 1.3 suite is allowed, so no TLS 1.3.
    const negotiated = (await handshake(gateway.httpsPort, {
      ciphers: 'ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384',
    })) as Negotiated;
    assert.deepEqual([negotiated.protocol, negotiated.cipher], ['TLSv1.2', 'ECDHE-ECDSA-AES256-GCM-SHA384']);
    assert.equal(typeof (await handshake(gateway.httpsPort, { ciphers: 'ECDHE-ECDSA-CHACHA20-POLY1305' })), 'string');

    await gateway.reconfigure('{tls: {cipherSuites: [TLS13_CHACHA20_POLY1305_SHA256]}}', async () => {
      const chacha = await handshake(gateway.httpsPort);
      return typeof chacha !== 'string' && chacha.cipher === 'TLS_CHACHA20_POLY1305_SHA256';
    });
    assert.equal(typeof (await handshake(gateway.httpsPort, { maxVersion: 'TLSv1.2' })), 'string');
  });

  it('negotiates only the configured key exchange groups', async () => {
    await gateway.reconfigure('{tls: {keyExchangeGroups: [P-384]}}', async () => {
      const negotiated = await handshake(gateway.httpsPort);
      return typeof negotiated !== 'string' && negotiated.group === 'secp384r1';
    });
    assert.equal(typeof (await handshake(gateway.httpsPort, { ecdhCurve: 'X25519:P-256' })), 'string');
  });

  it('closes a connection that does not finish its handshake in handshakeTimeout', async () => {
    await gateway.reconfigure('{tls: {handshakeTimeout: 300ms}}', async () => {
      const negotiated = await handshake(gateway.httpsPort);
      return typeof negotiated !== 'string' && negotiated.group !== 'secp384r1';
    });
    const silent = netConnect(gateway.httpsPort, '127.0.0.1');
    silent.on('error', () => undefined);
    const started = Date.now();
    assert.equal(await closedWithin(silent, 3000), true);
    assert.ok(Date.now() - started >= 250, `closed after ${Date.now() - started} ms`);
    // A handshake that completes is not cut off afterwards.
    const kept = tlsConnect({ host: '127.0.0.1', port: gateway.httpsPort, servername: 'a.example.test', ca: CA });
    await new Promise((resolve) => kept.once('secureConnect', resolve));
    assert.equal(await closedWithin(kept, 600), false);
    kept.destroy();
  });
});
