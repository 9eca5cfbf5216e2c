// Backend tunnels (BackendTunnel, decision 0039) through gw with real traffic: a CONNECT proxy
// written here (test/support/connect-proxy.ts) counts the tunnels it opened and the authority each
// CONNECT named. Through it: a plain HTTP backend (its keep-alive connection reused: one CONNECT
// for several requests), an HTTPS backend (its TLS inside the tunnel), HTTP/2 upstreams (h2c and
// h2 by ALPN), an LLM provider with the OpenAI SDK, a Realtime session (WebSocket), a GwModel's own tunnel, an MCP target with the
// MCP SDK, a webhook guard service, an OAuth token endpoint; a proxy reached over https (url, and a GwBackend with tls:
// TLS in TLS), a proxy named by a Service or a GwBackend whose auth gives Proxy-Authorization.
// A proxy that wants credentials (407), refuses (403), cannot be reached, never answers or answers
// with an oversized head is a connection gw could not make: 503, the log says what the proxy did,
// the client is told nothing about the proxy.
import assert from 'node:assert/strict';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import {
  createServer as createH2cServer,
  createSecureServer,
  type Http2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
} from 'node:http2';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { failureOf } from '../../helpers/failure-of.ts';
import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  lastAccessLogLine,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { testCaConfigMapYaml, tlsFixture } from '../../helpers/https-get.ts';
import { gwModelYaml, MODEL_ROUTE_YAML } from '../../helpers/objects.ts';
import { prefixRouteYaml, staticBackendYaml } from '../../helpers/policy-yaml.ts';
import { type ConnectProxy, startConnectProxy } from '../../support/connect-proxy.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';
import { type RealtimeMock, startRealtimeMock, WebSocket } from '../../support/providers/realtime-mock.ts';
import { startWebhookGuardServer, type WebhookGuardServer } from '../../support/webhook-guard/server.ts';
import { trustTestCa } from '../backend-auth/entra-stand-ins.ts';
import { type AuthorizationServer, startAuthorizationServer } from '../backend-auth/oauth-server.ts';
import { echoTools, mcpYaml, startStreamableServer, streamableClient, type TestMcpServer } from '../mcp/helpers.ts';

const CERT = { key: tlsFixture('backend.key'), cert: tlsFixture('backend.crt') };
const PROXY_CREDENTIAL = 'dXNlcjpzZWNyZXQ='; // user:secret
const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hello' }] };

/** Answers every request with what it saw: path, Host, HTTP version, whether it came over TLS. */
function describeRequest(req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse): void {
  req.resume();
  res.setHeader('content-type', 'application/json');
  res.end(
    JSON.stringify({
      path: req.url,
      host: req.headers.host ?? req.headers[':authority'],
      version: req.httpVersion,
      tls: 'encrypted' in req.socket && req.socket.encrypted === true,
    }),
  );
}

async function listening<S extends Server | Http2Server>(server: S): Promise<S & { port: number }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(server, { port: (server.address() as AddressInfo).port });
}

/** A web backend `name` at /`name` through `policies`. */
function web(name: string, port: number, policies: string): string {
  return staticBackendYaml(name, port, policies) + prefixRouteYaml(name, { backend: name });
}

async function get(port: number, path: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: response.status, body: await response.text() };
}

describe('backend tunnels through an HTTP CONNECT proxy', () => {
  let proxy: ConnectProxy;
  let secureProxy: ConnectProxy;
  let authProxy: ConnectProxy;
  let refusingProxy: ConnectProxy;
  let silentProxy: ConnectProxy;
  let chattyProxy: ConnectProxy;
  let plain: Server & { port: number };
  /** Another plain backend, reached only through the Service-named proxy. */
  let other: Server & { port: number };
  let secure: Server & { port: number };
  let h2c: Http2Server & { port: number };
  let h2: Http2Server & { port: number };
  let openai: MockServer;
  let realtime: RealtimeMock;
  let mcp: TestMcpServer;
  let webhook: WebhookGuardServer;
  let tokenEndpoint: AuthorizationServer;
  let gw: TestGateway;
  let port: number;
  let untrust: () => void;
  const openaiAt = (backend: string) =>
    new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/${backend}/v1`, maxRetries: 0 });

  before(async () => {
    // The https:// url form trusts the system's CAs: this process's include the test CA.
    untrust = trustTestCa();
    [proxy, secureProxy, authProxy, refusingProxy, silentProxy, chattyProxy] = await Promise.all([
      startConnectProxy(),
      startConnectProxy({ tls: CERT }),
      startConnectProxy({ requireAuthorization: `Basic ${PROXY_CREDENTIAL}` }),
      startConnectProxy({ refuseWith: 403 }),
      startConnectProxy({ silent: true }),
      startConnectProxy({ headBytes: 20_000 }),
    ]);
    plain = await listening(createHttpServer(describeRequest));
    other = await listening(createHttpServer(describeRequest));
    secure = await listening(createHttpsServer(CERT, describeRequest));
    h2c = await listening(createH2cServer(describeRequest));
    h2 = await listening(createSecureServer(CERT, describeRequest));
    openai = await startOpenAiMock({ apiKey: 'sk-openai' });
    realtime = await startRealtimeMock('sk-realtime');
    mcp = await startStreamableServer(echoTools('far'), { stateless: true });
    webhook = await startWebhookGuardServer();
    tokenEndpoint = await startAuthorizationServer([{ id: 'gw', method: 'client_secret_basic', secret: 'gw-secret' }]);
    const nobody = await freePort();
    port = await freePort();
    const via = (target: ConnectProxy | string) => `{url: "${typeof target === 'string' ? target : target.url}"}`;
    const tunnel = (target: ConnectProxy | string) => `tunnel: ${via(target)}`;
    const ca = 'tls: {caCertificateRefs: [{name: test-ca}]}';
    gw = await startTestGateway({
      'gw.yaml': [
        gatewayYaml(port),
        testCaConfigMapYaml(),
        web('plain', plain.port, `{${tunnel(proxy)}}`),
        web('tls-inside', secure.port, `{${ca}, ${tunnel(proxy)}}`),
        web('h2c', h2c.port, `{http: {version: HTTP2}, ${tunnel(proxy)}}`),
        web('h2-alpn', h2.port, `{${ca}, http: {version: HTTP2}, ${tunnel(proxy)}}`),
        web('https-proxy', plain.port, `{${tunnel(secureProxy)}}`),
        web('tls-in-tls', secure.port, `{${ca}, ${tunnel(secureProxy)}}`),
        // backendRef forms: a Service; a GwBackend with the credential; a GwBackend reached over TLS.
        `apiVersion: v1
kind: Service
metadata: {name: egress}
spec: {clusterIP: 127.0.0.1, ports: [{name: proxy, port: ${proxy.port}}]}
---
`,
        web('via-service', other.port, `{tunnel: {backendRef: {name: egress, port: ${proxy.port}}}}`),
        staticBackendYaml(
          'authed-egress',
          authProxy.port,
          `{auth: {key: ${PROXY_CREDENTIAL}, location: {header: {name: Proxy-Authorization, prefix: "Basic "}}}}`,
        ),
        web('via-authed', plain.port, '{tunnel: {backendRef: {group: gw.dev, kind: GwBackend, name: authed-egress}}}'),
        staticBackendYaml('secure-egress', secureProxy.port, `{${ca}}`),
        web(
          'via-secure',
          secure.port,
          `{${ca}, tunnel: {backendRef: {group: gw.dev, kind: GwBackend, name: secure-egress}}}`,
        ),
        // A backend whose credential comes from a token endpoint behind the proxy.
        `apiVersion: v1
kind: Secret
metadata: {name: oauth-client}
stringData: {clientSecret: gw-secret}
---
`,
        staticBackendYaml('token-endpoint', tokenEndpoint.port, `{${tunnel(proxy)}}`),
        web(
          'exchanging',
          plain.port,
          '{auth: {oauthTokenExchange: {backendRef: {group: gw.dev, kind: GwBackend, name: token-endpoint}, path: /token, clientAuth: {clientId: gw, secretRef: {name: oauth-client}}}}}',
        ),
        // Proxies that do not open the tunnel.
        web('no-credential', plain.port, `{${tunnel(authProxy)}}`),
        web('refused', plain.port, `{${tunnel(refusingProxy)}}`),
        web('unreachable', plain.port, `{${tunnel(`http://127.0.0.1:${nobody}`)}}`),
        web('silent', plain.port, `{tcp: {connectTimeout: 300ms}, ${tunnel(silentProxy)}}`),
        web('chatty', plain.port, `{${tunnel(chattyProxy)}}`),
        // An LLM provider, and its webhook guard, each through the proxy.
        aiBackendYaml('llm', openai.port, 'alpha: {}', 'sk-openai', undefined).replace(
          '    auth: {key: sk-openai}',
          `    auth: {key: sk-openai}\n    ${tunnel(proxy)}`,
        ),
        aiBackendYaml('llm-refused', openai.port, 'alpha: {}', 'sk-openai', undefined).replace(
          '    auth: {key: sk-openai}',
          `    auth: {key: sk-openai}\n    ${tunnel(refusingProxy)}`,
        ),
        staticBackendYaml('webhook', webhook.port, `{${tunnel(proxy)}}`),
        aiBackendYaml(
          'guarded',
          openai.port,
          'alpha: {}',
          'sk-openai',
          '{/v1/chat/completions: Completions}',
          'promptGuard: {request: [{webhook: {backendRef: {group: gw.dev, kind: GwBackend, name: webhook}}}]}',
        ),
        aiBackendYaml('realtime', realtime.port, 'alpha: {}', 'sk-realtime', '{/v1/realtime: Realtime}').replace(
          '    auth: {key: sk-realtime}',
          `    auth: {key: sk-realtime}\n    ${tunnel(proxy)}`,
        ),
        llmRouteYaml(['llm', 'llm-refused', 'guarded', 'realtime']),
        '---\n',
        MODEL_ROUTE_YAML,
        gwModelYaml(
          'tunnelled-model',
          `  provider: Alpha\n  baseURL: http://127.0.0.1:${openai.port}/v1\n  policies: {auth: {key: sk-openai}, ${tunnel(secureProxy)}}`,
        ),
        mcpYaml([{ name: 'far', port: mcp.port, path: '/mcp', policies: `{${tunnel(proxy)}}` }]),
      ].join(''),
    });
  });

  after(async () => {
    untrust?.();
    await gw?.stop();
    await Promise.all(
      [proxy, secureProxy, authProxy, refusingProxy, silentProxy, chattyProxy].map((each) => each?.close()),
    );
    for (const server of [plain, other, secure, h2c, h2]) server?.close();
    await openai?.close();
    await realtime?.close();
    await mcp?.close();
    await webhook?.close();
    await tokenEndpoint?.close();
  });

  it('a plain HTTP backend: one CONNECT naming its host:port, its keep-alive connection reused', async () => {
    const authority = `127.0.0.1:${plain.port}`;
    for (const path of ['/plain/a', '/plain/b', '/plain/c']) {
      const answer = await get(port, path);
      assert.equal(answer.status, 200, answer.body);
      assert.deepEqual(JSON.parse(answer.body), { path, host: `127.0.0.1:${port}`, version: '1.1', tls: false });
    }
    assert.equal(proxy.servedTo(authority), 1, 'one tunnel, pooled');
    const seen = proxy.connects.find((each) => each.authority === authority)!;
    assert.equal(seen.host, authority, 'Host names the destination too');
    assert.equal(seen.headers['proxy-authorization'], undefined);
  });

  it('an HTTPS backend: its TLS inside the tunnel', async () => {
    const answer = await get(port, '/tls-inside/x');
    assert.equal(answer.status, 200, answer.body);
    assert.equal(JSON.parse(answer.body).tls, true);
    assert.equal(proxy.servedTo(`127.0.0.1:${secure.port}`), 1);
  });

  it('HTTP/2 upstreams through the tunnel: h2c and h2 by ALPN', async () => {
    for (const [path, server] of [
      ['/h2c/x', h2c],
      ['/h2-alpn/x', h2],
    ] as const) {
      const answer = await get(port, path);
      assert.equal(answer.status, 200, answer.body);
      assert.equal(JSON.parse(answer.body).version, '2.0', path);
      assert.equal(proxy.servedTo(`127.0.0.1:${server.port}`), 1, path);
    }
  });

  it('a proxy reached over https (url): the backend plain, then its TLS in the proxy’s TLS', async () => {
    const through = await get(port, '/https-proxy/x');
    assert.equal(through.status, 200, through.body);
    assert.equal(secureProxy.servedTo(`127.0.0.1:${plain.port}`), 1);
    const nested = await get(port, '/tls-in-tls/x');
    assert.equal(nested.status, 200, nested.body);
    assert.equal(JSON.parse(nested.body).tls, true);
    assert.equal(secureProxy.servedTo(`127.0.0.1:${secure.port}`), 1);
  });

  it('backendRef: a Service, a GwBackend whose auth is the Proxy-Authorization, a GwBackend with tls', async () => {
    const viaService = await get(port, '/via-service/x');
    assert.equal(viaService.status, 200, viaService.body);
    assert.equal(proxy.servedTo(`127.0.0.1:${other.port}`), 1);
    const authed = await get(port, '/via-authed/x');
    assert.equal(authed.status, 200, authed.body);
    assert.equal(authProxy.connects.at(-1)?.headers['proxy-authorization'], `Basic ${PROXY_CREDENTIAL}`);
    assert.equal(authProxy.servedTo(`127.0.0.1:${plain.port}`), 1);
    const tls = await get(port, '/via-secure/x');
    assert.equal(tls.status, 200, tls.body);
    assert.equal(JSON.parse(tls.body).tls, true);
  });

  it('the OpenAI SDK to an LLM provider behind the proxy, and a GwModel’s own tunnel', async () => {
    const served = openai.requests.length;
    const completion = await openaiAt('llm').chat.completions.create(CHAT);
    assert.ok(completion.choices[0]?.message.content);
    const model = await new OpenAI({
      apiKey: 'client',
      baseURL: `http://127.0.0.1:${port}/v1`,
      maxRetries: 0,
    }).chat.completions.create({ ...CHAT, model: 'tunnelled-model' });
    assert.ok(model.choices[0]?.message.content);
    assert.equal(openai.requests.length, served + 2);
    assert.equal(proxy.servedTo(`127.0.0.1:${openai.port}`), 1, 'the GwBackend’s tunnel');
    assert.equal(secureProxy.servedTo(`127.0.0.1:${openai.port}`), 1, 'the GwModel’s own tunnel');
    await openaiAt('llm').chat.completions.create(CHAT);
    assert.equal(proxy.servedTo(`127.0.0.1:${openai.port}`), 1, 'the first tunnel, pooled');
  });

  it('a Realtime session (WebSocket) through the proxy', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/realtime/v1/realtime?model=gpt-realtime`);
    try {
      const first = await new Promise<{ type: string }>((resolve, reject) => {
        ws.once('message', (data) => resolve(JSON.parse(String(data))));
        ws.once('error', reject);
      });
      assert.equal(first.type, 'session.created');
      assert.equal(realtime.handshakes.at(-1)?.headers.authorization, 'Bearer sk-realtime');
      assert.equal(proxy.servedTo(`127.0.0.1:${realtime.port}`), 1);
    } finally {
      ws.close();
    }
  });

  it('an MCP target through the proxy, with the MCP SDK', async () => {
    const { client } = await streamableClient(new URL(`http://127.0.0.1:${port}/mcp`));
    try {
      const result = await client.callTool({ name: 'echo', arguments: { text: 'through' } });
      assert.match(JSON.stringify(result), /far: through/);
    } finally {
      await client.close();
    }
    assert.ok(proxy.servedTo(`127.0.0.1:${mcp.port}`) >= 1);
  });

  it('a webhook guard service through the proxy', async () => {
    const calls = webhook.calls.length;
    const completion = await openaiAt('guarded').chat.completions.create(CHAT);
    assert.ok(completion.choices[0]?.message.content);
    assert.equal(webhook.calls.length, calls + 1);
    assert.equal(proxy.servedTo(`127.0.0.1:${webhook.port}`), 1);
  });

  it('an OAuth token endpoint named by a GwBackend with a tunnel: the exchange goes through the proxy', async () => {
    const response = await fetch(`http://127.0.0.1:${port}/exchanging/x`, {
      headers: { authorization: 'Bearer alice-token' },
    });
    assert.equal(response.status, 200, await response.text());
    assert.equal(tokenEndpoint.requests.at(-1)?.form.get('subject_token'), 'alice-token');
    assert.equal(proxy.servedTo(`127.0.0.1:${tokenEndpoint.port}`), 1);
  });

  it('a proxy that wants credentials, refuses, or cannot be reached: 503, the proxy named only in the log', async () => {
    for (const [path, logged] of [
      ['/no-credential/x', /refused CONNECT 127\.0\.0\.1:\d+ with 407/],
      ['/refused/x', /refused CONNECT 127\.0\.0\.1:\d+ with 403/],
      ['/unreachable/x', /could not be reached: connect ECONNREFUSED/],
      ['/chatty/x', /answered CONNECT with a head over 16384 bytes/],
    ] as const) {
      const answer = await get(port, path);
      assert.equal(answer.status, 503, `${path}: ${answer.body}`);
      assert.equal(answer.body.trim(), 'upstream connect failure', path);
      const line = await lastAccessLogLine(gw, path);
      assert.match(String(line.error), logged, path);
    }
  });

  it('the connect deadline covers the CONNECT exchange: a proxy that never answers gives 503 in time', async () => {
    const started = performance.now();
    const answer = await get(port, '/silent/x');
    assert.equal(answer.status, 503, answer.body);
    assert.ok(performance.now() - started < 3000, 'within the 300ms connect timeout, not a default');
    assert.equal(silentProxy.connects.length, 1);
  });

  it('an LLM provider behind a refusing proxy: 503 in the OpenAI error format', async () => {
    const error = await failureOf(openaiAt('llm-refused').chat.completions.create(CHAT));
    assert.ok(error instanceof OpenAI.APIError);
    assert.equal(error.status, 503);
    assert.doesNotMatch(JSON.stringify(error.error), /127\.0\.0\.1|403|proxy/i);
    const line = await lastAccessLogLine(gw, '/llm-refused/v1/chat/completions');
    assert.match(String(line.error), /refused CONNECT 127\.0\.0\.1:\d+ with 403/);
  });
});
