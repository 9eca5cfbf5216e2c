// DNS-rebinding protection: gw refuses an MCP request whose Origin is present and not allowed with
// 403 before any target is asked (both client transports); an origin the route's CORS policy
// admits passes, as does the request's own origin — over a local connection only when it is a
// loopback name. And when every target refuses initialize with an HTTP 4xx, the client gets that
// status.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import type { RoutedRequest } from '../../../src/dataplane/backends/backend.ts';
import { refusedOrigin } from '../../../src/dataplane/mcp/origin-check.ts';
import { freePort, gatewayYaml, refusedPort, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { trafficPolicyYaml } from '../../helpers/policy-yaml.ts';
import { echoTools, mcpYaml, rawPost, startStreamableServer, suiteGateways, type TestMcpServer } from './helpers.ts';

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'origin-test', version: '1' } },
});

/** What refusedOrigin reads of a routed request. */
interface FakeRequest {
  origin?: string;
  host: string;
  localAddress?: string;
  clientAddress?: string;
  cors?: string[];
  preRoutingCors?: string[];
}

function routed(fake: FakeRequest): RoutedRequest {
  const headers: Record<string, string> = { host: fake.host };
  if (fake.origin !== undefined) headers.origin = fake.origin;
  return {
    req: { headers, socket: { localAddress: fake.localAddress ?? '10.0.0.5' } },
    record: { host: fake.host, clientAddress: fake.clientAddress ?? '10.0.0.9' },
    route: {
      cors: [
        ...(fake.cors ? [{ allowOrigins: fake.cors }] : []),
        ...(fake.preRoutingCors ? [{ allowOrigins: fake.preRoutingCors }] : []),
      ],
    },
  } as unknown as RoutedRequest;
}

const allowed = (fake: FakeRequest) => refusedOrigin(routed(fake)) === undefined;

describe('MCP Origin check (unit)', () => {
  it('lets requests without Origin through', () => {
    assert.ok(allowed({ host: 'gw.example.com' }));
    assert.ok(allowed({ host: 'evil.example.com', localAddress: '127.0.0.1', clientAddress: '127.0.0.1' }));
  });

  it('takes the request’s own origin: Host’s name and port, the scheme left to the proxies in front', () => {
    assert.ok(allowed({ origin: 'https://gw.example.com', host: 'gw.example.com' }));
    assert.ok(allowed({ origin: 'https://GW.example.com:443', host: 'gw.example.com' }));
    assert.ok(allowed({ origin: 'http://gw.example.com', host: 'gw.example.com' }), 'TLS ended in front of gw');
    assert.ok(allowed({ origin: 'http://gw.example.com:8080', host: 'gw.example.com:8080' }));
    assert.ok(allowed({ origin: 'http://[2001:db8::1]:8080', host: '[2001:db8::1]:8080' }));
    assert.ok(!allowed({ origin: 'http://gw.example.com:8080', host: 'gw.example.com' }), 'another port');
    assert.ok(!allowed({ origin: 'https://app.example.com', host: 'gw.example.com' }), 'another host');
    assert.ok(!allowed({ origin: 'https://gw.example.com', host: '' }), 'no Host to compare with');
  });

  it('refuses what is not one http(s) origin', () => {
    for (const origin of [
      'null',
      'gw.example.com',
      'https://gw.example.com/path',
      'ftp://gw.example.com',
      'https://gw.example.com, https://gw.example.com',
    ])
      assert.ok(!allowed({ origin, host: 'gw.example.com' }), origin);
  });

  it('over a local connection takes loopback origins only: a foreign name there is DNS rebinding', () => {
    const local = { localAddress: '127.0.0.1', clientAddress: '127.0.0.1' };
    assert.equal(
      refusedOrigin(routed({ origin: 'http://evil.example.com:8080', host: 'evil.example.com:8080', ...local })),
      'a local MCP endpoint takes requests from local origins only',
    );
    assert.ok(allowed({ origin: 'http://localhost:8080', host: 'localhost:8080', ...local }));
    assert.ok(allowed({ origin: 'http://127.0.0.1:8080', host: '127.0.0.1:8080', ...local }));
    assert.ok(allowed({ origin: 'http://[::1]:8080', host: '[::1]:8080', localAddress: '::1', clientAddress: '::1' }));
    assert.ok(
      allowed({
        origin: 'http://app.localhost:8080',
        host: 'app.localhost:8080',
        localAddress: '::ffff:127.0.0.1',
        clientAddress: '::ffff:127.0.0.1',
      }),
    );
    // The client a PROXY header names is not local: a proxy on the same machine passes a public origin on.
    assert.ok(allowed({ origin: 'https://gw.example.com', host: 'gw.example.com', localAddress: '127.0.0.1' }));
  });

  it('takes the origins the route’s or the PreRouting CORS policy admits', () => {
    const cors = ['https://inspector.example', 'https://*.tools.example', 'http://localhost:6274'];
    assert.ok(allowed({ origin: 'https://inspector.example', host: 'gw.example.com', cors }));
    assert.ok(allowed({ origin: 'https://a.b.tools.example', host: 'gw.example.com', cors }));
    assert.ok(
      !allowed({ origin: 'https://tools.example', host: 'gw.example.com', cors }),
      'a wildcard covers subdomains',
    );
    assert.ok(!allowed({ origin: 'http://inspector.example', host: 'gw.example.com', cors }), 'another scheme');
    assert.ok(
      allowed({
        origin: 'http://localhost:6274',
        host: '127.0.0.1:8080',
        localAddress: '127.0.0.1',
        clientAddress: '127.0.0.1',
        cors,
      }),
    );
    assert.ok(allowed({ origin: 'https://anything.example', host: 'gw.example.com', cors: ['*'] }));
    assert.ok(allowed({ origin: 'https://inspector.example', host: 'gw.example.com', preRoutingCors: cors }));
  });
});

describe('MCP Origin check through gw', () => {
  let target: TestMcpServer;
  let gw: TestGateway;
  let port: number;
  let url: URL;

  before(async () => {
    target = await startStreamableServer(echoTools('alpha'));
    port = await freePort();
    url = new URL(`http://127.0.0.1:${port}/mcp`);
    gw = await startTestGateway({
      'gw.yaml':
        gatewayYaml(port) +
        mcpYaml([{ name: 'alpha', port: target.port }]) +
        '---\n' +
        trafficPolicyYaml('cors', 'mcp', { cors: { allowOrigins: ['https://inspector.example'] } }),
    });
  });
  after(async () => {
    await gw?.stop();
    await target?.close();
  });

  it('refuses a foreign Origin with 403 and a JSON-RPC error, before any target is asked', async () => {
    const seen = target.seen.length;
    const refused: Record<string, string>[] = [
      { origin: 'http://evil.example.com' },
      { origin: 'http://evil.example.com', host: 'evil.example.com' },
      { origin: `http://localhost:${port}` },
      { origin: 'null' },
    ];
    for (const headers of refused) {
      const answer = await rawPost(url, INITIALIZE, headers);
      assert.equal(answer.status, 403, JSON.stringify(headers));
      const body = JSON.parse(answer.text) as { id: unknown; error: { code: number; message: string } };
      assert.equal(body.id, null);
      assert.equal(body.error.code, -32000);
      assert.match(body.error.message, /^Forbidden: /);
    }
    assert.equal(target.seen.length, seen, 'no target was asked');
  });

  it('serves its own origin and the origins the route’s CORS policy admits', async () => {
    for (const origin of [`http://127.0.0.1:${port}`, 'https://inspector.example']) {
      const answer = await rawPost(url, INITIALIZE, { origin });
      assert.equal(answer.status, 200, origin);
      assert.ok(answer.headers['mcp-session-id'], origin);
    }
  });

  it('checks GET and DELETE, and the legacy SSE transport, too', async () => {
    const evil = { origin: 'http://evil.example.com', accept: 'text/event-stream' };
    for (const [method, path] of [
      ['GET', '/mcp'],
      ['DELETE', '/mcp'],
      ['GET', '/sse'],
      ['POST', '/sse?sessionId=anything'],
    ] as const) {
      const response = await request(new URL(path, url), {
        method,
        headers: { ...evil, 'mcp-session-id': 'whatever', 'content-type': 'application/json' },
        body: method === 'POST' ? INITIALIZE : undefined,
      });
      await response.body.text();
      assert.equal(response.statusCode, 403, `${method} ${path}`);
    }
  });
});

/** A "target" that answers every request with `status` (a JSON-RPC error body when `json`). */
async function refusingServer(status: number, json: boolean): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (json) {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'go away' } }));
      } else res.writeHead(status, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end('no');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

describe('initialize refused by every target with an HTTP 4xx', () => {
  let alpha: TestMcpServer;
  const refusing: { server: Server; port: number }[] = [];
  const { start, stopAll } = suiteGateways();
  let forbiddenJson: number;
  let forbiddenText: number;
  let unauthorized: number;
  let teapot: number;

  before(async () => {
    alpha = await startStreamableServer(echoTools('alpha'));
    for (const [status, json] of [
      [403, true],
      [403, false],
      [401, false],
      [418, false],
    ] as const)
      refusing.push(await refusingServer(status, json));
    [forbiddenJson, forbiddenText, unauthorized, teapot] = refusing.map((entry) => entry.port) as [
      number,
      number,
      number,
      number,
    ];
  });
  after(async () => {
    await stopAll();
    await alpha.close();
    for (const { server } of refusing) await new Promise((resolve) => server.close(resolve));
  });

  const initialize = async (targets: { name: string; port: number }[], failureMode?: 'FailOpen') => {
    const g = await start(targets, failureMode ? { failureMode } : {});
    const answer = await rawPost(g.url, INITIALIZE);
    return { status: answer.status, body: JSON.parse(answer.text) as { error?: { code: number; message: string } } };
  };

  it('passes the status on, with gw’s JSON-RPC error', async () => {
    const one = await initialize([{ name: 'guarded', port: forbiddenJson }]);
    assert.equal(one.status, 403);
    assert.deepEqual(one.body.error, {
      code: -32603,
      message: 'MCP target guarded failed: initialize refused (-32000)',
    });
    const both = await initialize([
      { name: 'first', port: teapot },
      { name: 'second', port: forbiddenText },
    ]);
    assert.equal(both.status, 418, 'the first target’s status');
    assert.deepEqual(both.body.error, { code: -32603, message: 'MCP target first failed: HTTP 418' });
    const open = await initialize(
      [
        { name: 'first', port: forbiddenText },
        { name: 'second', port: forbiddenJson },
      ],
      'FailOpen',
    );
    assert.equal(open.status, 403);
  });

  it('answers 200 with the error when a target failed otherwise, another one worked, or one asked for credentials', async () => {
    const mixed = await initialize([
      { name: 'alpha', port: alpha.port },
      { name: 'guarded', port: forbiddenText },
    ]);
    assert.equal(mixed.status, 200, 'FailClosed failed the session for one target: not the client’s doing');
    assert.equal(mixed.body.error?.message, 'MCP target guarded failed: HTTP 403');
    const down = await initialize([
      { name: 'guarded', port: forbiddenText },
      { name: 'down', port: await refusedPort() },
    ]);
    assert.equal(down.status, 200);
    const challenge = await initialize([{ name: 'locked', port: unauthorized }]);
    assert.equal(challenge.status, 200, 'a 401 needs a challenge gw cannot give');
    assert.equal(challenge.body.error?.message, 'MCP target locked failed: HTTP 401');
  });
});
