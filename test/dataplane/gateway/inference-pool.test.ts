// A custom provider whose backendRef names an InferencePool (Gateway API Inference Extension,
// docs/decisions/0049-inference-pool.md), in file mode: two "pods" — OpenAI-compatible mocks on
// 127.0.0.2 and 127.0.0.3 at the same target port — selected by labels (a third Pod that is not
// Ready and one of other labels are not members), and an endpoint picker written here on Envoy's
// ext_proc (gw's protos) that picks by the request's x-pick header. Each request reaches exactly
// the pod the picker names, through the openai SDK; the picker sees the headers, the body and the
// pool's ready endpoints as the subset hint; its answer by dynamic metadata, its fallbacks and its
// immediate answers are followed; an answer naming an endpoint outside the pool is refused; a
// picker that is down fails open or closed as failureMode says; a pool without a picker picks at
// random among the ready pods.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import {
  freePort,
  GW_MODELS_RULE,
  gatewayYaml,
  lastAccessLogLine,
  llmRouteYaml,
  ownFailureDetail,
  refusedPort,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import {
  POOL_KEY as KEY,
  pick,
  pickerServiceYaml,
  podYaml,
  pooledBackendYaml,
  poolYaml,
  servedEndpoint,
} from '../../helpers/inference-pool.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';
import { headerOf, type Processor, type Sent, startProcessor } from '../policies/ext-proc-processor.ts';

describe('a custom provider with a backendRef to an InferencePool', () => {
  let podA: MockServer;
  let podB: MockServer;
  let notReady: MockServer;
  let epp: Processor;
  let gw: TestGateway;
  let port: number;
  let client: (path: string, pick?: string) => OpenAI;

  before(async () => {
    podA = await startOpenAiMock({ apiKey: KEY, host: '127.0.0.2' });
    // The same target port on every pod (as one Deployment's would be).
    podB = await startOpenAiMock({ apiKey: KEY, host: '127.0.0.3', port: podA.port });
    notReady = await startOpenAiMock({ apiKey: KEY, host: '127.0.0.4', port: podA.port });
    const target = podA.port;
    epp = await startProcessor((conversation) => pick(conversation, target));
    port = await freePort();
    const down = await refusedPort();
    const picker = (service: string, mode: string) =>
      `  endpointPickerRef: {name: ${service}, port: {number: ${service === 'epp' ? epp.port : down}}, failureMode: ${mode}}\n`;
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        podYaml('vllm-a', '127.0.0.2', '{app: vllm}'),
        podYaml('vllm-b', '127.0.0.3', '{app: vllm}'),
        podYaml('vllm-starting', '127.0.0.4', '{app: vllm}', false),
        podYaml('other', '127.0.0.5', '{app: other}'),
        pickerServiceYaml('epp', epp.port),
        pickerServiceYaml('epp-down', down),
        poolYaml('vllm', target, picker('epp', 'FailClose')),
        poolYaml('vllm-open', target, picker('epp-down', 'FailOpen')),
        poolYaml('vllm-closed', target, picker('epp-down', 'FailClose')),
        poolYaml('vllm-unpicked', target, ''),
        pooledBackendYaml('pool', 'vllm'),
        pooledBackendYaml('open', 'vllm-open'),
        pooledBackendYaml('closed', 'vllm-closed'),
        pooledBackendYaml('unpicked', 'vllm-unpicked'),
        pooledBackendYaml('nowhere', 'missing'),
        `apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: llama}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: llm, sectionName: models}]
  provider: Custom
  custom: {backendRef: {group: inference.networking.k8s.io, kind: InferencePool, name: vllm}, formats: [{type: Completions}]}
  policies: {auth: {key: ${KEY}}}
---
`,
        llmRouteYaml(['pool', 'open', 'closed', 'unpicked', 'nowhere'], GW_MODELS_RULE),
      ].join(''),
    });
    client = (path, choice = 'a') =>
      new OpenAI({
        apiKey: 'client',
        baseURL: `http://127.0.0.1:${port}${path}`,
        maxRetries: 0,
        defaultHeaders: { 'x-pick': choice },
      });
  });

  after(async () => {
    await gw?.stop();
    await Promise.all([podA?.close(), podB?.close(), notReady?.close(), epp?.close()]);
  });

  const counts = () => [podA.requests.length, podB.requests.length, notReady.requests.length];

  /** A Chat Completions request to backend `path` by plain fetch: gw's own failures are read as sent. */
  const post = (path: string, choice = 'a') =>
    fetch(`http://127.0.0.1:${port}${path}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-pick': choice },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
    });

  async function ask(path: string, choice: string, content: string, model = 'llama-3') {
    const before = counts();
    const answer = await client(path, choice).chat.completions.create({
      model,
      messages: [{ role: 'user', content }],
    });
    const after = counts();
    return { answer, reached: after.map((count, index) => count - before[index]!) };
  }

  it('sends each request to exactly the pod the picker names, with the Host of that pod and the backend key', async () => {
    for (const [choice, reached, mock] of [
      ['a', [1, 0, 0], () => podA],
      ['b', [0, 1, 0], () => podB],
      ['a', [1, 0, 0], () => podA],
    ] as const) {
      const { answer, reached: got } = await ask('/pool/v1', choice, `to ${choice}`);
      assert.equal(answer.choices[0]!.message.content, `echo: to ${choice}`);
      assert.deepEqual(got, reached, `x-pick ${choice}`);
      const seen = mock().requests.at(-1)!;
      assert.equal(seen.headers.host, `${choice === 'a' ? '127.0.0.2' : '127.0.0.3'}:${podA.port}`);
      assert.equal(seen.headers.authorization, `Bearer ${KEY}`);
      // The picker's header changes reach the pod, the destination header among them.
      assert.equal(seen.headers['x-picked-by'], 'test-epp');
    }
    // The access log names the pod the request went to.
    const log = await lastAccessLogLine(gw, '/pool/v1/chat/completions');
    assert.equal(log.endpoint, `127.0.0.2:${podA.port}`);
  });

  it('tells the picker the request (headers, body) and the ready endpoints, never the backend key', async () => {
    const before = epp.conversations.length;
    await ask('/pool/v1', 'b', 'what the picker reads');
    const conversation = epp.conversations[before]!;
    const [headers, body] = conversation.messages as Sent[];
    const sentHeaders = headers.request_headers.headers;
    assert.equal(headerOf(sentHeaders, ':path'), '/v1/chat/completions');
    assert.equal(headerOf(sentHeaders, ':method'), 'POST');
    assert.equal(headerOf(sentHeaders, 'authorization'), undefined, "gw's backend key is not the picker's to see");
    assert.equal(headers.protocol_config.request_body_mode, 'FULL_DUPLEX_STREAMED');
    const hint = headers.metadata_context.filter_metadata['envoy.lb.subset_hint'].fields;
    const subset = hint['x-gateway-destination-endpoint-subset'].listValue.values.map(
      (value: { stringValue: string }) => value.stringValue,
    );
    assert.deepEqual(subset, [`127.0.0.2:${podA.port}`, `127.0.0.3:${podA.port}`], 'the ready pods only');
    assert.equal(body.request_body.end_of_stream, true);
    assert.equal(
      JSON.parse(Buffer.from(body.request_body.body).toString()).messages[0].content,
      'what the picker reads',
    );
  });

  it('tells the picker which endpoint served the response, and passes its response header changes to the client', async () => {
    const before = epp.conversations.length;
    const answer = await post('/pool', 'b');
    assert.equal(answer.status, 200, await answer.clone().text());
    const b = `127.0.0.3:${podA.port}`;
    assert.equal(answer.headers.get('x-served-endpoint'), b, "the picker's response header change");
    const told = epp.conversations[before]!.messages.find((message: Sent) => message.request === 'response_headers');
    assert.ok(told, 'the picker was told the response head');
    assert.equal(servedEndpoint(told), b);
    assert.equal(headerOf(told.response_headers.headers, ':status'), '200');
    assert.equal(headerOf(told.response_headers.headers, 'content-type'), 'application/json');
    // The response's body is not the picker's (protocol_config response_body_mode NONE).
    assert.equal(epp.conversations[before]!.messages.at(-1).request, 'response_headers');
    // With fallbacks, the endpoint named is the one that served, not the first picked.
    const viaFallback = await post('/pool', 'first-outside-then-b');
    assert.equal(viaFallback.headers.get('x-served-endpoint'), b);
  });

  it('a picker that fails its response phase leaves the response as it is, and the log says why', async () => {
    const answer = await post('/pool', 'ends-at-response');
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('x-served-endpoint'), null);
    assert.match(
      String((await lastAccessLogLine(gw, '/pool/v1/chat/completions')).error),
      /the endpoint picker's response phase failed: the endpoint picker closed the stream before it answered the response/,
    );
  });

  it("follows an answer given as envoy.lb dynamic metadata, and a fallback when the first endpoint is not the pool's", async () => {
    assert.deepEqual((await ask('/pool/v1', 'metadata-b', 'by metadata')).reached, [0, 1, 0]);
    assert.deepEqual((await ask('/pool/v1', 'first-outside-then-b', 'fallback')).reached, [0, 1, 0]);
  });

  it('sends the body the picker streamed back in place of the request body', async () => {
    const { answer, reached } = await ask('/pool/v1', 'rewrite', 'original');
    assert.deepEqual(reached, [0, 1, 0]);
    assert.equal(answer.choices[0]!.message.content, 'echo: rewritten');
    assert.equal((podB.requests.at(-1)!.body as { model: string }).model, 'rewritten-model');
  });

  it('refuses an answer naming an endpoint outside the pool (a pod that is not Ready): 503, nothing sent', async () => {
    const before = counts();
    const response = await post('/pool', 'outside');
    assert.equal(response.status, 503);
    assert.match(
      await ownFailureDetail(gw, response),
      /InferencePool default\/vllm: the endpoint picker Service default\/epp:\d+ named 127\.0\.0\.4:\d+, none of them a ready endpoint of the pool/,
    );
    assert.deepEqual(counts(), before, 'no pod was reached');
  });

  it("passes the picker's own answer on to the client in its format (429 when it sheds the request)", async () => {
    const before = counts();
    await assert.rejects(
      ask('/pool/v1', 'shed', 'shed me'),
      (error: unknown) =>
        error instanceof OpenAI.APIError && error.status === 429 && /the pool is saturated/.test(error.message),
    );
    assert.deepEqual(counts(), before);
  });

  it('a client cannot choose the endpoint with the destination header itself', async () => {
    const before = counts();
    const answer = await new OpenAI({
      apiKey: 'client',
      baseURL: `http://127.0.0.1:${port}/pool/v1`,
      maxRetries: 0,
      defaultHeaders: { 'x-pick': 'a', 'x-gateway-destination-endpoint': `127.0.0.3:${podA.port}` },
    }).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'steer' }] });
    assert.equal(answer.choices[0]!.message.content, 'echo: steer');
    assert.deepEqual(
      counts().map((count, index) => count - before[index]!),
      [1, 0, 0],
    );
    const conversation = epp.conversations.at(-1)!;
    assert.equal(
      headerOf(conversation.messages[0].request_headers.headers, 'x-gateway-destination-endpoint'),
      undefined,
    );
  });

  it('a GwModel with provider Custom sends through the pool too', async () => {
    const { answer, reached } = await ask('/models', 'b', 'model via pool', 'llama');
    assert.equal(answer.choices[0]!.message.content, 'echo: model via pool');
    assert.deepEqual(reached, [0, 1, 0]);
  });

  it('with the picker down, FailOpen sends to a ready pod and FailClose answers 503', async () => {
    const before = counts();
    for (let i = 0; i < 4; i++) await ask('/open/v1', 'a', `open ${i}`);
    const reached = counts().map((count, index) => count - before[index]!);
    assert.equal(reached[0]! + reached[1]!, 4, 'every request reached a ready pod');
    assert.equal(reached[2], 0, 'never the pod that is not Ready');
    const log = await lastAccessLogLine(gw, '/open/v1/chat/completions');
    assert.equal(log['http.response.status_code'], 200);
    assert.match(
      String(log.error),
      /InferencePool default\/vllm-open: the endpoint picker Service default\/epp-down:\d+ failed/,
    );

    const closedBefore = counts();
    const response = await post('/closed');
    assert.equal(response.status, 503);
    assert.match(
      await ownFailureDetail(gw, response),
      /InferencePool default\/vllm-closed: the endpoint picker Service default\/epp-down:\d+ failed/,
    );
    assert.deepEqual(counts(), closedBefore);
  });

  it('a pool without a picker spreads requests over its ready pods at random', async () => {
    const before = counts();
    for (let i = 0; i < 24; i++) await ask('/unpicked/v1', 'a', `random ${i}`);
    const reached = counts().map((count, index) => count - before[index]!);
    // 24 fair coin flips all landing on one side: 2 in 2^24.
    assert.ok(reached[0]! > 0 && reached[1]! > 0, `both ready pods reached (${reached})`);
    assert.equal(reached[2], 0);
  });

  it('an InferencePool that does not exist fails closed: 500 naming the reference', async () => {
    const response = await post('/nowhere');
    assert.equal(response.status, 500);
    assert.match(
      await ownFailureDetail(gw, response),
      /custom\.backendRef: InferencePool default\/missing: does not exist/,
    );
  });
});
