// The kubeconfig written for the embedded API server: one cluster (its URL and the CA that signed
// its certificate), one user (the bearer token) and a context that selects them, with namespace
// "default". It is written with mode 0600 because it holds the token; point kubectl at it with
// KUBECONFIG=<data dir>/kubeconfig or --kubeconfig.
import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';

export interface KubeconfigOptions {
  /** https://host:port */
  server: string;
  caPem: string;
  token: string;
  /** Names of the cluster, user and context (default "gw"). */
  name?: string;
}

export function kubeconfigYaml(options: KubeconfigOptions): string {
  const name = options.name ?? 'gw';
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name,
        cluster: {
          server: options.server,
          'certificate-authority-data': Buffer.from(options.caPem).toString('base64'),
        },
      },
    ],
    users: [{ name: `${name}-admin`, user: { token: options.token } }],
    contexts: [{ name, context: { cluster: name, user: `${name}-admin`, namespace: 'default' } }],
    'current-context': name,
    preferences: {},
  });
}

export function writeKubeconfig(file: string, options: KubeconfigOptions): void {
  writeFileSync(file, kubeconfigYaml(options), { mode: 0o600 });
}

/** The URL clients use for a server bound to `address`:`port` (a wildcard address means loopback). */
export function serverUrl(address: string, port: number): string {
  let host = address;
  if (host === '0.0.0.0' || host === '') host = '127.0.0.1';
  if (host === '::') host = '::1';
  return `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
}
