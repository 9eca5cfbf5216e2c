// Bad input on gw's LLM routes, from either side: a client's malformed, non-object, empty or
// oversized body and an unknown model are refused in the client's own error format; a provider's
// garbage, a reset before the headers or in the middle of a stream becomes an error in the
// client's format; a client that goes away mid-stream aborts the upstream request. gw keeps
// serving through all of it.
import assert from 'node:assert/strict';
import { type AddressInfo, connect, createServer as createNetServer, type Server as NetServer } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { request } from 'undici';
import {
  aiBackendYaml,
  freePort,
  GW_MODELS_RULE,
  gatewayYaml,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { type HangingProvider, startHangingProvider } from '../../helpers/hanging-provider.ts';
import { until } from '../../helpers/until.ts';
import { startAnthropicMock } from '../../support/providers/anthropic-mock.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';

const ROUTES = '{/v1/chat/completions: Completions, /v1/messages: Messages}';
const CHAT = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
const MESSAGES = JSON.stringify({ model: 'claude', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });

/** An OpenAI-format error body: {"error": {"message", "type", ...}}. */
function assertOpenAiError(body: unknown, type?: string): void {
  const error = (body as { error?: { message?: unknown; type?: unknown } }).error;
  assert.ok(error && typeof error.message === 'string' && typeof error.type === 'string', JSON.stringify(body));
  if (type) assert.equal(error.type, type);
}

/** An Anthropic-format error body: {"type": "error", "error": {"type", "message"}}. */
function assertAnthropicError(body: unknown, type?: string): void {
  const { type: outer, error } = body as { type?: unknown; error?: { message?: unknown; type?: unknown } };
  assert.equal(outer, 'error', JSON.stringify(body));
  assert.ok(error && typeof error.message === 'string' && typeof error.type === 'string', JSON.stringify(body));
  if (type) assert.equal(error.type, type);
}

/** An upstream that is not an HTTP server: it answers every connection with an SSH banner and closes. */
async function notHttpServer(): Promise<NetServer> {
  const server = createNetServer((socket) => {
    socket.on('error', () => undefined);
    socket.end('SSH-2.0-OpenSSH_9.6\r\n\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection (within the wait). */
  closed: boolean;
}

/**
 * Sends bytes on a fresh TCP connection and reads until the server closes it (or `waitMs`). The
 * server may close while the request is still being written: write errors are expected then.
 */
function rawExchange(port: number, bytes: Buffer[], waitMs = 3000): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const headEnd = text.indexOf('\r\n\r\n');
      const head = headEnd === -1 ? text : text.slice(0, headEnd);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const colon = line.indexOf(':');
        if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
      }
      resolve({
        status: Number(statusLine.split(' ')[1] ?? 0),
        headers,
        body: headEnd === -1 ? '' : text.slice(headEnd + 4),
        closed,
      });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', () => {
      // A reset after the answer was read still counts as closed; 'close' follows.
    });
    socket.on('connect', () => {
      for (const chunk of bytes) socket.write(chunk);
    });
  });
}

describe('bad input through gw', () => {
  let openaiUpstream: MockServer;
  let anthropicUpstream: MockServer;
  let hanging: HangingProvider;
  let gw: TestGateway;
  let notHttp: NetServer;
  let port: number;
  let base: string;

  const post = async (path: string, body: string | Buffer, headers: Record<string, string> = {}) => {
    const response = await request(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });
    const text = await response.body.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: response.statusCode, headers: response.headers, text, json };
  };

  before(async () => {
    openaiUpstream = await startOpenAiMock({ apiKey: 'sk-openai' });
    anthropicUpstream = await startAnthropicMock({ apiKey: 'sk-anthropic' });
    hanging = await startHangingProvider();
    notHttp = await notHttpServer();
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('gpt', openaiUpstream.port, 'alpha: {}', 'sk-openai', ROUTES),
        aiBackendYaml('claude', anthropicUpstream.port, 'gamma: {}', 'sk-anthropic', ROUTES),
        aiBackendYaml('hanging', hanging.port, 'alpha: {}', 'sk-any', ROUTES),
        aiBackendYaml('nothttp', (notHttp.address() as AddressInfo).port, 'alpha: {}', 'sk-any', ROUTES),
        `apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: gpt-4o-mini}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: llm, sectionName: models}]
  provider: Alpha
  baseURL: http://127.0.0.1:${openaiUpstream.port}/v1
  policies: {auth: {key: sk-openai}}
---
`,
        llmRouteYaml(['gpt', 'claude', 'hanging', 'nothttp'], GW_MODELS_RULE),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await Promise.all([openaiUpstream?.close(), anthropicUpstream?.close()]);
    await hanging?.close();
    notHttp?.close();
  });

  describe('client bodies', () => {
    const bad: [string, string][] = [
      ['malformed JSON', '{"model": "gpt-4o-mini", "messages": ['],
      ['a JSON array', JSON.stringify([{ model: 'gpt-4o-mini' }])],
      ['a JSON string', '"hello"'],
      ['an empty body', ''],
    ];
    for (const [what, body] of bad) {
      it(`answers ${what} with 400 in the OpenAI format on Chat Completions and the Anthropic format on Messages`, async () => {
        const before = openaiUpstream.requests.length + anthropicUpstream.requests.length;
        for (const path of ['/gpt/v1/chat/completions', '/claude/v1/chat/completions', '/models/v1/chat/completions']) {
          const answer = await post(path, body);
          assert.equal(answer.status, 400, `${path}: ${answer.text}`);
          assertOpenAiError(answer.json, 'invalid_request_error');
        }
        for (const path of ['/gpt/v1/messages', '/claude/v1/messages', '/models/v1/messages']) {
          const answer = await post(path, body);
          assert.equal(answer.status, 400, `${path}: ${answer.text}`);
          assertAnthropicError(answer.json, 'invalid_request_error');
        }
        assert.equal(
          openaiUpstream.requests.length + anthropicUpstream.requests.length,
          before,
          'nothing went upstream',
        );
      });
    }

    it("refuses an unknown model on a GwModel route with 404 in the client format (OpenAI's model_not_found)", async () => {
      const chat = await post('/models/v1/chat/completions', CHAT.replace('gpt-4o-mini', 'no-such-model'));
      assert.equal(chat.status, 404);
      assertOpenAiError(chat.json, 'invalid_request_error');
      assert.equal((chat.json as { error: { code: string } }).error.code, 'model_not_found');
      assert.match((chat.json as { error: { message: string } }).error.message, /no-such-model/);
      const messages = await post('/models/v1/messages', MESSAGES);
      assert.equal(messages.status, 404);
      assertAnthropicError(messages.json, 'not_found_error');
      const noModel = await post('/models/v1/chat/completions', JSON.stringify({ messages: [] }));
      assert.equal(noModel.status, 400);
      assertOpenAiError(noModel.json);
      // The official SDK sees a NotFoundError with OpenAI's code.
      const client = new OpenAI({ apiKey: 'client', baseURL: `${base}/models/v1`, maxRetries: 0 });
      await assert.rejects(
        client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }),
        (error: unknown) => error instanceof OpenAI.NotFoundError && error.code === 'model_not_found',
      );
    });

    const oversized = 2 * 1024 * 1024 + 1;
    for (const framing of ['content-length', 'chunked'] as const) {
      it(`answers a body over 2 MiB (${framing}) with 413 in the client format and closes the connection`, async () => {
        for (const [path, check] of [
          ['/gpt/v1/chat/completions', assertOpenAiError],
          ['/claude/v1/messages', assertAnthropicError],
        ] as const) {
          const body = Buffer.alloc(oversized, 'a');
          const head =
            `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
            (framing === 'content-length'
              ? `content-length: ${body.length}\r\n\r\n`
              : 'transfer-encoding: chunked\r\n\r\n');
          const parts =
            framing === 'content-length'
              ? [Buffer.from(head), body]
              : [
                  Buffer.from(head),
                  ...[body.subarray(0, 1 << 20), body.subarray(1 << 20)].map((piece) =>
                    Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')]),
                  ),
                  Buffer.from('0\r\n\r\n'),
                ];
          const answer = await rawExchange(port, parts);
          assert.equal(answer.status, 413, answer.body);
          assert.equal(answer.headers.connection, 'close');
          const error = JSON.parse(answer.body);
          if (check === assertOpenAiError) {
            check(error, 'invalid_request_error');
            assert.equal(error.error.code, 'request_too_large');
          } else check(error, 'request_too_large');
          // The message says which field raises the limit.
          assert.match(error.error.message, /2 MiB.*http\.maxBufferSize/);
          assert.ok(answer.closed, 'gw closed the connection');
        }
        // Still serving.
        const ok = await post('/gpt/v1/chat/completions', CHAT);
        assert.equal(ok.status, 200, ok.text);
      });
    }
  });

  describe('upstream failures', () => {
    it('answers provider garbage with 502 in the client format, passed through or translated', async () => {
      const cases = [
        { mock: openaiUpstream, upstreamPath: '/v1/chat/completions', path: '/gpt/v1/chat/completions', body: CHAT },
        { mock: anthropicUpstream, upstreamPath: '/v1/messages', path: '/claude/v1/chat/completions', body: CHAT },
        { mock: openaiUpstream, upstreamPath: '/v1/chat/completions', path: '/gpt/v1/messages', body: MESSAGES },
        { mock: anthropicUpstream, upstreamPath: '/v1/messages', path: '/claude/v1/messages', body: MESSAGES },
      ];
      for (const { mock, upstreamPath, path, body } of cases) {
        mock.script(upstreamPath, { reply: { kind: 'garbage' } });
        const answer = await post(path, body);
        assert.equal(answer.status, 502, `${path}: ${answer.text}`);
        if (path.endsWith('/messages')) assertAnthropicError(answer.json);
        else assertOpenAiError(answer.json);
      }
      const ok = await post('/claude/v1/messages', MESSAGES);
      assert.equal(ok.status, 200, ok.text);
    });

    it('answers a reset before the response headers with 502 in the client format', async () => {
      openaiUpstream.script('/v1/chat/completions', { reply: { kind: 'reset' } });
      const chat = await post('/gpt/v1/chat/completions', CHAT);
      assert.equal(chat.status, 502, chat.text);
      assertOpenAiError(chat.json);
      openaiUpstream.script('/v1/chat/completions', { reply: { kind: 'reset' } });
      const messages = await post('/gpt/v1/messages', MESSAGES);
      assert.equal(messages.status, 502, messages.text);
      assertAnthropicError(messages.json);
    });

    it('answers an upstream that does not speak HTTP with 502 in the client format', async () => {
      const chat = await post('/nothttp/v1/chat/completions', CHAT);
      assert.equal(chat.status, 502, chat.text);
      assertOpenAiError(chat.json);
      assert.match((chat.json as { error: { message: string } }).error.message, /not HTTP/);
      const messages = await post('/nothttp/v1/messages', MESSAGES);
      assert.equal(messages.status, 502, messages.text);
      assertAnthropicError(messages.json);
    });

    it('answers a non-streamed response cut in half with 502 in the client format', async () => {
      anthropicUpstream.script('/v1/messages', { resetAfterEvents: 0 });
      const chat = await post('/claude/v1/chat/completions', CHAT);
      assert.equal(chat.status, 502, chat.text);
      assertOpenAiError(chat.json);
    });

    it('ends a stream the provider resets with an error event (openai SDK, Messages provider)', async () => {
      anthropicUpstream.script('/v1/messages', { resetAfterEvents: 3 });
      const client = new OpenAI({ apiKey: 'client', baseURL: `${base}/claude/v1`, maxRetries: 0 });
      const stream = await client.chat.completions.create({
        model: 'claude',
        messages: [{ role: 'user', content: 'one two three four five' }],
        stream: true,
      });
      let text = '';
      await assert.rejects(
        (async () => {
          for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
        })(),
        (error: unknown) =>
          error instanceof OpenAI.APIError && /ended before the response was complete/.test(error.message),
      );
      assert.ok(!text.includes('five'), 'the stream stopped early');
    });

    it('ends a stream the provider resets with an error event (Anthropic SDK, Completions provider)', async () => {
      openaiUpstream.script('/v1/chat/completions', { resetAfterEvents: 3 });
      const client = new Anthropic({ apiKey: 'client', baseURL: `${base}/gpt`, maxRetries: 0 });
      const stream = client.messages.stream({
        model: 'gpt-4o-mini',
        max_tokens: 100,
        messages: [{ role: 'user', content: 'one two three four five' }],
      });
      await assert.rejects(
        stream.finalMessage(),
        (error: unknown) =>
          error instanceof Anthropic.APIError && /ended before the response was complete/.test(error.message),
      );
    });

    it('ends a passed-through stream the provider resets with an error event in the same format', async () => {
      openaiUpstream.script('/v1/chat/completions', { resetAfterEvents: 3 });
      const openai = new OpenAI({ apiKey: 'client', baseURL: `${base}/gpt/v1`, maxRetries: 0 });
      const chatStream = await openai.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'one two three four five' }],
        stream: true,
      });
      await assert.rejects(
        (async () => {
          for await (const _ of chatStream);
        })(),
        (error: unknown) =>
          error instanceof OpenAI.APIError && /ended before the response was complete/.test(error.message),
      );
      anthropicUpstream.script('/v1/messages', { resetAfterEvents: 3 });
      const anthropic = new Anthropic({ apiKey: 'client', baseURL: `${base}/claude`, maxRetries: 0 });
      await assert.rejects(
        anthropic.messages
          .stream({ model: 'claude', max_tokens: 100, messages: [{ role: 'user', content: 'one two three' }] })
          .finalMessage(),
        (error: unknown) =>
          error instanceof Anthropic.APIError && /ended before the response was complete/.test(error.message),
      );
    });

    for (const [what, path, body] of [
      ['Chat Completions, passed through', '/hanging/v1/chat/completions', CHAT],
      ['Messages, translated', '/hanging/v1/messages', MESSAGES],
    ] as const) {
      it(`aborts the upstream request when the client goes away mid-stream (${what})`, async () => {
        const closedBefore = hanging.closed();
        const abort = new AbortController();
        const response = await fetch(`${base}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ...JSON.parse(body), stream: true }),
          signal: abort.signal,
        });
        assert.equal(response.status, 200);
        const reader = response.body!.getReader();
        const first = await reader.read();
        assert.match(Buffer.from(first.value!).toString(), /first/);
        abort.abort();
        assert.ok(await until(() => hanging.closed() > closedBefore, 2000), 'the upstream connection was closed');
        const logged = await until(() => gw.accessLog.some((line) => line.includes(path)), 1000);
        assert.ok(logged, 'the request was logged');
      });
    }

    it('keeps serving after all of it', async () => {
      const client = new OpenAI({ apiKey: 'client', baseURL: `${base}/gpt/v1`, maxRetries: 0 });
      const completion = await client.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'still here' }],
      });
      assert.equal(completion.choices[0]!.message.content, 'echo: still here');
    });
  });
});
