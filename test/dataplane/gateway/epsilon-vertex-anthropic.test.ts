// Anthropic's Claude models on Vertex AI (the epsilon family's rawPredict) through gw. A stand-in
// for Vertex's Anthropic endpoints on loopback (…/publishers/anthropic/models/{model}:rawPredict,
// :streamRawPredict, count-tokens:rawPredict; a bearer access token required) is first proven
// by @anthropic-ai/vertex-sdk's own AnthropicVertex client; then @anthropic-ai/sdk (Messages,
// streamed and not, count_tokens) and openai (Chat Completions and Responses, streamed and not)
// reach it through gw, which moves the model into the path, writes Vertex's anthropic_version in
// the body, sends its own token, and answers Vertex's errors (Google's shape from the platform,
// Anthropic's from the model) in each client's format.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import OpenAI from 'openai';
import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { fixedAccessToken } from '../../helpers/google-stand-ins.ts';
import type { MockServer, RecordedRequest } from '../../support/providers/mock-server.ts';
import { startVertexAnthropicMock } from '../../support/providers/vertex-anthropic-mock.ts';

const ROUTES =
  '{/v1/chat/completions: Completions, /v1/messages: Messages, /v1/responses: Responses, /v1/messages/count_tokens: GammaTokenCount}';
const PROJECT = 'my-project';
const LOCATION = 'us-east5';
const TOKEN = 'ya29.test-access-token';
const MODEL = 'claude-sonnet-4-5@20250929';
const MODELS_PATH = `/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/anthropic/models`;
const EPSILON = `epsilon: {projectId: ${PROJECT}, region: ${LOCATION}}`;

type VertexAuthClient = NonNullable<ConstructorParameters<typeof AnthropicVertex>[0]>['authClient'];

/** An auth client holding one access token (see fixedAccessToken), typed as the SDK's. */
function fixedToken(token: string): VertexAuthClient {
  return fixedAccessToken(token) as unknown as VertexAuthClient;
}

function vertexClient(url: string, token: string): AnthropicVertex {
  return new AnthropicVertex({
    baseURL: `${url}/v1`,
    region: LOCATION,
    projectId: PROJECT,
    authClient: fixedToken(token),
    maxRetries: 0,
  });
}

function body(request: RecordedRequest): Record<string, unknown> {
  return request.body as Record<string, unknown>;
}

describe('epsilon (Google Vertex AI) provider, Anthropic models', () => {
  let vertex: MockServer;
  let gw: TestGateway;
  let port: number;
  let anthropic: Anthropic;
  let openai: OpenAI;

  before(async () => {
    vertex = await startVertexAnthropicMock({ project: PROJECT, location: LOCATION, token: TOKEN, models: [MODEL] });
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('vertex', vertex.port, EPSILON, TOKEN, ROUTES),
        aiBackendYaml('stale', vertex.port, EPSILON, 'ya29.expired', ROUTES),
        llmRouteYaml(['vertex', 'stale']),
      ].join(''),
    });
    anthropic = new Anthropic({ apiKey: 'client-token', baseURL: `http://127.0.0.1:${port}/vertex`, maxRetries: 0 });
    openai = new OpenAI({ apiKey: 'client-token', baseURL: `http://127.0.0.1:${port}/vertex/v1`, maxRetries: 0 });
  });

  after(async () => {
    await gw?.stop();
    await vertex?.close();
  });

  it('the stand-in speaks rawPredict as @anthropic-ai/vertex-sdk expects it', async () => {
    const client = vertexClient(vertex.url, TOKEN);
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hello vertex' }],
    });
    assert.deepEqual(message.content, [{ type: 'text', text: 'echo: hello vertex' }]);
    assert.match(message.id, /^msg_vrtx_/);
    let sent = vertex.requests.at(-1)!;
    assert.equal(sent.path, `${MODELS_PATH}/${MODEL}:rawPredict`);
    assert.equal(sent.headers.authorization, `Bearer ${TOKEN}`);
    assert.equal(body(sent).model, undefined, 'the SDK moves the model into the path');
    assert.equal(typeof body(sent).anthropic_version, 'string', 'and the version into the body');

    const stream = client.messages.stream({
      model: MODEL,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'one two three' }],
    });
    const pieces: string[] = [];
    stream.on('text', (text) => pieces.push(text));
    const final = await stream.finalMessage();
    assert.deepEqual(final.content, [{ type: 'text', text: 'echo: one two three' }]);
    assert.ok(pieces.length > 1, 'streamed in several events');
    assert.equal(vertex.requests.at(-1)!.path, `${MODELS_PATH}/${MODEL}:streamRawPredict`);

    const count = await client.messages.countTokens({ model: MODEL, messages: [{ role: 'user', content: 'a b c' }] });
    assert.ok(count.input_tokens > 0);
    sent = vertex.requests.at(-1)!;
    assert.equal(sent.path, `${MODELS_PATH}/count-tokens:rawPredict`);
    assert.equal(body(sent).model, MODEL, 'count-tokens takes the model in the body');

    await assert.rejects(
      vertexClient(vertex.url, 'wrong').messages.create({
        model: MODEL,
        max_tokens: 8,
        messages: [{ role: 'user', content: 'x' }],
      }),
      (error: unknown) =>
        error instanceof Anthropic.AuthenticationError && /invalid authentication/.test(error.message),
    );
    await assert.rejects(
      client.messages.create({ model: 'claude-unknown@1', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }),
      (error: unknown) => error instanceof Anthropic.NotFoundError && /Publisher Model/.test(error.message),
    );
  });

  it("serves Messages from rawPredict: the model in the path, Vertex's version in the body, gw's token", async () => {
    const message = await anthropic.messages.create(
      { model: MODEL, max_tokens: 64, system: 'be brief', messages: [{ role: 'user', content: 'hello claude' }] },
      { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } },
    );
    assert.equal(message.content[0]!.type === 'text' && message.content[0]!.text, 'echo: hello claude');
    assert.equal(message.model, MODEL);
    assert.equal(message.stop_reason, 'end_turn');
    const sent = vertex.requests.at(-1)!;
    assert.equal(sent.path, `${MODELS_PATH}/${MODEL}:rawPredict`);
    assert.equal(sent.headers.authorization, `Bearer ${TOKEN}`, "gw's token, not the client's");
    assert.equal(sent.headers['x-api-key'], undefined);
    assert.equal(sent.headers['anthropic-beta'], 'context-1m-2025-08-07', 'betas go as the Vertex SDK sends them');
    assert.equal(body(sent).model, undefined);
    assert.equal(body(sent).anthropic_version, 'vertex-2023-10-16');
    assert.equal(body(sent).system, 'be brief');
  });

  it('streams Messages from streamRawPredict', async () => {
    const stream = anthropic.messages.stream({
      model: `anthropic/${MODEL}`,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'a streamed answer' }],
    });
    const pieces: string[] = [];
    stream.on('text', (text) => pieces.push(text));
    const final = await stream.finalMessage();
    assert.equal(pieces.join(''), 'echo: a streamed answer');
    assert.ok(pieces.length > 1);
    assert.ok(final.usage.output_tokens > 0);
    const sent = vertex.requests.at(-1)!;
    assert.equal(sent.path, `${MODELS_PATH}/${MODEL}:streamRawPredict`, 'the anthropic/ prefix is not sent');
    assert.equal(body(sent).stream, true);
    assert.equal(body(sent).model, undefined);
  });

  it('counts tokens at count-tokens:rawPredict, the model in the body', async () => {
    const count = await anthropic.messages.countTokens({
      model: MODEL,
      messages: [{ role: 'user', content: 'count these four words' }],
    });
    assert.ok(count.input_tokens >= 4);
    const sent = vertex.requests.at(-1)!;
    assert.equal(sent.path, `${MODELS_PATH}/count-tokens:rawPredict`);
    assert.equal(body(sent).model, MODEL);
    assert.equal(body(sent).anthropic_version, 'vertex-2023-10-16');
  });

  it('serves Chat Completions (streamed and not) by translation to Messages', async () => {
    const completion = await openai.chat.completions.create({
      model: MODEL,
      max_tokens: 64,
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello from openai' },
      ],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: hello from openai');
    assert.equal(completion.choices[0]!.finish_reason, 'stop');
    assert.equal(completion.model, MODEL);
    assert.ok(completion.usage!.prompt_tokens > 0);
    let sent = vertex.requests.at(-1)!;
    assert.equal(sent.path, `${MODELS_PATH}/${MODEL}:rawPredict`);
    assert.equal(body(sent).system, 'be brief');
    assert.equal(body(sent).model, undefined);
    assert.equal(body(sent).anthropic_version, 'vertex-2023-10-16');

    const stream = await openai.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'stream these words' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    assert.equal(text, 'echo: stream these words');
    assert.ok(usage && usage.completion_tokens > 0);
    sent = vertex.requests.at(-1)!;
    assert.equal(sent.path, `${MODELS_PATH}/${MODEL}:streamRawPredict`);
  });

  it("keeps Google's headers on a translated request (Vertex hosts the model) and drops OpenAI's", async () => {
    await openai.chat.completions.create(
      { model: MODEL, messages: [{ role: 'user', content: 'billed to a project' }] },
      { headers: { 'x-goog-user-project': 'billing-project', 'openai-organization': 'org-1' } },
    );
    const sent = vertex.requests.at(-1)!;
    assert.equal(sent.path, `${MODELS_PATH}/${MODEL}:rawPredict`);
    assert.equal(sent.headers['x-goog-user-project'], 'billing-project');
    assert.equal(sent.headers['openai-organization'], undefined);
  });

  it('serves the Responses API (streamed and not) by translation to Messages', async () => {
    const response = await openai.responses.create({ model: MODEL, input: 'hello responses' });
    assert.equal(response.output_text, 'echo: hello responses');
    assert.equal(response.status, 'completed');
    assert.equal(vertex.requests.at(-1)!.path, `${MODELS_PATH}/${MODEL}:rawPredict`);

    const stream = await openai.responses.create({ model: MODEL, input: 'stream a response', stream: true });
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed') completed = event.response;
    }
    assert.equal(text, 'echo: stream a response');
    assert.ok(completed && completed.usage!.output_tokens > 0);
    assert.equal(vertex.requests.at(-1)!.path, `${MODELS_PATH}/${MODEL}:streamRawPredict`);
  });

  it("answers the platform's errors (Google's shape) in the client's format, with their status", async () => {
    const staleAnthropic = new Anthropic({ apiKey: 'c', baseURL: `http://127.0.0.1:${port}/stale`, maxRetries: 0 });
    const staleOpenai = new OpenAI({ apiKey: 'c', baseURL: `http://127.0.0.1:${port}/stale/v1`, maxRetries: 0 });
    await assert.rejects(
      staleAnthropic.messages.create({ model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }),
      (error: unknown) =>
        error instanceof Anthropic.AuthenticationError &&
        error.error !== undefined &&
        (error.error as { error: { type: string } }).error.type === 'authentication_error' &&
        /invalid authentication credentials/.test(error.message),
    );
    await assert.rejects(
      staleAnthropic.messages.countTokens({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }),
      (error: unknown) => error instanceof Anthropic.AuthenticationError,
    );
    await assert.rejects(
      staleOpenai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }),
      (error: unknown) =>
        error instanceof OpenAI.AuthenticationError && /invalid authentication credentials/.test(error.message),
    );
    // An unknown model: Vertex's 404 NOT_FOUND.
    await assert.rejects(
      anthropic.messages.create({
        model: 'claude-unknown@1',
        max_tokens: 8,
        messages: [{ role: 'user', content: 'x' }],
      }),
      (error: unknown) =>
        error instanceof Anthropic.NotFoundError &&
        (error.error as { error: { type: string } }).error.type === 'not_found_error',
    );
    // Quota: RESOURCE_EXHAUSTED.
    vertex.script(`${MODELS_PATH}/${MODEL}:rawPredict`, {
      reply: { kind: 'error', status: 429, message: 'Quota exceeded.' },
    });
    await assert.rejects(
      anthropic.messages.create({ model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }),
      (error: unknown) => error instanceof Anthropic.RateLimitError && /Quota exceeded/.test(error.message),
    );
  });

  it("answers the model's errors (Anthropic's shape) in the client's format", async () => {
    const invalid = {
      kind: 'body' as const,
      status: 400,
      body: { type: 'error', error: { type: 'invalid_request_error', message: 'messages: roles must alternate' } },
    };
    vertex.script(`${MODELS_PATH}/${MODEL}:rawPredict`, { reply: invalid }, 2);
    await assert.rejects(
      openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }),
      (error: unknown) => error instanceof OpenAI.BadRequestError && /roles must alternate/.test(error.message),
    );
    await assert.rejects(
      anthropic.messages.create({ model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }),
      (error: unknown) =>
        error instanceof Anthropic.BadRequestError &&
        (error.error as { error: { type: string } }).error.type === 'invalid_request_error' &&
        /roles must alternate/.test(error.message),
    );
  });

  it('refuses a Claude model name that cannot be a path segment, sending nothing', async () => {
    const sent = vertex.requests.length;
    await assert.rejects(
      anthropic.messages.create({
        model: 'claude-x/../../y',
        max_tokens: 8,
        messages: [{ role: 'user', content: 'x' }],
      }),
      (error: unknown) => error instanceof Anthropic.BadRequestError && /not a Claude model id/.test(error.message),
    );
    assert.equal(vertex.requests.length, sent);
  });
});
