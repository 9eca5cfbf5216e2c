// Shared by the forwarding*.test.ts files: gw in-process with HTTPRoute `web` whose rules (named
// after the path prefix they serve) each carry a GwPolicy traffic section, in front of a node:http
// upstream whose answers the test scripts, recording every request that reaches it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { freePort, gatewayYaml, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** Answers one request whose body has been read; by default 200 with "ok <path>". */
export type Handler = (req: IncomingMessage, res: ServerResponse, seen: SeenRequest) => void;

export interface Upstream {
  server: Server;
  port: number;
  /** Requests received, oldest first. */
  seen: SeenRequest[];
  /** Replaces how requests are answered. */
  handle(handler: Handler): void;
  close(): Promise<void>;
}

const DEFAULT_HANDLER: Handler = (req, res) => {
  const body = `ok ${req.url}`;
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
  res.end(body);
};

export async function startUpstream(): Promise<Upstream> {
  const seen: SeenRequest[] = [];
  let handler = DEFAULT_HANDLER;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const entry = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
      seen.push(entry);
      handler(req, res, entry);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    server,
    port: typeof address === 'object' && address ? address.port : 0,
    seen,
    handle: (next) => {
      handler = next;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface PolicyRule {
  /** The rule's name and the path prefix it serves. */
  name: string;
  /** The traffic section of the rule's GwPolicy (YAML, block or flow); none when undefined. */
  traffic?: string;
  /** GwBackend the rule sends to (default web). */
  backend?: string;
  /** The rule's backendRef as a YAML flow mapping, instead of a GwBackend. */
  backendRef?: string;
  /** More YAML of the rule (filters, timeouts), indented for a rule entry's fields. */
  extra?: string;
}

/**
 * The configuration: Gateway ai on `port`, GwBackend web (static 127.0.0.1:`upstreamPort`) and
 * `moreResources` (YAML documents ending with ---), HTTPRoute web with a rule per entry, a
 * GwPolicy per rule that has traffic.
 */
export function forwardingConfig(port: number, upstreamPort: number, rules: PolicyRule[], moreResources = ''): string {
  const routeRules = rules
    .map(
      ({ name, backend, backendRef, extra }) => `    - name: ${name}
      matches: [{path: {type: PathPrefix, value: /${name}}}]
      backendRefs: [${backendRef ?? `{group: gw.dev, kind: GwBackend, name: ${backend ?? 'web'}}`}]
${extra ?? ''}`,
    )
    .join('');
  const policies = rules
    .filter((rule) => rule.traffic !== undefined)
    .map(
      ({ name, traffic }) => `---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: ${name}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web, sectionName: ${name}}]
  traffic:
${traffic!.replace(/^/gm, '    ')}
`,
    )
    .join('');
  return `${gatewayYaml(port)}apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: web}
spec: {static: {host: 127.0.0.1, port: ${upstreamPort}}}
---
${moreResources}apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec:
  parentRefs: [{name: ai}]
  rules:
${routeRules}${policies}`;
}

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface ForwardingGateway {
  gw: TestGateway;
  upstream: Upstream;
  base: string;
  send(
    method: string,
    path: string,
    options?: { headers?: Record<string, string>; body?: string | Buffer | Readable },
  ): Promise<Reply>;
  stop(): Promise<void>;
}

export async function startForwardingGateway(rules: PolicyRule[], moreResources = ''): Promise<ForwardingGateway> {
  const upstream = await startUpstream();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const gw = await startTestGateway({
    'gw.yaml': forwardingConfig(port, upstream.port, rules, moreResources),
  });
  const send: ForwardingGateway['send'] = async (method, path, options = {}) => {
    const response = await request(`${base}${path}`, {
      method: method as 'GET',
      headers: options.headers,
      body: options.body,
    });
    return {
      status: response.statusCode,
      headers: response.headers as Record<string, string | string[] | undefined>,
      body: await response.body.text(),
    };
  };
  return {
    gw,
    upstream,
    base,
    send,
    stop: async () => {
      await gw.stop();
      await upstream.close();
    },
  };
}

/** A body sent chunked (no Content-Length): `count` chunks of `size` bytes, one per turn of the event loop. */
export function chunked(count: number, size: number, fill = 'x'): Readable {
  async function* chunks(): AsyncIterable<Buffer> {
    for (let i = 0; i < count; i++) {
      yield Buffer.alloc(size, fill.charCodeAt(0) + (i % 26));
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return Readable.from(chunks(), { objectMode: false });
}

/** The bytes chunked(count, size, fill) sends. */
export function chunkedBytes(count: number, size: number, fill = 'x'): Buffer {
  return Buffer.concat(Array.from({ length: count }, (_, i) => Buffer.alloc(size, fill.charCodeAt(0) + (i % 26))));
}
