// Plans for a Gemini client (route types GenerateContent and DeltaCountTokens): as it is to the
// Gemini families (the model from the path moves back into the URL), translated to every other
// family, and countTokens counted by Gemini or by Anthropic, refused in Google's shape elsewhere.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../../src/dataplane/ai/formats/index.ts';
import { compiled, input, planned, refused } from './helpers.ts';

// What gw reads from POST /v1beta/models/gemini-2.5-flash:generateContent: the path's model in the body.
const GEMINI: JsonObject = {
  model: 'gemini-2.5-flash',
  systemInstruction: { parts: [{ text: 'Be terse.' }] },
  contents: [{ role: 'user', parts: [{ text: 'hello there' }] }],
  generationConfig: { maxOutputTokens: 20 },
};

const WITHOUT_MODEL = (({ model: _m, ...rest }) => rest)(GEMINI);

test('delta: generateContent goes as it is, the model in the URL and not in the body', () => {
  const plan = planned(compiled({ delta: {} }), input('gemini', GEMINI));
  assert.equal(plan.path, '/v1beta/models/gemini-2.5-flash:generateContent');
  assert.deepEqual(plan.query, []);
  assert.equal(plan.providerFormat, 'gemini');
  assert.deepEqual(plan.body, WITHOUT_MODEL);
  assert.deepEqual(plan.response, { kind: 'same', dropUsageOnlyChunk: false });
  assert.equal(plan.requestModel, 'gemini-2.5-flash');
  assert.equal(plan.upstreamModel, 'gemini-2.5-flash');
});

test('delta: a stream goes to streamGenerateContent?alt=sse; the model override replaces the path model', () => {
  const plan = planned(compiled({ delta: { model: 'gemini-2.5-pro' } }), input('gemini', { ...GEMINI, stream: true }));
  assert.equal(plan.path, '/v1beta/models/gemini-2.5-pro:streamGenerateContent');
  assert.deepEqual(plan.query, [['alt', 'sse']]);
  assert.equal(plan.upstreamModel, 'gemini-2.5-pro');
});

test('epsilon: generateContent and countTokens under the project and region', () => {
  const provider = compiled({ epsilon: { projectId: 'p1', region: 'us-central1' } });
  const base = '/v1/projects/p1/locations/us-central1/publishers/google/models/gemini-2.5-flash';
  assert.equal(planned(provider, input('gemini', GEMINI)).path, `${base}:generateContent`);
  const count = planned(provider, input('gemini_count_tokens', GEMINI));
  assert.equal(count.path, `${base}:countTokens`);
  assert.equal(count.providerFormat, 'gemini_count_tokens');
  assert.deepEqual(count.body, WITHOUT_MODEL);
});

test('alpha: generateContent is translated to Chat Completions with the path model', () => {
  const plan = planned(compiled({ alpha: {} }), input('gemini', { ...GEMINI, stream: true }));
  assert.equal(plan.path, '/v1/chat/completions');
  assert.deepEqual(plan.body, {
    model: 'gemini-2.5-flash',
    messages: [
      { role: 'system', content: 'Be terse.' },
      { role: 'user', content: 'hello there' },
    ],
    max_completion_tokens: 20,
    stream: true,
    stream_options: { include_usage: true },
  });
  assert.deepEqual(plan.response, { kind: 'translate', from: 'completions', to: 'gemini', includeUsage: false });
});

test('gamma: generateContent is translated to Messages; countTokens to count_tokens', () => {
  const gamma = compiled({ gamma: {} });
  const plan = planned(gamma, input('gemini', GEMINI));
  assert.equal(plan.path, '/v1/messages');
  assert.equal(plan.providerFormat, 'messages');
  assert.equal((plan.body as JsonObject).system, 'Be terse.');
  const count = planned(gamma, input('gemini_count_tokens', GEMINI));
  assert.equal(count.path, '/v1/messages/count_tokens');
  assert.equal(count.providerFormat, 'count_tokens');
  assert.deepEqual(count.body, {
    model: 'gemini-2.5-flash',
    messages: [{ role: 'user', content: 'hello there' }],
    system: 'Be terse.',
  });
  assert.deepEqual(count.response, { kind: 'token-count' });
  assert.equal(count.headers['anthropic-version'], '2023-06-01');
});

test('countTokens to a family that cannot count is refused 400 in Google error shape, naming the provider', () => {
  const error = refused(compiled({ alpha: {} }, { name: 'openai' }), input('gemini_count_tokens', GEMINI));
  assert.equal(error.status, 400);
  assert.match(error.message, /Gemini countTokens is not supported by provider openai \(alpha, OpenAI\)/);
  const body = JSON.parse(error.response().body);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'status']);
  assert.equal(body.error.code, 400);
  assert.equal(body.error.status, 'INVALID_ARGUMENT');
});

test('delta with a configured path: countTokens is refused, generateContent uses the path', () => {
  const provider = compiled({ delta: {}, path: '/custom/gen' } as never);
  assert.equal(planned(provider, input('gemini', GEMINI)).path, '/custom/gen');
  const error = refused(provider, input('gemini_count_tokens', GEMINI));
  assert.match(error.message, /countTokens is served only under the provider's default paths/);
});

test('zeta: generateContent is translated to Converse, the path model in the Converse path', () => {
  const plan = planned(compiled({ zeta: { region: 'eu-west-1' } }), input('gemini', { ...GEMINI, stream: true }));
  assert.equal(plan.path, '/model/gemini-2.5-flash/converse-stream');
  assert.equal(plan.providerFormat, 'converse');
  const body = plan.body as JsonObject;
  assert.deepEqual(body.system, [{ text: 'Be terse.' }]);
  assert.deepEqual(body.messages, [{ role: 'user', content: [{ text: 'hello there' }] }]);
  assert.deepEqual(body.inferenceConfig, { maxTokens: 20 });
  assert.deepEqual(plan.response, { kind: 'translate', from: 'converse', to: 'gemini', includeUsage: false });
});

test('betaalpha: generateContent is translated to Chat Completions at the deployment', () => {
  const provider = compiled({ betaalpha: { endpoint: 'my-resource.openai.azure.com', deploymentName: 'dep' } });
  const plan = planned(provider, input('gemini', GEMINI));
  assert.equal(plan.providerFormat, 'completions');
  assert.equal((plan.body as JsonObject).model, 'dep');
});
