// Streamed answers through a guard that calls a service (a webhook response guard with
// streaming: Enabled), end to end: the official SDKs through gw to the provider stand-ins, and a
// webhook on 127.0.0.1 (test/support/webhook-guard/server.ts). The answer reaches the client
// window by window, each window checked by the webhook as one assistant message; a forbidden word
// ends the stream with the webhook's message after the windows that passed and never shows; a
// short answer is checked at its end; a mask verdict leaves the stream as it is; a webhook that is
// down ends the stream (FailClosed) or lets it through (FailOpen); the access log counts windows.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { WINDOW_BYTES, WINDOW_OVERLAP_BYTES } from '../../../src/dataplane/ai/guards/stream-window.ts';
import { failureOf } from '../../helpers/failure-of.ts';
import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  lastAccessLogLine,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { startAnthropicMock } from '../../support/providers/anthropic-mock.ts';
import {
  FORBIDDEN_WORD,
  REJECT_MESSAGE,
  startWebhookGuardServer,
  type WebhookGuardServer,
} from '../../support/webhook-guard/server.ts';

const ROUTES = '{/v1/chat/completions: Completions, /v1/messages: Messages, /v1/responses: Responses}';

/** `count` numbered words (`w001 w002 …`), five bytes each. */
const words = (count: number, from = 1) =>
  Array.from({ length: count }, (_, i) => `w${String(from + i).padStart(3, '0')}`).join(' ');

describe('streamed answers through a webhook guard, in windows', () => {
  let anthropic: Awaited<ReturnType<typeof startAnthropicMock>>;
  let webhook: WebhookGuardServer;
  let gw: TestGateway;
  let port: number;
  const anthropicAt = (backend: string) =>
    new Anthropic({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/${backend}`, maxRetries: 0 });
  const openaiAt = (backend: string) =>
    new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/${backend}/v1`, maxRetries: 0 });
  /** The assistant texts the webhook was given since call `from`. */
  const windowsSince = (from: number) =>
    webhook.calls.slice(from).map((call) => {
      assert.equal(call.path, '/response');
      const messages = call.body.body.choices!.map((choice) => choice.message);
      assert.equal(messages.length, 1);
      assert.equal(messages[0]!.role, 'assistant');
      return messages[0]!.content;
    });

  before(async () => {
    anthropic = await startAnthropicMock({ apiKey: 'sk-anthropic' });
    webhook = await startWebhookGuardServer();
    port = await freePort();
    const nobody = await freePort();
    const streamGuard = (backendRef: string, more = '') =>
      `promptGuard: {streaming: Enabled, response: [{webhook: {backendRef: ${backendRef}${more}}}]}`;
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        `apiVersion: v1
kind: Service
metadata: {name: webhook}
spec: {clusterIP: 127.0.0.1, ports: [{name: http, port: ${webhook.port}}]}
---
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: webhook-down}
spec:
  static: {host: 127.0.0.1, port: ${nobody}}
  policies: {tcp: {connectTimeout: 1s}}
---
`,
        aiBackendYaml(
          'guarded',
          anthropic.port,
          'gamma: {}',
          'sk-anthropic',
          ROUTES,
          streamGuard(`{name: webhook, port: ${webhook.port}}`),
        ),
        aiBackendYaml(
          'down',
          anthropic.port,
          'gamma: {}',
          'sk-anthropic',
          ROUTES,
          streamGuard('{group: gw.dev, kind: GwBackend, name: webhook-down}'),
        ),
        aiBackendYaml(
          'downopen',
          anthropic.port,
          'gamma: {}',
          'sk-anthropic',
          ROUTES,
          streamGuard('{group: gw.dev, kind: GwBackend, name: webhook-down}', ', failureMode: FailOpen'),
        ),
        llmRouteYaml(['guarded', 'down', 'downopen']),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await Promise.all([anthropic?.close(), webhook?.close()]);
  });

  it('a long Messages stream passes window by window: the whole answer arrives, each window seen with the end of the previous', async () => {
    const from = webhook.calls.length;
    const prompt = words(500);
    const stream = anthropicAt('guarded').messages.stream({
      model: 'claude-guarded',
      max_tokens: 2000,
      messages: [{ role: 'user', content: prompt }],
    });
    const message = await stream.finalMessage();
    assert.deepEqual(message.content, [{ type: 'text', text: `echo: ${prompt}` }]);
    const windows = windowsSince(from);
    // 2 506 bytes of text: two full windows and the rest at the end.
    assert.equal(windows.length, Math.ceil(Buffer.byteLength(`echo: ${prompt}`) / WINDOW_BYTES));
    assert.ok(windows[0]!.startsWith('echo: w001'));
    for (let i = 1; i < windows.length; i++)
      assert.ok(windows[i]!.startsWith(windows[i - 1]!.slice(-WINDOW_OVERLAP_BYTES)), `window ${i} overlaps`);
    assert.ok(windows.at(-1)!.endsWith('w500'));
    const line = await lastAccessLogLine(gw, '/guarded/v1/messages');
    assert.match(
      String(line['gw.ai.guards']),
      new RegExp(`^response\\[0\\]\\.webhook=pass ${windows.length} windows `),
    );
    assert.equal(typeof line['gw.ai.time_to_first_token'], 'number');
  });

  it('a forbidden word in a later window: the client has the windows before it, then the webhook’s message; never the word', async () => {
    const stream = anthropicAt('guarded').messages.stream({
      model: 'claude-guarded',
      max_tokens: 2000,
      messages: [{ role: 'user', content: `${words(300)} ${FORBIDDEN_WORD} ${words(10, 301)}` }],
    });
    const seen: string[] = [];
    stream.on('text', (delta) => seen.push(delta));
    const error = await failureOf(stream.finalMessage());
    assert.ok(error instanceof Anthropic.APIError, String(error));
    assert.match(error.message, new RegExp(REJECT_MESSAGE));
    const text = seen.join('');
    assert.ok(text.startsWith('echo: w001'), 'the first window reached the client');
    assert.ok(!text.includes(FORBIDDEN_WORD), text.slice(-200));
    const line = await lastAccessLogLine(gw, '/guarded/v1/messages');
    assert.match(String(line['gw.ai.guards']), /^response\[0\]\.webhook=reject 2 windows /);
    assert.equal(line.error, 'response rejected by a prompt guard');
  });

  it('a short translated Chat Completions answer is checked at its end: rejected, nothing of it reaches the client', async () => {
    const stream = await openaiAt('guarded').chat.completions.create({
      model: 'claude-guarded',
      stream: true,
      messages: [{ role: 'user', content: `just one ${FORBIDDEN_WORD} thing` }],
    });
    let text = '';
    const error = await failureOf(
      (async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      })(),
    );
    assert.ok(error instanceof OpenAI.APIError, String(error));
    assert.match(error.message, new RegExp(REJECT_MESSAGE));
    assert.equal(text, '');
  });

  it('a mask verdict is not applied to a stream: the answer arrives as generated; the log says pass', async () => {
    const stream = anthropicAt('guarded').messages.stream({
      model: 'claude-guarded',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'the code is SECRET-ABC' }],
    });
    assert.deepEqual((await stream.finalMessage()).content, [{ type: 'text', text: 'echo: the code is SECRET-ABC' }]);
    const line = await lastAccessLogLine(gw, '/guarded/v1/messages');
    assert.match(String(line['gw.ai.guards']), /^response\[0\]\.webhook=pass 1 window /);
  });

  it('a webhook that is down: FailClosed ends the stream with the 503 failure message; FailOpen lets it through', async () => {
    const closed = anthropicAt('down').messages.stream({
      model: 'claude-guarded',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hello' }],
    });
    const error = await failureOf(closed.finalMessage());
    assert.ok(error instanceof Anthropic.APIError, String(error));
    assert.match(error.message, /could not be checked by a prompt guard service/);
    const line = await lastAccessLogLine(gw, '/down/v1/messages');
    assert.match(String(line['gw.ai.guards']), /^response\[0\]\.webhook=reject failed: /);
    const open = anthropicAt('downopen').messages.stream({
      model: 'claude-guarded',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hello' }],
    });
    assert.deepEqual((await open.finalMessage()).content, [{ type: 'text', text: 'echo: hello' }]);
    const openLine = await lastAccessLogLine(gw, '/downopen/v1/messages');
    assert.match(String(openLine['gw.ai.guards']), /^response\[0\]\.webhook=pass failed: .* 1 window /);
  });
});
