// The embeddings and count_tokens translations of formats/exchanges.ts on their own: the bodies
// written for each vendor, the answers read back (vectors in order, base64 as little-endian
// float32, usage only when reported), and the answers refused as not of their API.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type ExchangeTranslation,
  TranslationError,
  translateCountTokens,
  translateEmbeddings,
} from '../../../src/dataplane/ai/formats/index.ts';

const NO_HEADERS = () => undefined;

function translation(value: ExchangeTranslation | string): ExchangeTranslation {
  assert.ok(typeof value !== 'string', `unexpected refusal: ${value}`);
  return value;
}

describe('embeddings translations', () => {
  it('Gemini: one request per text, unknown fields in each, user dropped with a warning', () => {
    const gemini = translation(
      translateEmbeddings('gemini', { input: ['a', 'b'], taskType: 'RETRIEVAL_QUERY', user: 'u1' }, 'm'),
    );
    assert.deepEqual(gemini.body, {
      requests: [
        { taskType: 'RETRIEVAL_QUERY', model: 'models/m', content: { parts: [{ text: 'a' }] } },
        { taskType: 'RETRIEVAL_QUERY', model: 'models/m', content: { parts: [{ text: 'b' }] } },
      ],
    });
    assert.deepEqual(
      gemini.warnings?.map((warning) => warning.path),
      ['user'],
    );
    const answer = gemini.readAnswer({ embeddings: [{ values: [0.5, -1] }, { values: [0.25, 2] }] }, NO_HEADERS);
    assert.deepEqual(answer.body, {
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [0.5, -1] },
        { object: 'embedding', index: 1, embedding: [0.25, 2] },
      ],
      model: 'm',
    });
    assert.equal(answer.usage, undefined, 'no usage when Gemini reports none');
    assert.throws(() => gemini.readAnswer({ embeddings: [{ values: [1] }] }, NO_HEADERS), TranslationError);
    assert.throws(
      () => gemini.readAnswer({ embeddings: [{ values: ['x'] }, { values: [1] }] }, NO_HEADERS),
      TranslationError,
    );
  });

  it('base64: little-endian float32, as OpenAI encodes it', () => {
    const gemini = translation(translateEmbeddings('gemini', { input: 'a', encoding_format: 'base64' }, 'm'));
    const answer = gemini.readAnswer({ embeddings: [{ values: [1, -0.5, 0.1] }] }, NO_HEADERS);
    const text = (answer.body.data as { embedding: string }[])[0]!.embedding;
    // 1.0f = 0x3F800000, -0.5f = 0xBF000000, 0.1f = 0x3DCCCCCD, each written low byte first.
    const expected = Buffer.from([0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xbf, 0xcd, 0xcc, 0xcc, 0x3d]);
    assert.equal(text, expected.toString('base64'));
  });

  it('Vertex predict: usage is the sum of the token counts, and none when one is missing', () => {
    const vertex = translation(translateEmbeddings('vertex-predict', { input: ['a', 'b'], dimensions: 2 }, 'm'));
    assert.deepEqual(vertex.body, {
      instances: [{ content: 'a' }, { content: 'b' }],
      parameters: { outputDimensionality: 2 },
    });
    const counted = vertex.readAnswer(
      {
        predictions: [
          { embeddings: { values: [1, 0], statistics: { token_count: 2 } } },
          { embeddings: { values: [0, 1], statistics: { token_count: 3 } } },
        ],
      },
      NO_HEADERS,
    );
    assert.deepEqual(counted.usage, { inputTokens: 5, outputTokens: 0, totalTokens: 5 });
    assert.deepEqual(counted.body.usage, { prompt_tokens: 5, total_tokens: 5 });
    const uncounted = vertex.readAnswer(
      {
        predictions: [
          { embeddings: { values: [1, 0], statistics: { token_count: 2 } } },
          { embeddings: { values: [0, 1] } },
        ],
      },
      NO_HEADERS,
    );
    assert.equal(uncounted.usage, undefined);
  });

  it('Vertex embedContent: one text, unknown fields into embedContentConfig, the usage from usageMetadata', () => {
    const single = translation(
      translateEmbeddings('vertex-embed-content', { input: ['a'], taskType: 'CLUSTERING' }, 'g'),
    );
    assert.deepEqual(single.body, {
      content: { role: 'user', parts: [{ text: 'a' }] },
      embedContentConfig: { taskType: 'CLUSTERING' },
    });
    const answer = single.readAnswer(
      { embedding: { values: [0.5] }, usageMetadata: { promptTokenCount: 1 } },
      NO_HEADERS,
    );
    assert.deepEqual(answer.body.usage, { prompt_tokens: 1, total_tokens: 1 });
    assert.throws(
      () => translateEmbeddings('vertex-embed-content', { input: ['a', 'b'] }, 'g'),
      /one text per request/,
    );
  });

  it('Bedrock: Titan G1 takes no dimensions; Cohere floats by type and the header count', () => {
    assert.throws(
      () => translateEmbeddings('bedrock-invoke', { input: 'x', dimensions: 8 }, 'amazon.titan-embed-text-v1'),
      /fixed size/,
    );
    const titan = translation(
      translateEmbeddings('bedrock-invoke', { input: 'x', normalize: false }, 'amazon.titan-embed-text-v2:0'),
    );
    assert.deepEqual(titan.body, { inputText: 'x', normalize: false }, "the client's normalize wins");
    const cohere = translation(
      translateEmbeddings(
        'bedrock-invoke',
        { input: ['a'], embedding_types: ['float'] },
        'cohere.embed-multilingual-v3',
      ),
    );
    const answer = cohere.readAnswer({ embeddings: { float: [[0.5]] } }, (name) =>
      name === 'x-amzn-bedrock-input-token-count' ? '7' : undefined,
    );
    assert.deepEqual((answer.body.data as { embedding: number[] }[])[0]!.embedding, [0.5]);
    assert.equal(answer.usage?.inputTokens, 7);
    assert.equal(cohere.readAnswer({ embeddings: [[0.5]] }, () => 'seven').usage, undefined);
    assert.match(
      String(translateEmbeddings('bedrock-invoke', { input: 'x' }, 'amazon.titan-embed-image-v1')),
      /"amazon.titan-embed-image-v1" is not one of them/,
    );
  });
});

describe('count_tokens translations', () => {
  const BODY = {
    model: 'm',
    system: 'be brief',
    messages: [{ role: 'user', content: 'hi' }],
    tools: [{ name: 'f', input_schema: { type: 'object' } }],
    tool_choice: { type: 'any' },
  };

  it('Gemini API: the whole generateContent request, Vertex: its countTokens fields only', () => {
    const gemini = translateCountTokens('gemini', BODY, 'm');
    const generate = gemini.body.generateContentRequest as Record<string, unknown>;
    assert.equal(generate.model, 'models/m');
    assert.ok(generate.toolConfig !== undefined, 'tool choice counted on the Gemini API');
    const vertex = translateCountTokens('vertex', BODY, 'm');
    assert.deepEqual(Object.keys(vertex.body).sort(), ['contents', 'systemInstruction', 'tools']);
    assert.deepEqual(
      vertex.warnings?.map((warning) => warning.path),
      ['toolConfig'],
    );
    assert.deepEqual(vertex.readAnswer({ totalTokens: 9, totalBillableCharacters: 30 }, NO_HEADERS).body, {
      input_tokens: 9,
    });
    assert.throws(() => vertex.readAnswer({}, NO_HEADERS), TranslationError);
  });

  it('Bedrock: the Converse fields CountTokens takes, under input.converse', () => {
    const converse = translateCountTokens('converse', { ...BODY, max_tokens: 10, temperature: 0.5 }, 'm');
    const inner = (converse.body.input as { converse: Record<string, unknown> }).converse;
    assert.deepEqual(Object.keys(inner).sort(), ['messages', 'system', 'toolConfig']);
    assert.deepEqual(
      converse.warnings?.map((warning) => warning.path),
      ['inferenceConfig'],
    );
    assert.deepEqual(converse.readAnswer({ inputTokens: 12 }, NO_HEADERS), {
      body: { input_tokens: 12 },
      usage: { inputTokens: 12, outputTokens: 0, totalTokens: 12 },
    });
  });
});
