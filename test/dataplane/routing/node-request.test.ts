// The routing modules driven by a real Node HTTP server: Node's header objects, raw request
// targets and repeated headers go through the table and the filters as the data plane will use them.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import type { RouteConfig } from '../../../src/contract/dataplane-config.ts';
import {
  applyRequestFilters,
  applyResponseFilters,
  compileRuleFilters,
  type ForwardRequest,
  redirectResponse,
} from '../../../src/dataplane/routing/filters.ts';
import { normalizePath } from '../../../src/dataplane/routing/path.ts';
import { compileRouteTable } from '../../../src/dataplane/routing/route-table.ts';

const routes: RouteConfig[] = [
  {
    route: 'default/old',
    hostnames: ['*.example.com'],
    rules: [
      {
        matches: [{ path: { type: 'PathPrefix', value: '/old' } }],
        filters: [
          {
            type: 'RequestRedirect',
            requestRedirect: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/new' }, statusCode: 301 },
          },
        ],
        traffic: {},
        backendRefs: [],
      },
    ],
  },
  {
    route: 'default/api',
    hostnames: ['api.example.com'],
    rules: [
      {
        matches: [
          {
            path: { type: 'PathPrefix', value: '/v1' },
            headers: [{ type: 'Exact', name: 'X-Tenant', value: 'blue, green' }],
          },
        ],
        filters: [
          { type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/internal' } } },
          { type: 'ResponseHeaderModifier', responseHeaderModifier: { add: [{ name: 'X-Routed-By', value: 'gw' }] } },
        ],
        traffic: {},
        backendRefs: [],
      },
    ],
  },
];

const LISTENER_PORT = 8080;

function handle(table: ReturnType<typeof compileRouteTable>, req: IncomingMessage) {
  const target = req.url ?? '/';
  const queryAt = target.indexOf('?');
  const rawPath = queryAt === -1 ? target : target.slice(0, queryAt);
  const query = queryAt === -1 ? '' : target.slice(queryAt + 1);
  const path = normalizePath(rawPath);
  if (path === undefined) return { status: 400, headers: {}, body: {} };
  const found = table.match({
    host: req.headers.host ?? '',
    path,
    query,
    method: req.method ?? 'GET',
    headers: req.headers,
  });
  if (!found) return { status: 404, headers: {}, body: {} };
  const filters = compileRuleFilters(found.rule).rule;
  if (filters.redirect) {
    const { statusCode, location } = redirectResponse(filters.redirect, {
      scheme: 'http',
      host: req.headers.host ?? '',
      path,
      query,
      listenerPort: LISTENER_PORT,
    });
    return { status: statusCode, headers: { location }, body: {} };
  }
  const forward: ForwardRequest = { path, query, headers: { ...req.headers } };
  applyRequestFilters(filters, forward);
  const headers = { 'content-type': 'application/json' };
  applyResponseFilters(filters, headers);
  return { status: 200, headers, body: { route: found.route.route, path: forward.path, query: forward.query } };
}

test('a Node server routes, rewrites and redirects with the compiled table and filters', async (t) => {
  const table = compileRouteTable(routes);
  const server = createServer((req, res) => {
    const { status, headers, body } = handle(table, req);
    res.writeHead(status, headers).end(JSON.stringify(body));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  const { port } = server.address() as AddressInfo;

  const send = (path: string, headers: Record<string, string | string[]>) =>
    new Promise<{ status: number; headers: IncomingMessage['headers']; body: Record<string, unknown> }>(
      (resolve, reject) => {
        const req = httpRequest({ host: '127.0.0.1', port, path, headers }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            text += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(text) }));
        });
        req.on('error', reject);
        req.end();
      },
    );

  const routed = await send('/public/../v1//chat?stream=true', {
    host: 'API.example.com:8080',
    'x-tenant': ['blue', 'green'],
  });
  assert.equal(routed.status, 200);
  assert.deepEqual(routed.body, { route: 'default/api', path: '/internal/chat', query: 'stream=true' });
  assert.equal(routed.headers['x-routed-by'], 'gw');

  const wrongTenant = await send('/v1/chat', { host: 'api.example.com', 'x-tenant': 'blue' });
  assert.equal(wrongTenant.status, 404);

  const redirected = await send('/old/page?x=1', { host: 'www.example.com:8080' });
  assert.equal(redirected.status, 301);
  assert.equal(redirected.headers.location, 'http://www.example.com:8080/new/page?x=1');

  const malformed = await send('/v1/%zz', { host: 'api.example.com' });
  assert.equal(malformed.status, 400);
});
