// Streams that fail on one side end on both (gw issue 17, item 2). A provider whose stream gw
// cannot translate (OpenAI chunks from a gamma provider, Anthropic events from an alpha one)
// streams on forever: the client (the official SDKs) gets the error event in its format and its
// stream ends, and the provider request is aborted at once, so that gw spends no CPU reading on. A
// translated stream that is complete ends for the client at once too, and a provider that goes on
// sending after it is cut off. A passed-through or Detect stream is the provider's to end: gw
// passes it on until the client leaves, and then aborts the provider request.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { type EndlessProvider, sseEvent, startEndlessProvider } from '../../helpers/endless-provider.ts';
import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  lastAccessLogLine,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { until } from '../../helpers/until.ts';

const ROUTES = '{/v1/chat/completions: Completions, /v1/messages: Messages, /v1/detect: Detect}';

const OPENAI_CHUNK = sseEvent({
  id: 'chatcmpl-endless',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, delta: { content: 'more ' }, finish_reason: null }],
});

const MESSAGE_START = sseEvent(
  {
    type: 'message_start',
    message: {
      id: 'msg_endless',
      type: 'message',
      role: 'assistant',
      model: 'claude-endless',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 3, output_tokens: 1 },
    },
  },
  'message_start',
);

/** A whole Messages stream: one text block saying `text`, ended by message_stop. */
const WHOLE_MESSAGE = [
  MESSAGE_START,
  sseEvent({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'),
  sseEvent(
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'all done' } },
    'content_block_delta',
  ),
  sseEvent({ type: 'content_block_stop', index: 0 }, 'content_block_stop'),
  sseEvent(
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } },
    'message_delta',
  ),
  sseEvent({ type: 'message_stop' }, 'message_stop'),
].join('');

const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hi' }] };

/** CPU time (ms) this process spends during `ms` of waiting: gw, the providers and the test share it. */
async function cpuWhileIdle(ms: number): Promise<number> {
  const before = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

describe('streams that fail on one side end on both', () => {
  let gammaSendingChunks: EndlessProvider;
  let alphaSendingEvents: EndlessProvider;
  let gammaOverstaying: EndlessProvider;
  let alphaEndless: EndlessProvider;
  let gw: TestGateway;
  let base: string;

  before(async () => {
    gammaSendingChunks = await startEndlessProvider('', OPENAI_CHUNK);
    alphaSendingEvents = await startEndlessProvider('', MESSAGE_START);
    gammaOverstaying = await startEndlessProvider(WHOLE_MESSAGE, sseEvent({ type: 'ping' }, 'ping'));
    alphaEndless = await startEndlessProvider('', OPENAI_CHUNK);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('chunks', gammaSendingChunks.port, 'gamma: {}', 'sk-any', ROUTES),
        aiBackendYaml('events', alphaSendingEvents.port, 'alpha: {}', 'sk-any', ROUTES),
        aiBackendYaml('overstaying', gammaOverstaying.port, 'gamma: {}', 'sk-any', ROUTES),
        aiBackendYaml('endless', alphaEndless.port, 'alpha: {}', 'sk-any', ROUTES),
        llmRouteYaml(['chunks', 'events', 'overstaying', 'endless']),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await Promise.all([gammaSendingChunks, alphaSendingEvents, gammaOverstaying, alphaEndless].map((p) => p?.close()));
  });

  /** The provider's connection closed, and it wrote nothing more after: gw is not reading it. */
  async function assertAbandoned(provider: EndlessProvider, closedBefore: number): Promise<void> {
    assert.ok(await until(() => provider.closed() > closedBefore, 2000), 'the provider request was aborted');
    const written = provider.written();
    const cpuMs = await cpuWhileIdle(300);
    assert.equal(provider.written(), written, 'the provider wrote nothing more');
    assert.ok(cpuMs < 150, `the process is idle once the stream is over (${cpuMs.toFixed(0)} ms of CPU in 300 ms)`);
  }

  /**
   * POSTs a streamed request and reads the answer to its end, as a client that does not give up
   * (the SDKs close the connection on an error event, which would hide a stream gw never ends).
   */
  async function readToEnd(path: string, body: object): Promise<string> {
    const response = await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, stream: true }),
      signal: AbortSignal.timeout(5000),
    });
    assert.equal(response.status, 200);
    return await response.text();
  }

  it('ends a Chat Completions stream whose gamma provider sends OpenAI chunks with the error event, and aborts the provider', async () => {
    // A client that reads on: one error event, then the end of the response.
    let closedBefore = gammaSendingChunks.closed();
    const text = await readToEnd('/chunks/v1/chat/completions', CHAT);
    const events = text.split('\n\n').filter((event) => event !== '');
    assert.equal(events.length, 1, text.slice(0, 500));
    const error = JSON.parse(events[0]!.replace(/^data: /, '')) as { error: { message: string; type: string } };
    assert.match(error.error.message, /event without a type/);
    assert.equal(error.error.type, 'server_error');
    await assertAbandoned(gammaSendingChunks, closedBefore);
    const line = await lastAccessLogLine(gw, '/chunks/v1/chat/completions');
    assert.match(String(line.error), /event without a type/);
    // The official SDK sees the error as an APIError.
    closedBefore = gammaSendingChunks.closed();
    const client = new OpenAI({ apiKey: 'client', baseURL: `${base}/chunks/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create(
      { ...CHAT, stream: true },
      { signal: AbortSignal.timeout(5000) },
    );
    await assert.rejects(
      (async () => {
        for await (const _ of stream);
      })(),
      (error: unknown) => error instanceof OpenAI.APIError && /event without a type/.test(error.message),
    );
    await assertAbandoned(gammaSendingChunks, closedBefore);
  });

  it('ends a Messages stream whose alpha provider sends Anthropic events with the error event, and aborts the provider', async () => {
    const request = { model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user' as const, content: 'hi' }] };
    let closedBefore = alphaSendingEvents.closed();
    const text = await readToEnd('/events/v1/messages', request);
    assert.match(
      text,
      /^event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"[^"]*chunk without choices/,
    );
    assert.equal(text.split('\n\n').filter((event) => event !== '').length, 1, text.slice(0, 500));
    await assertAbandoned(alphaSendingEvents, closedBefore);
    closedBefore = alphaSendingEvents.closed();
    const client = new Anthropic({ apiKey: 'client', baseURL: `${base}/events`, maxRetries: 0 });
    const stream = client.messages.stream(request, { signal: AbortSignal.timeout(5000) });
    await assert.rejects(
      stream.finalMessage(),
      (error: unknown) => error instanceof Anthropic.APIError && /chunk without choices/.test(error.message),
    );
    await assertAbandoned(alphaSendingEvents, closedBefore);
  });

  it('ends a translated stream for the client once it is complete, and cuts off a provider that streams on', async () => {
    const closedBefore = gammaOverstaying.closed();
    const client = new OpenAI({ apiKey: 'client', baseURL: `${base}/overstaying/v1`, maxRetries: 0 });
    const started = performance.now();
    const stream = await client.chat.completions.create(
      { ...CHAT, stream: true },
      { signal: AbortSignal.timeout(5000) },
    );
    let text = '';
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(text, 'all done');
    assert.equal(finish, 'stop');
    assert.ok(performance.now() - started < 1000, 'the client did not wait for the provider');
    await assertAbandoned(gammaOverstaying, closedBefore);
    // A client that reads on gets the end of the response too.
    const raw = await readToEnd('/overstaying/v1/chat/completions', CHAT);
    assert.match(raw, /all done[\s\S]*"finish_reason":"stop"/);
    const line = await lastAccessLogLine(gw, '/overstaying/v1/chat/completions');
    assert.equal(line.error, undefined, 'a complete response is no error');
    assert.equal(line['gen_ai.usage.output_tokens'], 2);
  });

  for (const [what, path] of [
    ['passed through', '/endless/v1/chat/completions'],
    ['Detect', '/endless/v1/detect'],
  ] as const) {
    it(`passes an endless ${what} stream on until the client leaves, then aborts the provider`, async () => {
      const closedBefore = alphaEndless.closed();
      const abort = new AbortController();
      const response = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...CHAT, stream: true }),
        signal: abort.signal,
      });
      assert.equal(response.status, 200);
      const reader = response.body!.getReader();
      let received = 0;
      while (received < 256 * 1024) received += (await reader.read()).value?.length ?? 0;
      abort.abort();
      await assertAbandoned(alphaEndless, closedBefore);
    });
  }
});
