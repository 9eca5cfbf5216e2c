// How the playgrounds reach gw: as a client would, through one of gw's own listeners — never an
// address the browser names. A target is a Gateway's listener (from the configurations the data
// plane serves) and a path; the request goes to the address the listeners bind (loopback for a
// wildcard address), with the listener's hostname (or the one given) as Host. An HTTPS
// listener's certificate is gw's own and is not checked: the connection goes to gw's own port.
import { request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import type { DataPlaneConfig, ListenerConfig } from '../../../contract/dataplane-config.ts';

export interface ListenerTarget {
  /** The Gateway's `namespace/name`. */
  gateway: string;
  listener: string;
  /** Request path (with a query, if any); starts with `/`. */
  path: string;
  /** The Host header (default: the listener's hostname, else the address). */
  hostname?: string;
  /** The client's key for the route, sent to gw as Authorization: Bearer; never written back or logged. */
  apiKey?: string;
}

export interface ResolvedListener {
  listener: ListenerConfig;
  address: string;
  tls: boolean;
  host: string;
}

/** Bytes of an answer the playgrounds read whole (a JSON answer, an error body). */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;
/** A playground request with no answer bytes for this long is ended. */
export const IDLE_TIMEOUT_MS = 60_000;

const MAX_PATH_LENGTH = 2048;
const HOSTNAME = /^[A-Za-z0-9.-]{1,253}(:\d{1,5})?$/;

/** A target from a request body, or what is wrong with it (naming the field). */
export function parseListenerTarget(body: unknown, defaultPath?: string): ListenerTarget | { problem: string } {
  if (typeof body !== 'object' || body === null) return { problem: 'send a JSON object' };
  const { gateway, listener, path = defaultPath, hostname, apiKey } = body as Record<string, unknown>;
  if (typeof gateway !== 'string' || gateway === '') return { problem: 'gateway: the Gateway, as namespace/name' };
  if (typeof listener !== 'string' || listener === '') return { problem: 'listener: the name of one of its listeners' };
  if (typeof path !== 'string' || !path.startsWith('/') || path.startsWith('//') || path.length > MAX_PATH_LENGTH)
    return { problem: `path: a path starting with / (at most ${MAX_PATH_LENGTH} characters)` };
  if (/[\s#]/.test(path)) return { problem: 'path: no spaces or fragment' };
  const target: ListenerTarget = { gateway, listener, path };
  if (hostname !== undefined && hostname !== '') {
    if (typeof hostname !== 'string' || !HOSTNAME.test(hostname))
      return { problem: 'hostname: a host name (letters, digits, dots, dashes), optionally with :port' };
    target.hostname = hostname;
  }
  if (apiKey !== undefined && apiKey !== '') {
    if (typeof apiKey !== 'string' || !/^[\x21-\x7e]{1,4096}$/.test(apiKey))
      return { problem: 'apiKey: printable characters without spaces' };
    target.apiKey = apiKey;
  }
  return target;
}

/** The listener a target names in the served configurations, with where to connect, or why not. */
export function resolveListener(
  configs: ReadonlyMap<string, DataPlaneConfig>,
  listenAddress: string,
  target: ListenerTarget,
): ResolvedListener | { problem: string } {
  const config = configs.get(target.gateway);
  if (!config) return { problem: `gateway: gw serves no Gateway ${target.gateway}` };
  const listener = config.listeners.find((candidate) => candidate.name === target.listener);
  if (!listener) return { problem: `listener: Gateway ${target.gateway} has no listener ${target.listener}` };
  if (listener.protocol !== 'HTTP' && listener.protocol !== 'HTTPS')
    return { problem: `listener: ${target.listener} is ${listener.protocol}; the playgrounds speak HTTP and HTTPS` };
  const address = listenAddress === '0.0.0.0' ? '127.0.0.1' : listenAddress === '::' ? '::1' : listenAddress;
  const authority = address.includes(':') ? `[${address}]` : address;
  const name = listener.hostname && !listener.hostname.startsWith('*') ? listener.hostname : undefined;
  const host = target.hostname ?? (name ? `${name}:${listener.port}` : `${authority}:${listener.port}`);
  return { listener, address, tls: listener.protocol === 'HTTPS', host };
}

export interface ListenerRequest {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  headers: OutgoingHttpHeaders;
  body?: string;
  signal?: AbortSignal;
}

/** Sends a request to the listener; resolves with the response once its headers arrive. */
export function requestListener(resolved: ResolvedListener, options: ListenerRequest): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const headers: OutgoingHttpHeaders = { ...options.headers, host: resolved.host };
    if (options.body !== undefined) headers['content-length'] = Buffer.byteLength(options.body);
    const common = {
      host: resolved.address,
      port: resolved.listener.port,
      method: options.method,
      path: options.path,
      headers,
      signal: options.signal,
      timeout: IDLE_TIMEOUT_MS,
      agent: false as const,
    };
    const request = resolved.tls
      ? httpsRequest({ ...common, servername: serverName(resolved.host), rejectUnauthorized: false })
      : httpRequest(common);
    request.once('response', resolve);
    request.once('error', reject);
    request.once('timeout', () =>
      request.destroy(new Error(`no answer from the listener within ${IDLE_TIMEOUT_MS} ms`)),
    );
    request.end(options.body);
  });
}

/** The whole answer as text, at most MAX_ANSWER_BYTES (more is an error). */
export async function readAnswer(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) {
      response.destroy();
      throw new Error(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The TLS server name of a Host header: its name, none for an address. */
function serverName(host: string): string | undefined {
  const name = host.startsWith('[') ? '' : host.replace(/:\d+$/, '');
  return name === '' || isIP(name) !== 0 ? undefined : name;
}
