// The epsilon family (Google Vertex AI) through gw. A Vertex stand-in on loopback (Gemini models
// under /v1/projects/{project}/locations/{location}/publishers/google/models/…, a bearer access
// token required) is first proven by @google/genai's own client in Vertex mode; then the openai
// SDK (Chat Completions, streamed and not) and @anthropic-ai/sdk (Messages) reach it through gw,
// whose token goes in Authorization: Bearer and whose model and project go in the URL. Anthropic's
// models on Vertex (rawPredict) are tested in epsilon-vertex-anthropic.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { type GeminiMock, startGeminiMock } from '../../support/providers/gemini-mock.ts';
import { vertexClient } from '../../support/providers/vertex-sdk.ts';

const ROUTES = '{/v1/chat/completions: Completions, /v1/messages: Messages}';
const PROJECT = 'my-project';
const LOCATION = 'us-central1';
const TOKEN = 'ya29.test-access-token';
const MODEL_PATH = `/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/google/models/gemini-2.5-flash`;

describe('epsilon (Google Vertex AI) provider', () => {
  let vertex: GeminiMock;
  let gw: TestGateway;
  let port: number;

  before(async () => {
    vertex = await startGeminiMock({ vertex: { project: PROJECT, location: LOCATION, token: TOKEN } });
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('vertex', vertex.port, `epsilon: {projectId: ${PROJECT}, region: ${LOCATION}}`, TOKEN, ROUTES),
        llmRouteYaml(['vertex']),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await vertex?.close();
  });

  it('the stand-in speaks Vertex AI as @google/genai expects it', async () => {
    const ai = vertexClient(vertex.url, PROJECT, LOCATION, TOKEN);
    const response = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'hello vertex' });
    assert.equal(response.text, 'echo: hello vertex');
    let sent = vertex.requests.at(-1)!;
    assert.equal(sent.path, `${MODEL_PATH}:generateContent`);
    assert.equal(sent.headers.authorization, `Bearer ${TOKEN}`);
    const streamed: string[] = [];
    for await (const chunk of await ai.models.generateContentStream({
      model: 'gemini-2.5-flash',
      contents: 'one two three',
    })) {
      streamed.push(chunk.text ?? '');
    }
    assert.equal(streamed.join(''), 'echo: one two three');
    assert.ok(streamed.length > 1, 'streamed in several chunks');
    sent = vertex.requests.at(-1)!;
    assert.equal(sent.path, `${MODEL_PATH}:streamGenerateContent`);
    assert.equal(sent.query.get('alt'), 'sse');
    await assert.rejects(
      vertexClient(vertex.url, PROJECT, LOCATION, 'wrong').models.generateContent({
        model: 'gemini-2.5-flash',
        contents: 'x',
      }),
      /invalid authentication credentials/,
    );
  });

  it("serves Chat Completions from the project's generateContent, the token as a bearer", async () => {
    const client = new OpenAI({ apiKey: 'client-token', baseURL: `http://127.0.0.1:${port}/vertex/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: 'gemini-2.5-flash',
      max_tokens: 100,
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello epsilon' },
      ],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: hello epsilon');
    assert.equal(completion.choices[0]!.finish_reason, 'stop');
    assert.ok(completion.usage!.prompt_tokens > 0);
    const sent = vertex.requests.at(-1)!;
    assert.equal(sent.path, `${MODEL_PATH}:generateContent`);
    assert.equal(sent.headers.authorization, `Bearer ${TOKEN}`, "gw's token, not the client's");
    assert.equal(sent.headers['x-goog-api-key'], undefined);
    assert.deepEqual(sent.body.systemInstruction, { parts: [{ text: 'be brief' }] });
    assert.equal(sent.body.model, undefined);
  });

  it('streams Chat Completions from streamGenerateContent?alt=sse, usage included', async () => {
    const client = new OpenAI({ apiKey: 'client-token', baseURL: `http://127.0.0.1:${port}/vertex/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'gemini-2.5-flash',
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
    const sent = vertex.requests.at(-1)!;
    assert.equal(sent.path, `${MODEL_PATH}:streamGenerateContent`);
    assert.equal(sent.query.get('alt'), 'sse');
  });

  it('serves Messages (streamed and not) from generateContent', async () => {
    const client = new Anthropic({ apiKey: 'client-token', baseURL: `http://127.0.0.1:${port}/vertex`, maxRetries: 0 });
    const message = await client.messages.create({
      model: 'gemini-2.5-flash',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hello from claude code' }],
    });
    assert.deepEqual(message.content, [{ type: 'text', text: 'echo: hello from claude code' }]);
    assert.equal(message.stop_reason, 'end_turn');
    assert.equal(vertex.requests.at(-1)!.headers['x-api-key'], undefined);
    const stream = client.messages.stream({
      model: 'gemini-2.5-flash',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'a streamed answer' }],
    });
    const final = await stream.finalMessage();
    assert.deepEqual(final.content, [{ type: 'text', text: 'echo: a streamed answer' }]);
    assert.equal(vertex.requests.at(-1)!.path, `${MODEL_PATH}:streamGenerateContent`);
  });

  it("answers Vertex's own errors in the client's format", async () => {
    const port2 = await freePort();
    const gw2 = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port2),
        aiBackendYaml('vertex', vertex.port, `epsilon: {projectId: ${PROJECT}, region: ${LOCATION}}`, 'stale', ROUTES),
        llmRouteYaml(['vertex']),
      ].join(''),
    });
    try {
      const client = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port2}/vertex/v1`, maxRetries: 0 });
      await assert.rejects(
        client.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] }),
        (error: unknown) =>
          error instanceof OpenAI.AuthenticationError && /invalid authentication credentials/.test(error.message),
      );
    } finally {
      await gw2.stop();
    }
  });
});
