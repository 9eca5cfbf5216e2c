// The embedded API server as `gw run` starts it: a data directory holding the database
// (state.db), the CA and serving certificate, the bearer token and the kubeconfig for them; the
// store over that database; and the HTTPS server. Everything is created on first start and
// reused after, so a kubeconfig keeps working across restarts.
import { chmodSync, mkdirSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ApiStore } from './api-store.ts';
import { loadOrCreateToken } from './authentication.ts';
import { ensureCertificates } from './certificates.ts';
import { serverUrl, writeKubeconfig } from './kubeconfig.ts';
import type { RestSettings } from './rest-handler.ts';
import { ApiServer } from './server.ts';

export interface EmbeddedApiServerOptions {
  dataDir: string;
  /** Address to bind (default 127.0.0.1). */
  address?: string;
  /** Port to bind; 0 picks a free one. */
  port: number;
  gwVersion?: string;
  /** How many changes watches can resume from (default 10,000). */
  historyLimit?: number;
  settings?: Partial<RestSettings>;
  log?: (line: string) => void;
}

/** GW_DATA_DIR, else $XDG_STATE_HOME/gw, else ~/.local/state/gw. */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.GW_DATA_DIR) return env.GW_DATA_DIR;
  const state = env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  return join(state, 'gw');
}

export class EmbeddedApiServer {
  readonly store: ApiStore;
  readonly server: ApiServer;
  readonly kubeconfigPath: string;
  private readonly options: EmbeddedApiServerOptions;
  private readonly caPem: string;
  private readonly token: string;
  private serverUrl: string | undefined;

  /** Prepares the data directory (certificates, token) and opens the database; listen() serves it. */
  constructor(options: EmbeddedApiServerOptions) {
    this.options = options;
    const directory = options.dataDir;
    mkdirSync(directory, { recursive: true, mode: 0o700 });
    chmodSync(directory, 0o700);
    const address = options.address ?? '127.0.0.1';
    const specific = address !== '0.0.0.0' && address !== '::' && address !== '';
    const tls = ensureCertificates(directory, { hosts: specific ? [address] : [] });
    this.caPem = tls.ca;
    this.token = loadOrCreateToken(join(directory, 'token'));
    this.kubeconfigPath = join(directory, 'kubeconfig');
    this.store = new ApiStore(join(directory, 'state.db'), { historyLimit: options.historyLimit });
    this.server = new ApiServer({
      store: this.store,
      address,
      port: options.port,
      tls,
      token: this.token,
      gwVersion: options.gwVersion,
      settings: options.settings,
      log: options.log,
    });
  }

  /** Opens the data directory and serves it; resolves once the port is bound and the kubeconfig written. */
  static async start(options: EmbeddedApiServerOptions): Promise<EmbeddedApiServer> {
    const embedded = new EmbeddedApiServer(options);
    try {
      await embedded.listen();
    } catch (error) {
      await embedded.store.close();
      throw error;
    }
    return embedded;
  }

  /** Binds the port and writes the kubeconfig for the address bound. */
  async listen(): Promise<void> {
    const bound = await this.server.listen();
    this.serverUrl = serverUrl(this.options.address ?? '127.0.0.1', bound.port);
    writeKubeconfig(this.kubeconfigPath, { server: this.serverUrl, caPem: this.caPem, token: this.token });
  }

  /** https://host:port, once listening. */
  get url(): string {
    if (!this.serverUrl) throw new Error('the API server is not listening');
    return this.serverUrl;
  }

  /**
   * A request to this API server as a client holding its token makes it (kubectl, the web UI's
   * edits): the same authentication, admission and storage. The answer's JSON (a Status on failure).
   */
  request(
    method: string,
    path: string,
    body?: unknown,
    timeoutMs = 15_000,
  ): Promise<{ status: number; body: unknown }> {
    const text = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const outgoing = httpsRequest(
        new URL(path, this.url),
        {
          method,
          ca: this.caPem,
          timeout: timeoutMs,
          headers: {
            authorization: `Bearer ${this.token}`,
            accept: 'application/json',
            ...(text !== undefined && {
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(text),
            }),
          },
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', reject);
          response.on('end', () => {
            const answer = Buffer.concat(chunks).toString('utf8');
            try {
              resolve({ status: response.statusCode ?? 0, body: answer === '' ? undefined : JSON.parse(answer) });
            } catch {
              resolve({ status: response.statusCode ?? 0, body: { message: answer } });
            }
          });
        },
      );
      outgoing.on('timeout', () => outgoing.destroy(new Error(`the API server did not answer within ${timeoutMs} ms`)));
      outgoing.on('error', reject);
      outgoing.end(text);
    });
  }

  async close(): Promise<void> {
    await this.server.close();
    await this.store.close();
  }
}
