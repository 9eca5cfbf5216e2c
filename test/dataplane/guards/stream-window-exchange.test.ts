// Windows of a streamed answer in the exchange (exchange.ts's stream loop), over real HTTP: a
// client reads gw's answer from a node:http server whose handler runs one attempt against a
// provider stream the test writes event by event (an in-test UpstreamClient), with a response
// guard that calls a "service" (an in-test Guard answering later, guard.ts's seam). What a user
// sees: held text released after the time bound while the provider is silent, the first token
// timed as the client got it, the last window checked when the provider ends or breaks, a
// rejection's error event instead of the held text, and a client going away aborting the check.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { type AttemptInput, type AttemptResult, attempt } from '../../../src/dataplane/ai/exchange.ts';
import type { ApiFormat } from '../../../src/dataplane/ai/formats/types.ts';
import type { Guard, GuardCall, GuardVerdict } from '../../../src/dataplane/ai/guards/guard.ts';
import type { CompiledPromptGuards } from '../../../src/dataplane/ai/guards/prompt-guard.ts';
import { StreamGuard } from '../../../src/dataplane/ai/guards/stream-guard.ts';
import { MAX_HOLD_MS } from '../../../src/dataplane/ai/guards/stream-window.ts';
import type { UpstreamPlan } from '../../../src/dataplane/ai/providers/index.ts';
import { LlmRecord, type RequestRecord } from '../../../src/dataplane/telemetry/request-record.ts';
import type { UpstreamBody, UpstreamClient } from '../../../src/dataplane/upstream/client.ts';
import { GUARD_REQUEST, streamEvent } from '../../helpers/guards.ts';
import { closeServer, listen } from '../../helpers/http-server.ts';
import { until } from '../../helpers/until.ts';

/** A provider's SSE body the test writes: each chunk when it says, then its end or a break. */
class ScriptedBody implements UpstreamBody {
  readonly #queue: Array<Buffer | Error | null> = [];
  #wake: (() => void) | undefined;
  discarded = false;

  send(text: string): void {
    this.#push(Buffer.from(text));
  }
  end(): void {
    this.#push(null);
  }
  fail(): void {
    this.#push(new Error('socket hang up'));
  }
  #push(item: Buffer | Error | null): void {
    this.#queue.push(item);
    this.#wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Buffer> {
    for (;;) {
      while (this.#queue.length === 0) await new Promise<void>((resolve) => (this.#wake = resolve));
      const item = this.#queue.shift()!;
      if (item === null) return;
      if (item instanceof Error) throw item;
      yield item;
    }
  }
  readAll(): Promise<Buffer> {
    throw new Error('a stream is not read whole');
  }
  discard(): void {
    this.discarded = true;
  }
}

/** A guard service: each check waits for the test's `decide` (or the client going away). */
function serviceGuard(
  decide: (window: string) => GuardVerdict | Promise<GuardVerdict>,
): Guard & { calls: GuardCall[] } {
  const calls: GuardCall[] = [];
  return {
    kind: 'webhook',
    failureMode: 'FailClosed',
    calls,
    check: async (call) => {
      calls.push(call);
      return await decide(call.texts[0]!.text);
    },
  };
}

const rejectWhen =
  (word: string) =>
  (window: string): GuardVerdict =>
    window.includes(word) ? { action: 'reject', matched: ['TOPIC'] } : { action: 'pass' };

/** Response guards whose stream guard is `guard` (checked in windows), as a provider's compiled promptGuard. */
function guardsOf(guard: Guard): CompiledPromptGuards {
  return {
    hasRequestGuards: false,
    hasResponseGuards: true,
    guardRequest: () => assert.fail('no request guards here'),
    guardResponse: () => assert.fail('a stream is guarded as it passes'),
    streamGuard: (format, request) =>
      new StreamGuard(
        [{ index: 0, guard, rejection: { status: 403, message: 'blocked by the service' } }],
        format as ApiFormat,
        request,
        { status: 503, message: 'could not be checked' },
      ),
  };
}

/** One exchange: the attempt's result, the provider body it reads, and its record. */
interface Exchange {
  body: ScriptedBody;
  record: RequestRecord;
  result: Promise<AttemptResult>;
  clientGone: AbortSignal;
}

describe('stream windows in the exchange', () => {
  let server: Server;
  let port: number;
  /** The exchange the next request runs, set by the test before it sends. */
  let next: { guard: Guard; format: ApiFormat } | undefined;
  const exchanges: Exchange[] = [];

  before(async () => {
    server = createServer((req, res) => {
      const { guard, format } = next!;
      const body = new ScriptedBody();
      const gone = new AbortController();
      res.on('close', () => {
        if (!res.writableFinished) gone.abort();
      });
      const client: UpstreamClient = {
        request: async () => ({ statusCode: 200, headers: { 'content-type': 'text/event-stream' }, body }),
      };
      const record = { llm: new LlmRecord() } as RequestRecord;
      const input: AttemptInput = {
        res,
        record,
        client,
        plan: {
          method: 'POST',
          providerFormat: format,
          response: { kind: 'same', dropUsageOnlyChunk: false },
        } as unknown as UpstreamPlan,
        clientFormat: format,
        body: undefined,
        headers: {},
        path: req.url ?? '/',
        timeoutMs: undefined,
        unhealthy: () => false,
        guards: { compiled: guardsOf(guard), request: { ...GUARD_REQUEST, signal: gone.signal } },
        canRetry: false,
        clientGone: gone.signal,
      };
      exchanges.push({ body, record, result: attempt(input), clientGone: gone.signal });
    });
    port = await listen(server);
  });
  after(() => closeServer(server));

  /** Starts a streamed request; what the client has read so far, with when, and the exchange gw runs. */
  async function open(guard: Guard, format: ApiFormat = 'completions', signal?: AbortSignal) {
    next = { guard, format };
    const started = performance.now();
    const response = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      ...(signal ? { signal } : {}),
    });
    const exchange = exchanges.at(-1)!;
    const received: Array<{ text: string; at: number }> = [];
    const reading = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of response.body!)
        received.push({ text: decoder.decode(chunk), at: performance.now() - started });
    })();
    const text = () => received.map((each) => each.text).join('');
    return { ...exchange, received, text, reading, started };
  }

  it(`text held while the provider is silent reaches the client after ${MAX_HOLD_MS} ms, checked; the first token is timed then`, async () => {
    const service = serviceGuard(rejectWhen('never'));
    const stream = await open(service);
    const hello = streamEvent('completions', 'hello ', 0);
    stream.body.send(hello);
    // The provider says nothing more: the held window is checked once it has waited long enough.
    assert.ok(await until(() => stream.text().includes('hello'), MAX_HOLD_MS + 2000), 'released');
    const at = stream.received.at(-1)!.at;
    assert.ok(at >= MAX_HOLD_MS - 50, `held about ${MAX_HOLD_MS} ms, got ${at}`);
    assert.deepEqual(
      service.calls.map((call) => call.texts[0]!.text),
      ['hello '],
    );
    const world = streamEvent('completions', 'world', 1);
    stream.body.send(world);
    stream.body.send('data: [DONE]\n\n');
    stream.body.end();
    await stream.reading;
    assert.equal(stream.text(), `${hello + world}data: [DONE]\n\n`);
    const result = await stream.result;
    assert.equal(result.error, undefined);
    assert.ok(result.firstTokenMs! >= MAX_HOLD_MS - 50, `first token as the client got it: ${result.firstTokenMs}`);
    assert.deepEqual(
      service.calls.map((call) => call.texts[0]!.text),
      ['hello ', 'hello world'],
    );
    assert.deepEqual(
      stream.record.llm!.guards!.map((o) => [o.kind, o.action, o.checks]),
      [['webhook', 'pass', 2]],
    );
  });

  it('a window rejected at the end of the stream: the client gets the error event, not the held text', async () => {
    const service = serviceGuard(rejectWhen('secret'));
    const stream = await open(service, 'messages');
    const start = 'event: message_start\ndata: {"type":"message_start","message":{"id":"m","content":[]}}\n\n';
    stream.body.send(start);
    stream.body.send(streamEvent('messages', 'the secret is 42', 1));
    stream.body.send('event: message_stop\ndata: {"type":"message_stop"}\n\n');
    stream.body.end();
    await stream.reading;
    assert.equal(stream.text().startsWith(start), true, 'the start went out at once');
    assert.ok(!stream.text().includes('secret'), stream.text());
    assert.match(stream.text(), /event: error\ndata: \{"type":"error".*blocked by the service/);
    const result = await stream.result;
    assert.equal(result.error, 'response rejected by a prompt guard');
    assert.equal(result.firstTokenMs, undefined, 'no token reached the client');
    assert.deepEqual(stream.record.llm!.guards![0]!.matched, ['TOPIC']);
  });

  it('the provider breaking mid-window: the held text is checked and sent before the error event', async () => {
    const service = serviceGuard(() => ({ action: 'pass' }));
    const stream = await open(service);
    const partial = streamEvent('completions', 'partial answer', 0);
    stream.body.send(partial);
    stream.body.fail();
    await stream.reading;
    assert.ok(stream.text().startsWith(partial), stream.text());
    assert.match(stream.text().slice(partial.length), /^data: \{"error":/);
    assert.equal(service.calls.length, 1);
    assert.match((await stream.result).error!, /^upstream stream/);
  });

  it('the client going away during a check aborts the guard call; nothing more is sent', async () => {
    let aborted = false;
    const service = serviceGuard(
      () =>
        new Promise<GuardVerdict>((resolve) => {
          const signal = service.calls.at(-1)!.signal;
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve({ action: 'pass' });
          });
        }),
    );
    const client = new AbortController();
    const stream = await open(service, 'completions', client.signal);
    stream.body.send(streamEvent('completions', 'x'.repeat(2000), 0));
    assert.ok(await until(() => service.calls.length === 1, 2000), 'the window is being checked');
    client.abort();
    stream.reading.catch(() => {});
    const result = await stream.result;
    assert.equal(aborted, true, 'the guard call saw the client go away');
    assert.equal(result.error, 'client went away');
    assert.equal(stream.text(), '');
    assert.ok(stream.body.discarded, 'the provider stream is dropped');
  });

  it('a Responses stream rejected at a window: its error event is numbered after the last event the client got', async () => {
    const service = serviceGuard(rejectWhen('w2'));
    const stream = await open(service, 'responses');
    const first = streamEvent('responses', `w1 ${'.'.repeat(1100)}`, 0);
    stream.body.send(first);
    assert.ok(await until(() => stream.text().length > 0, 2000));
    stream.body.send(streamEvent('responses', 'w2', 1));
    stream.body.send(streamEvent('responses', 'w3', 2));
    stream.body.end();
    await stream.reading;
    const error = stream.text().slice(first.length);
    assert.match(error, /^event: error\n/);
    assert.equal(JSON.parse(error.split('data: ')[1]!).sequence_number, 1);
  });
});
