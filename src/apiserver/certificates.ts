// The API server's TLS: a self-signed certificate authority made on first start and a serving
// certificate it signs, for localhost, 127.0.0.1, ::1 and the address the server binds. kubectl
// trusts the CA through the kubeconfig. node:crypto cannot issue certificates, so the openssl
// command does (OpenSSL 1.1.1 or later); the files are reused on later starts, and the serving
// certificate is issued again when it is about to expire or does not cover the address.
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes, X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';

export interface ServingCertificates {
  /** PEM of the CA certificate clients trust. */
  ca: string;
  /** PEM of the serving certificate and its key. */
  cert: string;
  key: string;
}

export interface CertificateOptions {
  /** Extra names (DNS names or IP addresses) the serving certificate must cover. */
  hosts?: string[];
  /** The openssl command (default "openssl" on the PATH). */
  openssl?: string;
  /** Milliseconds since the epoch, what expiry is judged against (default the system clock). */
  now?: () => number;
}

const CA_DAYS = 3650;
const SERVING_DAYS = 825;
/** A certificate (the CA or the serving one) this close to expiring, or closer, is replaced at start. */
export const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;
const DEFAULT_HOSTS = ['localhost', '127.0.0.1', '::1'];

export class OpensslMissingError extends Error {}

function checkOpenssl(openssl: string): void {
  const result = spawnSync(openssl, ['version'], { encoding: 'utf8' });
  if (result.error || result.status !== 0) {
    throw new OpensslMissingError(
      `the API server needs the openssl command to create its TLS certificates the first time (${result.error?.message ?? result.stderr.trim()}); install OpenSSL, or run gw with -f FILE|DIR and without --api-port to serve files only`,
    );
  }
}

function run(openssl: string, args: string[], cwd: string): void {
  try {
    execFileSync(openssl, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`openssl ${args[0]} failed: ${stderr || (error as Error).message}`);
  }
}

function subjectAltNames(hosts: readonly string[]): string {
  return hosts.map((host) => (isIP(host) ? `IP:${host}` : `DNS:${host}`)).join(',');
}

function covers(certificate: X509Certificate, hosts: readonly string[]): boolean {
  return hosts.every((host) => (isIP(host) ? certificate.checkIP(host) : certificate.checkHost(host)) !== undefined);
}

/** Whether `certificate` has more than RENEW_BEFORE_MS left at `now` (epoch ms). */
function lastsLongEnough(certificate: X509Certificate, now: number): boolean {
  return Date.parse(certificate.validTo) - now > RENEW_BEFORE_MS;
}

function usable(certPath: string, ca: X509Certificate, hosts: readonly string[], now: number): boolean {
  if (!existsSync(certPath)) return false;
  try {
    const certificate = new X509Certificate(readFileSync(certPath));
    return certificate.verify(ca.publicKey) && lastsLongEnough(certificate, now) && covers(certificate, hosts);
  } catch {
    return false;
  }
}

/** Creates what is missing (CA, serving certificate) in `directory` and returns the PEMs. */
export function ensureCertificates(directory: string, options: CertificateOptions = {}): ServingCertificates {
  const openssl = options.openssl ?? 'openssl';
  const hosts = [...new Set([...DEFAULT_HOSTS, ...(options.hosts ?? [])])];
  const caCert = join(directory, 'ca.crt');
  const caKey = join(directory, 'ca.key');
  const cert = join(directory, 'apiserver.crt');
  const key = join(directory, 'apiserver.key');
  let ca = existsSync(caCert) && existsSync(caKey) ? new X509Certificate(readFileSync(caCert)) : undefined;
  const now = (options.now ?? Date.now)();
  if (ca && !lastsLongEnough(ca, now)) ca = undefined;
  if (!ca || !usable(cert, ca, hosts, now)) {
    checkOpenssl(openssl);
    const work = mkdtempSync(join(directory, '.openssl-'));
    try {
      if (!ca) {
        writeFileSync(
          join(work, 'ca.cnf'),
          [
            '[req]',
            'distinguished_name = dn',
            'prompt = no',
            'x509_extensions = ca_ext',
            '[dn]',
            'CN = gw-apiserver-ca',
            '[ca_ext]',
            'basicConstraints = critical,CA:TRUE',
            'keyUsage = critical,keyCertSign,cRLSign',
            'subjectKeyIdentifier = hash',
            '',
          ].join('\n'),
        );
        run(
          openssl,
          [
            'req',
            '-x509',
            '-new',
            '-config',
            'ca.cnf',
            '-newkey',
            'ec',
            '-pkeyopt',
            'ec_paramgen_curve:prime256v1',
            '-nodes',
            '-keyout',
            'ca.key',
            '-out',
            'ca.crt',
            '-days',
            String(CA_DAYS),
            '-sha256',
          ],
          work,
        );
        writeFileSync(caKey, readFileSync(join(work, 'ca.key')), { mode: 0o600 });
        writeFileSync(caCert, readFileSync(join(work, 'ca.crt')));
        ca = new X509Certificate(readFileSync(caCert));
      }
      writeFileSync(
        join(work, 'server.cnf'),
        [
          '[req]',
          'distinguished_name = dn',
          'prompt = no',
          '[dn]',
          'CN = gw-apiserver',
          '[server_ext]',
          'basicConstraints = critical,CA:FALSE',
          'keyUsage = critical,digitalSignature,keyEncipherment',
          'extendedKeyUsage = serverAuth',
          `subjectAltName = ${subjectAltNames(hosts)}`,
          'authorityKeyIdentifier = keyid',
          'subjectKeyIdentifier = hash',
          '',
        ].join('\n'),
      );
      run(
        openssl,
        [
          'req',
          '-new',
          '-config',
          'server.cnf',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-keyout',
          'server.key',
          '-out',
          'server.csr',
        ],
        work,
      );
      run(
        openssl,
        [
          'x509',
          '-req',
          '-in',
          'server.csr',
          '-CA',
          caCert,
          '-CAkey',
          caKey,
          '-set_serial',
          `0x${randomBytes(16).toString('hex')}`,
          '-out',
          'server.crt',
          '-days',
          String(SERVING_DAYS),
          '-sha256',
          '-extfile',
          'server.cnf',
          '-extensions',
          'server_ext',
        ],
        work,
      );
      writeFileSync(key, readFileSync(join(work, 'server.key')), { mode: 0o600 });
      writeFileSync(cert, readFileSync(join(work, 'server.crt')));
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  chmodSync(caKey, 0o600);
  chmodSync(key, 0o600);
  return { ca: readFileSync(caCert, 'utf8'), cert: readFileSync(cert, 'utf8'), key: readFileSync(key, 'utf8') };
}
