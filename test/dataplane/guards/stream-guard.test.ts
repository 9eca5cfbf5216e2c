// Response guards over streamed answers (streaming: Enabled): a match is caught in each client
// format's deltas wherever the stream splits it (every character boundary, and every byte
// boundary of the SSE text), the error event is the client format's, Mask guards do not act on
// streams, and a stream without a match passes with a pass outcome.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { OVERLAP } from '../../../src/dataplane/ai/guards/stream-guard.ts';
import type { ClientFormat } from '../../../src/dataplane/ai/providers/index.ts';
import { inspectNow, streamEvent, syncGuards } from '../../helpers/guards.ts';

const SSN = '078-05-1120';

const guards = syncGuards;

const rejectSsn = guards({
  streaming: 'Enabled',
  response: [{ regex: { action: 'Reject', builtins: ['Ssn'] }, response: { message: 'no SSNs', statusCode: 451 } }],
});

const event = streamEvent;

const FORMATS: ClientFormat[] = ['completions', 'messages', 'responses', 'gemini'];

describe('stream guard', () => {
  it('a match split at every character boundary across two events is caught in each format', () => {
    const text = `my number is ${SSN} ok`;
    for (const format of FORMATS) {
      for (let cut = 1; cut < text.length; cut++) {
        const guard = rejectSsn.streamGuard(format)!;
        const first = inspectNow(guard, event(format, text.slice(0, cut), 1));
        const second = inspectNow(guard, event(format, text.slice(cut), 2));
        const matchEnds = text.indexOf(SSN) + SSN.length;
        // The event that completes the match is the one rejected, before it reaches the client.
        if (cut >= matchEnds) assert.deepEqual(first, { status: 451, message: 'no SSNs' }, `${format} ${cut}`);
        else {
          assert.equal(first, undefined, `${format} ${cut}`);
          assert.deepEqual(second, { status: 451, message: 'no SSNs' }, `${format} ${cut}`);
        }
      }
    }
  });

  it('the SSE text split at every byte boundary: the match is caught once its event is whole', () => {
    const sse =
      event('completions', 'my ssn ', 1) + event('completions', `${SSN} `, 2) + event('completions', 'bye', 3);
    const bytes = Buffer.from(sse);
    for (let cut = 1; cut < bytes.length; cut++) {
      const guard = rejectSsn.streamGuard('completions')!;
      const results = [bytes.subarray(0, cut), bytes.subarray(cut)].map((part) =>
        inspectNow(guard, part.toString('latin1')),
      );
      assert.ok(
        results.some((result) => result?.message === 'no SSNs'),
        `cut at ${cut}`,
      );
      assert.equal(guard.outcomes()[0]!.action, 'reject');
    }
  });

  it('tool-call argument pieces are read; each choice and block is its own channel', () => {
    const guard = rejectSsn.streamGuard('completions')!;
    const call = (args: string) =>
      `data: ${JSON.stringify({ choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: args } }] } }] })}\n\n`;
    assert.equal(inspectNow(guard, call('{"ssn":"078-05')), undefined);
    assert.equal(inspectNow(guard, event('completions', 'unrelated text', 2)), undefined);
    assert.equal(inspectNow(guard, call('-1120"}'))?.message, 'no SSNs');
  });

  it('error events are the client format’s; a Responses one follows the last event sent', () => {
    const responses = rejectSsn.streamGuard('responses')!;
    assert.equal(inspectNow(responses, event('responses', 'hello ', 7)), undefined);
    assert.ok(inspectNow(responses, event('responses', `${SSN}.`, 8)));
    const error = responses.errorEvent(451, 'no SSNs');
    assert.match(error, /^event: error\ndata: /);
    assert.equal(JSON.parse(error.split('data: ')[1]!).sequence_number, 8);
    assert.match(
      rejectSsn.streamGuard('messages')!.errorEvent(451, 'no SSNs'),
      /^event: error\ndata: \{"type":"error"/,
    );
    assert.match(
      rejectSsn.streamGuard('completions')!.errorEvent(451, 'no SSNs'),
      /^data: \{"error":\{"message":"no SSNs"/,
    );
  });

  it('no stream guard without streaming: Enabled, or with Mask guards only; a clean stream passes', () => {
    assert.equal(
      guards({ response: [{ regex: { action: 'Reject', builtins: ['Ssn'] } }] }).streamGuard('completions'),
      undefined,
    );
    assert.equal(
      guards({ streaming: 'Enabled', response: [{ regex: { action: 'Mask', builtins: ['Ssn'] } }] }).streamGuard(
        'completions',
      ),
      undefined,
    );
    const guard = rejectSsn.streamGuard('messages')!;
    assert.equal(inspectNow(guard, event('messages', 'all clear', 1)), undefined);
    assert.deepEqual(
      guard.outcomes().map((o) => [o.side, o.action]),
      [['response', 'pass']],
    );
  });

  it('an event too large to read (over 1 MiB) rejects the stream rather than pass it unchecked', () => {
    const guard = rejectSsn.streamGuard('completions')!;
    assert.equal(inspectNow(guard, event('completions', 'fine ', 1)), undefined);
    assert.equal(
      inspectNow(guard, `data: {"choices":[{"delta":{"content":"${'x'.repeat(1024 * 1024 + 10)}`)?.message,
      'no SSNs',
    );
    assert.deepEqual(guard.outcomes()[0]!.matched, ['UNREADABLE_EVENT']);
  });

  it(`keeps at most ${OVERLAP} characters per channel: memory stays bounded over a long stream`, () => {
    const guard = rejectSsn.streamGuard('completions')!;
    for (let i = 0; i < 2000; i++)
      assert.equal(inspectNow(guard, event('completions', 'word '.repeat(50), i)), undefined);
  });
});
