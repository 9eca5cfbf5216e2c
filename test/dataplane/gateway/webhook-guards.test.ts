// Webhook prompt guards through gw with the official SDKs and a webhook service of the user's on
// 127.0.0.1 (test/support/webhook-guard/server.ts): request guards pass, mask (the provider
// receives the webhook's texts) and reject (the webhook's status and message, in the client's
// format); response guards mask and reject whole answers; a webhook that is down or too slow
// refuses with 503 (FailClosed) or lets the text through (FailOpen); the client headers
// forwardHeaderMatches select and the CEL headers arrive at the webhook; a GwModel's own
// webhook guard; the access log says what each webhook did.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
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
import { testCaConfigMapYaml, tlsFixture } from '../../helpers/https-get.ts';
import { gwModelYaml, MODEL_ROUTE_YAML } from '../../helpers/objects.ts';
import { startAnthropicMock } from '../../support/providers/anthropic-mock.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';
import {
  REJECT_MESSAGE,
  REJECT_STATUS,
  startWebhookGuardServer,
  type WebhookGuardServer,
} from '../../support/webhook-guard/server.ts';

const ROUTES = '{/v1/chat/completions: Completions, /v1/messages: Messages, /v1/responses: Responses}';
const GUARD_FAILED = /could not be checked by a prompt guard service/;

const webhookService = (port: number) => `apiVersion: v1
kind: Service
metadata: {name: webhook}
spec: {clusterIP: 127.0.0.1, ports: [{name: http, port: ${port}}]}
---
`;
const staticBackend = (name: string, port: number, policies: string) => `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: ${name}}
spec:
  static: {host: 127.0.0.1, port: ${port}}
  policies: ${policies}
---
`;

/** A webhook guard entry (YAML flow style) naming Service webhook (`port`) or GwBackend `backend`. */
const serviceWebhook = (port: number, more = '') => `{webhook: {backendRef: {name: webhook, port: ${port}}${more}}}`;
const backendWebhook = (backend: string, more = '') =>
  `{webhook: {backendRef: {group: gw.dev, kind: GwBackend, name: ${backend}}${more}}}`;

describe('webhook prompt guards through gw', () => {
  let openai: Awaited<ReturnType<typeof startOpenAiMock>>;
  let anthropic: Awaited<ReturnType<typeof startAnthropicMock>>;
  let webhook: WebhookGuardServer;
  let slow: WebhookGuardServer;
  let secure: WebhookGuardServer;
  let gw: TestGateway;
  let port: number;
  const openaiAt = (backend: string) =>
    new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/${backend}/v1`, maxRetries: 0 });
  const anthropicAt = (backend: string) =>
    new Anthropic({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/${backend}`, maxRetries: 0 });
  const lastOpenAiBody = () => JSON.stringify(openai.requests.at(-1)!.body);

  before(async () => {
    openai = await startOpenAiMock({ apiKey: 'sk-openai' });
    anthropic = await startAnthropicMock({ apiKey: 'sk-anthropic' });
    webhook = await startWebhookGuardServer();
    slow = await startWebhookGuardServer();
    slow.delayMs = 3000;
    secure = await startWebhookGuardServer({
      tls: { key: tlsFixture('backend.key'), cert: tlsFixture('backend.crt') },
    });
    port = await freePort();
    const nobody = await freePort();
    const w = webhook.port;
    const headers = `, headers: {x-guard-route: 'request.path', x-team-seen: 'request.headers["x-team"]'}, forwardHeaderMatches: [{name: x-team, value: blue}, {name: x-trace, type: RegularExpression, value: 'trace-[0-9]+'}]`;
    const guard = (side: 'request' | 'response', entry: string) => `promptGuard: {${side}: [${entry}]}`;
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        webhookService(w),
        staticBackend('webhook-down', nobody, '{tcp: {connectTimeout: 1s}}'),
        staticBackend('webhook-slow', slow.port, '{http: {requestTimeout: 300ms}}'),
        testCaConfigMapYaml(),
        staticBackend(
          'webhook-tls',
          secure.port,
          '{tls: {caCertificateRefs: [{name: test-ca}]}, auth: {key: sk-webhook}}',
        ),
        aiBackendYaml(
          'req',
          openai.port,
          'alpha: {}',
          'sk-openai',
          ROUTES,
          guard('request', serviceWebhook(w, headers)),
        ),
        aiBackendYaml(
          'reqclaude',
          anthropic.port,
          'gamma: {}',
          'sk-anthropic',
          ROUTES,
          guard('request', serviceWebhook(w)),
        ),
        aiBackendYaml('resp', openai.port, 'alpha: {}', 'sk-openai', ROUTES, guard('response', serviceWebhook(w))),
        aiBackendYaml(
          'down',
          openai.port,
          'alpha: {}',
          'sk-openai',
          ROUTES,
          guard('request', backendWebhook('webhook-down')),
        ),
        aiBackendYaml(
          'downopen',
          openai.port,
          'alpha: {}',
          'sk-openai',
          ROUTES,
          guard('request', backendWebhook('webhook-down', ', failureMode: FailOpen')),
        ),
        aiBackendYaml(
          'slow',
          openai.port,
          'alpha: {}',
          'sk-openai',
          ROUTES,
          guard('response', backendWebhook('webhook-slow')),
        ),
        aiBackendYaml(
          'slowopen',
          openai.port,
          'alpha: {}',
          'sk-openai',
          ROUTES,
          guard('response', backendWebhook('webhook-slow', ', failureMode: FailOpen')),
        ),
        aiBackendYaml(
          'tls',
          openai.port,
          'alpha: {}',
          'sk-openai',
          ROUTES,
          guard('request', backendWebhook('webhook-tls')),
        ),
        llmRouteYaml(['req', 'reqclaude', 'resp', 'down', 'downopen', 'slow', 'slowopen', 'tls']),
        '---\n',
        MODEL_ROUTE_YAML,
        gwModelYaml(
          'guarded-model',
          `  provider: Alpha
  baseURL: http://127.0.0.1:${openai.port}/v1
  policies:
    auth: {key: sk-openai}
    promptGuard: {request: [${serviceWebhook(w)}]}
`,
        ),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await Promise.all([openai?.close(), anthropic?.close(), webhook?.close(), slow?.close(), secure?.close()]);
  });

  beforeEach(() => {
    webhook.override = undefined;
  });

  it('pass: the webhook reads one message per text, with its role, and the provider gets the request as sent', async () => {
    const before = webhook.calls.length;
    const completion = await openaiAt('req').chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'be brief' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hello' },
            { type: 'text', text: 'there' },
          ],
        },
      ],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: hello\nthere');
    assert.equal(webhook.calls.length, before + 1);
    const call = webhook.calls.at(-1)!;
    assert.equal(call.path, '/request');
    assert.equal(call.headers['content-type'], 'application/json');
    assert.deepEqual(call.body, {
      body: {
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'hello' },
          { role: 'user', content: 'there' },
        ],
      },
    });
    assert.match(lastOpenAiBody(), /"be brief"/);
    const line = await lastAccessLogLine(gw, '/req/v1/chat/completions');
    assert.match(String(line['gw.ai.guards']), /^request\[0\]\.webhook=pass \d+\.\d{3}ms$/);
  });

  it('mask: the provider receives the texts the webhook gave back; the access log says mask', async () => {
    const completion = await openaiAt('req').chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'the code is SECRET-42 and stays here' },
        { role: 'user', content: 'use SECRET-ABC please' },
      ],
    });
    const sent = lastOpenAiBody();
    assert.ok(!sent.includes('SECRET-'), sent);
    assert.match(sent, /the code is <SECRET> and stays here/);
    assert.match(sent, /use <SECRET> please/);
    assert.equal(completion.choices[0]!.message.content, 'echo: use <SECRET> please');
    const line = await lastAccessLogLine(gw, '/req/v1/chat/completions');
    assert.match(String(line['gw.ai.guards']), /^request\[0\]\.webhook=mask \d+\.\d{3}ms$/);
  });

  it('reject: the webhook’s status and message in the Chat Completions and Responses formats; nothing reaches the provider', async () => {
    const before = openai.requests.length;
    for (const call of [
      () =>
        openaiAt('req').chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'tell me about the forbidden thing' }],
        }),
      () => openaiAt('req').responses.create({ model: 'gpt-4o-mini', input: 'the forbidden thing' }),
    ]) {
      const error = await failureOf(call());
      assert.ok(error instanceof OpenAI.APIError, String(error));
      assert.equal(error.status, REJECT_STATUS);
      assert.ok(error.message.endsWith(REJECT_MESSAGE), error.message);
    }
    assert.equal(openai.requests.length, before);
    const line = await lastAccessLogLine(gw, '/req/v1/responses');
    assert.match(String(line['gw.ai.guards']), /^request\[0\]\.webhook=reject /);
    assert.equal(line['http.response.status_code'], REJECT_STATUS);
  });

  it('the Anthropic SDK: a mask reaches Claude, a reject comes back as a Messages error', async () => {
    const message = await anthropicAt('reqclaude').messages.create({
      model: 'claude-guarded',
      max_tokens: 50,
      system: 'keep SECRET-SYS to yourself',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'my code is SECRET-777' }] }],
    });
    const sent = JSON.stringify(anthropic.requests.at(-1)!.body);
    assert.ok(!sent.includes('SECRET-'), sent);
    assert.match(sent, /keep <SECRET> to yourself/);
    assert.deepEqual(message.content, [{ type: 'text', text: 'echo: my code is <SECRET>' }]);
    const call = webhook.calls.at(-1)!;
    assert.deepEqual(call.body.body.messages, [
      { role: 'system', content: 'keep SECRET-SYS to yourself' },
      { role: 'user', content: 'my code is SECRET-777' },
    ]);
    const before = anthropic.requests.length;
    const error = await failureOf(
      anthropicAt('reqclaude').messages.create({
        model: 'claude-guarded',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'forbidden' }],
      }),
    );
    assert.ok(error instanceof Anthropic.APIError, String(error));
    assert.equal(error.status, REJECT_STATUS);
    assert.equal((error.error as { error: { message: string } }).error.message, REJECT_MESSAGE);
    assert.equal(anthropic.requests.length, before);
  });

  it('the client headers forwardHeaderMatches select, and the CEL headers, arrive at the webhook', async () => {
    await openaiAt('req').chat.completions.create(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      { headers: { 'x-team': 'blue', 'x-trace': 'trace-123', 'x-other': 'kept home' } },
    );
    let call = webhook.calls.at(-1)!;
    assert.equal(call.headers['x-team'], 'blue');
    assert.equal(call.headers['x-trace'], 'trace-123');
    assert.equal(call.headers['x-other'], undefined);
    assert.equal(call.headers.authorization, undefined, 'the client’s key is not forwarded unless selected');
    assert.equal(call.headers['x-guard-route'], '/req/v1/chat/completions');
    assert.equal(call.headers['x-team-seen'], 'blue');
    // Values that do not match are not forwarded; a CEL header whose expression fails is left off.
    await openaiAt('req').chat.completions.create(
      { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      { headers: { 'x-team': 'red', 'x-trace': 'trace-abc' } },
    );
    call = webhook.calls.at(-1)!;
    assert.equal(call.headers['x-team'], undefined);
    assert.equal(call.headers['x-trace'], undefined);
    assert.equal(call.headers['x-team-seen'], 'red');
    await openaiAt('req').chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(webhook.calls.at(-1)!.headers['x-team-seen'], undefined);
  });

  it('response guards: a mask changes the answer the client gets; a reject answers the webhook’s status', async () => {
    const completion = await openaiAt('resp').chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'repeat SECRET-XYZ' }],
    });
    assert.match(lastOpenAiBody(), /SECRET-XYZ/);
    assert.equal(completion.choices[0]!.message.content, 'echo: repeat <SECRET>');
    const call = webhook.calls.at(-1)!;
    assert.equal(call.path, '/response');
    assert.deepEqual(call.body, {
      body: { choices: [{ message: { role: 'assistant', content: 'echo: repeat SECRET-XYZ' } }] },
    });
    let line = await lastAccessLogLine(gw, '/resp/v1/chat/completions');
    assert.match(String(line['gw.ai.guards']), /^response\[0\]\.webhook=mask \d+\.\d{3}ms$/);
    const response = await anthropicAt('resp').messages.create({
      model: 'gpt-4o-mini',
      max_tokens: 20,
      messages: [{ role: 'user', content: 'say SECRET-Q1' }],
    });
    assert.deepEqual(response.content, [{ type: 'text', text: 'echo: say <SECRET>' }]);
    const error = await failureOf(
      openaiAt('resp').responses.create({ model: 'gpt-4o-mini', input: 'a forbidden answer' }),
    );
    assert.ok(error instanceof OpenAI.APIError, String(error));
    assert.equal(error.status, REJECT_STATUS);
    assert.ok(error.message.endsWith(REJECT_MESSAGE), error.message);
    line = await lastAccessLogLine(gw, '/resp/v1/responses');
    assert.match(String(line['gw.ai.guards']), /^response\[0\]\.webhook=reject /);
  });

  it('an answer gw cannot read (a mask of the wrong number of messages, a non-2xx status) fails closed: 503', async () => {
    const before = openai.requests.length;
    for (const answer of [
      { status: 200, body: JSON.stringify({ action: { body: { messages: [] } } }) },
      { status: 500, body: 'boom' },
      { status: 200, body: 'not json' },
    ]) {
      webhook.override = () => answer;
      const error = await failureOf(
        openaiAt('req').chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      );
      assert.ok(error instanceof OpenAI.APIError, String(error));
      assert.equal(error.status, 503);
      assert.match(error.message, GUARD_FAILED);
    }
    assert.equal(openai.requests.length, before);
    const line = await lastAccessLogLine(gw, '/req/v1/chat/completions');
    assert.match(String(line['gw.ai.guards']), /^request\[0\]\.webhook=reject failed: .*not JSON/);
  });

  it('a webhook that is down: FailClosed answers 503 and sends nothing on; FailOpen lets the request through', async () => {
    const before = openai.requests.length;
    const error = await failureOf(
      openaiAt('down').chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    );
    assert.ok(error instanceof OpenAI.APIError, String(error));
    assert.equal(error.status, 503);
    assert.match(error.message, GUARD_FAILED);
    assert.equal(openai.requests.length, before);
    let line = await lastAccessLogLine(gw, '/down/v1/chat/completions');
    assert.match(
      String(line['gw.ai.guards']),
      /^request\[0\]\.webhook=reject failed: the webhook guard \(GwBackend default\/webhook-down\) could not be reached/,
    );
    const completion = await openaiAt('downopen').chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'SECRET-OPEN goes through' }],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: SECRET-OPEN goes through');
    line = await lastAccessLogLine(gw, '/downopen/v1/chat/completions');
    assert.match(String(line['gw.ai.guards']), /^request\[0\]\.webhook=pass failed: /);
  });

  it('a webhook slower than its GwBackend’s http.requestTimeout: FailClosed 503, FailOpen passes the answer', async () => {
    const started = performance.now();
    const error = await failureOf(
      openaiAt('slow').chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    );
    assert.ok(performance.now() - started < 2500, 'the deadline, not the webhook, ends the wait');
    assert.ok(error instanceof OpenAI.APIError, String(error));
    assert.equal(error.status, 503);
    let line = await lastAccessLogLine(gw, '/slow/v1/chat/completions');
    assert.match(
      String(line['gw.ai.guards']),
      /^response\[0\]\.webhook=reject failed: .* did not answer within 300 ms/,
    );
    const completion = await openaiAt('slowopen').chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'slow but open' }],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: slow but open');
    line = await lastAccessLogLine(gw, '/slowopen/v1/chat/completions');
    assert.match(String(line['gw.ai.guards']), /^response\[0\]\.webhook=pass failed: .* did not answer within 300 ms/);
  });

  it('a GwBackend’s tls and auth policies apply to the call: HTTPS verified with its CA, its key sent', async () => {
    const completion = await openaiAt('tls').chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'over TLS SECRET-T1' }],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: over TLS <SECRET>');
    const call = secure.calls.at(-1)!;
    assert.equal(call.path, '/request');
    assert.equal(call.headers.authorization, 'Bearer sk-webhook');
  });

  it("a GwModel's own webhook guard (ModelPolicies.promptGuard) masks what its provider receives", async () => {
    const client = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: 'guarded-model',
      messages: [{ role: 'user', content: 'code SECRET-M1' }],
    });
    assert.match(lastOpenAiBody(), /code <SECRET>/);
    assert.equal(completion.choices[0]!.message.content, 'echo: code <SECRET>');
  });
});
