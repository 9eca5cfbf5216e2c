// The Rerank route type through gw: a Cohere-shaped rerank stand-in on loopback, proven first by a
// plain fetch in Cohere's exact wire format, then reached through gw by the same requests. A
// custom provider listing the Rerank format at Cohere's /v2/rerank path, and an alpha provider
// (an OpenAI-compatible server behind a host override) at /v1/rerank: the body goes as it is
// (the model override applied), gw's key replaces the client's, the answer comes back unchanged,
// its token usage is logged and metered, and gw's own errors are in Cohere's shape.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  aiBackendYaml,
  freePort,
  GW_MODELS_RULE,
  gatewayYaml,
  lastAccessLogLine,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { type RerankMock, startRerankMock } from '../../support/providers/rerank-mock.ts';

const KEY = 'rerank-upstream-key-0123456789';
const DOCUMENTS = [
  'Berlin is the capital of Germany.',
  'Paris is the capital of France.',
  'The capital of France has the Eiffel tower.',
];
const REQUEST = { model: 'rerank-v3.5', query: 'What is the capital of France?', documents: DOCUMENTS, top_n: 2 };

interface RerankAnswer {
  id: string;
  results: { index: number; relevance_score: number; document?: { text: string } }[];
  meta: { billed_units: { search_units: number }; tokens: { input_tokens: number } };
}

describe('Rerank route type', () => {
  let upstream: RerankMock;
  let gw: TestGateway;
  let port: number;
  const rerank = (path: string, body: unknown, token = 'client-token') =>
    fetch(`http://127.0.0.1:${port}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  before(async () => {
    upstream = await startRerankMock(KEY, ['/v2/rerank', '/v1/rerank']);
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('cohere', upstream.port, 'custom: {formats: [{type: Rerank, path: /v2/rerank}]}', KEY, undefined),
        aiBackendYaml(
          'pinned',
          upstream.port,
          'custom: {model: rerank-pinned, formats: [{type: Rerank}]}',
          KEY,
          undefined,
        ),
        aiBackendYaml('compatible', upstream.port, 'alpha: {}', KEY, undefined),
        aiBackendYaml('chatonly', upstream.port, 'custom: {formats: [{type: Completions}]}', KEY, undefined),
        `apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: rerank-english}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: llm, sectionName: models}]
  provider: Custom
  custom: {formats: [{type: Rerank, path: /v2/rerank}]}
  baseURL: http://127.0.0.1:${upstream.port}
  policies: {auth: {key: ${KEY}}}
---
`,
        llmRouteYaml(['cohere', 'pinned', 'compatible', 'chatonly'], GW_MODELS_RULE),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await upstream?.close();
  });

  it('the stand-in speaks Cohere rerank: results by relevance, meta with billed units and tokens', async () => {
    const answer = await fetch(`${upstream.url}/v2/rerank`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(REQUEST),
    });
    assert.equal(answer.status, 200);
    const body = (await answer.json()) as RerankAnswer;
    assert.deepEqual(
      body.results.map((result) => result.index),
      [1, 2],
    );
    assert.ok(body.results[0]!.relevance_score >= body.results[1]!.relevance_score);
    assert.equal(body.meta.billed_units.search_units, 1);
    const refused = await fetch(`${upstream.url}/v2/rerank`, {
      method: 'POST',
      headers: { authorization: 'Bearer wrong', 'content-type': 'application/json' },
      body: JSON.stringify(REQUEST),
    });
    assert.equal(refused.status, 401);
    assert.deepEqual(await refused.json(), { message: 'invalid api token' });
  });

  it('forwards a rerank request to a custom provider at its Rerank path, with gw key, and logs its usage', async () => {
    const answer = await rerank('/cohere/v2/rerank', { ...REQUEST, return_documents: true });
    assert.equal(answer.status, 200);
    const body = (await answer.json()) as RerankAnswer;
    assert.deepEqual(
      body.results.map((result) => [result.index, result.document?.text]),
      [
        [1, DOCUMENTS[1]],
        [2, DOCUMENTS[2]],
      ],
    );
    const sent = upstream.requests.at(-1)!;
    assert.equal(sent.path, '/v2/rerank');
    assert.equal(sent.headers.authorization, `Bearer ${KEY}`, "gw's key, not the client's");
    assert.deepEqual(sent.body, { ...REQUEST, return_documents: true }, 'the body goes as it is');

    const line = await lastAccessLogLine(gw, '/cohere/v2/rerank');
    assert.equal(line['gen_ai.operation.name'], 'rerank');
    assert.equal(line['gen_ai.request.model'], 'rerank-v3.5');
    assert.equal(line['gen_ai.usage.input_tokens'], body.meta.tokens.input_tokens);
    assert.equal(line['gen_ai.usage.output_tokens'], 0);
    const metrics = gw.gateway.dataPlane.telemetry.metrics.render();
    assert.match(metrics, /gen_ai_client_token_usage_sum\{[^}]*gen_ai_operation_name="rerank"[^}]*\} [1-9]/);
  });

  it("applies a provider's model override and serves the /v1/rerank path (custom's usual one, alpha's)", async () => {
    let answer = await rerank('/pinned/v1/rerank', REQUEST);
    assert.equal(answer.status, 200);
    let sent = upstream.requests.at(-1)!;
    assert.equal(sent.path, '/v1/rerank');
    assert.equal(sent.body.model, 'rerank-pinned');

    answer = await rerank('/compatible/v1/rerank', REQUEST);
    assert.equal(answer.status, 200);
    assert.equal(((await answer.json()) as RerankAnswer).results.length, 2);
    sent = upstream.requests.at(-1)!;
    assert.equal(sent.path, '/v1/rerank');
    assert.equal(sent.headers.authorization, `Bearer ${KEY}`);
  });

  it('serves a GwModel whose provider lists the Rerank format, chosen by the body model', async () => {
    const answer = await rerank('/models/v2/rerank', { ...REQUEST, model: 'rerank-english' });
    assert.equal(answer.status, 200);
    assert.deepEqual(
      ((await answer.json()) as RerankAnswer).results.map((result) => result.index),
      [1, 2],
    );
    const sent = upstream.requests.at(-1)!;
    assert.equal(sent.path, '/v2/rerank');
    assert.equal(sent.headers.authorization, `Bearer ${KEY}`);
    const unknown = await rerank('/models/v2/rerank', { ...REQUEST, model: 'no-such-model' });
    assert.equal(unknown.status, 404);
    assert.match(((await unknown.json()) as { message: string }).message, /no-such-model/);
  });

  it("passes the provider's errors on as they are", async () => {
    const answer = await rerank('/cohere/v2/rerank', { ...REQUEST, model: undefined });
    assert.equal(answer.status, 400);
    assert.deepEqual(await answer.json(), { message: 'invalid request: model is required' });
  });

  it("answers gw's own errors in Cohere's shape: a body that is not a rerank request, a provider without Rerank", async () => {
    const before = upstream.requests.length;
    let answer = await rerank('/cohere/v2/rerank', { model: 'rerank-v3.5', documents: DOCUMENTS });
    assert.equal(answer.status, 400);
    let body = (await answer.json()) as { message: string };
    assert.deepEqual(Object.keys(body), ['message']);
    assert.match(body.message, /does not fit the Rerank route type \(it has no "query" string\)/);

    answer = await rerank('/chatonly/v1/rerank', REQUEST);
    assert.equal(answer.status, 400);
    body = (await answer.json()) as { message: string };
    assert.match(body.message, /The rerank API is not supported by provider chatonly/);
    assert.equal(upstream.requests.length, before, 'nothing was sent upstream');
  });
});
