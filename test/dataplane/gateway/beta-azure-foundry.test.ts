// The beta family (Azure AI resources) through gw. An Azure stand-in on loopback serving a Foundry
// project's v1 API (/api/projects/{project}/openai/v1) and the resource's Claude deployments
// (/anthropic/v1/messages) beside an Azure OpenAI resource's paths is first proven by the SDKs
// themselves: openai's OpenAI at the project's v1 base URL, AzureOpenAI with an Entra ID token
// provider, and @anthropic-ai/sdk at the resource's Anthropic base URL. Then the openai SDK (Chat
// Completions streamed and not, Responses, Embeddings) and @anthropic-ai/sdk (Messages: translated
// to Chat Completions, or as is to a Claude deployment) reach it through gw: a Foundry project
// (resourceType Omega) with a key, an Azure OpenAI resource (Alpha) at a dated API version, a
// Foundry project with no backend auth (an Entra ID token of gw's environment, from an identity
// platform stand-in, for the Foundry scope), and a GwModel with provider Beta.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { AzureOpenAI } from 'openai';
import { AZURE_FOUNDRY_SCOPE } from '../../../src/dataplane/auth/backend/beta.ts';
import {
  aiBackendYaml,
  freePort,
  GW_MODELS_RULE,
  gatewayYaml,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { collectChatStream } from '../../helpers/openai-stream.ts';
import { lastAzureRequest, startAzureOpenAiMock } from '../../support/providers/azure-openai-mock.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';
import { type EntraStandIn, entraStandIn, setEnvironment, trustTestCa } from '../backend-auth/entra-stand-ins.ts';

const ROUTES =
  '{/v1/chat/completions: Completions, /v1/messages: Messages, /v1/embeddings: Embeddings, /v1/responses: Responses, /v1/models: Models}';
const KEY = 'foundry-test-key-0123456789abcdef';
const ENTRA_TOKEN = 'entra-token-for-foundry';
const PROJECT = 'chat-app';
const DEPLOYMENT = 'gpt-4o-deployment';
const API_VERSION = '2024-10-21';
const TENANT = 'contoso.onmicrosoft.com';
const CLAUDE = 'claude-haiku-4-5';

describe('beta (Azure AI Foundry) provider', () => {
  let azure: MockServer;
  let entra: EntraStandIn;
  let gw: TestGateway;
  let port: number;
  const restore: (() => void)[] = [];
  const openai = (path: string) =>
    new OpenAI({ apiKey: 'client-token', baseURL: `http://127.0.0.1:${port}/${path}`, maxRetries: 0 });
  const lastSent = () => lastAzureRequest(azure);
  const projectPath = (suffix: string) => `/api/projects/${PROJECT}/openai/v1${suffix}`;

  before(async () => {
    restore.push(trustTestCa());
    entra = await entraStandIn();
    entra.answer = () => ({ token: ENTRA_TOKEN, expiresIn: 3599 });
    // What the SDK's environment credential reads: gw's own service principal, at the stand-in.
    restore.push(
      setEnvironment({
        AZURE_AUTHORITY_HOST: entra.origin,
        AZURE_TENANT_ID: TENANT,
        AZURE_CLIENT_ID: 'gw-foundry-client',
        AZURE_CLIENT_SECRET: 'gw-foundry-secret',
      }),
    );
    azure = await startAzureOpenAiMock({
      apiKey: KEY,
      deployments: [DEPLOYMENT, 'gpt-4.1', 'text-embedding-3-small'],
      projects: [PROJECT],
      claudeDeployments: [CLAUDE],
      entraToken: ENTRA_TOKEN,
    });
    port = await freePort();
    const omega = `beta: {resourceName: contoso, resourceType: Omega, projectName: ${PROJECT}}`;
    const dated = `beta: {resourceName: contoso, resourceType: Alpha, apiVersion: "${API_VERSION}", model: ${DEPLOYMENT}}`;
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('project', azure.port, omega, KEY, ROUTES),
        aiBackendYaml('resource', azure.port, dated, KEY, ROUTES),
        `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: entra}
spec:
  ai: {provider: {host: 127.0.0.1, port: ${azure.port}, ${omega}}}
  policies:
    ai: {routes: ${ROUTES}}
---
apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: gpt-4.1}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: llm, sectionName: models}]
  provider: Beta
  beta: {resourceName: contoso, resourceType: Omega, projectName: ${PROJECT}}
  baseURL: http://127.0.0.1:${azure.port}
  policies: {auth: {key: ${KEY}}}
---
`,
        llmRouteYaml(['project', 'resource', 'entra'], GW_MODELS_RULE),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await azure?.close();
    await entra?.close();
    for (const undo of restore.reverse()) undo();
  });

  it("the stand-in speaks a Foundry project's v1 API and takes Entra ID tokens, as the openai clients expect", async () => {
    const project = new OpenAI({
      apiKey: 'unused-bearer',
      baseURL: `${azure.url}${projectPath('')}`,
      defaultHeaders: { 'api-key': KEY },
      maxRetries: 0,
    });
    const completion = await project.chat.completions.create({
      model: 'gpt-4.1',
      messages: [{ role: 'user', content: 'hello project' }],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: hello project');
    assert.equal(lastSent().path, projectPath('/chat/completions'));
    const response = await project.responses.create({ model: 'gpt-4.1', input: 'hi responses' });
    assert.equal(response.output_text, 'echo: hi responses');
    assert.equal(lastSent().path, projectPath('/responses'));
    const embedding = await project.embeddings.create({ model: 'text-embedding-3-small', input: 'a b' });
    assert.ok(embedding.data[0]!.embedding.length > 0);
    assert.equal(lastSent().path, projectPath('/embeddings'));

    const otherProject = new OpenAI({
      apiKey: 'unused-bearer',
      baseURL: `${azure.url}/api/projects/elsewhere/openai/v1`,
      defaultHeaders: { 'api-key': KEY },
      maxRetries: 0,
    });
    await assert.rejects(
      otherProject.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'x' }] }),
      (error: unknown) => error instanceof OpenAI.NotFoundError,
    );
    const noKey = new OpenAI({ apiKey: 'unused-bearer', baseURL: `${azure.url}${projectPath('')}`, maxRetries: 0 });
    await assert.rejects(
      noKey.chat.completions.create({ model: 'x', messages: [{ role: 'user', content: 'x' }] }),
      (error: unknown) => error instanceof OpenAI.AuthenticationError,
    );

    const withToken = new AzureOpenAI({
      azureADTokenProvider: async () => ENTRA_TOKEN,
      endpoint: azure.url,
      apiVersion: API_VERSION,
      deployment: DEPLOYMENT,
      maxRetries: 0,
    });
    const byToken = await withToken.chat.completions.create({
      model: 'ignored',
      messages: [{ role: 'user', content: 'hello entra' }],
    });
    assert.equal(byToken.choices[0]!.message.content, 'echo: hello entra');
    assert.equal(lastSent().headers.authorization, `Bearer ${ENTRA_TOKEN}`);
    assert.equal(lastSent().path, `/openai/deployments/${DEPLOYMENT}/chat/completions`);
  });

  it("the stand-in serves Claude deployments at the resource's Anthropic API, as @anthropic-ai/sdk expects", async () => {
    // Foundry takes the key in api-key (or x-api-key), not as a Bearer token: no Authorization header.
    const claude = new Anthropic({
      apiKey: null,
      defaultHeaders: { 'api-key': KEY, authorization: null },
      baseURL: `${azure.url}/anthropic`,
      maxRetries: 0,
    });
    const message = await claude.messages.create({
      model: CLAUDE,
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hello claude' }],
    });
    assert.equal(message.content[0]?.type === 'text' && message.content[0].text, 'echo: hello claude');
    assert.equal(lastSent().path, '/anthropic/v1/messages');
    const counted = await claude.messages.countTokens({
      model: CLAUDE,
      messages: [{ role: 'user', content: 'a b c' }],
    });
    assert.ok(counted.input_tokens > 0);
    assert.equal(lastSent().path, '/anthropic/v1/messages/count_tokens');
    await assert.rejects(
      claude.messages.create({ model: 'claude-unknown', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
      (error: unknown) => error instanceof Anthropic.NotFoundError,
    );
  });

  it("serves Chat Completions at the project's v1 path, the key in api-key", async () => {
    const completion = await openai('project/v1').chat.completions.create({
      model: 'gpt-4.1',
      messages: [{ role: 'user', content: 'hello foundry' }],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: hello foundry');
    assert.ok(completion.usage!.prompt_tokens > 0);
    const sent = lastSent();
    assert.equal(sent.path, projectPath('/chat/completions'));
    assert.equal(sent.query.get('api-version'), null, 'the v1 API takes no api-version');
    assert.equal(sent.headers['api-key'], KEY);
    assert.equal(sent.headers.authorization, undefined, "the client's token is not forwarded");
    assert.equal((sent.body as { model: string }).model, 'gpt-4.1', 'the client names the deployment');
  });

  it('streams Chat Completions, usage included', async () => {
    const stream = await openai('project/v1').chat.completions.create({
      model: 'gpt-4.1',
      messages: [{ role: 'user', content: 'stream these words' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { text, usage } = await collectChatStream(stream);
    assert.equal(text, 'echo: stream these words');
    assert.ok((usage?.completion_tokens ?? 0) > 0);
    assert.equal(lastSent().path, projectPath('/chat/completions'));
  });

  it('serves Responses (streamed too) and Embeddings at the project; its model listing is refused', async () => {
    const response = await openai('project/v1').responses.create({ model: 'gpt-4.1', input: 'hello responses' });
    assert.equal(response.output_text, 'echo: hello responses');
    assert.equal(lastSent().path, projectPath('/responses'));

    const stream = await openai('project/v1').responses.create({ model: 'gpt-4.1', input: 'streamed', stream: true });
    let streamed = '';
    for await (const event of stream) if (event.type === 'response.output_text.delta') streamed += event.delta;
    assert.equal(streamed, 'echo: streamed');

    const embedding = await openai('project/v1').embeddings.create({ model: 'text-embedding-3-small', input: 'x y' });
    assert.ok(embedding.data[0]!.embedding.length > 0);
    assert.equal(lastSent().path, projectPath('/embeddings'));

    const before = azure.requests.length;
    await assert.rejects(
      openai('project/v1').models.list(),
      (error: unknown) =>
        error instanceof OpenAI.BadRequestError &&
        /models API is not supported by provider project \(beta, Azure AI Foundry\)/.test(error.message),
    );
    assert.equal(azure.requests.length, before, 'nothing is sent for a refused format');
  });

  it('serves Messages clients through Chat Completions at the project', async () => {
    const anthropic = new Anthropic({
      apiKey: 'client-token',
      baseURL: `http://127.0.0.1:${port}/project`,
      maxRetries: 0,
    });
    const message = await anthropic.messages.create({
      model: 'gpt-4.1',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hello messages' }],
    });
    assert.equal(message.content[0]?.type === 'text' && message.content[0].text, 'echo: hello messages');
    assert.equal(message.stop_reason, 'end_turn');
    assert.ok(message.usage.input_tokens > 0);
    const sent = lastSent();
    assert.equal(sent.path, projectPath('/chat/completions'));
    assert.equal(sent.headers['api-key'], KEY);
    assert.equal(sent.headers['x-api-key'], undefined, "the client's key is not forwarded");
    assert.equal(sent.headers['anthropic-version'], undefined, 'no Anthropic header reaches Azure');
  });

  it('serves a Claude deployment through the Anthropic Messages API, as is and translated', async () => {
    const anthropic = new Anthropic({
      apiKey: 'client-token',
      baseURL: `http://127.0.0.1:${port}/project`,
      maxRetries: 0,
    });
    const message = await anthropic.messages.create({
      model: CLAUDE,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hello native' }],
    });
    assert.equal(message.content[0]?.type === 'text' && message.content[0].text, 'echo: hello native');
    let sent = lastSent();
    assert.equal(sent.path, '/anthropic/v1/messages');
    assert.equal(sent.headers['api-key'], KEY);
    assert.equal(sent.headers['x-api-key'], undefined, "the client's key is not forwarded");
    assert.ok(sent.headers['anthropic-version'], "the Messages client's own anthropic-version");

    let streamed = '';
    const stream = anthropic.messages.stream({
      model: CLAUDE,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'stream native' }],
    });
    stream.on('text', (text) => {
      streamed += text;
    });
    const final = await stream.finalMessage();
    assert.equal(streamed, 'echo: stream native');
    assert.ok(final.usage.output_tokens > 0);

    const completion = await openai('project/v1').chat.completions.create({
      model: CLAUDE,
      messages: [{ role: 'user', content: 'hello translated' }],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: hello translated');
    sent = lastSent();
    assert.equal(sent.path, '/anthropic/v1/messages', 'Chat Completions become Messages for Claude');
    assert.equal(sent.headers['anthropic-version'], '2023-06-01', 'the version the translation is written for');
    assert.ok((sent.body as { max_tokens: number }).max_tokens > 0);
  });

  it('serves an Azure OpenAI resource (Alpha) at a dated version: the model is the deployment in the path', async () => {
    const completion = await openai('resource/v1').chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hello resource' }],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: hello resource');
    const sent = lastSent();
    assert.equal(sent.path, `/openai/deployments/${DEPLOYMENT}/chat/completions`);
    assert.equal(sent.query.get('api-version'), API_VERSION);
    assert.equal((sent.body as { model: string }).model, DEPLOYMENT);
    const models = await openai('resource/v1').models.list();
    assert.ok(models.data.some((model) => model.id === DEPLOYMENT));
    assert.equal(lastSent().path, '/openai/models');
  });

  it('with no backend auth, sends an Entra ID token of gw’s environment for the Foundry scope', async () => {
    const before = entra.tokenRequests.length;
    const completion = await openai('entra/v1').chat.completions.create({
      model: 'gpt-4.1',
      messages: [{ role: 'user', content: 'hello entra' }],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: hello entra');
    const sent = lastSent();
    assert.equal(sent.headers.authorization, `Bearer ${ENTRA_TOKEN}`);
    assert.equal(sent.headers['api-key'], undefined);
    const requests = entra.tokenRequests.slice(before);
    assert.equal(requests.length, 1);
    assert.equal(requests[0]!.tenant, TENANT);
    assert.equal(requests[0]!.form.client_id, 'gw-foundry-client');
    // The resource's host (contoso.services.ai.azure.com) picks the scope, though requests go to 127.0.0.1.
    assert.equal(requests[0]!.form.scope, AZURE_FOUNDRY_SCOPE);
  });

  it('serves a GwModel with provider Beta at its project', async () => {
    const completion = await openai('models/v1').chat.completions.create({
      model: 'gpt-4.1',
      messages: [{ role: 'user', content: 'hello model' }],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: hello model');
    const sent = lastSent();
    assert.equal(sent.path, projectPath('/chat/completions'));
    assert.equal(sent.headers['api-key'], KEY);
  });
});
