// The embedded API server's certificates over time: made on first start and kept while they
// last; at a start with 30 days or less left, the serving certificate — or the CA and with it the
// serving certificate — is issued again, and not a millisecond sooner. The expiry is judged on a
// clock the test sets; openssl issues the certificates as it does for gw.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ensureCertificates, RENEW_BEFORE_MS } from '../../src/apiserver/certificates.ts';

describe('API server certificates over time', () => {
  const directory = mkdtempSync(join(tmpdir(), 'gw-certs-'));
  after(() => rmSync(directory, { recursive: true, force: true }));

  const validTo = (pem: string) => Date.parse(new X509Certificate(pem).validTo);
  const startAt = (now: number) => ensureCertificates(directory, { now: () => now });

  it('keeps the serving certificate while more than 30 days are left, and issues it again at 30', () => {
    const first = ensureCertificates(directory);
    assert.deepEqual(startAt(Date.now()), first, 'a second start reuses them');
    const renewAt = validTo(first.cert) - RENEW_BEFORE_MS;
    assert.deepEqual(startAt(renewAt - 1), first, '30 days and 1 ms left: kept');
    const renewed = startAt(renewAt);
    assert.notEqual(renewed.cert, first.cert, '30 days left: issued again');
    assert.notEqual(renewed.key, first.key, 'with a new key');
    assert.equal(renewed.ca, first.ca, 'by the same CA');
    assert.ok(new X509Certificate(renewed.cert).verify(new X509Certificate(renewed.ca).publicKey));
  });

  it('replaces a CA with 30 days or less left, and the serving certificate it signed', () => {
    const before = ensureCertificates(directory);
    const replaceAt = validTo(before.ca) - RENEW_BEFORE_MS;
    const kept = startAt(replaceAt - 1);
    assert.equal(kept.ca, before.ca, '30 days and 1 ms left: the CA is kept');
    const replaced = startAt(replaceAt);
    assert.notEqual(replaced.ca, before.ca, '30 days left: a new CA');
    assert.notEqual(replaced.cert, kept.cert);
    assert.ok(new X509Certificate(replaced.cert).verify(new X509Certificate(replaced.ca).publicKey));
  });
});
