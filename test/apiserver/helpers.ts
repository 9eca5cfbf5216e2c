// Test helpers for the embedded API server: start one in a temporary data directory on a free
// port, and talk to it over HTTPS as a client would (the generated CA, the bearer token).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { EmbeddedApiServer, type EmbeddedApiServerOptions } from '../../src/apiserver/embedded.ts';
import { resourceOfKind } from '../../src/apiserver/resources.ts';
import { kindKey } from '../../src/store/store.ts';

export interface ApiClient {
  port: number;
  ca: string;
  token: string;
  request(method: string, path: string, options?: RequestOptions): Promise<Reply>;
  /** Opens a watch (or any streaming GET) and collects its newline-delimited JSON events. */
  stream(path: string, options?: RequestOptions): Promise<Stream>;
}

export interface TestApiServer extends ApiClient {
  embedded: EmbeddedApiServer;
  dataDir: string;
  close(): Promise<void>;
}

export interface RequestOptions {
  body?: unknown;
  contentType?: string;
  accept?: string;
  /** Defaults to the server's token; null sends no Authorization header. */
  token?: string | null;
  headers?: Record<string, string>;
}

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: test replies are read field by field
  json: any;
}

export interface Stream {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: events are read field by field
  events: any[];
  /** Resolves once `count` events have arrived (rejects after `ms`). */
  // biome-ignore lint/suspicious/noExplicitAny: events are read field by field
  waitFor(count: number, ms?: number): Promise<any[]>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
  pause(): void;
  resume(): void;
}

export async function startTestApiServer(options: Partial<EmbeddedApiServerOptions> = {}): Promise<TestApiServer> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'gw-apiserver-'));
  const embedded = await EmbeddedApiServer.start({ port: 0, ...options, dataDir });
  return wrap(embedded, dataDir, options.dataDir === undefined);
}

function wrap(embedded: EmbeddedApiServer, dataDir: string, ownsDirectory: boolean): TestApiServer {
  const client = apiClient(dataDir, embedded.server.address.port);
  return {
    ...client,
    embedded,
    dataDir,
    async close() {
      await embedded.close();
      if (ownsDirectory) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A client of the API server on `port` whose data directory (CA, token) is `dataDir`. */
export function apiClient(dataDir: string, port: number): ApiClient {
  const ca = readFileSync(join(dataDir, 'ca.crt'), 'utf8');
  const token = readFileSync(join(dataDir, 'token'), 'utf8').trim();
  const open = (method: string, path: string, options: RequestOptions) => {
    const headers: Record<string, string> = { ...options.headers };
    const authorization = options.token === undefined ? token : options.token;
    if (authorization !== null) headers.Authorization = `Bearer ${authorization}`;
    if (options.accept) headers.Accept = options.accept;
    let payload: Buffer | undefined;
    if (options.body !== undefined) {
      payload = Buffer.isBuffer(options.body)
        ? options.body
        : Buffer.from(typeof options.body === 'string' ? options.body : JSON.stringify(options.body));
      headers['Content-Type'] = options.contentType ?? 'application/json';
      headers['Content-Length'] = String(payload.length);
    }
    const request = httpsRequest({ host: '127.0.0.1', port, method, path, headers, ca, servername: 'localhost' });
    if (payload) request.write(payload);
    request.end();
    return request;
  };
  return {
    port,
    ca,
    token,
    request(method, path, options = {}) {
      return new Promise((resolve, reject) => {
        const request = open(method, path, options);
        request.on('error', reject);
        request.on('response', (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json: unknown;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            resolve({ status: response.statusCode!, headers: response.headers, text, json });
          });
        });
      });
    },
    stream(path, options = {}) {
      return new Promise((resolve, reject) => {
        const request = open('GET', path, options);
        request.on('error', reject);
        request.on('response', (response) => {
          const events: unknown[] = [];
          const waiters: { count: number; resolve: (events: unknown[]) => void }[] = [];
          let buffer = '';
          let endResolve: () => void;
          const ended = new Promise<void>((done) => {
            endResolve = done;
          });
          response.on('data', (chunk: Buffer) => {
            buffer += chunk.toString('utf8');
            let newline = buffer.indexOf('\n');
            while (newline !== -1) {
              const line = buffer.slice(0, newline);
              buffer = buffer.slice(newline + 1);
              if (line.trim() !== '') events.push(JSON.parse(line));
              newline = buffer.indexOf('\n');
            }
            for (const waiter of [...waiters]) {
              if (events.length >= waiter.count) {
                waiters.splice(waiters.indexOf(waiter), 1);
                waiter.resolve(events.slice());
              }
            }
          });
          response.on('end', () => endResolve());
          response.on('close', () => endResolve());
          resolve({
            status: response.statusCode!,
            events,
            ended,
            waitFor(count, ms = 5000) {
              if (events.length >= count) return Promise.resolve(events.slice());
              return new Promise((done, fail) => {
                const timer = setTimeout(
                  () => fail(new Error(`only ${events.length} of ${count} events: ${JSON.stringify(events)}`)),
                  ms,
                );
                waiters.push({
                  count,
                  resolve: (all) => {
                    clearTimeout(timer);
                    done(all);
                  },
                });
              });
            },
            close() {
              request.destroy();
            },
            pause() {
              response.pause();
            },
            resume() {
              response.resume();
            },
          });
        });
      });
    },
  };
}

export const BACKENDS_PATH = '/apis/gw.dev/v1alpha1/namespaces/default/gwbackends';
export const CONFIG_MAPS_PATH = '/api/v1/namespaces/default/configmaps';

export function backend(name: string, model = 'gpt-4o', labels?: Record<string, string>) {
  return {
    apiVersion: 'gw.dev/v1alpha1',
    kind: 'GwBackend',
    metadata: labels ? { name, labels } : { name },
    spec: { ai: { provider: { alpha: { model } } } },
  };
}

/** The REST path of an object's collection. */
export function collectionPath(object: {
  apiVersion: string;
  kind: string;
  metadata?: { namespace?: string };
}): string {
  const resource = resourceOfKind(kindKey(object))!;
  const base = resource.group === '' ? '/api/v1' : `/apis/${resource.apiVersion}`;
  if (!resource.namespaced) return `${base}/${resource.plural}`;
  return `${base}/namespaces/${object.metadata?.namespace ?? 'default'}/${resource.plural}`;
}

/** Creates every object of a multi-document YAML text through the API (each must be created). */
export async function createAll(client: ApiClient, yaml: string): Promise<void> {
  for (const document of parseAllDocuments(yaml)) {
    const object = document.toJS();
    if (!object) continue;
    const reply = await client.request('POST', collectionPath(object), { body: object });
    assert.equal(reply.status, 201, reply.text);
  }
}
