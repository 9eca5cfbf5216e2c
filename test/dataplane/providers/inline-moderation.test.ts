// An alpha provider's inline moderation (inline-moderation.ts) outside a gateway: the parameter it
// sends, how it judges an answer's results (Block refuses flagged and missing results, Score
// only records), and the stream reader finding results split across reads.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InlineModeration } from '../../../src/dataplane/ai/inline-moderation.ts';
import { inlineModerationText, inlineModerationVariable } from '../../../src/dataplane/ai/inline-moderation-record.ts';
import { moderationResult } from '../../helpers/moderation-stand-in.ts';

const results = (...texts: string[]) => ({
  type: 'moderation_results',
  model: 'm',
  results: texts.map(moderationResult),
});

describe('inline moderation', () => {
  it('the parameter: the model (default omni-moderation-latest) and the modes of the sides set', () => {
    const marked = new InlineModeration({ policy: { output: { mode: 'Block' } } }).mark({
      model: 'gpt-5',
      moderation: 1,
    });
    assert.deepEqual(marked, {
      model: 'gpt-5',
      moderation: { model: 'omni-moderation-latest', policy: { output: { mode: 'block' } } },
    });
    assert.deepEqual(new InlineModeration({ model: 'x' }).mark({}), { moderation: { model: 'x' } });
  });

  it('Block refuses a flagged side (403) and a side without results or with an error (503); Score records', () => {
    const block = new InlineModeration({ policy: { input: { mode: 'Block' }, output: { mode: 'Score' } } });
    assert.equal(
      block.judge({ moderation: { input: results('hateful'), output: results('ok') } }).rejection?.status,
      403,
    );
    assert.equal(
      block.judge({ moderation: { input: results('fine'), output: results('murder') } }).rejection,
      undefined,
    );
    const missing = block.judge({ choices: [] });
    assert.equal(missing.rejection?.status, 503);
    assert.match(missing.rejection!.reason, /input: the answer carried no moderation results/);
    const failed = block.judge({ moderation: { input: { type: 'error', code: 'timeout', message: 'x' } } });
    assert.match(failed.rejection!.reason, /the provider's moderation failed \(timeout\)/);
    assert.equal(
      inlineModerationText(failed.record),
      "input(Block)=unavailable: the provider's moderation failed (timeout); output(Score)=unavailable: the answer carried no moderation results",
    );
    const responsesResult = block.judge({ moderation: { input: moderationResult('a hateful remark') } });
    assert.deepEqual(inlineModerationVariable(responsesResult.record).input, {
      flagged: true,
      categories: ['hate'],
      scores: responsesResult.record.input!.verdict!.scores,
    });
  });

  it('a streamed answer: results in a chunk split across reads, a multi-byte character split too', () => {
    const reader = new InlineModeration({ policy: { output: { mode: 'Score' } } }).streamReader();
    const event = `data: ${JSON.stringify({ choices: [], moderation: { output: results('é murder') } })}\n\n`;
    const bytes = Buffer.from(`data: {"choices":[{"delta":{"content":"é"}}]}\n\n${event}data: [DONE]\n\n`);
    const cut = bytes.indexOf(Buffer.from('é murder')) + 1; // inside the two bytes of é
    reader.write(bytes.subarray(0, 10));
    reader.write(bytes.subarray(10, cut));
    reader.write(bytes.subarray(cut));
    assert.deepEqual(reader.finish().output?.verdict?.categories, ['violence']);
  });

  it("a Responses stream's completed event carries the results; no results is recorded as unavailable", () => {
    const moderation = new InlineModeration({ policy: { input: { mode: 'Score' } } });
    const reader = moderation.streamReader();
    reader.write(
      Buffer.from(
        `event: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', response: { moderation: { input: moderationResult('hateful') } } })}`,
      ),
    );
    assert.equal(reader.finish().input?.verdict?.flagged, true);
    const none = moderation.streamReader();
    none.write(Buffer.from('data: {"choices":[]}\n\n'));
    assert.equal(none.finish().input?.missing, 'the answer carried no moderation results');
  });

  it('streams are refused while a side blocks; Passthrough, Detect and Realtime requests always', () => {
    const score = new InlineModeration({ policy: { input: { mode: 'Score' } } });
    assert.equal(score.refusal('Completions', true), undefined);
    assert.match(String(score.refusal('Detect', false)), /cannot be added to a Detect request/);
    const block = new InlineModeration({ policy: { input: { mode: 'Block' } } });
    assert.equal(block.refusal('Completions', false), undefined);
    assert.match(String(block.refusal('Completions', true)), /blocks flagged input/);
  });
});
