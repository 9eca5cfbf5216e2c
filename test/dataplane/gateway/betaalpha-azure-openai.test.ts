// The betaalpha family (Azure OpenAI) through gw. An Azure OpenAI stand-in on loopback is first
// proven by the openai package's own AzureOpenAI client (deployment paths, api-version, api-key);
// then the openai SDK (Chat Completions streamed and not, Embeddings, Responses) and
// @anthropic-ai/sdk (Messages, translated to Chat Completions) reach it through gw: a dated API
// version at the deployment's paths, and the v1 API (the default) at /openai/v1.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { AzureOpenAI } from 'openai';
import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { collectChatStream } from '../../helpers/openai-stream.ts';
import { lastAzureRequest, startAzureOpenAiMock } from '../../support/providers/azure-openai-mock.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';

const ROUTES =
  '{/v1/chat/completions: Completions, /v1/messages: Messages, /v1/embeddings: Embeddings, /v1/responses: Responses}';
const KEY = 'azure-test-key-0123456789abcdef';
const DEPLOYMENT = 'gpt-4o-deployment';
const API_VERSION = '2024-10-21';

describe('betaalpha (Azure OpenAI) provider', () => {
  let azure: MockServer;
  let gw: TestGateway;
  let port: number;
  const openai = (backend: string) =>
    new OpenAI({ apiKey: 'client-token', baseURL: `http://127.0.0.1:${port}/${backend}/v1`, maxRetries: 0 });
  const lastSent = () => lastAzureRequest(azure);

  before(async () => {
    azure = await startAzureOpenAiMock({ apiKey: KEY, deployments: [DEPLOYMENT] });
    port = await freePort();
    const dated = `betaalpha: {endpoint: "https://my-resource.openai.azure.com/", deploymentName: ${DEPLOYMENT}, apiVersion: "${API_VERSION}"}`;
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('dated', azure.port, dated, KEY, ROUTES),
        aiBackendYaml('v1api', azure.port, 'betaalpha: {endpoint: my-resource.openai.azure.com}', KEY, ROUTES),
        llmRouteYaml(['dated', 'v1api']),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await azure?.close();
  });

  it('the stand-in speaks Azure OpenAI as the AzureOpenAI client expects it', async () => {
    const client = new AzureOpenAI({
      apiKey: KEY,
      endpoint: azure.url,
      apiVersion: API_VERSION,
      deployment: DEPLOYMENT,
      maxRetries: 0,
    });
    const completion = await client.chat.completions.create({
      model: 'ignored',
      messages: [{ role: 'user', content: 'hello azure' }],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: hello azure');
    const sent = lastSent();
    assert.equal(sent.path, `/openai/deployments/${DEPLOYMENT}/chat/completions`);
    assert.equal(sent.query.get('api-version'), API_VERSION);
    assert.equal(sent.headers['api-key'], KEY);

    const embedding = await client.embeddings.create({ model: 'ignored', input: 'a b c' });
    assert.ok(embedding.data[0]!.embedding.length > 0);
    assert.equal(lastSent().path, `/openai/deployments/${DEPLOYMENT}/embeddings`);

    const response = await client.responses.create({ model: DEPLOYMENT, input: 'hi responses' });
    assert.equal(response.output_text, 'echo: hi responses');
    assert.equal(lastSent().path, '/openai/responses');

    const wrongKey = new AzureOpenAI({ apiKey: 'wrong', endpoint: azure.url, apiVersion: API_VERSION, maxRetries: 0 });
    await assert.rejects(
      wrongKey.chat.completions.create({ model: DEPLOYMENT, messages: [{ role: 'user', content: 'x' }] }),
      (error: unknown) => error instanceof OpenAI.AuthenticationError,
    );
    const unknown = new AzureOpenAI({ apiKey: KEY, endpoint: azure.url, apiVersion: API_VERSION, maxRetries: 0 });
    await assert.rejects(
      unknown.chat.completions.create({ model: 'no-such-deployment', messages: [{ role: 'user', content: 'x' }] }),
      (error: unknown) => error instanceof OpenAI.NotFoundError,
    );
    const withoutVersion = await fetch(`${azure.url}/openai/deployments/${DEPLOYMENT}/chat/completions`, {
      method: 'POST',
      headers: { 'api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'x' }] }),
    });
    assert.equal(withoutVersion.status, 404, 'a deployment path needs api-version');
    const withoutKey = await fetch(`${azure.url}/openai/v1/models`);
    assert.equal(withoutKey.status, 401, 'the key is required');
  });

  it('serves Chat Completions at the deployment path with api-version, the key in api-key', async () => {
    const completion = await openai('dated').chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hello deployment' }],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: hello deployment');
    assert.ok(completion.usage!.prompt_tokens > 0);
    const sent = lastSent();
    assert.equal(sent.path, `/openai/deployments/${DEPLOYMENT}/chat/completions`);
    assert.equal(sent.query.get('api-version'), API_VERSION);
    assert.equal(sent.headers['api-key'], KEY);
    assert.equal(sent.headers.authorization, undefined, "the client's token is not forwarded");
    assert.equal((sent.body as { model: string }).model, DEPLOYMENT, 'the deployment is the model override');
  });

  it('streams Chat Completions, usage included', async () => {
    const stream = await openai('dated').chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'stream these words' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { text, usage } = await collectChatStream(stream);
    assert.equal(text, 'echo: stream these words');
    assert.ok((usage?.completion_tokens ?? 0) > 0);
    assert.equal(lastSent().path, `/openai/deployments/${DEPLOYMENT}/chat/completions`);
  });

  it('serves Embeddings at the deployment path and Responses at /openai/responses', async () => {
    const embedding = await openai('dated').embeddings.create({ model: 'text-embedding-3-small', input: 'x y' });
    assert.ok(embedding.data[0]!.embedding.length > 0);
    let sent = lastSent();
    assert.equal(sent.path, `/openai/deployments/${DEPLOYMENT}/embeddings`);
    assert.equal(sent.query.get('api-version'), API_VERSION);

    const response = await openai('dated').responses.create({ model: 'gpt-4o', input: 'hello responses' });
    assert.equal(response.output_text, 'echo: hello responses');
    sent = lastSent();
    assert.equal(sent.path, '/openai/responses');
    assert.equal(sent.query.get('api-version'), API_VERSION);
    assert.equal((sent.body as { model: string }).model, DEPLOYMENT);
  });

  it('serves Messages clients through Chat Completions on the v1 API, the model naming the deployment', async () => {
    const anthropic = new Anthropic({
      apiKey: 'client-token',
      baseURL: `http://127.0.0.1:${port}/v1api`,
      maxRetries: 0,
    });
    const message = await anthropic.messages.create({
      model: DEPLOYMENT,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hello messages' }],
    });
    assert.equal(message.content[0]?.type === 'text' && message.content[0].text, 'echo: hello messages');
    assert.equal(message.stop_reason, 'end_turn');
    assert.ok(message.usage.input_tokens > 0);
    const sent = lastSent();
    assert.equal(sent.path, '/openai/v1/chat/completions');
    assert.equal(sent.query.get('api-version'), null, 'the v1 API takes no api-version');
    assert.equal(sent.headers['api-key'], KEY);
    assert.equal(sent.headers['x-api-key'], undefined, "the client's key is not forwarded");
    assert.equal((sent.body as { model: string }).model, DEPLOYMENT);
  });

  it("answers a deployment the resource does not have with Azure's 404, in the client's format", async () => {
    await assert.rejects(
      openai('v1api').chat.completions.create({ model: 'missing', messages: [{ role: 'user', content: 'x' }] }),
      (error: unknown) => error instanceof OpenAI.NotFoundError,
    );
    assert.equal(lastSent().path, '/openai/v1/chat/completions');
  });
});
