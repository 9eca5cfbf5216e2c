// Shared by the http-policies*.test.ts files: gw in-process with one HTTPRoute `web` whose rules
// (named after the path prefix they serve) each carry a GwPolicy, in front of a node:http
// upstream that records what reaches it.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { request } from 'undici';
import { freePort, gatewayYaml, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Upstream {
  server: Server;
  port: number;
  /** Requests received, oldest first. */
  seen: SeenRequest[];
  close(): Promise<void>;
}

/**
 * An upstream that records each request and answers 200 with JSON describing it, plus the
 * response headers named in `x-reply-<name>: <value>` request headers, and `?status=` as status.
 */
export async function startUpstream(): Promise<Upstream> {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const entry = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      seen.push(entry);
      const status = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('status') ?? 200);
      for (const [name, value] of Object.entries(req.headers)) {
        if (name.startsWith('x-reply-') && typeof value === 'string') res.setHeader(name.slice(8), value);
      }
      const reply = JSON.stringify(entry);
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) });
      res.end(reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    server,
    port: typeof address === 'object' && address ? address.port : 0,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A rule of route `web`: served at /<name>, carrying the traffic section `traffic` (YAML flow or block, indented 4). */
export interface PolicyRule {
  name: string;
  traffic: string;
}

/** The configuration: static backend web, HTTPRoute web with a rule per entry, a GwPolicy per rule. */
export function policyConfig(port: number, upstreamPort: number, rules: PolicyRule[]): string {
  const routeRules = rules
    .map(
      ({ name }) => `    - name: ${name}
      matches: [{path: {type: PathPrefix, value: /${name}}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: web}]
`,
    )
    .join('');
  const policies = rules
    .map(
      ({ name, traffic }) => `---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: ${name}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web, sectionName: ${name}}]
  traffic:
${traffic.replace(/^/gm, '    ')}
`,
    )
    .join('');
  return `${gatewayYaml(port)}apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: web}
spec: {static: {host: 127.0.0.1, port: ${upstreamPort}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec:
  parentRefs: [{name: ai}]
  rules:
${routeRules}${policies}`;
}

export interface PolicyGateway {
  gw: TestGateway;
  upstream: Upstream;
  base: string;
  /** Sends a request through gw; the response body read as text. */
  send(
    method: string,
    path: string,
    options?: { headers?: Record<string, string>; body?: string | Buffer },
  ): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>;
  stop(): Promise<void>;
}

/** gw with `rules`, answering once every rule is served (no rule answers 404 or 500 for a policy problem). */
export async function startPolicyGateway(rules: PolicyRule[]): Promise<PolicyGateway> {
  const upstream = await startUpstream();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const gw = await startTestGateway({ 'gw.yaml': policyConfig(port, upstream.port, rules) });
  const send: PolicyGateway['send'] = async (method, path, options = {}) => {
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
