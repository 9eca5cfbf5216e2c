// The plans of embeddings and count_tokens requests on delta, epsilon and zeta: where each goes
// (the model method path, under a pathPrefix or a configured path, the model override), what is
// sent, how the answer is handled, and the 400s of requests that cannot be sent.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compiled, input, planned, refused } from './helpers.ts';

const EMBED = { model: 'gemini-embedding-001', input: ['a', 'b'] };
const COUNT = { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'hi' }] };

describe('embeddings and count_tokens plans', () => {
  it('delta: batchEmbedContents and countTokens at the model path, the answer converted', () => {
    const delta = compiled({ delta: {} });
    const embed = planned(delta, input('embeddings', EMBED));
    assert.equal(embed.path, '/v1beta/models/gemini-embedding-001:batchEmbedContents');
    assert.equal(embed.method, 'POST');
    assert.equal(embed.providerFormat, 'gemini');
    assert.equal(embed.upstreamModel, 'gemini-embedding-001');
    assert.equal(embed.response.kind, 'convert');
    assert.equal(embed.headers['content-type'], 'application/json');
    const count = planned(delta, input('count_tokens', { ...COUNT, model: 'models/gemini-2.5-flash' }));
    assert.equal(count.path, '/v1beta/models/gemini-2.5-flash:countTokens');
    assert.equal(count.headers['anthropic-version'], undefined);
    assert.deepEqual(count.body, { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
  });

  it('the pathPrefix and the model override; a configured path (the chat endpoint) refuses them', () => {
    assert.equal(
      planned(compiled({ delta: {}, pathPrefix: '/gemini' }), input('embeddings', EMBED)).path,
      '/gemini/models/gemini-embedding-001:batchEmbedContents',
    );
    const overridden = planned(compiled({ delta: { model: 'text-embedding-004' } }), input('embeddings', EMBED));
    assert.equal(overridden.path, '/v1beta/models/text-embedding-004:batchEmbedContents');
    assert.equal((overridden.body!.requests as { model: string }[])[0]!.model, 'models/text-embedding-004');
    // A configured path is the generateContent endpoint: nothing else is sent to it.
    const configured = refused(compiled({ delta: {}, path: '/custom/generate' }), input('embeddings', EMBED));
    assert.match(configured.message, /configured path is its generateContent endpoint; batchEmbedContents/);
    const zeta = refused(compiled({ zeta: {}, path: '/custom/converse' }), input('count_tokens', COUNT));
    assert.match(zeta.message, /configured path is its Converse endpoint; token counting/);
  });

  it('epsilon: predict for text embedding models, embedContent for Gemini ones, countTokens, under the project', () => {
    const epsilon = compiled({ epsilon: { projectId: 'p1', region: 'europe-west4' } });
    const base = '/v1/projects/p1/locations/europe-west4/publishers/google/models';
    const embed = planned(epsilon, input('embeddings', { model: 'text-embedding-005', input: 'x' }));
    assert.equal(embed.path, `${base}/text-embedding-005:predict`);
    assert.equal(embed.providerFormat, 'vertex-predict');
    assert.equal(planned(epsilon, input('count_tokens', COUNT)).path, `${base}/gemini-2.5-flash:countTokens`);
    const embedContent = planned(epsilon, input('embeddings', { model: 'gemini-embedding-2', input: 'x' }));
    assert.equal(embedContent.path, `${base}/gemini-embedding-2:embedContent`);
    assert.equal(embedContent.providerFormat, 'gemini');
  });

  it('zeta: InvokeModel and CountTokens at the model path, escaped as the AWS SDK escapes it', () => {
    const zeta = compiled({ zeta: { region: 'eu-west-1' } });
    const embed = planned(zeta, input('embeddings', { model: 'amazon.titan-embed-text-v2:0', input: 'x' }));
    assert.equal(embed.path, '/model/amazon.titan-embed-text-v2%3A0/invoke');
    assert.equal(embed.providerFormat, 'bedrock-invoke');
    assert.deepEqual(embed.body, { inputText: 'x', normalize: true });
    const count = planned(zeta, input('count_tokens', { ...COUNT, model: 'us.anthropic.claude-sonnet-4-5-v1:0' }));
    assert.equal(count.path, '/model/us.anthropic.claude-sonnet-4-5-v1%3A0/count-tokens');
    assert.equal(count.providerFormat, 'converse');
    assert.deepEqual(count.body, { input: { converse: { messages: [{ role: 'user', content: [{ text: 'hi' }] }] } } });
    // A cross-region profile or an ARN of a known embedding model is recognised by its model id.
    const profile = planned(
      zeta,
      input('embeddings', { model: 'us.cohere.embed-v4:0', input: ['x'], dimensions: 256 }),
    );
    assert.deepEqual(profile.body, { texts: ['x'], input_type: 'search_document', output_dimension: 256 });
  });

  it('answers 400 for a request it cannot send, in the client format', () => {
    const zeta = compiled({ zeta: {} });
    const noModel = refused(zeta, input('embeddings', { input: 'x' }));
    assert.equal(noModel.status, 400);
    assert.match(noModel.message, /must name a model/);
    assert.match(refused(compiled({ delta: {} }), input('embeddings', { input: 'x' })).message, /names no model/);
    const tokens = refused(compiled({ delta: {} }), input('embeddings', { model: 'm', input: [1, 2] }));
    assert.match(tokens.message, /token arrays/);
    const encoding = refused(compiled({ delta: {} }), input('embeddings', { ...EMBED, encoding_format: 'int8' }));
    assert.match(encoding.message, /encoding_format/);
    const count = refused(compiled({ delta: {} }), input('count_tokens', { model: 'm', messages: 'hi' }));
    assert.equal(JSON.parse(count.response().body).type, 'error', "Anthropic's error shape");
  });

  it('names embeddings and count_tokens among what the family serves', () => {
    const models = refused(compiled({ zeta: {} }), input('models', undefined));
    assert.match(models.message, /serves completions, messages, responses, gemini, embeddings, count_tokens/);
    const delta = refused(compiled({ delta: {} }), input('models', undefined));
    assert.match(delta.message, /embeddings, count_tokens/);
  });
});
