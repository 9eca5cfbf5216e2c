// Access log export and tracing over OTLP, to collectors the test runs: OTLP/HTTP (JSON) on
// node:http and OTLP/gRPC on @grpc/grpc-js (raw messages: protobuf keeps strings as they are,
// so attribute names and values can be found in the bytes).
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import * as grpc from '@grpc/grpc-js';
import { freePort, gatewayYaml, startTestGateway, type TestGateway, webRouteYaml } from '../../helpers/gateway.ts';

interface HttpCollector {
  server: Server;
  port: number;
  posts: { path: string; body: Record<string, unknown> }[];
}

async function httpCollector(): Promise<HttpCollector> {
  const posts: HttpCollector['posts'] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      posts.push({ path: req.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, posts };
}

async function upstream(): Promise<{ server: Server; port: number; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, seen };
}

function policy(frontend: string): string {
  return `---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: telemetry}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai}]
  frontend: ${frontend}
`;
}

/** OTLP/JSON attributes as a plain map. */
function attributes(list: { key: string; value: Record<string, unknown> }[]): Record<string, unknown> {
  return Object.fromEntries(list.map(({ key, value }) => [key, Object.values(value)[0]]));
}

describe('OTLP over HTTP', () => {
  let collector: HttpCollector;
  let backend: Awaited<ReturnType<typeof upstream>>;
  let gw: TestGateway;
  let port: number;

  before(async () => {
    collector = await httpCollector();
    backend = await upstream();
    port = await freePort();
    const url = `http://127.0.0.1:${collector.port}`;
    gw = await startTestGateway({
      'gw.yaml':
        gatewayYaml(port) +
        webRouteYaml(backend.port) +
        policy(`{accessLog: {attributes: {add: [{name: tenant, expression: 'request.headers["x-tenant"]'}]},
    otlp: {url: "${url}", protocol: HTTP}},
    tracing: {url: "${url}", protocol: HTTP, randomSampling: 'request.headers["x-sample"] == "yes"',
    attributes: {remove: [server.address]}, resources: [{name: deployment, expression: '"test"'}]}}`),
    });
  });
  after(async () => {
    await gw.stop();
    collector.server.close();
    backend.server.close();
  });

  it('exports each access log entry with its fields and added attributes', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/hello`, { headers: { 'x-tenant': 'acme' } });
    assert.equal(response.status, 200);
    await response.text();
    await gw.telemetry.otlp.flush();
    const logs = collector.posts.filter((post) => post.path === '/v1/logs');
    assert.ok(logs.length > 0, 'the collector received logs');
    const records = logs.flatMap((post) =>
      (post.body.resourceLogs as { scopeLogs: { logRecords: Record<string, unknown>[] }[] }[]).flatMap((resource) =>
        resource.scopeLogs.flatMap((scope) => scope.logRecords),
      ),
    );
    const entry = records
      .map((record) => attributes(record.attributes as never))
      .find((found) => found['url.path'] === '/hello');
    assert.ok(entry, 'the request has an entry');
    assert.equal(entry['http.response.status_code'], 200);
    assert.equal(entry.tenant, 'acme');
    assert.equal(entry.route, 'default/web');
  });

  it('traces sampled requests, continues an incoming trace and sends the context upstream', async () => {
    const before = backend.seen.length;
    const incomingTrace = '0af7651916cd43dd8448eb211c80319c';
    await (
      await fetch(`http://127.0.0.1:${port}/traced`, {
        headers: { traceparent: `00-${incomingTrace}-b7ad6b7169203331-01` },
      })
    ).text();
    await (await fetch(`http://127.0.0.1:${port}/random`, { headers: { 'x-sample': 'yes' } })).text();
    await (await fetch(`http://127.0.0.1:${port}/not-sampled`)).text();
    await gw.telemetry.otlp.flush();
    const sent = backend.seen.slice(before);
    const upstreamContext = String(sent[0]!.traceparent);
    assert.match(upstreamContext, new RegExp(`^00-${incomingTrace}-[0-9a-f]{16}-01$`));
    assert.notEqual(upstreamContext.split('-')[2], 'b7ad6b7169203331', 'gw adds its own span');
    assert.equal(sent[2]!.traceparent, undefined, 'an unsampled request without context gets none');
    const spans = collector.posts
      .filter((post) => post.path === '/v1/traces')
      .flatMap((post) =>
        (post.body.resourceSpans as Record<string, unknown>[]).flatMap((resource) =>
          (resource.scopeSpans as { spans: Record<string, unknown>[] }[]).flatMap((scope) =>
            scope.spans.map((span) => ({
              span,
              resource: attributes((resource.resource as never as { attributes: never }).attributes),
            })),
          ),
        ),
      );
    const paths = spans.map(({ span }) => attributes(span.attributes as never)['url.path']);
    assert.ok(paths.includes('/traced') && paths.includes('/random'), `sampled spans exported: ${paths}`);
    assert.ok(!paths.includes('/not-sampled'));
    const traced = spans.find(({ span }) => attributes(span.attributes as never)['url.path'] === '/traced')!;
    assert.equal(traced.span.traceId, incomingTrace);
    assert.equal(traced.span.parentSpanId, 'b7ad6b7169203331');
    assert.equal(traced.span.name, 'GET default/web');
    assert.equal(attributes(traced.span.attributes as never)['server.address'], undefined, 'removed attribute');
    assert.equal(traced.resource.deployment, 'test');
    assert.equal(traced.resource['service.name'], 'gw');
  });
});

describe('OTLP over gRPC', () => {
  it('exports access log entries and spans to a gRPC collector', async () => {
    const received: { method: string; bytes: Buffer }[] = [];
    const server = new grpc.Server();
    const raw = (path: string) => ({
      path,
      requestStream: false,
      responseStream: false,
      requestSerialize: (value: Buffer) => value,
      requestDeserialize: (value: Buffer) => value,
      responseSerialize: (value: Buffer) => value,
      responseDeserialize: (value: Buffer) => value,
    });
    const handler =
      (method: string) => (call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) => {
        received.push({ method, bytes: call.request });
        done(null, Buffer.alloc(0));
      };
    server.addService({ Export: raw('/opentelemetry.proto.collector.logs.v1.LogsService/Export') } as never, {
      Export: handler('logs'),
    });
    const traceServer = new grpc.Server();
    traceServer.addService({ Export: raw('/opentelemetry.proto.collector.trace.v1.TraceService/Export') } as never, {
      Export: handler('traces'),
    });
    const bind = (target: grpc.Server) =>
      new Promise<number>((resolve, reject) =>
        target.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
          error ? reject(error) : resolve(bound),
        ),
      );
    const logsPort = await bind(server);
    const tracesPort = await bind(traceServer);
    const backend = await upstream();
    const port = await freePort();
    const gw = await startTestGateway({
      'gw.yaml':
        gatewayYaml(port) +
        webRouteYaml(backend.port) +
        policy(`{accessLog: {otlp: {url: "http://127.0.0.1:${logsPort}"}},
    tracing: {url: "http://127.0.0.1:${tracesPort}", randomSampling: 'true'}}`),
    });
    try {
      await (await fetch(`http://127.0.0.1:${port}/grpc-export`)).text();
      await gw.telemetry.otlp.flush();
      const logs = received.filter((entry) => entry.method === 'logs');
      const traces = received.filter((entry) => entry.method === 'traces');
      assert.ok(logs.some((entry) => entry.bytes.includes('/grpc-export') && entry.bytes.includes('url.path')));
      assert.ok(
        traces.some((entry) => entry.bytes.includes('/grpc-export') && entry.bytes.includes('GET default/web')),
      );
    } finally {
      await gw.stop();
      server.forceShutdown();
      traceServer.forceShutdown();
      backend.server.close();
    }
  });
});
