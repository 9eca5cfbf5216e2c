// A GET over HTTPS to a gw listener on 127.0.0.1, with an SNI name and a Host header, trusting the
// test CA (test/fixtures/tls): the answer and the name on the certificate gw presented.
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import type { TLSSocket } from 'node:tls';

/** A file of test/fixtures/tls. */
export const tlsFixture = (name: string) => readFileSync(new URL(`../fixtures/tls/${name}`, import.meta.url), 'utf8');

/** ConfigMap `name` holding the test CA as ca.crt (for caCertificateRefs); ends with ---. */
export function testCaConfigMapYaml(name = 'test-ca'): string {
  const ca = tlsFixture('ca.crt')
    .trimEnd()
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
  return `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\ndata:\n  ca.crt: |\n${ca}\n---\n`;
}

/** Secret `name` of type kubernetes.io/tls with the fixture pair `<fixture>.crt` / `<fixture>.key`; ends with ---. */
export function tlsSecretYaml(name: string, fixture: string): string {
  const pem = (file: string) => JSON.stringify(tlsFixture(file));
  return `apiVersion: v1\nkind: Secret\nmetadata: {name: ${name}}\ntype: kubernetes.io/tls\nstringData: {"tls.crt": ${pem(`${fixture}.crt`)}, "tls.key": ${pem(`${fixture}.key`)}}\n---\n`;
}

export interface HttpsAnswer {
  status: number;
  body: string;
  /** The CN of the certificate gw presented. */
  peer: string;
}

/** GET over HTTPS to 127.0.0.1 with an SNI name ('' sends none), trusting the test CA. */
export function httpsGet(port: number, servername: string, host: string, path = '/'): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        servername,
        ca: tlsFixture('ca.crt'),
        agent: false,
        headers: { host },
        // Without SNI the certificate is checked against the chain only (it cannot name 127.0.0.1).
        ...(servername === '' ? { checkServerIdentity: () => undefined } : {}),
      },
      (res) => {
        const peer = String((res.socket as TLSSocket).getPeerCertificate().subject?.CN ?? '');
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), peer }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}
