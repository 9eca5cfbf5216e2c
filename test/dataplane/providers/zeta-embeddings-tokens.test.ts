// Embeddings and token counts on the zeta family (Amazon Bedrock) through gw. The signing Bedrock
// stand-in (test/helpers/bedrock-stand-in.ts, bedrock-model-operations.ts) is first proven by the
// AWS SDK's own InvokeModelCommand (Titan Text Embeddings V2, Cohere Embed) and CountTokensCommand;
// then the openai SDK's embeddings.create (float and base64) and @anthropic-ai/sdk's
// messages.countTokens reach it through gw, which picks the body by the model id, signs for
// bedrock and translates both ways. A model gw cannot translate for is refused 400, named.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { CountTokensCommand, InvokeModelCommand } from '@aws-sdk/client-bedrock-runtime';
import OpenAI from 'openai';
import { type BedrockStandIn, standInClient, startBedrockStandIn } from '../../helpers/bedrock-stand-in.ts';
import { freePort, gatewayYaml, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { authBackendYaml, prefixRuleYaml } from '../../helpers/objects.ts';
import { mockEmbedding } from '../../support/providers/deterministic.ts';

const KEYS = { accessKeyId: 'AKIDBEDROCK', secretAccessKey: 'bedrock/secret+key' };
const TITAN = 'amazon.titan-embed-text-v2:0';
const COHERE = 'cohere.embed-english-v3';
const CLAUDE = 'anthropic.claude-3-haiku-20240307-v1:0';

describe('embeddings and count_tokens on zeta (Amazon Bedrock) through gw', () => {
  let bedrock: BedrockStandIn;
  let gw: TestGateway;
  let port: number;

  before(async () => {
    bedrock = await startBedrockStandIn((id) =>
      id === KEYS.accessKeyId ? { secretAccessKey: KEYS.secretAccessKey } : undefined,
    );
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}apiVersion: v1
kind: Secret
metadata: {name: aws}
stringData: {accessKey: ${KEYS.accessKeyId}, secretKey: "${KEYS.secretAccessKey}"}
---
${authBackendYaml(
  'bedrock',
  `ai: {provider: {host: 127.0.0.1, port: ${bedrock.port}, zeta: {region: us-west-2}}}`,
  '{cloudone: {secretRef: {name: aws}}}',
)}apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: routes}
spec:
  parentRefs: [{name: ai}]
  rules:
${prefixRuleYaml('v1', 'bedrock')}`,
    });
  });

  after(async () => {
    await gw?.stop();
    await bedrock?.close();
  });

  it('the stand-in embeds and counts tokens as the AWS SDK expects them', async () => {
    const client = standInClient(bedrock, 'us-west-2', KEYS);
    const titan = await client.send(
      new InvokeModelCommand({
        modelId: TITAN,
        contentType: 'application/json',
        accept: 'application/json',
        body: JSON.stringify({ inputText: 'hello titan', dimensions: 256, normalize: true }),
      }),
    );
    const titanBody = JSON.parse(new TextDecoder().decode(titan.body)) as Record<string, unknown>;
    assert.deepEqual(titanBody.embedding, mockEmbedding('hello titan', 256));
    assert.equal(titanBody.inputTextTokenCount, 2);
    const cohere = await client.send(
      new InvokeModelCommand({
        modelId: COHERE,
        body: JSON.stringify({ texts: ['one', 'two words'], input_type: 'search_document' }),
      }),
    );
    const cohereBody = JSON.parse(new TextDecoder().decode(cohere.body)) as Record<string, unknown>;
    assert.deepEqual(cohereBody.embeddings, [mockEmbedding('one', 1024), mockEmbedding('two words', 1024)]);
    const counted = await client.send(
      new CountTokensCommand({
        modelId: CLAUDE,
        input: { converse: { messages: [{ role: 'user', content: [{ text: 'one two three' }] }] } },
      }),
    );
    assert.equal(counted.inputTokens, 3);
    assert.deepEqual(
      bedrock.calls.splice(0).map((call) => call.url),
      [
        `/model/${TITAN.replace(':', '%3A')}/invoke`,
        `/model/${COHERE}/invoke`,
        `/model/${CLAUDE.replace(':', '%3A')}/count-tokens`,
      ],
    );
    assert.deepEqual(bedrock.refused, []);
  });

  it('serves OpenAI embeddings from Titan Text Embeddings V2, signed, float and base64', async () => {
    const openai = new OpenAI({ apiKey: 'unused', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    const floats = await openai.embeddings.create({
      model: TITAN,
      input: 'hello titan',
      dimensions: 256,
      encoding_format: 'float',
    });
    assert.deepEqual(floats.data[0]!.embedding, mockEmbedding('hello titan', 256));
    assert.equal(floats.model, TITAN);
    assert.deepEqual(floats.usage, { prompt_tokens: 2, total_tokens: 2 });
    const call = bedrock.calls.at(-1)!;
    assert.equal(call.url, `/model/${TITAN.replace(':', '%3A')}/invoke`);
    assert.equal(call.verified.region, 'us-west-2');
    assert.equal(call.verified.service, 'bedrock');
    assert.deepEqual(call.body, { inputText: 'hello titan', dimensions: 256, normalize: true });
    // The SDK asks for base64 unless told otherwise, and decodes it.
    const decoded = await openai.embeddings.create({ model: TITAN, input: 'base sixty four' });
    assert.deepEqual(decoded.data[0]!.embedding, mockEmbedding('base sixty four', 1024));
    await new Promise((resolve) => setImmediate(resolve));
    const line = JSON.parse(gw.accessLog.at(-1)!) as Record<string, unknown>;
    assert.equal(line['gen_ai.usage.input_tokens'], 3);
    assert.equal(line['gen_ai.operation.name'], 'embeddings');
  });

  it('serves OpenAI embeddings of several inputs from Cohere Embed, the token count from its header', async () => {
    const openai = new OpenAI({ apiKey: 'unused', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    const floats = await openai.embeddings.create({
      model: COHERE,
      input: ['first text', 'second one here'],
      encoding_format: 'float',
    });
    assert.deepEqual(
      floats.data.map((item) => item.embedding),
      [mockEmbedding('first text', 1024), mockEmbedding('second one here', 1024)],
    );
    assert.deepEqual(floats.usage, { prompt_tokens: 5, total_tokens: 5 });
    assert.deepEqual(bedrock.calls.at(-1)!.body, {
      texts: ['first text', 'second one here'],
      input_type: 'search_document',
    });
    // A client's own Cohere field goes through as it is.
    await openai.embeddings.create({ model: COHERE, input: 'query', input_type: 'search_query' } as never);
    assert.equal(bedrock.calls.at(-1)!.body.input_type, 'search_query');
  });

  it('serves Anthropic count_tokens from CountTokens, the system prompt and tools counted', async () => {
    const anthropic = new Anthropic({ apiKey: 'unused', baseURL: `http://127.0.0.1:${port}`, maxRetries: 0 });
    const counted = await anthropic.messages.countTokens({
      model: CLAUDE,
      system: 'be brief',
      messages: [{ role: 'user', content: 'one two three' }],
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: {} } }],
    });
    assert.deepEqual(counted, { input_tokens: 6 });
    const call = bedrock.calls.at(-1)!;
    assert.equal(call.url, `/model/${CLAUDE.replace(':', '%3A')}/count-tokens`);
    assert.deepEqual(call.body, {
      input: {
        converse: {
          system: [{ text: 'be brief' }],
          messages: [{ role: 'user', content: [{ text: 'one two three' }] }],
          toolConfig: {
            tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: { type: 'object', properties: {} } } } }],
          },
        },
      },
    });
    assert.equal(call.verified.service, 'bedrock');
  });

  it('refuses models and inputs it cannot translate (400, nothing sent), and translates Bedrock errors', async () => {
    const openai = new OpenAI({ apiKey: 'unused', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    const before = bedrock.calls.length;
    await assert.rejects(
      openai.embeddings.create({ model: 'amazon.nova-2-multimodal-embeddings-v1:0', input: 'x' }),
      (error: unknown) =>
        error instanceof OpenAI.BadRequestError &&
        /"amazon.nova-2-multimodal-embeddings-v1:0" is not one of them/.test(error.message),
    );
    await assert.rejects(
      openai.embeddings.create({ model: TITAN, input: ['one', 'two'] }),
      (error: unknown) => error instanceof OpenAI.BadRequestError && /one text per request/.test(error.message),
    );
    await assert.rejects(
      openai.embeddings.create({ model: COHERE, input: 'x', dimensions: 256 }),
      (error: unknown) => error instanceof OpenAI.BadRequestError && /has a fixed size/.test(error.message),
    );
    assert.equal(bedrock.calls.length, before, 'nothing was sent');
    await assert.rejects(
      openai.embeddings.create({ model: TITAN, input: 'x', dimensions: 300 }),
      (error: unknown) =>
        error instanceof OpenAI.BadRequestError && /must be one of 256, 512, 1024/.test(error.message),
    );
    const anthropic = new Anthropic({ apiKey: 'unused', baseURL: `http://127.0.0.1:${port}`, maxRetries: 0 });
    await assert.rejects(
      anthropic.messages.countTokens({ model: CLAUDE, messages: [] }),
      (error: unknown) =>
        error instanceof Anthropic.BadRequestError && /input.converse.messages is required/.test(error.message),
    );
  });
});
