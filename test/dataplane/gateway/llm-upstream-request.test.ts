// What reaches an alpha provider for a client's Chat Completions request through gw: the client's
// own headers except its credentials and framing, gw's forwarding headers, the provider key, the
// client's query parameters; and the body nesting limit at its exact boundary.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { ownFailureDetail } from '../../helpers/gateway.ts';
import { type LlmGateway, startLlmGateway } from '../../helpers/llm-gateway.ts';

/** `levels` arrays nested inside each other, the innermost holding a string. */
function nested(levels: number): unknown {
  let value: unknown = 'deep';
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

describe('the upstream request of an LLM route', () => {
  let llm: LlmGateway;
  let upstream: LlmGateway['provider'];
  let base: string;

  before(async () => {
    llm = await startLlmGateway('');
    upstream = llm.provider;
    base = new URL(llm.client.baseURL).origin;
  });

  after(() => llm?.stop());

  const chat = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    request(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer client-key', ...headers },
      body: JSON.stringify(body),
    });

  it('forwards the client headers but its credentials and framing, and adds the provider key', async () => {
    const answer = await chat(
      '/v1/chat/completions',
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      {
        'x-api-key': 'client-second-key',
        'x-goog-api-key': 'client-google-key',
        'api-key': 'client-azure-key',
        'proxy-authorization': 'Basic Y2xpZW50OnByb3h5',
        'x-request-tag': 'tag-7',
        'accept-encoding': 'gzip',
        'user-agent': 'tests/1',
      },
    );
    assert.equal(answer.statusCode, 200);
    await answer.body.json();
    const seen = upstream.requests.at(-1)!;
    assert.equal(seen.url, '/v1/chat/completions');
    assert.equal(seen.headers.authorization, 'Bearer sk-upstream');
    assert.equal(seen.headers['x-api-key'], undefined);
    assert.equal(seen.headers['x-request-tag'], 'tag-7');
    assert.equal(seen.headers['user-agent'], 'tests/1');
    assert.equal(seen.headers['accept-encoding'], 'identity');
    assert.equal(seen.headers.host, `127.0.0.1:${upstream.port}`);
    assert.equal(seen.headers['x-forwarded-for'], '127.0.0.1');
    assert.equal(seen.headers['x-forwarded-proto'], 'http');
    assert.equal(Number(seen.headers['content-length']), Buffer.byteLength(JSON.stringify(seen.body)));
    assert.equal(JSON.stringify(seen.headers).includes('client-key'), false);
    assert.equal(JSON.stringify(seen.headers).includes('client-second-key'), false);
    // Credentials in the other vendors' headers are the client's too: never sent on.
    for (const name of ['x-goog-api-key', 'api-key', 'proxy-authorization'])
      assert.equal(seen.headers[name], undefined, name);
  });

  it("passes the client's query parameters on", async () => {
    const answer = await chat('/v1/chat/completions?trace=on&note=a%20b', {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(answer.statusCode, 200);
    await answer.body.json();
    const seen = upstream.requests.at(-1)!;
    assert.equal(seen.path, '/v1/chat/completions');
    const query = new URLSearchParams(seen.url.slice(seen.url.indexOf('?') + 1));
    assert.deepEqual(
      [...query],
      [
        ['trace', 'on'],
        ['note', 'a b'],
      ],
    );
  });

  it('takes a body nested 128 levels deep and refuses one nested 129 levels in the OpenAI format', async () => {
    // The body object is level 1 and the outermost array of `metadata` level 2: 127 arrays reach level 128.
    const ok = await chat('/v1/chat/completions', {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      metadata: nested(127),
    });
    assert.equal(ok.statusCode, 200);
    await ok.body.json();
    const refused = await chat('/v1/chat/completions', {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      metadata: nested(128),
    });
    assert.equal(refused.statusCode, 400);
    const error = (await refused.body.json()) as { error?: { message?: string } };
    assert.match(error.error?.message ?? '', /nested more than 128 levels/);
  });
});

describe('an upstream request gw cannot write', () => {
  let llm: LlmGateway;

  before(async () => {
    // A route filter whose literal value holds CR LF (the API allows any characters): written as
    // it stands, it would add a header line, or a second request, upstream.
    llm = await startLlmGateway(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: inject}
spec:
  parentRefs: [{name: ai}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /v1}, headers: [{name: x-inject, value: 'yes'}]}]
      filters: [{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: x-team, value: "a\\r\\nx-injected: 1"}]}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: openai}]
---
`);
  });

  after(() => llm?.stop());

  it('is refused with 500 naming the header, and nothing reaches the provider', async () => {
    const base = new URL(llm.client.baseURL).origin;
    const answer = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer client-key', 'x-inject': 'yes' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(answer.status, 500);
    // The client's answer is an OpenAI error that names no header; the log says which one.
    const error = (await answer.clone().json()) as { error?: { message?: string } };
    assert.match(error.error?.message ?? '', /^gw could not serve this request/);
    assert.match(
      await ownFailureDetail(llm.gw, answer),
      /provider request could not be built: the value of header x-team/,
    );
    assert.equal(llm.provider.requests.length, 0);
  });
});
