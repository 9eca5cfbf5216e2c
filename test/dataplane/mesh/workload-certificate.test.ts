// The proxy's mesh workload certificate (src/dataplane/mesh/, decision 0035) against a stand-in
// of Istio's CA (test/helpers/mesh-ca-stand-in.ts: Istio's wire format decoded by hand, openssl
// signing): the request on the wire, the checks of the answer, renewal at half-life and expiry
// on a clock the test moves, retries, the token and root files read at every request.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, beforeEach, describe, it } from 'node:test';
import { signingRequest } from '../../../src/dataplane/mesh/csr.ts';
import { type MeshSettings, meshSettingsFromEnv } from '../../../src/dataplane/mesh/settings.ts';
import { uriNames } from '../../../src/dataplane/mesh/spiffe.ts';
import {
  acceptCertificate,
  REQUESTED_VALIDITY_SECONDS,
  RETRY_FIRST_MS,
  RETRY_MAX_MS,
  renewAtMs,
  WorkloadCertificateSource,
} from '../../../src/dataplane/mesh/workload-certificate.ts';
import { fakeClock } from '../../helpers/fake-clock.ts';
import {
  type MeshCaStandIn,
  makeRoot,
  podSettings,
  skipWithoutOpenssl,
  startMeshCa,
} from '../../helpers/mesh-ca-stand-in.ts';

const IDENTITY = 'spiffe://corp.example/ns/team-a/sa/ai';
const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.token-of-team-a-ai.sig';

describe('mesh workload certificate', { skip: skipWithoutOpenssl }, () => {
  let ca: MeshCaStandIn;
  let dir: string;
  let settings: MeshSettings;

  before(async () => {
    ca = await startMeshCa({ token: TOKEN, clusterId: 'east', identity: IDENTITY });
    dir = mkdtempSync(join(tmpdir(), 'gw-mesh-pod-'));
  });
  after(async () => {
    await ca.close();
    rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    ca.requests.length = 0;
    Object.assign(ca.options, { token: TOKEN, identity: IDENTITY, unavailable: false, answerRoot: undefined });
    settings = podSettings(ca, dir, TOKEN);
  });

  it('asks the CA in Istio wire format with the token and cluster, and keeps a certificate it checked', async () => {
    const clock = fakeClock(Date.now());
    const source = new WorkloadCertificateSource(settings, { clock });
    assert.equal(source.current(), undefined);
    assert.equal(source.status().state, 'pending');
    await source.tick();
    assert.equal(ca.requests.length, 1);
    const [request] = ca.requests;
    // Field 1 (csr) length-delimited, field 3 (validity_duration) a varint; no metadata (field 4).
    assert.deepEqual(
      request!.fields.map(({ field, wireType }) => [field, wireType]),
      [
        [1, 2],
        [3, 0],
      ],
    );
    assert.equal(request!.raw[0], 0x0a);
    assert.equal(request!.validitySeconds, REQUESTED_VALIDITY_SECONDS);
    assert.equal(request!.authorization, `Bearer ${TOKEN}`);
    assert.equal(request!.clusterId, 'east');
    assert.match(request!.csr, /^-----BEGIN CERTIFICATE REQUEST-----\n/);

    const certificate = source.current();
    assert.ok(certificate, JSON.stringify(source.status()));
    assert.equal(certificate.identity, IDENTITY);
    const leaf = new X509Certificate(certificate.chain[0]!);
    assert.deepEqual(uriNames(leaf), [IDENTITY]);
    assert.ok(leaf.verify(new X509Certificate(certificate.roots[0]!).publicKey));
    assert.deepEqual(certificate.roots, [ca.root]);
    assert.deepEqual(source.status(), { identity: IDENTITY, state: 'ready', notAfterMs: certificate.notAfterMs });
  });

  it('renews at half its lifetime, not before, and hands out the new one', async () => {
    const clock = fakeClock(Date.now());
    const source = new WorkloadCertificateSource(settings, { clock });
    await source.tick();
    const first = source.current()!;
    const renewAt = renewAtMs(first);
    assert.equal(renewAt, first.notBeforeMs + (first.notAfterMs - first.notBeforeMs) / 2);
    clock.advance(renewAt - clock.epochMs() - 1);
    await source.tick();
    assert.equal(ca.requests.length, 1, 'no request before the renewal time');
    clock.advance(1);
    await source.tick();
    assert.equal(ca.requests.length, 2);
    const second = source.current()!;
    assert.notEqual(second, first);
    assert.notEqual(second.chain[0], first.chain[0]);
    assert.ok(!second.privateKey.equals(first.privateKey), 'a new key for every request');
  });

  it('keeps the current certificate while the CA fails, retries with growing waits, and none once expired', async () => {
    const clock = fakeClock(Date.now());
    const logged: string[] = [];
    const source = new WorkloadCertificateSource(settings, { clock, log: (_level, message) => logged.push(message) });
    await source.tick();
    const first = source.current()!;
    ca.options.unavailable = true;
    clock.advance(renewAtMs(first) - clock.epochMs());
    await source.tick();
    assert.equal(ca.requests.length, 2);
    assert.equal(source.current(), first, 'still valid: still used');
    assert.equal(source.status().state, 'failing');
    assert.match(source.status().error!, /istiod is restarting/);
    assert.ok(!logged.join('\n').includes(TOKEN), 'the token is never logged');
    // Waits of 1 s, 2 s, 4 s, ... up to 30 s between attempts.
    let wait = RETRY_FIRST_MS;
    for (let attempt = 3; attempt <= 9; attempt++) {
      clock.advance(wait - 1);
      await source.tick();
      assert.equal(ca.requests.length, attempt - 1, `no attempt ${wait - 1} ms after a failure`);
      clock.advance(1);
      await source.tick();
      assert.equal(ca.requests.length, attempt, `an attempt ${wait} ms after a failure`);
      wait = Math.min(wait * 2, RETRY_MAX_MS);
    }
    assert.equal(wait, RETRY_MAX_MS);
    clock.advance(first.notAfterMs - clock.epochMs() - 1);
    assert.equal(source.current(), first);
    clock.advance(1);
    assert.equal(source.current(), undefined, 'an expired certificate is never handed out');
    // Still asking after expiry. (What the stand-in signs is valid from the real time, which this
    // clock has left behind, so its answer is judged expired here: renewal is the test above.)
    ca.options.unavailable = false;
    const attempts = ca.requests.length;
    clock.advance(RETRY_MAX_MS);
    await source.tick();
    assert.equal(ca.requests.length, attempts + 1);
  });

  it('reads the token file at every request (the kubelet rotates it)', async () => {
    const clock = fakeClock(Date.now());
    const source = new WorkloadCertificateSource(settings, { clock });
    await source.tick();
    writeFileSync(join(dir, 'istio-token'), 'rotated-token');
    ca.options.token = 'rotated-token';
    clock.advance(renewAtMs(source.current()!) - clock.epochMs());
    await source.tick();
    assert.equal(ca.requests[1]!.authorization, 'Bearer rotated-token');
    assert.equal(source.status().state, 'ready');
  });

  it('a refused token, a wrong identity, a foreign root or an untrusted CA give no certificate', async () => {
    const cases: [string, () => void, RegExp][] = [
      ['refused token', () => Object.assign(ca.options, { token: 'another' }), /authenticate failure/],
      [
        'identity',
        () => Object.assign(ca.options, { identity: 'spiffe://corp.example/ns/team-b/sa/other' }),
        /names spiffe:\/\/corp\.example\/ns\/team-b\/sa\/other, not spiffe:\/\/corp\.example\/ns\/team-a\/sa\/ai/,
      ],
      [
        'foreign root',
        () => Object.assign(ca.options, { answerRoot: makeRoot(dir, 'foreign').cert }),
        /does not verify up to the CA's root/,
      ],
      [
        'untrusted CA',
        () => writeFileSync(join(dir, 'root-cert.pem'), makeRoot(dir, 'other-mesh').cert),
        /refused or failed CreateCertificate/,
      ],
      ['missing token', () => rmSync(join(dir, 'istio-token')), /cannot read the CA token .*ENOENT/],
    ];
    for (const [name, arrange, error] of cases) {
      writeFileSync(join(dir, 'istio-token'), TOKEN);
      writeFileSync(join(dir, 'root-cert.pem'), ca.root);
      Object.assign(ca.options, { token: TOKEN, identity: IDENTITY, answerRoot: undefined });
      arrange();
      const source = new WorkloadCertificateSource(settings, { clock: fakeClock(Date.now()) });
      await source.tick();
      assert.equal(source.current(), undefined, name);
      assert.equal(source.status().state, 'failing', name);
      assert.match(source.status().error!, error, name);
    }
  });
});

describe('the CSR and the checks of an answer', { skip: skipWithoutOpenssl }, () => {
  it('the CSR verifies in openssl and names only the URI, in a critical SAN, over a P-256 key', () => {
    const { pem } = signingRequest(IDENTITY);
    const text = spawnSync('openssl', ['req', '-verify', '-noout', '-text'], { input: pem, encoding: 'utf8' });
    assert.equal(text.status, 0, text.stderr);
    assert.match(text.stderr + text.stdout, /verify OK/i);
    assert.match(text.stdout, /Subject: *\n/);
    assert.match(text.stdout, /NIST CURVE: P-256/);
    assert.match(
      text.stdout,
      /Subject Alternative Name: critical\n\s+URI:spiffe:\/\/corp\.example\/ns\/team-a\/sa\/ai\n/,
    );
    assert.match(text.stdout, /Signature Algorithm: ecdsa-with-SHA256/);
  });

  it('an answer for another key, without a root, or expired is refused', async () => {
    const ca = await startMeshCa({ token: TOKEN, clusterId: 'east', identity: IDENTITY });
    const dir = mkdtempSync(join(tmpdir(), 'gw-mesh-pod-'));
    try {
      const settings = podSettings(ca, dir, TOKEN);
      const { createCertificate } = await import('../../../src/dataplane/mesh/ca-client.ts');
      const request = signingRequest(IDENTITY);
      const chain = await createCertificate(settings, request.pem, 3600);
      const now = Date.now();
      const accepted = acceptCertificate(chain, request.privateKey, IDENTITY, now);
      assert.equal(typeof accepted, 'object', String(accepted));
      assert.match(
        String(acceptCertificate(chain, signingRequest(IDENTITY).privateKey, IDENTITY, now)),
        /not for the key of the request/,
      );
      assert.match(
        String(acceptCertificate(chain.slice(0, 1), request.privateKey, IDENTITY, now)),
        /and the root are needed/,
      );
      assert.match(
        String(acceptCertificate([chain[0]!, chain[0]!], request.privateKey, IDENTITY, now)),
        /without a root|does not verify/,
      );
      const notAfter = Date.parse(new X509Certificate(chain[0]!).validTo);
      assert.match(String(acceptCertificate(chain, request.privateKey, IDENTITY, notAfter)), /expired/);
    } finally {
      await ca.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('mesh settings from the environment', () => {
  it('no CA_ADDRESS is no mesh; a wrong one names the variable', () => {
    assert.equal(meshSettingsFromEnv({}), undefined);
    assert.equal(meshSettingsFromEnv({ CA_ADDRESS: '' }), undefined);
    const base = { POD_NAMESPACE: 'a', SERVICE_ACCOUNT: 'b' };
    assert.match(String(meshSettingsFromEnv({ ...base, CA_ADDRESS: 'istiod:15012' })), /CA_ADDRESS.*https/);
    assert.match(String(meshSettingsFromEnv({ ...base, CA_ADDRESS: 'http://istiod:15012' })), /must be an https/);
    assert.match(String(meshSettingsFromEnv({ ...base, CA_ADDRESS: 'https://istiod' })), /must name the port/);
    assert.match(String(meshSettingsFromEnv({ CA_ADDRESS: 'https://istiod:15012' })), /POD_NAMESPACE is required/);
    for (const [name, value] of [
      ['SERVICE_ACCOUNT', 'a b'],
      ['POD_NAMESPACE', 'Team/A'],
      ['TRUST_DOMAIN', 'corp.example/x'],
    ])
      assert.match(
        String(meshSettingsFromEnv({ ...base, CA_ADDRESS: 'https://istiod:15012', [name]: value })),
        new RegExp(`^${name} .* cannot be part of a SPIFFE ID`),
      );
    const settings = meshSettingsFromEnv({
      ...base,
      CA_ADDRESS: 'https://istiod:15012',
      ADDITIONAL_TRUST_DOMAINS: ' x.example, ,y.example ',
    });
    assert.ok(settings !== undefined && typeof settings !== 'string');
    assert.deepEqual(settings.additionalTrustDomains, ['x.example', 'y.example']);
    assert.equal(settings.trustDomain, 'cluster.local');
    assert.equal(settings.clusterId, 'Kubernetes');
    assert.equal(settings.tokenPath, '/var/run/secrets/tokens/istio-token');
    assert.equal(settings.rootCertPath, '/var/run/secrets/istio/root-cert.pem');
  });
});
