// More LLM traffic through gw with the official SDKs: the Responses API passed through to an
// alpha provider (streamed and not, usage in the access log), count_tokens to a gamma provider, a
// `custom` provider that speaks Chat Completions, and the backend's AI request policies (model
// aliases, prompt enrichment, defaults, overrides, transformations, final transformations) as
// the provider receives them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
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
import type { MockServer } from '../../support/providers/mock-server.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';

type Body = Record<string, unknown>;

describe('more LLM traffic through gw', () => {
  let openaiUpstream: MockServer;
  let anthropicUpstream: MockServer;
  let gw: TestGateway;
  let base: string;

  const logLine = (path: string) => lastAccessLogLine(gw, path);

  before(async () => {
    openaiUpstream = await startOpenAiMock({ apiKey: 'sk-openai' });
    anthropicUpstream = await startAnthropicMock({ apiKey: 'sk-anthropic' });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const routes =
      '{/v1/chat/completions: Completions, /v1/messages: Messages, /v1/responses: Responses, /v1/messages/count_tokens: GammaTokenCount}';
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('gpt', openaiUpstream.port, 'alpha: {}', 'sk-openai', routes),
        aiBackendYaml('claude', anthropicUpstream.port, 'gamma: {}', 'sk-anthropic', routes),
        aiBackendYaml('custom', openaiUpstream.port, 'custom: {formats: [{type: Completions}]}', 'sk-openai', routes),
        `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: tuned}
spec:
  ai: {provider: {host: 127.0.0.1, port: ${openaiUpstream.port}, alpha: {}}}
  policies:
    auth: {key: sk-openai}
    ai:
      routes: ${routes}
      modelAliases: {fast: gpt-4o-mini, 'mini-*': gpt-4o}
      prompt:
        prepend: [{role: system, content: house rules}]
        append: [{role: user, content: answer in English}]
      defaults:
        - {field: temperature, value: 0.3}
        - {field: top_p, value: 0.9}
      overrides:
        - {field: max_tokens, value: 64}
        - {field: seed, value: 1}
      transformations:
        - {field: user, expression: 'request.headers["x-tenant"]'}
        - {field: seed, expression: '42'}
      finalTransformations:
        - {field: metadata, expression: '{"sent_model": llmRequest.model}'}
---
`,
        llmRouteYaml(['gpt', 'claude', 'custom', 'tuned']),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await Promise.all([openaiUpstream?.close(), anthropicUpstream?.close()]);
  });

  describe('the Responses API, passed through to an alpha provider', () => {
    it('answers responses.create with the usage in the access log', async () => {
      const client = new OpenAI({ apiKey: 'client', baseURL: `${base}/gpt/v1`, maxRetries: 0 });
      const response = await client.responses.create({ model: 'gpt-4o-mini', input: 'hello responses api' });
      assert.equal(response.output_text, 'echo: hello responses api');
      const seen = openaiUpstream.requests.at(-1)!;
      assert.equal(seen.path, '/v1/responses');
      assert.equal(seen.headers.authorization, 'Bearer sk-openai');
      const line = await logLine('/gpt/v1/responses');
      assert.equal(line['http.response.status_code'], 200);
      assert.equal(line['gen_ai.request.model'], 'gpt-4o-mini');
      assert.equal(line['gen_ai.usage.input_tokens'], response.usage!.input_tokens);
      assert.equal(line['gen_ai.usage.output_tokens'], response.usage!.output_tokens);
    });

    it('streams responses.stream event by event with the usage in the access log', async () => {
      const client = new OpenAI({ apiKey: 'client', baseURL: `${base}/gpt/v1`, maxRetries: 0 });
      const stream = client.responses.stream({ model: 'gpt-4o-mini', input: 'stream these four words' });
      const types: string[] = [];
      let text = '';
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === 'response.output_text.delta') text += event.delta;
      }
      const final = await stream.finalResponse();
      assert.equal(text, 'echo: stream these four words');
      assert.equal(final.output_text, text);
      assert.equal(types[0], 'response.created');
      assert.equal(types.at(-1), 'response.completed');
      assert.equal((openaiUpstream.requests.at(-1)!.body as Body).stream, true);
      const line = await logLine('/gpt/v1/responses');
      assert.equal(line['gen_ai.usage.input_tokens'], final.usage!.input_tokens);
      assert.equal(line['gen_ai.usage.output_tokens'], final.usage!.output_tokens);
    });
  });

  it('counts tokens at a gamma provider (messages.countTokens)', async () => {
    const client = new Anthropic({ apiKey: 'client-key', baseURL: `${base}/claude`, maxRetries: 0 });
    const count = await client.messages.countTokens({
      model: 'claude-sonnet-4-5',
      system: 'be brief',
      messages: [{ role: 'user', content: 'one two three four' }],
    });
    assert.equal(count.input_tokens, 6);
    const seen = anthropicUpstream.requests.at(-1)!;
    assert.equal(seen.path, '/v1/messages/count_tokens');
    assert.equal(seen.headers['x-api-key'], 'sk-anthropic');
    assert.ok(seen.headers['anthropic-version']);
    assert.equal(JSON.stringify(seen.headers).includes('client-key'), false);
  });

  describe('a custom provider that speaks Chat Completions', () => {
    it('serves the openai SDK as it is', async () => {
      const client = new OpenAI({ apiKey: 'client', baseURL: `${base}/custom/v1`, maxRetries: 0 });
      const completion = await client.chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'custom hello' }],
      });
      assert.equal(completion.choices[0]!.message.content, 'echo: custom hello');
      const seen = openaiUpstream.requests.at(-1)!;
      assert.deepEqual([seen.path, seen.headers.authorization], ['/v1/chat/completions', 'Bearer sk-openai']);
    });

    it('serves the Anthropic SDK by translation, streamed', async () => {
      const client = new Anthropic({ apiKey: 'client', baseURL: `${base}/custom`, maxRetries: 0 });
      const message = await client.messages
        .stream({ model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: 'custom stream' }] })
        .finalMessage();
      assert.deepEqual(
        message.content.map((block) => (block.type === 'text' ? block.text : block.type)),
        ['echo: custom stream'],
      );
      assert.equal(openaiUpstream.requests.at(-1)!.path, '/v1/chat/completions');
    });
  });

  describe("the backend's AI request policies", () => {
    it('reach the provider: alias, prompt, defaults, overrides, transformations and final transformations', async () => {
      const client = new OpenAI({ apiKey: 'client', baseURL: `${base}/tuned/v1`, maxRetries: 0 });
      await client.chat.completions.create(
        { model: 'fast', top_p: 0.5, max_tokens: 10, messages: [{ role: 'user', content: 'tune me' }] },
        { headers: { 'x-tenant': 'acme' } },
      );
      const sent = openaiUpstream.requests.at(-1)!.body as Body;
      assert.equal(sent.model, 'gpt-4o-mini', 'the alias');
      assert.deepEqual(sent.messages, [
        { role: 'system', content: 'house rules' },
        { role: 'user', content: 'tune me' },
        { role: 'user', content: 'answer in English' },
      ]);
      assert.equal(sent.temperature, 0.3, 'a default fills a field the client left out');
      assert.equal(sent.top_p, 0.5, "a default keeps the client's value");
      assert.equal(sent.max_tokens, 64, "an override replaces the client's value");
      assert.equal(sent.seed, 42, 'a transformation beats an override of the same field');
      assert.equal(sent.user, 'acme', 'a transformation reads the request');
      assert.deepEqual(sent.metadata, { sent_model: 'gpt-4o-mini' }, 'a final transformation sees the body sent');
    });

    it('apply to a translated request too, the final transformations on the provider format', async () => {
      const client = new Anthropic({ apiKey: 'client', baseURL: `${base}/tuned`, maxRetries: 0 });
      await client.messages.create(
        { model: 'mini-latest', max_tokens: 10, messages: [{ role: 'user', content: 'translate me' }] },
        { headers: { 'x-tenant': 'globex' } },
      );
      const sent = openaiUpstream.requests.at(-1)!.body as Body;
      assert.equal(sent.model, 'gpt-4o', 'a wildcard alias');
      assert.equal(sent.user, 'globex');
      assert.equal(sent.seed, 42);
      assert.equal(sent.temperature, 0.3);
      assert.deepEqual(sent.metadata, { sent_model: 'gpt-4o' });
      const messages = sent.messages as { role: string }[];
      assert.equal(messages[0]!.role, 'system', 'the prepended system prompt, in Chat Completions form');
    });
  });
});
