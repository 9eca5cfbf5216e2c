// Regex prompt guards through gw with the official SDKs: request guards mask what the provider
// receives (translated or not) and reject in the client's format with the CustomResponse;
// response guards mask or reject the answer the client gets; streams pass uninspected (no
// `streaming: Enabled`); a catastrophic pattern does not stall gw; the access log says which
// guard did what; a pattern RE2 cannot compile refuses the provider, naming the field.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
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
import { anthropicRefusal, guardedModelYaml } from '../../helpers/guards.ts';
import { MODEL_ROUTE_YAML } from '../../helpers/objects.ts';
import { startAnthropicMock } from '../../support/providers/anthropic-mock.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';

const ROUTES = '{/v1/chat/completions: Completions, /v1/messages: Messages, /v1/responses: Responses}';
const CARD = '4111-1111-1111-1111';
const SSN = '078-05-1120';

const MASK_REQUESTS = `promptGuard: {request: [{regex: {action: Mask, builtins: [CreditCard, Email], matches: [{name: PROJECT, pattern: 'Project [A-Z][a-z]+'}, {name: NESTED, pattern: '(a+)+$'}]}}]}`;
const REJECT_REQUESTS = `promptGuard: {request: [{regex: {action: Reject, builtins: [Ssn]}, response: {statusCode: 422, message: 'SSNs stay at home'}}]}`;
const MASK_RESPONSES = 'promptGuard: {response: [{regex: {action: Mask, builtins: [CreditCard]}}]}';
const REJECT_RESPONSES = 'promptGuard: {response: [{regex: {action: Reject, builtins: [Ssn]}}]}';
const REJECT_STREAMS = `promptGuard: {streaming: Enabled, response: [{regex: {action: Reject, builtins: [Ssn]}, response: {message: 'no SSNs in answers'}}]}`;

const BAD_PATTERN = `promptGuard: {request: [{regex: {action: Reject, matches: [{name: back, pattern: '(a)\\1'}]}}]}`;

describe('regex prompt guards through gw', () => {
  let openai: Awaited<ReturnType<typeof startOpenAiMock>>;
  let anthropic: Awaited<ReturnType<typeof startAnthropicMock>>;
  let gw: TestGateway;
  let port: number;
  const openaiAt = (backend: string) =>
    new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/${backend}/v1`, maxRetries: 0 });
  const anthropicAt = (backend: string) =>
    new Anthropic({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/${backend}`, maxRetries: 0 });

  before(async () => {
    openai = await startOpenAiMock({ apiKey: 'sk-openai' });
    anthropic = await startAnthropicMock({ apiKey: 'sk-anthropic' });
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('maskreq', openai.port, 'alpha: {}', 'sk-openai', ROUTES, MASK_REQUESTS),
        aiBackendYaml('rejectreq', anthropic.port, 'gamma: {}', 'sk-anthropic', ROUTES, REJECT_REQUESTS),
        aiBackendYaml('maskresp', openai.port, 'alpha: {}', 'sk-openai', ROUTES, MASK_RESPONSES),
        aiBackendYaml('rejectresp', anthropic.port, 'gamma: {}', 'sk-anthropic', ROUTES, REJECT_RESPONSES),
        aiBackendYaml('rejectstream', anthropic.port, 'gamma: {}', 'sk-anthropic', ROUTES, REJECT_STREAMS),
        aiBackendYaml('badpattern', openai.port, 'alpha: {}', 'sk-openai', ROUTES, BAD_PATTERN),
        llmRouteYaml(['maskreq', 'rejectreq', 'maskresp', 'rejectresp', 'rejectstream', 'badpattern']),
        '---\n',
        MODEL_ROUTE_YAML,
        guardedModelYaml(
          'guarded-model',
          openai.port,
          'sk-openai',
          '{request: [{regex: {action: Mask, builtins: [Ssn]}}]}',
        ),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await Promise.all([openai?.close(), anthropic?.close()]);
  });

  const lastOpenAiBody = () => JSON.stringify(openai.requests.at(-1)!.body);

  it('Mask on requests (Chat Completions): the provider receives placeholders; the access log names the guard', async () => {
    const completion = await openaiAt('maskreq').chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'Project Falcon is secret' },
        { role: 'user', content: `charge ${CARD} and mail jane@example.com` },
      ],
    });
    const sent = lastOpenAiBody();
    assert.ok(!sent.includes(CARD) && !sent.includes('jane@example.com') && !sent.includes('Falcon'), sent);
    assert.match(sent, /<PROJECT> is secret/);
    assert.match(sent, /charge <CREDIT_CARD> and mail <EMAIL_ADDRESS>/);
    assert.equal(completion.choices[0]!.message.content, 'echo: charge <CREDIT_CARD> and mail <EMAIL_ADDRESS>');
    const line = await lastAccessLogLine(gw, '/maskreq/v1/chat/completions');
    assert.match(
      String(line['gw.ai.guards']),
      /^request\[0\]\.regex=mask\(PROJECT,CREDIT_CARD,EMAIL_ADDRESS\) \d+\.\d{3}ms$/,
    );
  });

  it('Mask on requests (Responses): instructions and input items', async () => {
    await openaiAt('maskreq').responses.create({
      model: 'gpt-4o-mini',
      instructions: 'reply to jane@example.com',
      input: [{ role: 'user', content: [{ type: 'input_text', text: `card ${CARD}` }] }],
    });
    const sent = lastOpenAiBody();
    assert.match(sent, /reply to <EMAIL_ADDRESS>/);
    assert.match(sent, /card <CREDIT_CARD>/);
  });

  it('Mask on requests (Messages translated to Chat Completions): the translated body carries the placeholders', async () => {
    await anthropicAt('maskreq').messages.create({
      model: 'gpt-4o-mini',
      max_tokens: 50,
      system: 'Project Falcon',
      messages: [
        { role: 'user', content: 'pay' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'pay', input: { card: CARD } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: `paid with ${CARD}` }] },
      ],
    });
    const sent = lastOpenAiBody();
    assert.equal(openai.requests.at(-1)!.path, '/v1/chat/completions');
    assert.ok(!sent.includes('4111'), sent);
    assert.match(sent, /<PROJECT>/);
    assert.match(sent, /paid with <CREDIT_CARD>/);
    assert.match(sent, /\\"card\\":\\"<CREDIT_CARD>\\"/);
  });

  it('a catastrophic-backtracking pattern on a long prompt does not stall gw', async () => {
    const started = performance.now();
    await openaiAt('maskreq').chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: `${'a'.repeat(200_000)}!` }],
    });
    assert.ok(performance.now() - started < 3000);
  });

  it('Reject on requests: the CustomResponse in the Messages format; nothing reaches the provider', async () => {
    const before = anthropic.requests.length;
    const error = await failureOf(
      anthropicAt('rejectreq').messages.create({
        model: 'claude-guarded',
        max_tokens: 10,
        messages: [{ role: 'user', content: `my SSN is ${SSN}` }],
      }),
    );
    assert.deepEqual(anthropicRefusal(error), { status: 422, message: 'SSNs stay at home' });
    assert.equal(anthropic.requests.length, before);
    const line = await lastAccessLogLine(gw, '/rejectreq/v1/messages');
    assert.match(String(line['gw.ai.guards']), /^request\[0\]\.regex=reject\(SSN\)/);
    assert.equal(line['http.response.status_code'], 422);
  });

  it('Reject on requests: in the Chat Completions and Responses formats for OpenAI clients', async () => {
    for (const call of [
      () =>
        openaiAt('rejectreq').chat.completions.create({
          model: 'claude-guarded',
          messages: [{ role: 'user', content: `ssn ${SSN}` }],
        }),
      () => openaiAt('rejectreq').responses.create({ model: 'claude-guarded', input: `ssn ${SSN}` }),
    ]) {
      const error = await failureOf(call());
      assert.ok(error instanceof OpenAI.APIError);
      assert.equal(error.status, 422);
      assert.equal(error.message.endsWith('SSNs stay at home'), true, error.message);
    }
  });

  it('Mask on responses: the client gets placeholders the provider did not write', async () => {
    const response = await openaiAt('maskresp').responses.create({ model: 'gpt-4o-mini', input: `card ${CARD}` });
    assert.match(lastOpenAiBody(), new RegExp(CARD));
    assert.equal(response.output_text, 'echo: card <CREDIT_CARD>');
    const completion = await openaiAt('maskresp').chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: `card ${CARD}` }],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: card <CREDIT_CARD>');
    const line = await lastAccessLogLine(gw, '/maskresp/v1/chat/completions');
    assert.match(String(line['gw.ai.guards']), /^response\[0\]\.regex=mask\(CREDIT_CARD\)/);
  });

  it('Reject on responses: the default 403 and message, in the client format', async () => {
    const error = await failureOf(
      anthropicAt('rejectresp').messages.create({
        model: 'claude-guarded',
        max_tokens: 10,
        messages: [{ role: 'user', content: `ssn ${SSN}` }],
      }),
    );
    assert.deepEqual(anthropicRefusal(error), {
      status: 403,
      message: 'The response was rejected due to inappropriate content',
    });
    const clean = await anthropicAt('rejectresp').messages.create({
      model: 'claude-guarded',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'hello' }],
    });
    assert.deepEqual(clean.content, [{ type: 'text', text: 'echo: hello' }]);
  });

  it('streamed answers are not inspected without streaming: Enabled (the spec default)', async () => {
    const stream = anthropicAt('rejectresp').messages.stream({
      model: 'claude-guarded',
      max_tokens: 10,
      messages: [{ role: 'user', content: `ssn ${SSN}` }],
    });
    const message = await stream.finalMessage();
    assert.deepEqual(message.content, [{ type: 'text', text: `echo: ssn ${SSN}` }]);
  });

  it('streaming: Enabled: a Reject guard ends a Messages stream with its error event once the match arrives', async () => {
    const stream = anthropicAt('rejectstream').messages.stream({
      model: 'claude-guarded',
      max_tokens: 50,
      messages: [{ role: 'user', content: `the number ${SSN} is mine` }],
    });
    const seen: string[] = [];
    stream.on('text', (delta) => seen.push(delta));
    const error = await failureOf(stream.finalMessage());
    assert.ok(error instanceof Anthropic.APIError, String(error));
    assert.match(error.message, /no SSNs in answers/);
    assert.ok(!seen.join('').includes(SSN), seen.join(''));
    assert.equal(seen.join(''), 'echo: the number');
    const line = await lastAccessLogLine(gw, '/rejectstream/v1/messages');
    assert.match(String(line['gw.ai.guards']), /^response\[0\]\.regex=reject\(SSN\)/);
  });

  it('streaming: Enabled: a translated Chat Completions stream ends with an OpenAI error event; a clean one completes', async () => {
    const stream = await openaiAt('rejectstream').chat.completions.create({
      model: 'claude-guarded',
      stream: true,
      messages: [{ role: 'user', content: `ssn ${SSN}` }],
    });
    let text = '';
    const error = await failureOf(
      (async () => {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      })(),
    );
    assert.ok(error instanceof OpenAI.APIError, String(error));
    assert.match(error.message, /no SSNs in answers/);
    assert.ok(!text.includes(SSN));
    const clean = anthropicAt('rejectstream').messages.stream({
      model: 'claude-guarded',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'all clear' }],
    });
    assert.deepEqual((await clean.finalMessage()).content, [{ type: 'text', text: 'echo: all clear' }]);
  });

  it("a GwModel's promptGuard (ModelPolicies.promptGuard) masks what its provider receives", async () => {
    const client = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: 'guarded-model',
      messages: [{ role: 'user', content: `ssn ${SSN}` }],
    });
    assert.match(lastOpenAiBody(), /ssn <SSN>/);
    assert.equal(completion.choices[0]!.message.content, 'echo: ssn <SSN>');
  });

  it('a pattern RE2 cannot compile refuses the provider, naming the field', async () => {
    const error = await failureOf(
      openaiAt('badpattern').chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hi' }],
      }),
    );
    assert.ok(error instanceof OpenAI.APIError);
    assert.equal(error.status, 500);
    assert.ok(
      gw.logs.some((line) => line.includes('ai.promptGuard.request[0].regex.matches[0].pattern')),
      gw.logs.join('\n'),
    );
  });
});
