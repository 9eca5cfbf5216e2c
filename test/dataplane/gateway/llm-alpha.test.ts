// gw as an OpenAI-compatible gateway: the official openai SDK talks to gw, gw talks to a mock
// that speaks OpenAI's wire format (itself proven with the same SDK in test/support-providers).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { aiBackendYaml, freePort, gatewayYaml, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';

describe('alpha provider through gw', () => {
  let upstream: Awaited<ReturnType<typeof startOpenAiMock>>;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    upstream = await startOpenAiMock({ apiKey: 'sk-upstream' });
    const port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}${aiBackendYaml(
        'openai',
        upstream.port,
        'alpha: {}',
        'sk-upstream',
        '{/v1/chat/completions: Completions, /v1/embeddings: Embeddings, /v1/models: Models, /v1/responses: Responses}',
      )}apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: llm}
spec:
  parentRefs: [{name: ai}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /v1}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: openai}]
`,
    });
    client = new OpenAI({
      apiKey: 'client-key-never-forwarded',
      baseURL: `http://127.0.0.1:${port}/v1`,
      maxRetries: 0,
    });
  });

  after(async () => {
    await gw?.stop();
    await upstream?.close();
  });

  it('answers a chat completion with the provider key, not the client key', async () => {
    const completion = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: hello there');
    assert.ok(completion.usage && completion.usage.total_tokens > 0);
    const seen = upstream.requests.at(-1)!;
    assert.equal(seen.headers.authorization, 'Bearer sk-upstream');
    assert.equal(JSON.stringify(seen.headers).includes('client-key-never-forwarded'), false);
  });

  it('streams a chat completion and reports usage when asked', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'one two three' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, 'echo: one two three');
    assert.ok(usage && usage.completion_tokens > 0);
  });

  it('passes embeddings and the model list through', async () => {
    const embeddings = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'abc' });
    assert.equal(embeddings.data.length, 1);
    const models = await client.models.list();
    assert.ok(models.data.length > 0);
  });

  it('answers malformed JSON with 400 in the OpenAI error shape', async () => {
    const response = await fetch(`${client.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model": ',
    });
    assert.equal(response.status, 400);
    const body = (await response.json()) as { error: { type: string; message: string } };
    assert.equal(body.error.type, 'invalid_request_error');
  });

  it('logs each request as JSON with its token usage and counts tokens in the gen_ai metrics', async () => {
    const before = gw.accessLog.length;
    await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'count these words' }],
    });
    await new Promise((resolve) => setImmediate(resolve));
    const line = JSON.parse(gw.accessLog.at(-1)!) as Record<string, unknown>;
    assert.equal(gw.accessLog.length, before + 1);
    assert.equal(line['http.response.status_code'], 200);
    assert.equal(line['gen_ai.request.model'], 'gpt-4o-mini');
    assert.equal(typeof line['gen_ai.usage.input_tokens'], 'number');
    const metrics = gw.gateway.dataPlane.telemetry.metrics.render();
    assert.match(metrics, /gen_ai_client_token_usage_sum\{[^}]*gen_ai_token_type="input"[^}]*\} [1-9]/);
  });
});
