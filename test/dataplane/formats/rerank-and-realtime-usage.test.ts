// The usage gw reads from the two APIs it forwards without translating: a rerank answer (Cohere's
// meta.tokens, token counts in billed_units, an OpenAI-style usage; search units are not tokens)
// and a Realtime session's server events (response.done summed, the model from session events,
// the first output delta of text or audio), plus the shape of gw's own errors to a rerank client.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rerankErrorBody, rerankRequestProblem, rerankUsage } from '../../../src/dataplane/ai/formats/rerank.ts';
import { RealtimeMeter } from '../../../src/dataplane/ai/realtime/metering.ts';

test('rerank usage: meta.tokens, billed_units token counts, an OpenAI-style usage; search units alone are none', () => {
  const results = [{ index: 0, relevance_score: 0.9 }];
  assert.deepEqual(rerankUsage({ results, meta: { tokens: { input_tokens: 120.0, output_tokens: 0 } } }), {
    inputTokens: 120,
    outputTokens: 0,
    totalTokens: 120,
  });
  assert.deepEqual(rerankUsage({ results, meta: { billed_units: { total_tokens: 33, search_units: 1 } } }), {
    inputTokens: 33,
    outputTokens: 0,
    totalTokens: 33,
  });
  assert.deepEqual(rerankUsage({ results, usage: { prompt_tokens: 17, total_tokens: 17 } }), {
    inputTokens: 17,
    outputTokens: 0,
    totalTokens: 17,
  });
  assert.equal(rerankUsage({ results, meta: { billed_units: { search_units: 1 } } }), undefined);
  assert.equal(rerankUsage({ results }), undefined);
  assert.equal(rerankUsage('not an object'), undefined);
});

test('a rerank request needs a query string and a documents array; errors are {"message"}', () => {
  assert.equal(rerankRequestProblem({ model: 'm', query: 'q', documents: ['a', { text: 'b' }] }), undefined);
  assert.match(rerankRequestProblem({ model: 'm', documents: [] }) ?? '', /"query" string/);
  assert.match(rerankRequestProblem({ model: 'm', query: 'q', documents: 'a' }) ?? '', /"documents" array/);
  const error = rerankErrorBody('x'.repeat(10_000));
  assert.equal(error.contentType, 'application/json');
  const body = JSON.parse(error.body) as { message: string };
  assert.deepEqual(Object.keys(body), ['message']);
  assert.ok(body.message.length < 5000, 'a long message is bounded');
});

const text = (event: object) => Buffer.from(JSON.stringify(event));

test('a Realtime session meter sums every response.done, takes the model from session events and the first output delta', () => {
  const meter = new RealtimeMeter();
  meter.serverText(text({ type: 'session.created', session: { model: 'gpt-realtime' } }));
  assert.equal(meter.model, 'gpt-realtime');
  meter.serverText(text({ type: 'response.created', response: { id: 'r1' } }));
  assert.equal(meter.firstOutputTime, 0n);
  meter.serverText(text({ type: 'response.output_audio.delta', delta: 'AAAA' }));
  const first = meter.firstOutputTime;
  assert.ok(first > 0n);
  meter.serverText(text({ type: 'response.output_text.delta', delta: 'later' }));
  assert.equal(meter.firstOutputTime, first, 'the first delta only');
  const usage = {
    total_tokens: 30,
    input_tokens: 20,
    output_tokens: 10,
    input_token_details: { cached_tokens: 8, text_tokens: 12, audio_tokens: 8 },
  };
  meter.serverText(text({ type: 'response.done', response: { id: 'r1', usage } }));
  meter.serverText(
    text({ type: 'response.done', response: { id: 'r2', usage: { ...usage, input_token_details: {} } } }),
  );
  meter.serverText(text({ type: 'response.done', response: { id: 'r3', status: 'cancelled' } }));
  assert.deepEqual(meter.usage, { inputTokens: 40, outputTokens: 20, totalTokens: 60, cachedInputTokens: 8 });
  meter.serverText(text({ type: 'session.updated', session: { model: 'gpt-realtime-mini' } }));
  assert.equal(meter.model, 'gpt-realtime-mini');
  meter.serverText(Buffer.from('{"type":"response.done", not json'));
  assert.equal(meter.usage?.totalTokens, 60, 'a message that is not JSON changes nothing');
});
