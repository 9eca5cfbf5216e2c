// Shared by the inbound authentication and authorization tests: an upstream that records what
// reaches it (and answers chat completions for the OpenAI client), gw in front of it with a
// policy on HTTPRoute web, and the check that no secret ever reaches a log.
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { freePort, gatewayYaml, startTestGateway, type TestGateway, webRouteYaml } from '../../helpers/gateway.ts';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
}

export interface Upstream {
  port: number;
  /** Requests that reached the upstream, in order. */
  seen: SeenRequest[];
  last(): SeenRequest;
  close(): Promise<void>;
}

/** An HTTP upstream on 127.0.0.1 answering a chat completion on POST /v1/chat/completions, `ok` elsewhere. */
export async function startUpstream(): Promise<Upstream> {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      if (req.method === 'POST' && req.url === '/v1/chat/completions') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'chatcmpl-1',
            object: 'chat.completion',
            created: 1,
            model: 'test-model',
            choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    seen,
    last: () => {
      const request = seen.at(-1);
      assert.ok(request, 'no request reached the upstream');
      return request;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * GwPolicy `name` with `traffic` (any JSON; YAML reads it as flow style) on HTTPRoute web, or on
 * Gateway ai when `target` is 'Gateway'.
 */
export function policyYaml(name: string, traffic: unknown, target: 'HTTPRoute' | 'Gateway' = 'HTTPRoute'): string {
  const targetName = target === 'HTTPRoute' ? 'web' : 'ai';
  return `apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: ${name}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: ${target}, name: ${targetName}}]
  traffic: ${JSON.stringify(traffic)}
---
`;
}

/** A Secret or ConfigMap with `entries` as stringData (Secret) or data (ConfigMap). */
export function objectYaml(
  kind: 'Secret' | 'ConfigMap',
  name: string,
  entries: Record<string, string>,
  labels?: Record<string, string>,
): string {
  const metadata = labels ? { name, labels } : { name };
  return `apiVersion: v1
kind: ${kind}
metadata: ${JSON.stringify(metadata)}
${kind === 'Secret' ? 'stringData' : 'data'}: ${JSON.stringify(entries)}
---
`;
}

export interface AuthGateway {
  gw: TestGateway;
  upstream: Upstream;
  /** http://127.0.0.1:<port> */
  base: string;
  stop(): Promise<void>;
}

/** gw with Gateway ai, route web to a recording upstream, and `objects` (policies, Secrets...) in objects.yaml. */
export async function startAuthGateway(objects: string): Promise<AuthGateway> {
  const upstream = await startUpstream();
  const port = await freePort();
  const gw = await startTestGateway({
    'gw.yaml': `${gatewayYaml(port)}${webRouteYaml(upstream.port)}`,
    'objects.yaml': objects,
  });
  return {
    gw,
    upstream,
    base: `http://127.0.0.1:${port}`,
    stop: async () => {
      await gw.stop();
      await upstream.close();
    },
  };
}

/** Fails when a log line or access log line of `gw` contains any of `secrets`. */
export function assertNoSecretLogged(gw: TestGateway, secrets: readonly string[]): void {
  for (const line of [...gw.logs, ...gw.accessLog])
    for (const secret of secrets) assert.ok(!line.includes(secret), `a log line contains a secret: ${line}`);
}

/** Resolves once `check()` resolves true (tried every 20 ms); fails the test after `timeoutMs`. */
export async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
