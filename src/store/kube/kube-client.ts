// Plain JSON requests to a Kubernetes API server with the credentials of a kubeconfig.
//
// @kubernetes/client-node's typed APIs turn objects into model classes (timestamps become Date
// objects, unknown kinds are refused), while the controller works on the JSON as served, the way
// the informers' watch delivers it. So requests go out here as JSON, with client-node's
// KubeConfig supplying the agent (CA, client certificate, proxy) and the Authorization header
// (token, exec plugin, OIDC refresh) for each request.
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import type { KindDefinition } from '../../api/kinds/kind.ts';

/** A failed request: the HTTP status (0 when none came back) and the server's message. */
export class KubeRequestError extends Error {
  readonly statusCode: number;
  /** client-node's informers read `code` on watch errors; the same is given here. */
  readonly code: number;
  readonly reason: string | undefined;

  constructor(statusCode: number, message: string, reason?: string) {
    super(message);
    this.name = 'KubeRequestError';
    this.statusCode = statusCode;
    this.code = statusCode;
    this.reason = reason;
  }
}

export interface KubeRequestOptions {
  body?: unknown;
  contentType?: string;
  /** Give up after this long (default 30 s). */
  timeoutMs?: number;
}

/** A response larger than this is refused: a page of a list, or one object, never gets near it. */
const MAX_RESPONSE_BYTES = 256 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 30_000;

/** The REST collection path of a kind, across all namespaces or in one. */
export function collectionPath(definition: KindDefinition, namespace?: string): string {
  const prefix =
    definition.group === '' ? `/api/${definition.version}` : `/apis/${definition.group}/${definition.version}`;
  const scope = definition.namespaced && namespace !== undefined ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${prefix}${scope}/${definition.plural}`;
}

/** The path of one object ("namespace/name" or "name"). */
export function objectPath(definition: KindDefinition, key: string): string {
  const slash = key.indexOf('/');
  const namespace = slash === -1 ? undefined : key.slice(0, slash);
  const name = slash === -1 ? key : key.slice(slash + 1);
  return `${collectionPath(definition, namespace)}/${encodeURIComponent(name)}`;
}

/** The message of a Status body, or the start of whatever else came back. */
function describe(status: number, text: string): { message: string; reason?: string } {
  try {
    const body = JSON.parse(text) as { kind?: string; message?: string; reason?: string };
    if (body.kind === 'Status' && typeof body.message === 'string')
      return { message: body.message, reason: body.reason };
  } catch {
    // not JSON: fall through
  }
  const start = text.trim().slice(0, 200);
  return { message: start ? `HTTP ${status}: ${start}` : `HTTP ${status}` };
}

export class KubeClient {
  readonly kubeConfig: KubeConfig;
  private readonly server: URL;
  /** A keep-alive copy of the agent the kubeconfig describes, so requests share connections. */
  private agent: http.Agent | undefined;

  constructor(kubeConfig: KubeConfig) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster (set current-context)');
    this.kubeConfig = kubeConfig;
    this.server = new URL(cluster.server);
  }

  /** The API server's address, for messages. */
  get serverUrl(): string {
    return this.server.origin;
  }

  /**
   * client-node builds a new agent for every request. A plain one (CA, client certificate) is
   * replaced by one keep-alive agent with the same settings; a proxy agent is used as given.
   */
  private sharedAgent(given: https.RequestOptions['agent']): https.RequestOptions['agent'] {
    if (this.agent) return this.agent;
    if (!given || (given.constructor !== https.Agent && given.constructor !== http.Agent)) return given;
    const settings = (given as http.Agent & { options: https.AgentOptions }).options;
    const Agent = given.constructor === https.Agent ? https.Agent : http.Agent;
    this.agent = new Agent({ ...settings, keepAlive: true, maxSockets: 8 });
    return this.agent;
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.agent?.destroy();
  }

  /** Sends one request; resolves with the parsed JSON body of a 2xx answer, rejects with KubeRequestError otherwise. */
  async request<T = unknown>(method: string, path: string, options: KubeRequestOptions = {}): Promise<T> {
    const requestOptions: https.RequestOptions = { method, headers: {} };
    // Every request asks the kubeconfig again: exec plugins and OIDC tokens expire.
    await this.kubeConfig.applyToHTTPSOptions(requestOptions);
    requestOptions.agent = this.sharedAgent(requestOptions.agent);
    const headers = requestOptions.headers as Record<string, string>;
    headers.Accept = 'application/json';
    const body = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
    if (body) {
      headers['Content-Type'] = options.contentType ?? 'application/json';
      headers['Content-Length'] = String(body.length);
    }
    const url = new URL(this.server.pathname.replace(/\/$/, '') + path, this.server);
    const transport = url.protocol === 'http:' ? http : https;
    const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    return new Promise<T>((resolve, reject) => {
      const request = transport.request(url, requestOptions, (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES) {
            request.destroy(
              new KubeRequestError(0, `${method} ${path}: the response exceeds ${MAX_RESPONSE_BYTES} bytes`),
            );
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const status = response.statusCode ?? 0;
          if (status >= 200 && status < 300) {
            try {
              resolve(JSON.parse(text) as T);
            } catch {
              reject(new KubeRequestError(status, `${method} ${path}: the answer is not JSON`));
            }
            return;
          }
          const { message, reason } = describe(status, text);
          reject(new KubeRequestError(status, `${method} ${path}: ${message}`, reason));
        });
        response.on('error', (error) => reject(new KubeRequestError(0, `${method} ${path}: ${error.message}`)));
      });
      request.setTimeout(timeoutMs, () =>
        request.destroy(new KubeRequestError(0, `${method} ${path}: no answer within ${timeoutMs} ms`)),
      );
      request.on('error', (error) =>
        reject(
          error instanceof KubeRequestError ? error : new KubeRequestError(0, `${method} ${path}: ${error.message}`),
        ),
      );
      request.end(body);
    });
  }
}
