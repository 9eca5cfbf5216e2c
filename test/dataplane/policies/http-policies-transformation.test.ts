// traffic.transformation end to end (request headers, pseudo-headers and body; response headers
// and status; metadata; the conditional form; failing expressions), and the response body
// contract with the HTTP forwarder (responseBodyTransformer) driven the way a forwarder calls it.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import type { TransformationOrConditional } from '../../../src/api/types/traffic.ts';
import { PolicyExchange } from '../../../src/dataplane/policies/exchange.ts';
import { compileTransformation } from '../../../src/dataplane/policies/http/transformation.ts';
import { responseBodyTransformer } from '../../../src/dataplane/policies/http/transformation-state.ts';
import { isProblem } from '../../../src/dataplane/policies/types.ts';
import type { HeaderBag } from '../../../src/dataplane/routing/filters.ts';
import { RequestRecord } from '../../../src/dataplane/telemetry/request-record.ts';
import { ownFailureDetail } from '../../helpers/gateway.ts';
import { closeServer, listen } from '../../helpers/http-server.ts';
import { compileContext } from '../../helpers/policy-context.ts';
import type { UpstreamGateway } from '../../helpers/upstream-gateway.ts';
import { startPolicyGateway } from './http-policies-setup.ts';

describe('traffic.transformation', () => {
  let g: UpstreamGateway;

  before(async () => {
    g = await startPolicyGateway([
      {
        name: 'req',
        traffic: `transformation:
  request:
    metadata: {tenant: 'request.headers["x-tenant"]'}
    set:
      - {name: x-tenant-id, value: '"t-" + metadata.tenant'}
      - {name: x-user, value: jwt.sub}
    add: [{name: x-trace, value: '"gw"'}]
    remove: [x-drop]
    body: 'string(request.body) + " [seen by gw]"'
  response:
    set: [{name: x-tenant, value: metadata.tenant}]`,
      },
      {
        name: 'pseudo',
        traffic: `transformation:
  request:
    set:
      - {name: ':path', value: '"/elsewhere?from=" + request.path'}
      - {name: ':authority', value: '"backend.internal"'}
      - {name: ':method', value: '"PUT"'}`,
      },
      {
        name: 'replace',
        traffic: `transformation: {request: {body: '{"replaced": true, "n": 1}'}}`,
      },
      {
        name: 'resp',
        traffic: `transformation:
  response:
    metadata: {code: response.code}
    set:
      - {name: x-code, value: 'string(metadata.code)'}
      - {name: ':status', value: 'response.code == 201 ? 200 : response.code'}
      - {name: x-from-backend, value: 'response.headers["x-origin-header"]'}
    add: [{name: x-list, value: '"two"'}]
    remove: [x-internal]`,
      },
      {
        name: 'local',
        traffic: `transformation: {response: {set: [{name: x-status-seen, value: 'string(response.code)'}]}}
directResponse: {status: 202, body: local}`,
      },
      {
        name: 'cond',
        traffic: `transformation:
  conditional:
    - condition: request.method == "POST"
      policy: {request: {set: [{name: x-branch, value: '"post"'}]}}
    - policy: {request: {set: [{name: x-branch, value: '"other"'}]}}`,
      },
      {
        name: 'nomatch',
        traffic: `transformation:
  conditional:
    - condition: request.headers["x-on"] == "1"
      policy: {request: {set: [{name: x-branch, value: '"on"'}]}}`,
      },
      {
        name: 'throws',
        traffic: `transformation:
  request:
    metadata: {bad: 'request.headers["x-absent"]'}
    set:
      - {name: x-has-bad, value: 'string(has(metadata.bad))'}
      - {name: x-crlf, value: '"a\\r\\nb: c"'}
    body: 'request.headers["x-absent"]'`,
      },
      { name: 'scheme', traffic: `transformation: {request: {set: [{name: ':scheme', value: '"https"'}]}}` },
    ]);
  });
  after(() => g?.stop());

  const seen = (path: string) => g.upstream.seen.find((entry) => entry.url === path);

  it('sets, adds and removes request headers and replaces the body, metadata first', async () => {
    const response = await g.send('POST', '/req/1', {
      headers: { 'x-tenant': 'acme', 'x-user': 'forged', 'x-trace': 'client', 'x-drop': 'x' },
      body: 'hello',
    });
    assert.equal(response.status, 200);
    const upstream = seen('/req/1')!;
    assert.equal(upstream.headers['x-tenant-id'], 't-acme');
    assert.equal(upstream.headers['x-user'], undefined, "a failing value removes the client's own header");
    assert.equal(upstream.headers['x-trace'], 'client, gw');
    assert.equal(upstream.headers['x-drop'], undefined);
    assert.equal(upstream.text, 'hello [seen by gw]');
    assert.equal(upstream.headers['content-length'], String('hello [seen by gw]'.length));
    assert.equal(response.headers['x-tenant'], 'acme', "the response Transform sees the request's metadata");
  });

  it('rewrites path and query, the authority and the method through pseudo-headers', async () => {
    await g.send('GET', '/pseudo/p');
    const upstream = seen('/elsewhere?from=/pseudo/p')!;
    assert.ok(upstream, 'the path and query were rewritten');
    assert.equal(upstream.headers.host, 'backend.internal');
    assert.equal(upstream.method, 'PUT');
  });

  it('replaces a body it does not read, as JSON with the right length', async () => {
    await g.send('POST', '/replace/1', { body: 'x'.repeat(5000), headers: { 'content-type': 'application/json' } });
    const upstream = seen('/replace/1')!;
    assert.deepEqual(JSON.parse(upstream.text), { replaced: true, n: 1 });
    assert.equal(upstream.headers['content-length'], String(upstream.body.length));
    await g.send('GET', '/replace/2');
    assert.deepEqual(JSON.parse(seen('/replace/2')!.text), { replaced: true, n: 1 }, 'a request without body gets one');
  });

  it("changes the backend's response headers and status, seeing response.*", async () => {
    const response = await g.send('GET', '/resp/1?status=201', {
      headers: { 'x-reply-x-internal': 'secret', 'x-reply-x-list': 'one', 'x-reply-x-origin-header': 'abc' },
    });
    assert.equal(response.status, 200);
    assert.equal(response.headers['x-code'], '201');
    assert.equal(response.headers['x-from-backend'], 'abc');
    assert.deepEqual(response.headers['x-list'], ['one', 'two']);
    assert.equal(response.headers['x-internal'], undefined);
    const other = await g.send('GET', '/resp/2?status=404');
    assert.equal(other.status, 404);
    assert.equal(other.headers['x-code'], '404');
    assert.equal(other.headers['x-from-backend'], undefined, 'the header is absent: the value fails');
  });

  it("applies response Transforms to gw's own answers", async () => {
    const response = await g.send('GET', '/local');
    assert.equal(response.status, 202);
    assert.equal(response.headers['x-status-seen'], '202');
  });

  it('applies the first conditional entry that holds, the fallback otherwise, nothing when none applies', async () => {
    await g.send('POST', '/cond/post', { body: 'x' });
    await g.send('GET', '/cond/get');
    assert.equal(seen('/cond/post')!.headers['x-branch'], 'post');
    assert.equal(seen('/cond/get')!.headers['x-branch'], 'other');
    await g.send('GET', '/nomatch/1', { headers: { 'x-branch': 'client' } });
    await g.send('GET', '/nomatch/2', { headers: { 'x-on': '1' } });
    assert.equal(seen('/nomatch/1')!.headers['x-branch'], 'client', 'a failing condition counts as false');
    assert.equal(seen('/nomatch/2')!.headers['x-branch'], 'on');
  });

  it('leaves out failing metadata, refuses header values with CR/LF, empties a failing body', async () => {
    const response = await g.send('POST', '/throws/1', { body: 'original', headers: { 'x-crlf': 'client' } });
    assert.equal(response.status, 200);
    const upstream = seen('/throws/1')!;
    assert.equal(upstream.headers['x-has-bad'], 'false');
    assert.equal(upstream.headers['x-crlf'], undefined);
    assert.equal(upstream.headers.b, undefined, 'no header injected');
    assert.equal(upstream.text, '');
    assert.equal(upstream.headers['content-length'], '0');
  });

  it('answers 413 when a body it must read is over the buffer limit', async () => {
    const big = Buffer.alloc(2 * 1024 * 1024 + 1, 97);
    const response = await g.send('POST', '/req/big', { body: big, headers: { 'x-tenant': 'acme' } });
    assert.equal(response.status, 413);
    assert.match(response.body, /exceeds the 2097152-byte limit/);
    assert.equal(seen('/req/big'), undefined);
  });

  it('refuses a pseudo-header it cannot change: the rule answers 500 and says why', async () => {
    const response = await g.send('GET', '/scheme');
    assert.equal(response.status, 500);
    assert.match(
      await ownFailureDetail(g.gw, response),
      /traffic\.transformation\.request\.set\[0\]\.name :scheme cannot be changed/,
    );
  });
});

describe('transformation of response bodies (the HTTP forwarder contract)', () => {
  let server: Server;
  let base: string;

  const context = compileContext();

  /** Compiles `value` and serves it, answering as a buffering forwarder would with `backend`. */
  async function serve(
    value: TransformationOrConditional,
    backend: { status: number; headers: HeaderBag; body: string },
  ): Promise<void> {
    const compiled = compileTransformation(value, context);
    assert.ok(!isProblem(compiled));
    server = createServer(async (req, res) => {
      const record = new RequestRecord();
      record.method = req.method ?? 'GET';
      record.path = req.url ?? '/';
      record.requestHeaders = req.headers;
      const exchange = new PolicyExchange(req, res, record, { path: record.path, query: '', headers: {} });
      await compiled.request!(exchange);
      const headers: HeaderBag = { ...backend.headers, 'content-length': String(Buffer.byteLength(backend.body)) };
      const transformer = responseBodyTransformer(exchange);
      if (!transformer) {
        res.writeHead(backend.status, headers as Record<string, string>);
        res.end(backend.body);
        return;
      }
      assert.equal(transformer.maxBytes, 2 * 1024 * 1024);
      const result = transformer.apply({ status: backend.status, headers, body: Buffer.from(backend.body) });
      res.writeHead(result.status, headers as Record<string, string>);
      res.end(result.body);
    });
    base = `http://127.0.0.1:${await listen(server)}`;
  }

  after(() => closeServer(server));

  it('gives the whole response to the Transform, body included, once', async () => {
    await serve(
      {
        request: { metadata: { user: 'request.headers["x-user"]' } },
        response: {
          metadata: { size: 'size(response.body)' },
          set: [
            { name: 'x-size', value: 'string(metadata.size)' },
            { name: ':status', value: '299' },
          ],
          add: [{ name: 'x-list', value: '"two"' }],
          body: '{"user": metadata.user, "upstream": string(response.body), "code": response.code}',
        },
      },
      { status: 200, headers: { 'content-type': 'application/json', 'x-list': 'one' }, body: 'raw' },
    );
    const response = await request(`${base}/`, { headers: { 'x-user': 'ann' } });
    assert.equal(response.statusCode, 299);
    assert.equal(response.headers['x-size'], '3');
    assert.deepEqual(response.headers['x-list'], ['one', 'two'], 'applied once, not again when the head is written');
    const text = await response.body.text();
    assert.deepEqual(JSON.parse(text), { user: 'ann', upstream: 'raw', code: 200 });
    assert.equal(response.headers['content-length'], String(Buffer.byteLength(text)));
    server.close();
  });

  it('asks for no buffering when no Transform of the request changes the response body', async () => {
    await serve(
      {
        conditional: [
          { condition: 'request.path == "/body"', policy: { response: { body: '"changed"' } } },
          { policy: { response: { set: [{ name: 'x-seen', value: '"yes"' }] } } },
        ],
      },
      { status: 200, headers: {}, body: 'as is' },
    );
    const plain = await request(`${base}/other`);
    assert.equal(await plain.body.text(), 'as is');
    assert.equal(plain.headers['x-seen'], 'yes');
    const changed = await request(`${base}/body`);
    assert.equal(await changed.body.text(), 'changed');
    server.close();
  });
});
