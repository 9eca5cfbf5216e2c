// Embeddings and token counts on Google's families through gw. The Gemini stand-in
// (test/support/providers/gemini-mock.ts, google-model-methods.ts) is first proven by @google/genai's
// own models.embedContent and models.countTokens, against the Gemini API (delta:
// :batchEmbedContents, :countTokens) and against Vertex AI (epsilon: :predict for text embedding
// models, :countTokens); then the openai SDK's embeddings.create (float and base64) and
// @anthropic-ai/sdk's messages.countTokens reach each through gw, which translates both ways.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { mockEmbedding } from '../../support/providers/deterministic.ts';
import { type GeminiMock, startGeminiMock } from '../../support/providers/gemini-mock.ts';
import { vertexClient } from '../../support/providers/vertex-sdk.ts';

const ROUTES = '{/v1/embeddings: Embeddings, /v1/messages/count_tokens: GammaTokenCount, /v1/messages: Messages}';
const KEY = 'AIza-test-key';
const PROJECT = 'my-project';
const LOCATION = 'us-central1';
const TOKEN = 'ya29.test-access-token';
const VERTEX_MODELS = `/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/google/models`;

/** OpenAI's base64 embedding: little-endian float32 values. */
function decodeBase64(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
}

async function lastAccessLine(gw: TestGateway): Promise<Record<string, unknown>> {
  await new Promise((resolve) => setImmediate(resolve));
  return JSON.parse(gw.accessLog.at(-1)!) as Record<string, unknown>;
}

describe('embeddings and count_tokens on delta (Gemini API) and epsilon (Vertex AI)', () => {
  let gemini: GeminiMock;
  let vertex: GeminiMock;
  let gw: TestGateway;
  let port: number;

  before(async () => {
    gemini = await startGeminiMock({ apiKey: KEY });
    vertex = await startGeminiMock({ vertex: { project: PROJECT, location: LOCATION, token: TOKEN } });
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('gemini', gemini.port, 'delta: {}', KEY, ROUTES),
        aiBackendYaml('vertex', vertex.port, `epsilon: {projectId: ${PROJECT}, region: ${LOCATION}}`, TOKEN, ROUTES),
        llmRouteYaml(['gemini', 'vertex']),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await gemini?.close();
    await vertex?.close();
  });

  it('the stand-in embeds and counts tokens as @google/genai expects, on the Gemini API and on Vertex AI', async () => {
    const ai = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: gemini.url, apiVersion: 'v1beta' } });
    const embedded = await ai.models.embedContent({
      model: 'gemini-embedding-001',
      contents: ['hello world', 'a b c'],
      config: { outputDimensionality: 4 },
    });
    assert.deepEqual(
      embedded.embeddings?.map((embedding) => embedding.values),
      [mockEmbedding('hello world', 4), mockEmbedding('a b c', 4)],
    );
    assert.equal(embedded.usageMetadata?.promptTokenCount, 5);
    assert.equal(gemini.requests.at(-1)!.path, '/v1beta/models/gemini-embedding-001:batchEmbedContents');
    const counted = await ai.models.countTokens({ model: 'gemini-2.5-flash', contents: 'one two three' });
    assert.equal(counted.totalTokens, 3);
    assert.equal(gemini.requests.at(-1)!.path, '/v1beta/models/gemini-2.5-flash:countTokens');

    const vertexAi = vertexClient(vertex.url, PROJECT, LOCATION, TOKEN);
    const predicted = await vertexAi.models.embedContent({
      model: 'text-embedding-005',
      contents: ['hello vertex'],
      config: { outputDimensionality: 4 },
    });
    assert.deepEqual(predicted.embeddings?.[0]?.values, mockEmbedding('hello vertex', 4));
    assert.equal(predicted.embeddings?.[0]?.statistics?.tokenCount, 2);
    assert.equal(vertex.requests.at(-1)!.path, `${VERTEX_MODELS}/text-embedding-005:predict`);
    const embedContent = await vertexAi.models.embedContent({
      model: 'gemini-embedding-2',
      contents: 'hello gemini embedding',
      config: { outputDimensionality: 4 },
    });
    assert.deepEqual(embedContent.embeddings?.[0]?.values, mockEmbedding('hello gemini embedding', 4));
    assert.equal(embedContent.embeddings?.[0]?.statistics?.tokenCount, 3);
    assert.equal(vertex.requests.at(-1)!.path, `${VERTEX_MODELS}/gemini-embedding-2:embedContent`);
    const vertexCount = await vertexAi.models.countTokens({
      model: 'gemini-2.5-flash',
      contents: 'one two',
      config: { systemInstruction: 'be brief' },
    });
    assert.equal(vertexCount.totalTokens, 4);
    assert.equal(vertex.requests.at(-1)!.path, `${VERTEX_MODELS}/gemini-2.5-flash:countTokens`);
  });

  it('delta: serves OpenAI embeddings from batchEmbedContents, float and base64, usage reported and logged', async () => {
    const client = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/gemini/v1`, maxRetries: 0 });
    const floats = await client.embeddings.create({
      model: 'gemini-embedding-001',
      input: ['hello world', 'a b c'],
      dimensions: 4,
      encoding_format: 'float',
    });
    assert.deepEqual(
      floats.data.map((item) => [item.index, item.embedding]),
      [
        [0, mockEmbedding('hello world', 4)],
        [1, mockEmbedding('a b c', 4)],
      ],
    );
    assert.equal(floats.model, 'gemini-embedding-001');
    assert.deepEqual(floats.usage, { prompt_tokens: 5, total_tokens: 5 });
    const sent = gemini.requests.at(-1)!;
    assert.equal(sent.path, '/v1beta/models/gemini-embedding-001:batchEmbedContents');
    assert.equal(sent.headers['x-goog-api-key'], KEY);
    assert.deepEqual(sent.body, {
      requests: [
        {
          model: 'models/gemini-embedding-001',
          content: { parts: [{ text: 'hello world' }] },
          outputDimensionality: 4,
        },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'a b c' }] }, outputDimensionality: 4 },
      ],
    });
    const line = await lastAccessLine(gw);
    assert.equal(line['gen_ai.usage.input_tokens'], 5);
    assert.equal(line['gen_ai.operation.name'], 'embeddings');

    // The SDK asks for base64 unless told otherwise, and decodes it.
    const decoded = await client.embeddings.create({ model: 'gemini-embedding-001', input: 'one text' });
    assert.deepEqual(decoded.data[0]!.embedding, mockEmbedding('one text', 8));
    const raw = await fetch(`http://127.0.0.1:${port}/gemini/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gemini-embedding-001', input: 'one text', encoding_format: 'base64' }),
    });
    const body = (await raw.json()) as { data: { embedding: string }[] };
    assert.equal(typeof body.data[0]!.embedding, 'string');
    assert.deepEqual(decodeBase64(body.data[0]!.embedding), mockEmbedding('one text', 8));
  });

  it('delta: serves Anthropic count_tokens from countTokens, the system prompt and tools counted', async () => {
    const client = new Anthropic({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/gemini`, maxRetries: 0 });
    const plain = await client.messages.countTokens({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'one two three' }],
    });
    assert.deepEqual(plain, { input_tokens: 3 });
    assert.deepEqual(gemini.requests.at(-1)!.body, {
      contents: [{ role: 'user', parts: [{ text: 'one two three' }] }],
    });
    const full = await client.messages.countTokens({
      model: 'gemini-2.5-flash',
      system: 'be brief',
      messages: [{ role: 'user', content: 'one two three' }],
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: {} } }],
    });
    assert.equal(full.input_tokens, 6);
    const sent = gemini.requests.at(-1)!;
    assert.equal(sent.path, '/v1beta/models/gemini-2.5-flash:countTokens');
    const generate = sent.body.generateContentRequest as Record<string, unknown>;
    assert.equal(generate.model, 'models/gemini-2.5-flash');
    assert.deepEqual(generate.systemInstruction, { parts: [{ text: 'be brief' }] });
    assert.equal(sent.headers['anthropic-version'], undefined, 'no Anthropic header reaches Google');
  });

  it("delta: refuses what cannot be translated and answers Gemini's errors in the client's format", async () => {
    const client = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/gemini/v1`, maxRetries: 0 });
    const before = gemini.requests.length;
    await assert.rejects(
      client.embeddings.create({ model: 'gemini-embedding-001', input: [[1, 2, 3]] }),
      (error: unknown) =>
        error instanceof OpenAI.BadRequestError && /token arrays cannot be translated/.test(error.message),
    );
    await assert.rejects(
      client.embeddings.create({ model: '../admin', input: 'x' }),
      (error: unknown) => error instanceof OpenAI.BadRequestError && /not a Gemini model id/.test(error.message),
    );
    assert.equal(gemini.requests.length, before, 'nothing was sent');
    await assert.rejects(
      client.embeddings.create({ model: 'gemini-embedding-001', input: 'x', dimensions: 5000 }),
      (error: unknown) => error instanceof OpenAI.BadRequestError && /outputDimensionality/.test(error.message),
    );
  });

  it('epsilon: serves OpenAI embeddings from predict and Anthropic count_tokens from countTokens', async () => {
    const client = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/vertex/v1`, maxRetries: 0 });
    const floats = await client.embeddings.create({
      model: 'text-embedding-005',
      input: ['hello vertex', 'x y z'],
      dimensions: 4,
      encoding_format: 'float',
    });
    assert.deepEqual(
      floats.data.map((item) => item.embedding),
      [mockEmbedding('hello vertex', 4), mockEmbedding('x y z', 4)],
    );
    assert.deepEqual(floats.usage, { prompt_tokens: 5, total_tokens: 5 });
    let sent = vertex.requests.at(-1)!;
    assert.equal(sent.path, `${VERTEX_MODELS}/text-embedding-005:predict`);
    assert.equal(sent.headers.authorization, `Bearer ${TOKEN}`);
    assert.deepEqual(sent.body, {
      instances: [{ content: 'hello vertex' }, { content: 'x y z' }],
      parameters: { outputDimensionality: 4 },
    });
    const decoded = await client.embeddings.create({ model: 'text-embedding-005', input: 'based' });
    assert.deepEqual(decoded.data[0]!.embedding, mockEmbedding('based', 8));
    assert.equal((await lastAccessLine(gw))['gen_ai.usage.input_tokens'], 1);

    const anthropic = new Anthropic({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/vertex`, maxRetries: 0 });
    const counted = await anthropic.messages.countTokens({
      model: 'gemini-2.5-flash',
      system: 'be brief',
      messages: [{ role: 'user', content: 'one two three' }],
    });
    assert.deepEqual(counted, { input_tokens: 5 });
    sent = vertex.requests.at(-1)!;
    assert.equal(sent.path, `${VERTEX_MODELS}/gemini-2.5-flash:countTokens`);
    assert.deepEqual(sent.body, {
      contents: [{ role: 'user', parts: [{ text: 'one two three' }] }],
      systemInstruction: { parts: [{ text: 'be brief' }] },
    });
  });

  it('epsilon: serves a Gemini embedding model from embedContent, one text per request', async () => {
    const client = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/vertex/v1`, maxRetries: 0 });
    const floats = await client.embeddings.create({
      model: 'gemini-embedding-2',
      input: 'one gemini text',
      dimensions: 4,
      encoding_format: 'float',
    });
    assert.deepEqual(floats.data[0]!.embedding, mockEmbedding('one gemini text', 4));
    assert.deepEqual(floats.usage, { prompt_tokens: 3, total_tokens: 3 });
    const sent = vertex.requests.at(-1)!;
    assert.equal(sent.path, `${VERTEX_MODELS}/gemini-embedding-2:embedContent`);
    assert.deepEqual(sent.body, {
      content: { role: 'user', parts: [{ text: 'one gemini text' }] },
      embedContentConfig: { outputDimensionality: 4 },
    });
    const before = vertex.requests.length;
    await assert.rejects(
      client.embeddings.create({ model: 'gemini-embedding-2', input: ['a', 'b'] }),
      (error: unknown) => error instanceof OpenAI.BadRequestError && /one text per request/.test(error.message),
    );
    assert.equal(vertex.requests.length, before, 'nothing was sent');
  });
});
