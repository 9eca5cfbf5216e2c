// What both mocks share: fixed mode, request recording, script queues, and closing.
import assert from 'node:assert/strict';
import { Agent, request as httpRequest } from 'node:http';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { FIXED_MESSAGE_BYTES, startAnthropicMock } from '../support/providers/anthropic-mock.ts';
import { FIXED_ANSWER_BYTES, FIXED_OPENAI_MODEL, startOpenAiMock } from '../support/providers/openai-mock.ts';

async function openAiError(response: Response): Promise<{ type: string; code: string | null }> {
  return ((await response.json()) as { error: { type: string; code: string | null } }).error;
}

const CHAT = { model: 'anything', messages: [{ role: 'user' as const, content: 'ignored in fixed mode' }] };

test('fixed mode answers every chat completion with the same 1 KiB completion and records no body', async (t) => {
  const mock = await startOpenAiMock({ fixed: true });
  t.after(() => mock.close());
  const first = await fetch(`${mock.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(CHAT) });
  const second = await fetch(`${mock.url}/v1/chat/completions`, { method: 'POST', body: 'not even json' });
  assert.equal(first.status, 200);
  assert.equal(first.headers.get('content-length'), String(FIXED_ANSWER_BYTES));
  const firstBody = await first.text();
  assert.equal(Buffer.byteLength(firstBody), FIXED_ANSWER_BYTES);
  assert.equal(await second.text(), firstBody);

  const client = new OpenAI({ apiKey: 'k', baseURL: `${mock.url}/v1`, maxRetries: 0 });
  const completion = await client.chat.completions.create(CHAT);
  assert.equal(completion.object, 'chat.completion');
  assert.equal(completion.model, FIXED_OPENAI_MODEL);
  assert.match(completion.choices[0].message.content ?? '', /^The quick brown fox/);
  assert.ok((completion.usage?.completion_tokens ?? 0) > 0);

  assert.equal(mock.requests.length, 3);
  assert.ok(mock.requests.every((request) => request.path === '/v1/chat/completions' && request.body === undefined));
  // A scripted request takes the full path, still without a key check and still with the fixed body.
  mock.script('/v1/chat/completions', { delayMs: 1 });
  const scripted = await fetch(`${mock.url}/v1/chat/completions`, { method: 'POST', body: '{}' });
  assert.equal(await scripted.text(), firstBody);
  // Other paths keep their normal answers.
  assert.equal((await client.models.list()).data[0].object, 'model');
});

test('fixed mode checks the key only when one is required, and still obeys scripts', async (t) => {
  const mock = await startOpenAiMock({ fixed: true, apiKey: 'bench-key' });
  t.after(() => mock.close());
  const denied = await fetch(`${mock.url}/v1/chat/completions`, { method: 'POST', body: '{}' });
  assert.equal(denied.status, 401);
  assert.equal((await openAiError(denied)).code, null);

  const headers = { authorization: 'Bearer bench-key' };
  mock.script('/v1/chat/completions', { delayMs: 60 });
  const started = performance.now();
  const delayed = await fetch(`${mock.url}/v1/chat/completions`, { method: 'POST', headers, body: '{}' });
  assert.ok(performance.now() - started >= 55);
  assert.equal(Buffer.byteLength(await delayed.text()), FIXED_ANSWER_BYTES);

  mock.script('/v1/chat/completions', { reply: { kind: 'error', status: 503 } });
  const failed = await fetch(`${mock.url}/v1/chat/completions`, { method: 'POST', headers, body: '{}' });
  assert.equal(failed.status, 503);
  assert.equal((await openAiError(failed)).type, 'server_error');
});

test('the Anthropic mock has a fixed mode too', async (t) => {
  const mock = await startAnthropicMock({ fixed: true });
  t.after(() => mock.close());
  const client = new Anthropic({ apiKey: 'k', baseURL: mock.url, maxRetries: 0 });
  const message = await client.messages.create({
    model: 'x',
    max_tokens: 1,
    messages: [{ role: 'user', content: 'y' }],
  });
  assert.equal(message.type, 'message');
  assert.equal(message.stop_reason, 'end_turn');
  const raw = await fetch(`${mock.url}/v1/messages`, { method: 'POST', body: '{}' });
  assert.equal(Buffer.byteLength(await raw.text()), FIXED_MESSAGE_BYTES);
});

test('only the most recent requests are kept, oldest first', async (t) => {
  const mock = await startOpenAiMock({ maxRecordedRequests: 3 });
  t.after(() => mock.close());
  for (let i = 0; i < 5; i++) {
    await (await fetch(`${mock.url}/v1/models?n=${i}`, { headers: { authorization: 'Bearer k' } })).text();
  }
  assert.deepEqual(
    mock.requests.map((request) => request.url),
    ['/v1/models?n=2', '/v1/models?n=3', '/v1/models?n=4'],
  );
  assert.ok(mock.requests.every((request) => request.method === 'GET' && request.path === '/v1/models'));
  mock.clear();
  assert.deepEqual(mock.requests, []);
});

test('a path queue runs before the "*" queue; each step serves one request; clear() drops the queues', async (t) => {
  const mock = await startOpenAiMock();
  t.after(() => mock.close());
  const get = async (path: string) =>
    (await fetch(`${mock.url}${path}`, { headers: { authorization: 'Bearer k' } })).status;
  mock.script('*', { reply: { kind: 'error', status: 500 } }, 2);
  mock.script('/v1/models', { reply: { kind: 'error', status: 429 } });
  assert.equal(await get('/v1/models'), 429);
  assert.equal(await get('/v1/models'), 500);
  assert.equal(await get('/v1/models/gpt-4o'), 500);
  assert.equal(await get('/v1/models'), 200);

  mock.script('/v1/models', { reply: { kind: 'error', status: 429 } }, 3);
  mock.clear();
  assert.equal(await get('/v1/models'), 200);
  assert.throws(() => mock.script('/v1/models', {}, 0), RangeError);
});

test('a scripted body is sent as given, with its status and headers', async (t) => {
  const mock = await startAnthropicMock();
  t.after(() => mock.close());
  mock.script('/v1/messages', {
    reply: { kind: 'body', status: 502, body: 'upstream exploded', headers: { 'x-custom': 'yes' } },
  });
  const response = await fetch(`${mock.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
    body: '{}',
  });
  assert.equal(response.status, 502);
  assert.equal(response.headers.get('x-custom'), 'yes');
  assert.equal(await response.text(), 'upstream exploded');
});

test('close() ends idle keep-alive connections and in-flight delays', async (t) => {
  const mock = await startOpenAiMock();
  const agent = new Agent({ keepAlive: true });
  t.after(() => agent.destroy());
  const socketClosed = new Promise<void>((resolve) => {
    const request = httpRequest(
      `${mock.url}/v1/models`,
      { agent, headers: { authorization: 'Bearer k' } },
      (response) => {
        response.resume();
        response.on('end', () => request.socket?.once('close', () => resolve()));
      },
    );
    request.end();
  });
  await new Promise((resolve) => setTimeout(resolve, 50));
  mock.script('/v1/chat/completions', { delayMs: 10_000 });
  const pending = fetch(`${mock.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: 'Bearer k' },
    body: JSON.stringify(CHAT),
  }).then(
    () => 'answered',
    () => 'failed',
  );
  await new Promise((resolve) => setTimeout(resolve, 50));

  const started = performance.now();
  await mock.close();
  assert.ok(performance.now() - started < 500, 'close() did not wait for the keep-alive timeout');
  await socketClosed;
  assert.equal(await pending, 'failed');
});
