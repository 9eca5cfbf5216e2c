// traffic.extAuth end to end: gw in-process in front of a recording upstream, checking requests
// with a real Envoy ext_authz gRPC server (@grpc/grpc-js on gw's own protos) and a real HTTP
// authorization server (also reached through a CONNECT proxy, its GwBackend's tunnel). Every
// scenario has its own HTTPRoute (path prefix) and GwPolicy, so one configuration serves them all.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type * as grpc from '@grpc/grpc-js';
import { compileExpression, ExpressionError } from '../../../src/dataplane/cel/expression.ts';
import { PolicyExchange } from '../../../src/dataplane/policies/exchange.ts';
import { compileExtAuth } from '../../../src/dataplane/policies/ext-authz/ext-authz.ts';
import {
  AUTHORIZATION_SERVICE,
  type CheckResponse,
  EXT_AUTHZ_PROTO,
} from '../../../src/dataplane/policies/ext-authz/grpc-mode.ts';
import { serviceConstructor } from '../../../src/dataplane/policies/grpc/client.ts';
import { isProblem } from '../../../src/dataplane/policies/types.ts';
import { forwardedRequestHeaders } from '../../../src/dataplane/proxy/headers.ts';
import { RequestRecord } from '../../../src/dataplane/telemetry/request-record.ts';
import { gatewayYaml, refusedPort, type TestGateway } from '../../helpers/gateway.ts';
import { type GrpcTestServer, startGrpcServer } from '../../helpers/grpc-server.ts';
import { httpRequest, type RequestOptions } from '../../helpers/http-request.ts';
import { closeServer, listen } from '../../helpers/http-server.ts';
import { compileContext } from '../../helpers/policy-context.ts';
import { indentYaml, prefixRouteYaml, staticBackendYaml, trafficPolicyYaml } from '../../helpers/policy-yaml.ts';
import { type Answer, type RecordingUpstream, startRecordingUpstream } from '../../helpers/recording-upstream.ts';
import { until } from '../../helpers/until.ts';
import { startUpstreamGateway, type UpstreamGateway } from '../../helpers/upstream-gateway.ts';
import { type ConnectProxy, startConnectProxy } from '../../support/connect-proxy.ts';

// ---------------------------------------------------------------------------------------------
// The gRPC authorization server: decides by the x-user request header.

// biome-ignore lint/suspicious/noExplicitAny: CheckRequest as proto-loader decodes it
type CheckRequest = any;

function grpcDecision(check: CheckRequest): CheckResponse | 'slow' {
  const user = check.attributes.request.http.headers['x-user'];
  if (user === 'slow') return 'slow';
  if (user === 'alice' || user === 'bob')
    return {
      status: { code: 0 },
      ok_response: {
        headers: [
          { header: { key: 'x-auth-user', value: user } },
          { header: { key: 'x-tag', value: 'added' }, append: { value: true } },
          { header: { key: 'x-keep', raw_value: Buffer.from('from-server') }, append_action: 'ADD_IF_ABSENT' },
          { header: { key: ':path', value: '/hijacked' } },
        ],
        headers_to_remove: ['x-secret'],
        query_parameters_to_set: [{ key: 'tenant', value: 't1' }],
        query_parameters_to_remove: ['drop'],
        response_headers_to_add: [{ header: { key: 'x-authz', value: 'checked' } }],
      },
      dynamic_metadata: {
        fields: { user: { stringValue: user }, ttl: { stringValue: '1s' }, level: { numberValue: 3 } },
      },
    } as CheckResponse;
  if (user === 'mallory')
    return {
      status: { code: 7 },
      denied_response: {
        status: { code: 'Unauthorized' },
        headers: [{ header: { key: 'www-authenticate', value: 'Bearer realm="gw"' } }],
        body: 'go away',
      },
    } as unknown as CheckResponse;
  return { status: { code: 7 } };
}

async function startGrpcAuthServer(): Promise<GrpcTestServer & { checks: CheckRequest[] }> {
  const checks: CheckRequest[] = [];
  const server = await startGrpcServer(serviceConstructor(EXT_AUTHZ_PROTO, AUTHORIZATION_SERVICE).service, {
    Check: (call: grpc.ServerUnaryCall<CheckRequest, CheckResponse>, callback: grpc.sendUnaryData<CheckResponse>) => {
      checks.push(call.request);
      const decision = grpcDecision(call.request);
      if (decision === 'slow') setTimeout(() => callback(null, { status: { code: 0 } }), 2000);
      else callback(null, decision);
    },
  });
  return { ...server, checks };
}

// ---------------------------------------------------------------------------------------------
// The HTTP authorization server: decides by the Authorization header.

const httpDecision: Answer = (req, res) => {
  const token = req.headers.authorization;
  if (token === 'Bearer good') {
    res.writeHead(200, { 'content-type': 'application/json', 'x-auth-user': 'alice', 'x-other': 'no' });
    res.end(JSON.stringify({ user: 'alice', tier: 3 }));
  } else if (token === 'Bearer bad') {
    res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer error="invalid_token"' });
    res.end('bad token');
  } else if (token === 'Bearer error') {
    res.writeHead(500);
    res.end('oops');
  } else if (token === 'Bearer slow') {
    setTimeout(() => res.end('late'), 2000);
  } else if (token === 'Bearer huge') {
    res.writeHead(200);
    res.end(Buffer.alloc(2 * 1024 * 1024, 'a'));
  } else {
    res.writeHead(403);
    res.end('forbidden by auth');
  }
};

// ---------------------------------------------------------------------------------------------
// Configuration: one HTTPRoute and GwPolicy per scenario.

/** HTTPRoute `name` serving /<name> from GwBackend web, with a GwPolicy whose traffic.extAuth is `extAuth` (YAML). */
function scenario(name: string, extAuth: string): string {
  return prefixRouteYaml(name) + trafficPolicyYaml(name, name, `extAuth:\n${indentYaml(extAuth, 2)}`);
}

describe('traffic.extAuth', () => {
  let g: UpstreamGateway;
  let upstream: RecordingUpstream;
  let grpcAuth: Awaited<ReturnType<typeof startGrpcAuthServer>>;
  let httpAuth: RecordingUpstream;
  let proxy: ConnectProxy;
  let gw: TestGateway;
  let base: string;
  let closedPort: number;

  const send = (path: string, options: RequestOptions = {}) => httpRequest(`${base}${path}`, options);
  const grpcChecksFor = (prefix: string) =>
    grpcAuth.checks.filter((check) => check.attributes.request.http.path.startsWith(prefix));
  const httpChecksFor = (prefix: string) => httpAuth.seen.filter((entry) => entry.url.includes(prefix));

  before(async () => {
    grpcAuth = await startGrpcAuthServer();
    httpAuth = await startRecordingUpstream(httpDecision);
    proxy = await startConnectProxy();
    closedPort = await refusedPort();
    const grpcUrl = `url: http://127.0.0.1:${grpcAuth.port}`;
    const httpUrl = `url: http://127.0.0.1:${httpAuth.port}/base`;
    const closedUrl = `url: http://127.0.0.1:${closedPort}`;
    const slow = '{http: {requestTimeout: 300ms}}';
    g = await startUpstreamGateway(
      ({ port, upstreamPort }) => ({
        'gw.yaml': `${gatewayYaml(port)}${staticBackendYaml('web', upstreamPort)}${staticBackendYaml('slow-grpc', grpcAuth.port, slow)}${staticBackendYaml('slow-http', httpAuth.port, slow)}${staticBackendYaml('tunnelled-http', httpAuth.port, `{tunnel: {url: "${proxy.url}"}}`)}${[
          scenario('g-allow', `${grpcUrl}\ngrpc: {contextExtensions: {team: a}}`),
          scenario(
            'g-meta',
            `${grpcUrl}\ngrpc: {requestMetadata: {gw: '{"path": request.path, "n": 2}', bad: 'request.nothing'}}`,
          ),
          scenario('g-closed', closedUrl),
          scenario('g-open', `${closedUrl}\nfailureMode: FailOpen`),
          scenario('g-timeout', 'backendRef: {group: gw.dev, kind: GwBackend, name: slow-grpc}'),
          scenario('g-body', `${grpcUrl}\nforwardBody: {maxSize: 16}`),
          scenario(
            'g-cache',
            `${grpcUrl}\ncache: {key: ['request.headers["x-user"]'], ttl: 'has(extauthz.ttl) ? duration(extauthz.ttl) : duration("1m")'}`,
          ),
          scenario('g-fixed-ttl', `${grpcUrl}\ncache: {key: ['request.headers["x-user"]'], ttl: 1m}`),
          scenario(
            'g-cond',
            `conditional:
  - condition: 'request.headers["x-mode"] == "open"'
    policy: {${closedUrl}, failureMode: FailOpen}
  - condition: 'request.headers["x-mode"] == "check"'
    policy: {${grpcUrl}}`,
          ),
          scenario(
            'g-fallback',
            `conditional:
  - condition: 'request.headers["x-mode"] == "check"'
    policy: {${grpcUrl}}
  - policy: {${closedUrl}}`,
          ),
          scenario(
            'h-allow',
            `${httpUrl}
http:
  allowedResponseHeaders: [x-auth-user]
  responseMetadata: {user: response.json.user, tier: response.json.tier, code: response.code, missing: response.json.nothing}
cache: {key: [request.headers.authorization], ttl: 'extauthz.user == "alice" && extauthz.tier == 3 ? duration("1m") : duration("0s")'}`,
          ),
          scenario('h-deny', `${httpUrl}\nhttp: {}`),
          scenario('h-redirect', `${httpUrl}\nhttp: {redirect: '"/login?from=" + request.path'}`),
          scenario(
            'h-custom',
            `${httpUrl}
http:
  path: '"/check" + request.path'
  allowedRequestHeaders: [authorization, x-extra]
  addRequestHeaders: {x-original-method: request.method, x-broken: request.nothing}
  body: '{"path": request.path, "n": 1}'`,
          ),
          scenario('h-body', `${httpUrl}\nhttp: {}\nforwardBody: {maxSize: 16}`),
          scenario('h-tunnel', 'backendRef: {group: gw.dev, kind: GwBackend, name: tunnelled-http}\nhttp: {}'),
          scenario('h-timeout', 'backendRef: {group: gw.dev, kind: GwBackend, name: slow-http}\nhttp: {}'),
          scenario(
            'h-open',
            'backendRef: {group: gw.dev, kind: GwBackend, name: slow-http}\nhttp: {}\nfailureMode: FailOpen',
          ),
        ].join('')}`,
      }),
      (_req, res) => {
        res.setHeader('x-upstream', 'yes');
        res.end('upstream ok');
      },
    );
    ({ gw, upstream, base } = g);
  });

  after(async () => {
    await g.stop();
    await httpAuth.close();
    await proxy.close();
    await grpcAuth.close();
  });

  describe('gRPC (Envoy ext_authz v3)', () => {
    it('sends Envoy CheckRequest attributes and applies an OK answer to the upstream request and the response', async () => {
      const response = await send('/g-allow/x?drop=1&keep=2', {
        headers: { 'x-user': 'alice', 'x-secret': 's', 'x-tag': 'client', 'x-keep': 'client', cookie: 'a=1' },
      });
      assert.equal(response.status, 200, response.body);
      assert.equal(response.body, 'upstream ok');
      assert.equal(response.headers['x-authz'], 'checked');

      const saw = upstream.latest('/g-allow')!;
      assert.equal(saw.headers['x-auth-user'], 'alice');
      assert.equal(saw.headers['x-secret'], undefined);
      assert.equal(saw.headers['x-tag'], 'client, added');
      assert.equal(saw.headers['x-keep'], 'client');
      const url = new URL(saw.url, 'http://x');
      assert.equal(url.pathname, '/g-allow/x', 'pseudo-headers from the server are ignored');
      assert.deepEqual([...url.searchParams].sort(), [
        ['keep', '2'],
        ['tenant', 't1'],
      ]);

      const check = grpcChecksFor('/g-allow').at(-1)!.attributes;
      const http = check.request.http;
      assert.equal(http.method, 'GET');
      assert.equal(http.path, '/g-allow/x?drop=1&keep=2');
      assert.equal(http.host, base.slice('http://'.length));
      assert.equal(http.scheme, 'http');
      assert.equal(http.protocol, 'HTTP/1.1');
      assert.equal(http.size, -1);
      assert.equal(http.headers['x-user'], 'alice');
      assert.equal(http.headers.cookie, 'a=1');
      assert.equal(http.headers[':path'], '/g-allow/x?drop=1&keep=2');
      assert.equal(http.headers[':method'], 'GET');
      assert.ok(http.id.length > 0);
      assert.deepEqual(check.context_extensions, { team: 'a' });
      assert.deepEqual(check.metadata_context.filter_metadata, {});
      assert.equal(check.source.address.socket_address.address, '127.0.0.1');
      assert.ok(check.source.address.socket_address.port_value > 0);
      assert.equal(check.destination.address.socket_address.port_value, Number(new URL(base).port));
      assert.ok(Math.abs(Number(check.request.time.seconds) * 1000 - Date.now()) < 60_000);
    });

    it('sends requestMetadata as metadata_context, leaving out entries whose expression fails', async () => {
      const response = await send('/g-meta/y', { headers: { 'x-user': 'bob' } });
      assert.equal(response.status, 200, response.body);
      const metadata = grpcChecksFor('/g-meta').at(-1)!.attributes.metadata_context.filter_metadata;
      assert.deepEqual(Object.keys(metadata), ['gw']);
      assert.deepEqual(metadata.gw.fields.path, { stringValue: '/g-meta/y', kind: 'stringValue' });
      assert.equal(metadata.gw.fields.n.numberValue, 2);
    });

    it("answers a denial with the service's status, headers and body, and 403 when it gives none", async () => {
      const denied = await send('/g-allow/x', { headers: { 'x-user': 'mallory' } });
      assert.equal(denied.status, 401);
      assert.equal(denied.headers['www-authenticate'], 'Bearer realm="gw"');
      assert.equal(denied.body, 'go away');
      const bare = await send('/g-allow/x');
      assert.equal(bare.status, 403);
      assert.equal(upstream.seen.filter((entry) => entry.url === '/g-allow/x').length, 0);
    });

    it('fails closed (403) when the service is unreachable, and open when failureMode is FailOpen', async () => {
      const closed = await send('/g-closed/x', { headers: { 'x-user': 'alice' } });
      assert.equal(closed.status, 403);
      assert.equal(closed.body, 'external authorization failed\n');
      const open = await send('/g-open/x', { headers: { 'x-user': 'alice' } });
      assert.equal(open.status, 200);
      assert.equal(upstream.latest('/g-open')?.headers['x-auth-user'], undefined);
    });

    it("gives up after the GwBackend's requestTimeout", async () => {
      const started = Date.now();
      const response = await send('/g-timeout/x', { headers: { 'x-user': 'slow' } });
      assert.equal(response.status, 403);
      assert.ok(Date.now() - started < 1500, `took ${Date.now() - started} ms`);
    });

    it('forwards the body up to forwardBody.maxSize and rejects a larger one with 413', async () => {
      const ok = await send('/g-body/x', { method: 'POST', headers: { 'x-user': 'alice' }, body: 'hello' });
      assert.equal(ok.status, 200, ok.body);
      const http = grpcChecksFor('/g-body').at(-1)!.attributes.request.http;
      assert.equal(http.body, 'hello');
      assert.equal(Number(http.size), 5);
      assert.equal(upstream.latest('/g-body')?.text, 'hello');

      assert.equal(http.raw_body.length, 0, 'a UTF-8 body goes as body only');
      // Bytes that are not UTF-8 arrive replaced in body (a proto string) and as they are in raw_body.
      const binary = Buffer.from([0x68, 0x69, 0xff, 0xfe, 0x00, 0x80]);
      const raw = await send('/g-body/x', { method: 'POST', headers: { 'x-user': 'alice' }, body: binary });
      assert.equal(raw.status, 200, raw.body);
      const rawHttp = grpcChecksFor('/g-body').at(-1)!.attributes.request.http;
      assert.equal(rawHttp.body, binary.toString('utf8'));
      assert.deepEqual(Buffer.from(rawHttp.raw_body), binary);

      const before = grpcChecksFor('/g-body').length;
      const large = await send('/g-body/x', { method: 'POST', headers: { 'x-user': 'alice' }, body: 'x'.repeat(100) });
      assert.equal(large.status, 413);
      assert.equal(grpcChecksFor('/g-body').length, before, 'the service is not asked');
    });

    it('reuses cached decisions by key until their CEL ttl (from extauthz) passes; a failing key bypasses the cache', async () => {
      const calls = () => grpcChecksFor('/g-cache').length;
      for (let i = 0; i < 3; i++) {
        const response = await send('/g-cache/x', { headers: { 'x-user': 'alice', 'x-secret': 's' } });
        assert.equal(response.status, 200);
        assert.equal(response.headers['x-authz'], 'checked');
        assert.equal(upstream.latest('/g-cache')?.headers['x-auth-user'], 'alice', 'cached mutations apply');
        assert.equal(upstream.latest('/g-cache')?.headers['x-secret'], undefined);
      }
      assert.equal(calls(), 1);
      await send('/g-cache/x', { headers: { 'x-user': 'bob' } });
      assert.equal(calls(), 2, 'another key is another entry');
      await send('/g-cache/x', { headers: { 'x-user': 'mallory' } });
      const denied = await send('/g-cache/x', { headers: { 'x-user': 'mallory' } });
      assert.equal(denied.status, 401, 'denials are cached too');
      assert.equal(calls(), 3);
      // No x-user: the key expression fails, so every request goes to the service.
      await send('/g-cache/x');
      await send('/g-cache/x');
      assert.equal(calls(), 5);
      // The allow decisions carried ttl 1s in their dynamic metadata.
      await sleep(1100);
      await send('/g-cache/x', { headers: { 'x-user': 'alice' } });
      assert.equal(calls(), 6);
    });

    it('keeps the cache across a configuration reload that keeps the policy', async () => {
      const calls = () => grpcChecksFor('/g-fixed-ttl').length;
      await send('/g-fixed-ttl/x', { headers: { 'x-user': 'alice' } });
      await send('/g-fixed-ttl/x', { headers: { 'x-user': 'alice' } });
      assert.equal(calls(), 1);
      gw.write('more.yaml', scenario('g-later', `url: http://127.0.0.1:${grpcAuth.port}`).replace(/---\n$/, ''));
      const served = async () => (await send('/g-later/x', { headers: { 'x-user': 'alice' } })).status === 200;
      assert.ok(await until(served, 5000, 20), 'the new configuration is served');
      await send('/g-fixed-ttl/x', { headers: { 'x-user': 'alice' } });
      assert.equal(calls(), 1);
    });

    it('sends verified JWT claims under envoy.filters.http.jwt_authn, and gives later CEL the dynamic metadata as extauthz', async () => {
      const context = compileContext();
      const compiled = compileExtAuth({ url: `http://127.0.0.1:${grpcAuth.port}` }, context);
      assert.ok(!isProblem(compiled) && compiled.request);
      const step = compiled.request;
      const later = compileExpression('extauthz.user == "alice" && extauthz.level == 3');
      assert.ok(!(later instanceof ExpressionError));
      // A server whose handler runs the step as the pipeline would, and answers what CEL sees next.
      const server = createServer(async (req, res) => {
        const record = new RequestRecord();
        record.method = req.method ?? 'GET';
        record.path = '/step';
        record.host = req.headers.host ?? '';
        record.httpVersion = req.httpVersion;
        record.requestHeaders = req.headers;
        record.jwtClaims = { sub: 'u1', groups: ['a', 'b'] };
        const exchange = new PolicyExchange(req, res, record, {
          path: '/step',
          query: '',
          headers: forwardedRequestHeaders(req.headers),
        });
        const answer = await step(exchange);
        res.end(JSON.stringify({ answer: answer ?? null, later: later.evaluate(exchange.cel()) }));
      });
      const port = await listen(server);
      try {
        const response = await httpRequest(`http://127.0.0.1:${port}/step`, { headers: { 'x-user': 'alice' } });
        assert.deepEqual(JSON.parse(response.body), { answer: null, later: true });
        const metadata = grpcChecksFor('/step').at(-1)!.attributes.metadata_context.filter_metadata;
        const payload = metadata['envoy.filters.http.jwt_authn'].fields.jwt_payload.structValue.fields;
        assert.equal(payload.sub.stringValue, 'u1');
        assert.deepEqual(
          payload.groups.listValue.values.map((value: { stringValue: string }) => value.stringValue),
          ['a', 'b'],
        );
      } finally {
        await closeServer(server);
        context.runtime.close();
      }
    });

    it('runs the first conditional entry whose condition holds, and no check when none does', async () => {
      assert.equal((await send('/g-cond/x', { headers: { 'x-mode': 'open' } })).status, 200);
      const checked = await send('/g-cond/x', { headers: { 'x-mode': 'check' } });
      assert.equal(checked.status, 403);
      assert.equal(grpcChecksFor('/g-cond').length, 1);
      assert.equal((await send('/g-cond/x')).status, 200);
      assert.equal(grpcChecksFor('/g-cond').length, 1);

      assert.equal((await send('/g-fallback/x', { headers: { 'x-mode': 'check', 'x-user': 'alice' } })).status, 200);
      assert.equal(
        (await send('/g-fallback/x', { headers: { 'x-user': 'alice' } })).status,
        403,
        'the fallback applies',
      );
    });
  });

  describe('HTTP', () => {
    it('allows on 200: copies allowed response headers, computes responseMetadata into extauthz', async () => {
      const headers = { authorization: 'Bearer good', 'x-extra': 'e' };
      const response = await send('/h-allow/p?q=1', { headers });
      assert.equal(response.status, 200, response.body);
      const saw = upstream.latest('/h-allow')!;
      assert.equal(saw.headers['x-auth-user'], 'alice');
      assert.equal(saw.headers['x-other'], undefined);
      assert.equal(saw.url, '/h-allow/p?q=1');

      const check = httpChecksFor('/h-allow').at(-1)!;
      assert.equal(check.method, 'GET');
      assert.equal(check.url, '/base/h-allow/p?q=1');
      assert.equal(check.headers.authorization, 'Bearer good');
      assert.equal(check.headers['x-extra'], undefined, 'only Authorization by default');
      // The ttl is 1m only when extauthz.user and extauthz.tier came out of the JSON answer.
      await send('/h-allow/p?q=1', { headers });
      assert.equal(httpChecksFor('/h-allow').length, 1);
      assert.equal(upstream.latest('/h-allow')?.headers['x-auth-user'], 'alice');
    });

    it("reaches the server through its GwBackend's CONNECT proxy (tunnel)", async () => {
      const allowed = await send('/h-tunnel/x', { headers: { authorization: 'Bearer good' } });
      assert.equal(allowed.status, 200, allowed.body);
      const denied = await send('/h-tunnel/x');
      assert.equal(denied.status, 403);
      assert.equal(proxy.servedTo(`127.0.0.1:${httpAuth.port}`), 1, 'one tunnel, kept for both checks');
    });

    it("passes any other answer to the client: the server's status, headers and body", async () => {
      const bad = await send('/h-deny/x', { headers: { authorization: 'Bearer bad' } });
      assert.equal(bad.status, 401);
      assert.equal(bad.headers['www-authenticate'], 'Bearer error="invalid_token"');
      assert.equal(bad.body, 'bad token');
      const error = await send('/h-deny/x', { headers: { authorization: 'Bearer error' } });
      assert.equal(error.status, 500);
      assert.equal(error.body, 'oops');
      const none = await send('/h-deny/x');
      assert.equal(none.status, 403);
      assert.equal(none.body, 'forbidden by auth');
      assert.equal(upstream.latest('/h-deny'), undefined);
    });

    it('redirects a denied client when redirect is set', async () => {
      const response = await send('/h-redirect/x', { headers: { authorization: 'Bearer bad' } });
      assert.equal(response.status, 302);
      assert.equal(response.headers.location, '/login?from=/h-redirect/x');
    });

    it('computes the path, headers and body of the check request', async () => {
      const response = await send('/h-custom/x', { headers: { authorization: 'Bearer good', 'x-extra': 'e' } });
      assert.equal(response.status, 200, response.body);
      const check = httpChecksFor('/check/h-custom').at(-1)!;
      assert.equal(check.url, '/base/check/h-custom/x');
      assert.equal(check.method, 'GET');
      assert.equal(check.headers['x-extra'], 'e');
      assert.equal(check.headers['x-original-method'], 'GET');
      assert.equal(check.headers['x-broken'], undefined);
      assert.deepEqual(JSON.parse(check.text), { path: '/h-custom/x', n: 1 });
    });

    it('forwards the request body, and rejects one over maxSize with 413 without asking', async () => {
      const ok = await send('/h-body/x', { method: 'POST', headers: { authorization: 'Bearer good' }, body: 'hello' });
      assert.equal(ok.status, 200, ok.body);
      const check = httpChecksFor('/h-body').at(-1)!;
      assert.equal(check.method, 'POST');
      assert.equal(check.text, 'hello');
      assert.equal(check.headers['x-envoy-auth-partial-body'], 'false');
      assert.equal(upstream.latest('/h-body')?.text, 'hello');
      const large = await send('/h-body/x', {
        method: 'POST',
        headers: { authorization: 'Bearer good' },
        body: 'y'.repeat(64),
      });
      assert.equal(large.status, 413);
      assert.equal(httpChecksFor('/h-body').length, 1);
    });

    it('fails closed on a timeout or an oversized answer, open with FailOpen', async () => {
      const started = Date.now();
      const slow = await send('/h-timeout/x', { headers: { authorization: 'Bearer slow' } });
      assert.equal(slow.status, 403);
      assert.ok(Date.now() - started < 1500, `took ${Date.now() - started} ms`);
      const huge = await send('/h-timeout/x', { headers: { authorization: 'Bearer huge' } });
      assert.equal(huge.status, 403);
      assert.equal(huge.body, 'external authorization failed\n');
      const open = await send('/h-open/x', { headers: { authorization: 'Bearer slow' } });
      assert.equal(open.status, 200);
      assert.equal(open.body, 'upstream ok');
    });
  });
});
