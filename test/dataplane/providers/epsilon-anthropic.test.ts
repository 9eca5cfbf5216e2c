// The plans of an epsilon (Vertex AI) provider for Anthropic's models: which model goes to
// rawPredict and which to generateContent, the model override, a configured path, and the
// client's body left as it came (test/dataplane/gateway/epsilon-vertex-anthropic.test.ts sends
// real traffic).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { JsonObject } from '../../../src/dataplane/ai/formats/index.ts';
import { compiled, input, planned, refused } from './helpers.ts';

const BASE = '/v1/projects/p/locations/us-east5/publishers';
const MESSAGES: JsonObject = {
  model: 'claude-sonnet-4-5@20250929',
  max_tokens: 16,
  messages: [{ role: 'user', content: 'hi' }],
};

test('a Claude model goes to rawPredict, every other model to generateContent, on one provider', () => {
  const provider = compiled({ epsilon: { projectId: 'p', region: 'us-east5' } });
  const claude = planned(provider, input('messages', MESSAGES));
  assert.equal(claude.path, `${BASE}/anthropic/models/claude-sonnet-4-5@20250929:rawPredict`);
  assert.equal(claude.providerFormat, 'messages');
  assert.equal(claude.upstreamModel, 'claude-sonnet-4-5@20250929');
  assert.deepEqual(claude.body, {
    max_tokens: 16,
    messages: [{ role: 'user', content: 'hi' }],
    anthropic_version: 'vertex-2023-10-16',
  });
  assert.equal(MESSAGES.model, 'claude-sonnet-4-5@20250929', "the client's body is not changed");
  assert.deepEqual(claude.response, { kind: 'same', dropUsageOnlyChunk: false, rewriteErrors: true });

  const gemini = planned(provider, input('messages', { ...MESSAGES, model: 'gemini-2.5-flash' }));
  assert.equal(gemini.path, `${BASE}/google/models/gemini-2.5-flash:generateContent`);
  assert.equal(gemini.providerFormat, 'gemini');

  const streamed = planned(
    provider,
    input('completions', {
      model: 'publishers/anthropic/models/claude-3-5-haiku@20241022',
      messages: [],
      stream: true,
    }),
  );
  assert.equal(streamed.path, `${BASE}/anthropic/models/claude-3-5-haiku@20241022:streamRawPredict`);
  assert.equal(streamed.body?.model, undefined);
  assert.equal(streamed.response.kind, 'translate');
});

test("the provider's model override picks the endpoint and names the model in the path", () => {
  const provider = compiled({
    epsilon: { projectId: 'p', region: 'us-east5', model: 'anthropic/claude-opus-4-1@20250805' },
  });
  const plan = planned(provider, input('completions', { model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }));
  assert.equal(plan.path, `${BASE}/anthropic/models/claude-opus-4-1@20250805:rawPredict`);
  assert.equal(plan.requestModel, 'gpt-4o');
  assert.equal(plan.upstreamModel, 'claude-opus-4-1@20250805');
  const count = planned(provider, input('count_tokens', { model: 'x', messages: [{ role: 'user', content: 'x' }] }));
  assert.equal(count.path, `${BASE}/anthropic/models/count-tokens:rawPredict`);
  assert.equal(count.body?.model, 'claude-opus-4-1@20250805');
  assert.equal(count.body?.anthropic_version, 'vertex-2023-10-16');
});

test('a configured path is used as it is for Claude models too', () => {
  const provider = compiled({ epsilon: { projectId: 'p' }, path: '/custom/predict' });
  const plan = planned(provider, input('messages', { ...MESSAGES, stream: true }));
  assert.equal(plan.path, '/custom/predict');
  assert.equal(plan.body?.model, undefined);
});

test('a Claude model that is not a path segment is refused with a 400 naming it', () => {
  const provider = compiled({ epsilon: { projectId: 'p' } });
  const error = refused(provider, input('messages', { ...MESSAGES, model: 'claude-x?alt=1' }));
  assert.equal(error.status, 400);
  assert.match(error.message, /"claude-x\?alt=1" is not a Claude model id of Vertex AI/);
});

test("count_tokens for a Gemini model goes to Google's countTokens; the model list is not served", () => {
  const provider = compiled({ epsilon: { projectId: 'p' } });
  const count = planned(provider, input('count_tokens', { model: 'gemini-2.5-flash', messages: [] }));
  assert.equal(count.path, '/v1/projects/p/locations/global/publishers/google/models/gemini-2.5-flash:countTokens');
  assert.equal(refused(provider, input('models', undefined)).status, 400);
});

test('Passthrough and Detect requests for a Claude model go to their own path, their body as it came', () => {
  const provider = compiled({ epsilon: { projectId: 'p' } });
  for (const routeType of ['Passthrough', 'Detect'] as const) {
    const plan = planned(provider, input('messages', MESSAGES, { routeType, method: 'POST', path: '/v1/messages' }));
    assert.equal(plan.path, '/v1/messages', routeType);
    assert.equal(plan.body, MESSAGES, routeType);
  }
});
