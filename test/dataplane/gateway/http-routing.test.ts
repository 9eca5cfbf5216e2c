// Plain HTTP through gw: HTTPRoute matching, filters, redirects, weighted backends, Service and
// static backends, and configuration reloads that never fail a request — in flight or new.
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { createServer as createH2Server } from 'node:http2';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { freePort, gatewayYaml, ownFailureDetail, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';

/** An upstream that answers with its name, the path, headers and body length it saw, after `?delay=ms`. */
async function echoServer(name: string): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    const delay = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('delay') ?? 0);
    let bodyBytes = 0;
    req.on('data', (chunk: Buffer) => {
      bodyBytes += chunk.length;
    });
    req.on('end', () =>
      setTimeout(() => {
        res.setHeader('content-type', 'application/json');
        res.setHeader('x-upstream', name);
        res.end(JSON.stringify({ name, path: req.url, headers: req.headers, bodyBytes }));
      }, delay),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : 0 };
}

function routes(a: number, b: number, weightB: number): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: a}
spec: {static: {host: 127.0.0.1, port: ${a}}}
---
apiVersion: v1
kind: Service
metadata: {name: b}
spec: {clusterIP: 127.0.0.1, ports: [{port: ${b}}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec:
  parentRefs: [{name: ai}]
  hostnames: [web.example.com]
  rules:
    - name: exact
      matches: [{path: {type: Exact, value: /exact}}]
      filters:
        - {type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: x-added, value: yes}], remove: [x-secret]}}
        - {type: ResponseHeaderModifier, responseHeaderModifier: {add: [{name: x-gw, value: seen}]}}
      backendRefs: [{group: gw.dev, kind: GwBackend, name: a}]
    - name: old
      matches: [{path: {type: PathPrefix, value: /old}}]
      filters: [{type: RequestRedirect, requestRedirect: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /new}, statusCode: 301}}]
    - name: api
      matches: [{path: {type: PathPrefix, value: /api}, headers: [{name: x-version, value: '2'}]}]
      filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /v2}}}]
      backendRefs: [{name: b, port: ${b}}]
    - name: split
      matches: [{path: {type: PathPrefix, value: /}}]
      backendRefs:
        - {group: gw.dev, kind: GwBackend, name: a, weight: ${100 - weightB}}
        - {name: b, port: ${b}, weight: ${weightB}}
`;
}

describe('HTTP routing through gw', () => {
  let a: Awaited<ReturnType<typeof echoServer>>;
  let b: Awaited<ReturnType<typeof echoServer>>;
  let gw: TestGateway;
  let base: string;

  // undici's request, not fetch: fetch does not let a client choose the Host header.
  const get = async (path: string, headers: Record<string, string> = {}, host = 'web.example.com') => {
    const response = await request(`${base}${path}`, { headers: { host, ...headers } });
    return {
      status: response.statusCode,
      headers: { get: (name: string) => (response.headers[name] as string | undefined) ?? null },
      json: () => response.body.json(),
      text: () => response.body.text(),
      arrayBuffer: () => response.body.arrayBuffer(),
    };
  };

  before(async () => {
    a = await echoServer('a');
    b = await echoServer('b');
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    gw = await startTestGateway({ 'gateway.yaml': gatewayYaml(port), 'routes.yaml': routes(a.port, b.port, 0) });
  });

  after(async () => {
    await gw?.stop();
    a?.server.close();
    b?.server.close();
  });

  it('matches an exact path and applies header filters both ways', async () => {
    const response = await get('/exact', { 'x-secret': 's' });
    assert.equal(response.headers.get('x-upstream'), 'a');
    assert.equal(response.headers.get('x-gw'), 'seen');
    const seen = (await response.json()) as { headers: Record<string, string> };
    assert.equal(seen.headers['x-added'], 'yes');
    assert.equal(seen.headers['x-secret'], undefined);
    assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1');
  });

  it('meets a client’s Expect: 100-continue itself: the body streams to the backend, the field does not', async () => {
    const body = Buffer.alloc(256 * 1024, 'x');
    const answer = await new Promise<{ status: number; json: { bodyBytes: number; headers: Record<string, string> } }>(
      (resolve, reject) => {
        const outgoing = httpRequest(
          `${base}/exact`,
          {
            method: 'POST',
            headers: { host: 'web.example.com', expect: '100-continue', 'content-length': String(body.length) },
          },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () =>
              resolve({ status: response.statusCode!, json: JSON.parse(Buffer.concat(chunks).toString()) }),
            );
          },
        );
        // Sent only once gw says to continue: a streamed body, which goes to the backend as it comes.
        outgoing.on('continue', () => outgoing.end(body));
        outgoing.on('error', reject);
      },
    );
    assert.equal(answer.status, 200);
    assert.equal(answer.json.bodyBytes, body.length);
    assert.equal(answer.json.headers.expect, undefined);
  });

  it('redirects with the prefix replaced', async () => {
    const response = await get('/old/page?q=1');
    assert.equal(response.status, 301);
    assert.equal(response.headers.get('location'), `http://web.example.com:${new URL(base).port}/new/page?q=1`);
  });

  it('matches a header condition and rewrites the path to a Service backend', async () => {
    const response = await get('/api/items', { 'x-version': '2' });
    const seen = (await response.json()) as { name: string; path: string };
    assert.deepEqual([seen.name, seen.path], ['b', '/v2/items']);
  });

  it('answers 404 for another host', async () => {
    const response = await get('/exact', {}, 'other.example.com');
    assert.equal(response.status, 404);
    await response.text();
  });

  it('swaps configuration without failing requests in flight or new ones', async () => {
    const slow = get('/slow?delay=300');
    const load = (async () => {
      const statuses: number[] = [];
      const until = Date.now() + 700;
      while (Date.now() < until) {
        const response = await get('/any');
        statuses.push(response.status);
        await response.arrayBuffer();
      }
      return statuses;
    })();
    await sleep(50);
    gw.write('routes.yaml', routes(a.port, b.port, 100)); // all traffic of the split rule to b
    const [slowResponse, statuses] = await Promise.all([slow, load]);
    assert.equal(slowResponse.status, 200);
    assert.equal(((await slowResponse.json()) as { name: string }).name, 'a', 'finished on its old configuration');
    assert.ok(
      statuses.every((status) => status === 200),
      `statuses: ${[...new Set(statuses)].join(',')}`,
    );
    const after = await get('/any');
    assert.equal(((await after.json()) as { name: string }).name, 'b');
  });

  it('keeps serving the last good configuration when a file becomes invalid', async () => {
    gw.write(
      'routes.yaml',
      'apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: web}\nspec: {parentRefs: 7}\n',
    );
    await sleep(200);
    const response = await get('/exact');
    assert.equal(response.status, 200);
    await response.arrayBuffer();
  });
});

describe('a traffic policy that cannot be used', () => {
  it('fails closed: the rule answers 500 naming the field, and the reason is logged', async () => {
    const upstream = await echoServer('a');
    const port = await freePort();
    const gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: a}
spec: {static: {host: 127.0.0.1, port: ${upstream.port}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec:
  parentRefs: [{name: ai}]
  rules: [{name: all, backendRefs: [{group: gw.dev, kind: GwBackend, name: a}]}]
---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: keys}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}]
  traffic: {authorization: {policy: {matchExpressions: ['request.path ==']}}}
`,
    });
    try {
      const response = await fetch(`http://127.0.0.1:${port}/`);
      assert.equal(response.status, 500);
      assert.match(await ownFailureDetail(gw, response), /traffic\.authorization\.policy\.matchExpressions\[0\]/);
      assert.ok(
        gw.logs.some((line) => /route default\/web rule all: traffic policy traffic\.authorization/.test(line)),
        gw.logs.join('\n'),
      );
    } finally {
      await gw.stop();
      upstream.server.close();
    }
  });
});

describe('BackendHTTP.version inference', () => {
  it('speaks HTTP/2 (h2c) to a Service port whose appProtocol asks for it, HTTP/1.1 otherwise', async () => {
    const h2 = createH2Server((req, res) => res.end(`version ${req.httpVersion}`));
    await new Promise<void>((resolve) => h2.listen(0, '127.0.0.1', resolve));
    const h2Port = (h2.address() as { port: number }).port;
    const h1 = await echoServer('h1');
    const port = await freePort();
    const gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}apiVersion: v1
kind: Service
metadata: {name: grpcish}
spec: {clusterIP: 127.0.0.1, ports: [{port: ${h2Port}, appProtocol: kubernetes.io/h2c}]}
---
apiVersion: v1
kind: Service
metadata: {name: plain}
spec: {clusterIP: 127.0.0.1, ports: [{port: ${h1.port}}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec:
  parentRefs: [{name: ai}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /h2}}]
      backendRefs: [{name: grpcish, port: ${h2Port}}]
    - backendRefs: [{name: plain, port: ${h1.port}}]
`,
    });
    try {
      assert.equal(await (await fetch(`http://127.0.0.1:${port}/h2`)).text(), 'version 2.0');
      const plain = (await (await fetch(`http://127.0.0.1:${port}/x`)).json()) as { name: string };
      assert.equal(plain.name, 'h1');
    } finally {
      await gw.stop();
      h2.close();
      h1.server.close();
    }
  });
});

describe('Frontend policy', () => {
  it('limits the buffered body by http.maxBufferSize, closes connections networkAuthorization denies, and answers CONNECT with 405', async () => {
    const upstream = await startOpenAiMock();
    const port = await freePort();
    const otherPort = await freePort();
    const gw = await startTestGateway({
      'gateway.yaml': `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gw}
spec: {controllerName: gw.dev/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ai}
spec:
  gatewayClassName: gw
  listeners: [{name: http, protocol: HTTP, port: ${port}}, {name: other, protocol: HTTP, port: ${otherPort}}]
---
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: llm}
spec:
  ai: {provider: {host: 127.0.0.1, port: ${upstream.port}, alpha: {}}}
  policies: {auth: {key: sk}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: llm}
spec:
  parentRefs: [{name: ai}]
  rules: [{backendRefs: [{group: gw.dev, kind: GwBackend, name: llm}]}]
---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: small-bodies}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai, port: ${port}}]
  frontend: {http: {maxBufferSize: 1Ki}}
---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: network-authz}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai, port: ${otherPort}}]
  frontend: {networkAuthorization: {policy: {matchExpressions: ['source.address == "10.0.0.1"']}}}
`,
    });
    try {
      assert.deepEqual(gw.logs, []);
      const chat = (content: string) =>
        fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] }),
        });
      assert.equal((await chat('short')).status, 200);
      const large = await chat('x'.repeat(2000));
      assert.equal(large.status, 413);
      await large.text();
      // A connection from 127.0.0.1 does not match the rule: closed before any HTTP.
      await assert.rejects(fetch(`http://127.0.0.1:${otherPort}/v1/chat/completions`, { method: 'POST', body: '{}' }));
      const status = await new Promise<number | undefined>((resolve, reject) => {
        const connect = httpRequest({ host: '127.0.0.1', port, method: 'CONNECT', path: 'example.com:443' });
        connect.on('connect', (response, socket) => {
          socket.destroy();
          resolve(response.statusCode);
        });
        connect.on('response', (response) => resolve(response.statusCode));
        connect.on('error', reject);
        connect.end();
      });
      assert.equal(status, 405);
    } finally {
      await gw.stop();
      await upstream.close();
    }
  });
});
