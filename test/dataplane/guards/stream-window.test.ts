// Streamed answers checked in windows by guards that call a service (streaming: Enabled): the
// events are held until their window's text is checked, then sent in order; a rejection drops
// what is held and ends the stream with the guard's answer; the window's bounds (text, held
// bytes, time, the end of the stream), the overlap, failure modes, mask verdicts, list order with
// regex guards in the same stream, the Responses sequence of the error event, and the outcomes.
// The guards are written here (guard.ts's seam: a check that answers with a promise).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ApiFormat } from '../../../src/dataplane/ai/formats/types.ts';
import { type Guard, type GuardCall, GuardFailure, type GuardVerdict } from '../../../src/dataplane/ai/guards/guard.ts';
import { regexGuard } from '../../../src/dataplane/ai/guards/regex-guard.ts';
import { StreamGuard, type StreamGuardEntry, type StreamStep } from '../../../src/dataplane/ai/guards/stream-guard.ts';
import {
  MAX_HELD_CHARS,
  MAX_HOLD_MS,
  WINDOW_BYTES,
  WINDOW_OVERLAP_BYTES,
} from '../../../src/dataplane/ai/guards/stream-window.ts';
import { GUARD_REQUEST, streamEvent } from '../../helpers/guards.ts';

const FAILURE = { status: 503, message: 'could not be checked' };

/** A guard that calls a "service": records each call and answers with `decide(window)`, later. */
function serviceGuard(
  decide: (window: string) => GuardVerdict | Error,
  failureMode: Guard['failureMode'] = 'FailClosed',
): Guard & { calls: GuardCall[] } {
  const calls: GuardCall[] = [];
  return {
    kind: 'webhook',
    failureMode,
    calls,
    check: async (call) => {
      calls.push(call);
      await new Promise((resolve) => setImmediate(resolve));
      const verdict = decide(call.texts[0]!.text);
      if (verdict instanceof Error) throw verdict;
      return verdict;
    },
  };
}

const entry = (guard: Guard, index = 0, message = 'blocked by the service'): StreamGuardEntry => ({
  index,
  guard,
  rejection: { status: 403, message },
});

const rejectWhen =
  (word: string) =>
  (window: string): GuardVerdict =>
    window.includes(word) ? { action: 'reject', matched: ['TOPIC'] } : { action: 'pass' };

function streamGuard(guards: StreamGuardEntry[], format: ApiFormat = 'completions') {
  return new StreamGuard(guards, format, GUARD_REQUEST, FAILURE);
}

/** Feeds `events` through the guard as a stream does (the last one ends it); what the client got, and the rejection. */
async function run(guard: StreamGuard, events: string[]) {
  let sent = '';
  for (let i = 0; i < events.length; i++) {
    const step: StreamStep = await guard.pass(events[i]!, i === events.length - 1);
    if (step.rejected) return { sent, rejected: step.rejected };
    sent += step.send;
  }
  return { sent, rejected: undefined };
}

/** `count` Chat Completions events of `size` characters each, numbered into the text (`w0001 ...`). */
function words(count: number, size = 50, format: ApiFormat = 'completions'): string[] {
  return Array.from({ length: count }, (_, i) =>
    streamEvent(format, `w${String(i).padStart(4, '0')} `.padEnd(size, '.'), i),
  );
}

describe('stream windows (guards that call a service)', () => {
  it(`holds the events until ${WINDOW_BYTES} bytes of text, checks one assistant text, and sends them in order when it passes`, async () => {
    const service = serviceGuard(() => ({ action: 'pass' }));
    const guard = streamGuard([entry(service)]);
    const events = words(30);
    let sent = '';
    for (let i = 0; i < 20; i++) {
      const step = guard.pass(events[i]!);
      const settled = step instanceof Promise ? await step : step;
      assert.equal(settled.rejected, undefined);
      // 20 events of 50 bytes: the first window fills at the 21st.
      assert.equal(settled.send, '', `event ${i} is held`);
      assert.equal(step instanceof Promise, false, 'a filling window answers at once');
    }
    assert.equal(service.calls.length, 0);
    assert.ok(guard.holding);
    const full = await guard.pass(events[20]!);
    sent += full.send;
    assert.equal(sent, events.slice(0, 21).join(''), 'everything held, in order');
    assert.equal(guard.holding, false);
    assert.equal(service.calls.length, 1);
    const [call] = service.calls;
    assert.equal(call!.side, 'response');
    assert.equal(call!.texts.length, 1);
    assert.equal(call!.texts[0]!.role, 'assistant');
    assert.equal(Buffer.byteLength(call!.texts[0]!.text), 21 * 50);
    assert.equal(call!.signal, GUARD_REQUEST.signal, "the client's going away aborts the call");
    // The end of the stream checks what is left, with the end of the previous window before it.
    const rest = await run(guard, events.slice(21));
    assert.equal(sent + rest.sent, events.join(''));
    assert.equal(service.calls.length, 2);
    const second = service.calls[1]!.texts[0]!.text;
    const previous = call!.texts[0]!.text;
    assert.ok(second.startsWith(previous.slice(-WINDOW_OVERLAP_BYTES)), 'the overlap comes first');
    assert.equal(second.length, WINDOW_OVERLAP_BYTES + 9 * 50);
    assert.deepEqual(guard.outcomes(), [
      { side: 'response', index: 0, kind: 'webhook', action: 'pass', ms: guard.outcomes()[0]!.ms, checks: 2 },
    ]);
  });

  it('a match split between two windows is seen whole in the second (the overlap)', async () => {
    const service = serviceGuard(rejectWhen('forbidden topic'));
    const text = 'x'.repeat(WINDOW_BYTES - 7);
    const guard = streamGuard([entry(service)]);
    const { sent, rejected } = await run(guard, [
      streamEvent('completions', text, 0),
      streamEvent('completions', 'forbidden', 1),
      streamEvent('completions', ' topic here', 2),
      streamEvent('completions', 'the end', 3),
    ]);
    assert.deepEqual(rejected, { status: 403, message: 'blocked by the service' });
    assert.equal(sent, streamEvent('completions', text, 0) + streamEvent('completions', 'forbidden', 1));
    assert.equal(service.calls[0]!.texts[0]!.text.includes('forbidden topic'), false);
  });

  it('a rejection drops what is held; the stream ends with the service’s own answer when it gave one', async () => {
    const service = serviceGuard((window) =>
      window.includes('w0025')
        ? { action: 'reject', matched: ['violence'], answer: { status: 451, message: 'the service said no' } }
        : { action: 'pass' },
    );
    const guard = streamGuard([entry(service)]);
    const events = words(60);
    const { sent, rejected } = await run(guard, events);
    assert.deepEqual(rejected, { status: 451, message: 'the service said no' });
    assert.equal(sent, events.slice(0, 21).join(''), 'the first window went out; the second never did');
    assert.ok(!sent.includes('w0025'));
    const outcome = guard.outcomes()[0]!;
    assert.equal(outcome.action, 'reject');
    assert.deepEqual(outcome.matched, ['violence']);
    assert.equal(outcome.checks, 2);
    // Once rejected, nothing more passes and no more calls are made.
    assert.deepEqual((await guard.pass(events[59]!)).rejected, rejected);
    assert.equal(service.calls.length, 2);
  });

  it('the upstream ending mid-window: the short last window is checked before the last events go out', async () => {
    const service = serviceGuard(rejectWhen('secret'));
    const guard = streamGuard([entry(service)]);
    const start = guard.pass(streamEvent('completions', 'the secret is', 0));
    assert.deepEqual(start, { send: '' });
    const end = await guard.pass('data: [DONE]\n\n', true);
    assert.equal(end.rejected?.message, 'blocked by the service');
    assert.equal(service.calls.length, 1);
    // An end with nothing generated and nothing held is not a window.
    const clean = streamGuard([entry(service)]);
    assert.deepEqual(clean.pass('data: [DONE]\n\n', true), { send: 'data: [DONE]\n\n' });
    assert.equal(service.calls.length, 1);
  });

  it('events without generated text pass at once when nothing is held, and keep their place behind held text', async () => {
    const service = serviceGuard(() => ({ action: 'pass' }));
    const guard = streamGuard([entry(service)], 'messages');
    const start = 'event: message_start\ndata: {"type":"message_start","message":{"id":"m"}}\n\n';
    assert.deepEqual(guard.pass(start), { send: start });
    const delta = streamEvent('messages', 'hello', 1);
    const stop = 'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n';
    assert.deepEqual(guard.pass(delta), { send: '' });
    assert.deepEqual(guard.pass(stop), { send: '' }, 'held behind the text before it');
    const end = 'event: message_stop\ndata: {"type":"message_stop"}\n\n';
    assert.deepEqual(await guard.pass(end, true), { send: delta + stop + end });
  });

  it('what is held is bounded: many events with little text are checked before their text fills a window', async () => {
    const service = serviceGuard(() => ({ action: 'pass' }));
    const guard = streamGuard([entry(service)], 'responses');
    const padded = (i: number) =>
      `event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'a', sequence_number: i, obfuscation: 'p'.repeat(2000) })}\n\n`;
    let held = 0;
    let i = 0;
    for (; held < MAX_HELD_CHARS; i++) {
      const step = guard.pass(padded(i));
      if (step instanceof Promise) {
        assert.equal((await step).send?.length, held + padded(i).length);
        break;
      }
      held += padded(i).length;
    }
    assert.equal(service.calls.length, 1);
    assert.ok(Buffer.byteLength(service.calls[0]!.texts[0]!.text) < WINDOW_BYTES);
    assert.ok(held < MAX_HELD_CHARS && held + padded(i).length >= MAX_HELD_CHARS);
  });

  it(`text held ${MAX_HOLD_MS} ms is due: release checks the window as it is`, async () => {
    const service = serviceGuard(rejectWhen('late'));
    const guard = streamGuard([entry(service)]);
    assert.equal(guard.dueIn(), undefined, 'nothing held, nothing due');
    assert.deepEqual(guard.pass(streamEvent('completions', 'slow ', 0)), { send: '' });
    const due = guard.dueIn()!;
    assert.ok(due > MAX_HOLD_MS - 50 && due <= MAX_HOLD_MS, String(due));
    assert.deepEqual(await guard.release(), { send: streamEvent('completions', 'slow ', 0) });
    assert.equal(guard.dueIn(), undefined);
    assert.deepEqual(guard.pass(streamEvent('completions', 'too late', 1)), { send: '' });
    assert.equal((await guard.release()).rejected?.message, 'blocked by the service');
    assert.deepEqual(
      service.calls.map((call) => call.texts[0]!.text),
      ['slow ', 'slow too late'],
    );
  });

  it('text arriving after the time bound checks the window at once (a provider that never pauses)', async () => {
    const service = serviceGuard(() => ({ action: 'pass' }));
    const guard = streamGuard([entry(service)]);
    const first = streamEvent('completions', 'first ', 0);
    assert.deepEqual(guard.pass(first), { send: '' });
    await new Promise((resolve) => setTimeout(resolve, MAX_HOLD_MS + 10));
    const second = streamEvent('completions', 'second', 1);
    assert.deepEqual(await guard.pass(second), { send: first + second });
    assert.equal(service.calls.length, 1);
  });

  it('a mask verdict is not applied to a stream: the window passes unchanged and the log says what would have been masked', async () => {
    const service = serviceGuard(() => ({ action: 'mask', replacements: ['<redacted>'], matched: ['EMAIL'] }));
    const guard = streamGuard([entry(service)]);
    const event = streamEvent('completions', 'mail me at a@b.example', 0);
    assert.equal((await run(guard, [event])).sent, event);
    assert.deepEqual(
      { ...guard.outcomes()[0]!, ms: 0 },
      {
        side: 'response',
        index: 0,
        kind: 'webhook',
        action: 'pass',
        matched: ['EMAIL'],
        reason: 'a mask is not applied to a streamed answer',
        checks: 1,
        ms: 0,
      },
    );
  });

  it('a guard that cannot check: FailClosed ends the stream with the failure answer, FailOpen lets the window through', async () => {
    const down = () => new GuardFailure('webhook guard http://127.0.0.1:1: connection refused', 'unreachable');
    const closed = streamGuard([entry(serviceGuard(down))]);
    const event = streamEvent('completions', 'hello', 0);
    assert.deepEqual(await run(closed, [event]), { sent: '', rejected: FAILURE });
    assert.equal(closed.outcomes()[0]!.action, 'reject');
    assert.match(closed.outcomes()[0]!.error!, /connection refused/);
    assert.equal(closed.outcomes()[0]!.errorType, 'unreachable');
    const open = streamGuard([entry(serviceGuard(down, 'FailOpen'))]);
    assert.deepEqual(await run(open, [event]), { sent: event, rejected: undefined });
    assert.equal(open.outcomes()[0]!.action, 'pass');
    assert.match(open.outcomes()[0]!.error!, /connection refused/);
    // A check that throws something else is a failure too, and says nothing of its internals.
    const broken = streamGuard([entry(serviceGuard(() => new TypeError('x is undefined')))]);
    assert.deepEqual((await run(broken, [event])).rejected, FAILURE);
    assert.equal(broken.outcomes()[0]!.error, 'the guard failed unexpectedly');
    assert.equal(broken.outcomes()[0]!.errorType, '_OTHER');
  });

  it('guards check each window in list order; the first rejection stops the rest', async () => {
    const first = serviceGuard(rejectWhen('bad'));
    const second = serviceGuard(() => ({ action: 'pass' }));
    const guard = streamGuard([entry(first, 0, 'first said no'), entry(second, 1)]);
    const ok = streamEvent('completions', 'x'.repeat(WINDOW_BYTES), 0);
    assert.equal((await guard.pass(ok)).send, ok);
    assert.deepEqual([first.calls.length, second.calls.length], [1, 1]);
    const result = await run(guard, [streamEvent('completions', 'bad', 1)]);
    assert.equal(result.rejected?.message, 'first said no');
    assert.deepEqual([first.calls.length, second.calls.length], [2, 1]);
    assert.deepEqual(
      guard.outcomes().map((o) => [o.index, o.action, o.checks]),
      [
        [0, 'reject', 2],
        [1, 'pass', 1],
      ],
    );
  });

  it('regex Reject guards still read each event in the same stream, and their rejection drops the held window', async () => {
    const regex = regexGuard({ action: 'Reject', builtins: ['Ssn'] }, 'ai.promptGuard.response[0].regex');
    assert.ok('check' in regex);
    const service = serviceGuard(() => ({ action: 'pass' }));
    const guard = streamGuard([entry(regex, 0, 'no SSNs'), entry(service, 1)]);
    assert.deepEqual(guard.pass(streamEvent('completions', 'my number is ', 0)), { send: '' });
    const step = guard.pass(streamEvent('completions', '078-05-1120', 1));
    assert.ok(!(step instanceof Promise), 'the regex guard answers at once');
    assert.deepEqual(step.rejected, { status: 403, message: 'no SSNs' });
    assert.equal(guard.holding, false, 'the held window is dropped');
    assert.equal(service.calls.length, 0);
    assert.deepEqual(
      guard.outcomes().map((o) => [o.index, o.kind, o.action, o.matched]),
      [
        [0, 'regex', 'reject', ['SSN']],
        [1, 'webhook', 'pass', undefined],
      ],
    );
  });

  it('a Responses stream rejected at a window: the error event follows the last event the client got', async () => {
    const guard = streamGuard([entry(serviceGuard(rejectWhen('w0030')))], 'responses');
    const events = words(40, 50, 'responses');
    const { sent, rejected } = await run(guard, events);
    assert.ok(rejected);
    assert.equal(sent, events.slice(0, 21).join(''));
    const error = guard.errorEvent(rejected.status, rejected.message);
    assert.match(error, /^event: error\n/);
    assert.equal(JSON.parse(error.split('data: ')[1]!).sequence_number, 21, 'the client got 0…20');
  });

  it('text is counted in UTF-8 bytes and the overlap starts on a character', async () => {
    const service = serviceGuard(() => ({ action: 'pass' }));
    const guard = streamGuard([entry(service)], 'gemini');
    // 342 three-byte characters: 1026 bytes, a window; then the end of the stream.
    const wide = '€'.repeat(342);
    assert.equal((await guard.pass(streamEvent('gemini', wide, 0))).send, streamEvent('gemini', wide, 0));
    await guard.pass(streamEvent('gemini', '!', 1), true);
    const second = service.calls[1]!.texts[0]!.text;
    assert.equal(second, `${'€'.repeat(Math.floor(WINDOW_OVERLAP_BYTES / 3))}!`);
  });
});
