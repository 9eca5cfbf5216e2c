// Clients speak either format to either provider family through gw: the official openai SDK to
// a gamma (Anthropic Messages) provider and the official Anthropic SDK to an alpha (OpenAI)
// provider, streamed and not, tool calls included; and priority groups fail over.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { startAnthropicMock } from '../../support/providers/anthropic-mock.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';

const ROUTES = `{/v1/chat/completions: Completions, /v1/messages: Messages, /v1/messages/count_tokens: GammaTokenCount}`;

describe('format translation through gw', () => {
  let openaiUpstream: Awaited<ReturnType<typeof startOpenAiMock>>;
  let anthropicUpstream: Awaited<ReturnType<typeof startAnthropicMock>>;
  let failing: Awaited<ReturnType<typeof startOpenAiMock>>;
  let gw: TestGateway;
  let port: number;

  before(async () => {
    openaiUpstream = await startOpenAiMock({ apiKey: 'sk-openai' });
    anthropicUpstream = await startAnthropicMock({ apiKey: 'sk-anthropic' });
    failing = await startOpenAiMock({ apiKey: 'sk-openai' });
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('claude', anthropicUpstream.port, 'gamma: {}', 'sk-anthropic', ROUTES),
        `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: gpt}
spec:
  ai:
    groups:
      - providers:
          - {name: primary, host: 127.0.0.1, port: ${failing.port}, alpha: {}}
      - providers:
          - {name: secondary, host: 127.0.0.1, port: ${openaiUpstream.port}, alpha: {}}
  policies:
    auth: {key: sk-openai}
    ai: {routes: ${ROUTES}}
---
`,
        llmRouteYaml(['claude', 'gpt']),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await Promise.all([openaiUpstream?.close(), anthropicUpstream?.close(), failing?.close()]);
  });

  it('serves Chat Completions from a Messages provider', async () => {
    const client = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/claude/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: 'claude-sonnet-4-5',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello gamma' },
      ],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: hello gamma');
    assert.equal(completion.choices[0]!.finish_reason, 'stop');
    assert.ok(completion.usage!.prompt_tokens > 0);
    const sent = anthropicUpstream.requests.at(-1)!;
    assert.equal(sent.path, '/v1/messages');
    assert.equal(sent.headers['x-api-key'], 'sk-anthropic');
    assert.equal((sent.body as { system: unknown }).system !== undefined, true);
  });

  it('streams Chat Completions from a Messages provider, tool calls included', async () => {
    const client = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/claude/v1`, maxRetries: 0 });
    const runner = client.chat.completions.stream({
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'call get_weather please' }],
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
        },
      ],
      stream_options: { include_usage: true },
    });
    const final = await runner.finalChatCompletion();
    const call = final.choices[0]!.message.tool_calls?.[0];
    assert.equal(call?.type === 'function' ? call.function.name : undefined, 'get_weather');
    assert.equal(final.choices[0]!.finish_reason, 'tool_calls');
  });

  it('serves Messages from a Completions provider, streamed', async () => {
    const client = new Anthropic({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/gpt`, maxRetries: 0 });
    const stream = client.messages.stream({
      model: 'gpt-4o-mini',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'stream me' }],
    });
    const message = await stream.finalMessage();
    assert.deepEqual(
      message.content.map((block) => (block.type === 'text' ? block.text : block.type)),
      ['echo: stream me'],
    );
    assert.equal(message.stop_reason, 'end_turn');
    assert.ok(message.usage.output_tokens > 0);
  });

  it("does not pass one vendor's headers to another's API when it translates", async () => {
    const anthropic = new Anthropic({
      apiKey: 'client',
      baseURL: `http://127.0.0.1:${port}/gpt`,
      maxRetries: 0,
      defaultHeaders: { 'anthropic-beta': 'prompt-caching-2024-07-31', 'x-request-tag': 'kept' },
    });
    const primarySeen = failing.requests.length;
    const seen = primarySeen + openaiUpstream.requests.length;
    await anthropic.messages.create({
      model: 'gpt-4o-mini',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'hi' }],
    });
    // The primary group serves while it answers; the secondary when it does not.
    assert.equal(failing.requests.length + openaiUpstream.requests.length, seen + 1);
    const served = failing.requests.length > primarySeen ? failing : openaiUpstream;
    const toOpenAi = served.requests.at(-1)!.headers;
    assert.equal(toOpenAi['anthropic-version'], undefined, 'the Anthropic SDK sends it; OpenAI does not get it');
    assert.equal(toOpenAi['anthropic-beta'], undefined);
    assert.equal(toOpenAi['x-request-tag'], 'kept', "a header of no vendor's API passes");

    const openai = new OpenAI({
      apiKey: 'client',
      baseURL: `http://127.0.0.1:${port}/claude/v1`,
      maxRetries: 0,
      organization: 'org-client',
      defaultHeaders: { 'x-goog-user-project': 'p' },
    });
    await openai.chat.completions.create({ model: 'claude-sonnet-4', messages: [{ role: 'user', content: 'hi' }] });
    const toAnthropic = anthropicUpstream.requests.at(-1)!.headers;
    assert.equal(toAnthropic['openai-organization'], undefined);
    assert.equal(toAnthropic['x-goog-user-project'], undefined);
    assert.ok(toAnthropic['anthropic-version'], "gw's own anthropic-version for the translated request");

    // Not translated: an Anthropic client's own beta header reaches Anthropic.
    const direct = new Anthropic({
      apiKey: 'client',
      baseURL: `http://127.0.0.1:${port}/claude`,
      maxRetries: 0,
      defaultHeaders: { 'anthropic-beta': 'prompt-caching-2024-07-31' },
    });
    await direct.messages.create({
      model: 'claude-sonnet-4',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(anthropicUpstream.requests.at(-1)!.headers['anthropic-beta'], 'prompt-caching-2024-07-31');
  });

  it('fails over to the next priority group when the first answers 500, in the same request', async () => {
    failing.script('/v1/chat/completions', { reply: { kind: 'error', status: 500 } });
    const before = openaiUpstream.requests.length;
    const client = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/gpt/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'survive' }],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: survive');
    assert.equal(openaiUpstream.requests.length, before + 1);
  });

  it('answers an unreachable last provider with 503 in the client format', async () => {
    const client = new Anthropic({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/claude`, maxRetries: 0 });
    anthropicUpstream.script('/v1/messages', { reply: { kind: 'reset' } });
    await assert.rejects(
      client.messages.create({ model: 'claude', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] }),
      (error: unknown) => error instanceof Anthropic.APIError && (error.status === 503 || error.status === 502),
    );
  });
});
