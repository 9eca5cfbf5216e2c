// Backend extAuth and transformation (BackendFull, spec document 2) end to end: gw in-process in
// front of a recording upstream, with a real HTTP authorization server and a real Envoy ext_authz
// gRPC server, backend policies set on the GwBackend (spec.policies), by a GwPolicy on the
// GwBackend, and by a GwPolicy on the route (merged, most specific wins per field); the
// transformation's request phase seen by the upstream after the route's, its response phase seen
// by the client before the route's; an AI backend's transformation seen by the provider through
// the openai SDK, and its extAuth refusal read by the SDK as its own error; an mcp backend's
// (the MCP SDK as client) and the GwModels' way's.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type * as grpc from '@grpc/grpc-js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import {
  AUTHORIZATION_SERVICE,
  type CheckResponse,
  EXT_AUTHZ_PROTO,
} from '../../../src/dataplane/policies/ext-authz/grpc-mode.ts';
import { serviceConstructor } from '../../../src/dataplane/policies/grpc/client.ts';
import {
  freePort,
  gatewayYaml,
  lastAccessLogLine,
  refusedPort,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { type GrpcTestServer, startGrpcServer } from '../../helpers/grpc-server.ts';
import { httpRequest, type RequestOptions } from '../../helpers/http-request.ts';
import { gwModelYaml, MODEL_ROUTE_YAML } from '../../helpers/objects.ts';
import { gwPolicyYaml, prefixRouteYaml, staticBackendYaml, trafficPolicyYaml } from '../../helpers/policy-yaml.ts';
import { type RecordingUpstream, startRecordingUpstream } from '../../helpers/recording-upstream.ts';
import { startUpstreamGateway, type UpstreamGateway } from '../../helpers/upstream-gateway.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';
import { echoTools, firstText, mcpYaml, rawPost, startStreamableServer, type TestMcpServer } from '../mcp/helpers.ts';

// biome-ignore lint/suspicious/noExplicitAny: CheckRequest as proto-loader decodes it
type CheckRequest = any;

/** The gRPC authorization server: alice is allowed (and named to the upstream), anyone else denied 401. */
async function startGrpcAuthServer(): Promise<GrpcTestServer & { checks: CheckRequest[] }> {
  const checks: CheckRequest[] = [];
  const server = await startGrpcServer(serviceConstructor(EXT_AUTHZ_PROTO, AUTHORIZATION_SERVICE).service, {
    Check: (call: grpc.ServerUnaryCall<CheckRequest, CheckResponse>, callback: grpc.sendUnaryData<CheckResponse>) => {
      checks.push(call.request);
      const user = call.request.attributes.request.http.headers['x-user'];
      if (user === 'alice')
        callback(null, {
          status: { code: 0 },
          ok_response: { headers: [{ header: { key: 'x-grpc-user', value: user } }] },
        } as CheckResponse);
      else
        callback(null, {
          status: { code: 7 },
          denied_response: { status: { code: 'Unauthorized' }, body: 'grpc says no' },
        } as unknown as CheckResponse);
    },
  });
  return { ...server, checks };
}

/** GwBackend `name` on the upstream whose spec.policies are `policies` (a YAML flow mapping). */
function guardedBackend(name: string, port: number, policies: string): string {
  return staticBackendYaml(name, port, policies);
}

/** GwPolicy `name` whose backend section `backend` (flow YAML) targets GwBackend `target`. */
function backendTargetPolicy(name: string, target: string, backend: string): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: ${name}}
spec:
  targetRefs: [{group: gw.dev, kind: GwBackend, name: ${target}}]
  backend: ${backend}
---
`;
}

describe('backend extAuth and transformation', () => {
  let g: UpstreamGateway;
  let upstream: RecordingUpstream;
  let httpAuth: RecordingUpstream;
  let second: RecordingUpstream;
  let grpcAuth: Awaited<ReturnType<typeof startGrpcAuthServer>>;
  let gw: TestGateway;
  let base: string;

  const send = (path: string, options: RequestOptions = {}) => httpRequest(`${base}${path}`, options);
  const seen = (prefix: string) => upstream.seen.filter((request) => request.url.startsWith(prefix));
  const grpcChecksFor = (prefix: string) =>
    grpcAuth.checks.filter((check) => check.attributes.request.http.path.startsWith(prefix));
  const httpChecksFor = (prefix: string) => httpAuth.seen.filter((request) => request.url.includes(prefix));

  before(async () => {
    grpcAuth = await startGrpcAuthServer();
    // The HTTP authorization server: "Bearer good" is allowed, anything else 403.
    httpAuth = await startRecordingUpstream((req, res) => {
      if (req.headers.authorization === 'Bearer good') {
        res.writeHead(200, { 'x-http-user': 'bob' });
        res.end();
      } else {
        res.writeHead(403);
        res.end('http says no');
      }
    });
    second = await startRecordingUpstream();
    const closedPort = await refusedPort();
    const grpcAuthz = `{url: "http://127.0.0.1:${grpcAuth.port}"}`;
    const httpAuthz = `{url: "http://127.0.0.1:${httpAuth.port}/check", http: {allowedResponseHeaders: [x-http-user]}}`;
    g = await startUpstreamGateway(
      ({ port, upstreamPort }) => ({
        'gw.yaml': [
          gatewayYaml(port),
          staticBackendYaml('web', upstreamPort),
          // Set on the GwBackend itself.
          guardedBackend('http-guarded', upstreamPort, `{extAuth: ${httpAuthz}}`),
          guardedBackend('grpc-guarded', upstreamPort, `{extAuth: ${grpcAuthz}}`),
          // Set by a GwPolicy that targets the GwBackend.
          staticBackendYaml('policy-guarded', upstreamPort),
          backendTargetPolicy('on-backend', 'policy-guarded', `{extAuth: ${grpcAuthz}}`),
          // Route-level backend policy (gRPC) over a backend whose own (HTTP) is more specific.
          guardedBackend('own-http', upstreamPort, `{extAuth: ${httpAuthz}}`),
          // An authorization server that cannot be reached.
          guardedBackend('closed', upstreamPort, `{extAuth: {url: "http://127.0.0.1:${closedPort}"}}`),
          guardedBackend(
            'fail-open',
            upstreamPort,
            `{extAuth: {url: "http://127.0.0.1:${closedPort}", failureMode: FailOpen}}`,
          ),
          // A weighted pair: one backend checks, the other does not.
          `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: pair}
spec:
  parentRefs: [{name: ai}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /pair}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: grpc-guarded, weight: 1}, {group: gw.dev, kind: GwBackend, name: web, weight: 1}]
---
`,
          // A Service with two ports; a GwPolicy on one port (sectionName) checks only that port.
          `apiVersion: v1
kind: Service
metadata: {name: app}
spec: {clusterIP: 127.0.0.1, ports: [{name: main, port: ${upstreamPort}}, {name: other, port: ${second.port}}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ports}
spec:
  parentRefs: [{name: ai}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /port-main}}]
      backendRefs: [{name: app, port: ${upstreamPort}}]
    - matches: [{path: {type: PathPrefix, value: /port-other}}]
      backendRefs: [{name: app, port: ${second.port}}]
---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: on-port}
spec:
  targetRefs: [{group: "", kind: Service, name: app, sectionName: "${second.port}"}]
  backend: {extAuth: ${grpcAuthz}}
---
`,
          prefixRouteYaml('closed', { backend: 'closed' }),
          prefixRouteYaml('fail-open', { backend: 'fail-open' }),
          prefixRouteYaml('http', { backend: 'http-guarded' }),
          prefixRouteYaml('grpc', { backend: 'grpc-guarded' }),
          prefixRouteYaml('on-backend', { backend: 'policy-guarded' }),
          prefixRouteYaml('open', { backend: 'web' }),
          prefixRouteYaml('route-level', { backend: 'web' }),
          gwPolicyYaml('route-level', 'route-level', 'backend', `extAuth: ${grpcAuthz}`),
          prefixRouteYaml('merged', { backend: 'own-http' }),
          gwPolicyYaml('merged', 'merged', 'backend', `extAuth: ${grpcAuthz}`),
          // Transformation: the route's runs first on the request, the backend's first on the response.
          guardedBackend(
            'shaped',
            upstreamPort,
            `{transformation: {request: {set: [{name: x-order, value: '"backend"'}, {name: x-backend, value: '"yes"'}], remove: [x-drop], body: '{"added": "by-backend", "was": string(request.body)}'}, response: {set: [{name: x-response-order, value: '"backend"'}, {name: x-backend-response, value: '"yes"'}, {name: x-upstream-said, value: 'response.headers["x-answer"]'}], remove: [x-answer]}}}`,
          ),
          prefixRouteYaml('shaped', { backend: 'shaped' }),
          trafficPolicyYaml(
            'shaped',
            'shaped',
            `transformation:
  request: {set: [{name: x-order, value: '"route"'}, {name: x-route, value: '"yes"'}]}
  response: {set: [{name: x-response-order, value: '"route"'}, {name: x-route-response, value: '"yes"'}]}`,
          ),
        ].join(''),
      }),
      (_req, res) => {
        res.setHeader('x-answer', 'from-upstream');
        res.end('upstream ok');
      },
    );
    ({ gw, upstream, base } = g);
  });

  after(async () => {
    await g.stop();
    await httpAuth.close();
    await second.close();
    await grpcAuth.close();
  });

  it('an HTTP authorization server on the GwBackend allows and denies; what it allows carries its headers', async () => {
    const allowed = await send('/http/a', { headers: { authorization: 'Bearer good' } });
    assert.equal(allowed.status, 200);
    assert.equal(seen('/http/a').at(-1)?.headers['x-http-user'], 'bob');
    const denied = await send('/http/b', { headers: { authorization: 'Bearer bad' } });
    assert.equal(denied.status, 403);
    assert.match(denied.body, /http says no/);
    assert.equal(seen('/http/b').length, 0, 'a denied request never reaches the backend');
  });

  it('a gRPC ext_authz server on the GwBackend allows and denies', async () => {
    const allowed = await send('/grpc/a', { headers: { 'x-user': 'alice' } });
    assert.equal(allowed.status, 200);
    assert.equal(seen('/grpc/a').at(-1)?.headers['x-grpc-user'], 'alice');
    const denied = await send('/grpc/b', { headers: { 'x-user': 'mallory' } });
    assert.equal(denied.status, 401);
    assert.match(denied.body, /grpc says no/);
    assert.equal(seen('/grpc/b').length, 0);
  });

  it('a GwPolicy on the GwBackend applies to it; another backend of the same upstream is not checked', async () => {
    assert.equal((await send('/on-backend/x', { headers: { 'x-user': 'mallory' } })).status, 401);
    assert.equal((await send('/on-backend/y', { headers: { 'x-user': 'alice' } })).status, 200);
    const before = grpcAuth.checks.length + httpAuth.seen.length;
    assert.equal((await send('/open/z', { headers: { 'x-user': 'mallory' } })).status, 200);
    assert.equal(grpcAuth.checks.length + httpAuth.seen.length, before, 'a backend without extAuth asks no one');
  });

  it('a weighted pair decides per backend chosen: only requests routed to the guarded one are checked', async () => {
    const before = grpcChecksFor('/pair').length;
    let denied = 0;
    let served = 0;
    for (let i = 0; i < 40; i++) {
      const status = (await send(`/pair/${i}`, { headers: { 'x-user': 'mallory' } })).status;
      if (status === 401) denied++;
      else if (status === 200) served++;
    }
    assert.ok(denied > 0 && served > 0, `both backends chosen (${denied} denied, ${served} served)`);
    assert.equal(denied + served, 40);
    assert.equal(grpcChecksFor('/pair').length - before, denied, 'one check per request sent to the guarded backend');
    assert.equal(seen('/pair/').length, served);
  });

  it("a GwPolicy on one port of a Service (sectionName) checks that port's requests only", async () => {
    assert.equal((await send('/port-main/x', { headers: { 'x-user': 'mallory' } })).status, 200);
    assert.equal((await send('/port-other/x', { headers: { 'x-user': 'mallory' } })).status, 401);
    assert.equal(second.seen.length, 0);
    assert.equal((await send('/port-other/y', { headers: { 'x-user': 'alice' } })).status, 200);
    assert.equal(second.seen.at(-1)?.headers['x-grpc-user'], 'alice');
    assert.equal(grpcChecksFor('/port-main').length, 0);
  });

  it('a route-level backend policy applies to the backend it routes to', async () => {
    assert.equal((await send('/route-level/x', { headers: { 'x-user': 'mallory' } })).status, 401);
    assert.equal((await send('/route-level/y', { headers: { 'x-user': 'alice' } })).status, 200);
    assert.equal(grpcChecksFor('/route-level').length, 2);
  });

  it("the backend's own extAuth wins over the route's (most specific per field)", async () => {
    const allowed = await send('/merged/x', { headers: { authorization: 'Bearer good', 'x-user': 'mallory' } });
    assert.equal(allowed.status, 200, 'the HTTP server of the backend decides, not the route-level gRPC one');
    assert.equal(grpcChecksFor('/merged').length, 0);
    assert.equal(httpChecksFor('/merged').length, 1);
    assert.equal((await send('/merged/y', { headers: { 'x-user': 'alice' } })).status, 403);
  });

  it("transforms the request after the route's transformation, and the response before it", async () => {
    const response = await send('/shaped/t', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-drop': 'secret' },
      body: JSON.stringify({ prompt: 'hi' }),
    });
    assert.equal(response.status, 200);
    const request = seen('/shaped/t').at(-1)!;
    assert.equal(request.headers['x-order'], 'backend', "the backend's transformation runs after the route's");
    assert.equal(request.headers['x-route'], 'yes');
    assert.equal(request.headers['x-backend'], 'yes');
    assert.equal(request.headers['x-drop'], undefined);
    assert.deepEqual(JSON.parse(request.text), { added: 'by-backend', was: '{"prompt":"hi"}' });
    assert.equal(request.headers['content-length'], String(request.body.length));
    assert.equal(response.headers['x-response-order'], 'route', "the route's response phase runs after the backend's");
    assert.equal(response.headers['x-route-response'], 'yes');
    assert.equal(response.headers['x-backend-response'], 'yes');
    assert.equal(response.headers['x-upstream-said'], 'from-upstream');
    assert.equal(response.headers['x-answer'], undefined);
  });

  it('fails closed (403, the reason in the access log) or open as the traffic extAuth does', async () => {
    const closed = await send('/closed/x');
    assert.equal(closed.status, 403);
    assert.equal(seen('/closed/x').length, 0);
    const line = await lastAccessLogLine(gw, '/closed/x');
    assert.match(String(line.error), /extAuth/);
    assert.equal((await send('/fail-open/x')).status, 200);
    assert.equal(seen('/fail-open/x').length, 1);
  });
});

describe('backend transformation and extAuth on an ai backend, through the openai SDK', () => {
  let provider: MockServer;
  let httpAuth: RecordingUpstream;
  let gw: TestGateway;
  let client: (path: string, key?: string) => OpenAI;

  before(async () => {
    provider = await startOpenAiMock({ apiKey: 'sk-upstream' });
    httpAuth = await startRecordingUpstream((req, res) => {
      res.writeHead(req.headers['x-team'] === 'blue' ? 200 : 403);
      res.end();
    });
    const port = await freePort();
    const aiBackend = (name: string, policies: string) => `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: ${name}}
spec:
  ai: {provider: {host: 127.0.0.1, port: ${provider.port}, alpha: {}}}
  policies: {auth: {key: sk-upstream}, ${policies}}
---
`;
    gw = await startTestGateway({
      'gw.yaml': `${gatewayYaml(port)}${aiBackend(
        'shaped',
        `transformation: {request: {set: [{name: x-tenant, value: '"acme"'}], body: '{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hello"}], "user": "gw-" + request.headers["x-team"]}'}, response: {set: [{name: x-shaped, value: '"yes"'}]}}`,
      )}${aiBackend('guarded', `extAuth: {url: "http://127.0.0.1:${httpAuth.port}", http: {allowedRequestHeaders: [x-team]}}`)}apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: llm}
spec:
  parentRefs: [{name: ai}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /shaped}}]
      filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: shaped}]
    - matches: [{path: {type: PathPrefix, value: /guarded}}]
      filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: guarded}]
---
`,
    });
    client = (path, key = 'client') =>
      new OpenAI({ apiKey: key, baseURL: `http://127.0.0.1:${port}${path}/v1`, maxRetries: 0 });
  });

  after(async () => {
    await gw.stop();
    await provider.close();
    await httpAuth.close();
  });

  const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hello' }] };

  it("the provider gets the backend transformation's header and body field; the client its response header", async () => {
    const { data, response } = await client('/shaped')
      .chat.completions.create(CHAT, { headers: { 'x-team': 'red' } })
      .withResponse();
    assert.ok(data.choices[0]?.message.content);
    assert.equal(response.headers.get('x-shaped'), 'yes');
    const sent = provider.requests.at(-1)!;
    assert.equal(sent.headers['x-tenant'], 'acme');
    assert.equal((sent.body as { user?: string }).user, 'gw-red');
    assert.deepEqual((sent.body as { messages: unknown }).messages, CHAT.messages);
  });

  it('a backend extAuth refusal reaches the SDK as its PermissionDeniedError, and the provider is not called', async () => {
    const before = provider.requests.length;
    await assert.rejects(
      client('/guarded').chat.completions.create(CHAT, { headers: { 'x-team': 'red' } }),
      (error: unknown) => error instanceof OpenAI.PermissionDeniedError,
    );
    assert.equal(provider.requests.length, before);
    const allowed = await client('/guarded').chat.completions.create(CHAT, { headers: { 'x-team': 'blue' } });
    assert.ok(allowed.choices[0]?.message.content);
    assert.equal(provider.requests.length, before + 1);
  });
});

describe('backend extAuth and transformation on an mcp backend and on the way to GwModels', () => {
  let tools: TestMcpServer;
  let provider: MockServer;
  let httpAuth: RecordingUpstream;
  let gw: TestGateway;
  let port: number;

  before(async () => {
    tools = await startStreamableServer(echoTools('one'));
    provider = await startOpenAiMock({ apiKey: 'sk-upstream' });
    // Allows the blue team only.
    httpAuth = await startRecordingUpstream((req, res) => {
      res.writeHead(req.headers['x-team'] === 'blue' ? 200 : 403);
      res.end();
    });
    port = await freePort();
    const authz = `{url: "http://127.0.0.1:${httpAuth.port}", http: {allowedRequestHeaders: [x-team]}}`;
    gw = await startTestGateway({
      'gw.yaml': [
        gatewayYaml(port),
        mcpYaml([{ name: 'one', port: tools.port }]),
        '---\n',
        backendTargetPolicy(
          'tools-policies',
          'tools',
          `{extAuth: ${authz}, transformation: {request: {set: [{name: x-via, value: '"gw-backend"'}]}}}`,
        ),
        MODEL_ROUTE_YAML,
        gwModelYaml(
          'chat',
          `  provider: Alpha
  baseURL: http://127.0.0.1:${provider.port}/v1
  policies: {auth: {key: sk-upstream}}
`,
        ),
        gwPolicyYaml(
          'models-way',
          'models',
          'backend',
          `extAuth: ${authz}\ntransformation: {request: {set: [{name: x-via, value: '"gw-models"'}]}}`,
        ),
      ].join(''),
    });
  });

  after(async () => {
    await gw.stop();
    await tools.close();
    await provider.close();
    await httpAuth.close();
  });

  it('an mcp backend: a client the authorization server refuses cannot connect; an allowed one calls tools, the target sees the header', async () => {
    const url = new URL(`http://127.0.0.1:${port}/mcp`);
    const refused = await rawPost(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }), {
      'x-team': 'red',
    });
    assert.equal(refused.status, 403);
    const seenBefore = tools.seen.length;
    assert.equal(seenBefore, 0, 'the refused client reached no target');
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { 'x-team': 'blue' } } }));
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    assert.equal(firstText(result), 'one: hi');
    await client.close();
    const calls = tools.seen.slice(seenBefore).filter((seen) => seen.rpcMethod === 'tools/call');
    assert.equal(calls.length, 1);
    assert.equal(calls[0]!.headers['x-via'], 'gw-backend', "the backend's transformation reaches the target");
  });

  it("GwModels: the way's extAuth and transformation apply (a GwModel's own policies set neither)", async () => {
    const client = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    const CHAT = { model: 'chat', messages: [{ role: 'user' as const, content: 'hello' }] };
    const before = provider.requests.length;
    await assert.rejects(
      client.chat.completions.create(CHAT, { headers: { 'x-team': 'red' } }),
      (error: unknown) => error instanceof OpenAI.PermissionDeniedError,
    );
    assert.equal(provider.requests.length, before);
    const answer = await client.chat.completions.create(CHAT, { headers: { 'x-team': 'blue' } });
    assert.ok(answer.choices[0]?.message.content);
    assert.equal(provider.requests.at(-1)?.headers['x-via'], 'gw-models');
  });
});
