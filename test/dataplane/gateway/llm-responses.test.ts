// The OpenAI Responses API as a client format through gw: the openai SDK's responses client to a
// gamma (Anthropic Messages) provider, translated through the chat form, and to an alpha (OpenAI)
// provider, which speaks it natively; plain and streamed, tool calls included.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
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

const ROUTES = `{/v1/chat/completions: Completions, /v1/messages: Messages, /v1/responses: Responses}`;

const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: true,
};

describe('the Responses API through gw', () => {
  let openaiUpstream: Awaited<ReturnType<typeof startOpenAiMock>>;
  let anthropicUpstream: Awaited<ReturnType<typeof startAnthropicMock>>;
  let gw: TestGateway;
  let port: number;
  const client = (backend: string) =>
    new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/${backend}/v1`, maxRetries: 0 });

  before(async () => {
    openaiUpstream = await startOpenAiMock({ apiKey: 'sk-openai' });
    anthropicUpstream = await startAnthropicMock({ apiKey: 'sk-anthropic' });
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('claude', anthropicUpstream.port, 'gamma: {}', 'sk-anthropic', ROUTES),
        aiBackendYaml('gpt', openaiUpstream.port, 'alpha: {}', 'sk-openai', ROUTES),
        llmRouteYaml(['claude', 'gpt']),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await Promise.all([openaiUpstream?.close(), anthropicUpstream?.close()]);
  });

  it('serves a Response from a Messages provider, instructions and usage included', async () => {
    const response = await client('claude').responses.create({
      model: 'claude-sonnet-4-5',
      instructions: 'be brief',
      input: 'hello gamma',
      max_output_tokens: 200,
    });
    assert.equal(response.object, 'response');
    assert.equal(response.status, 'completed');
    assert.equal(response.output_text, 'echo: hello gamma');
    assert.ok((response.usage?.input_tokens ?? 0) > 0);
    const sent = anthropicUpstream.requests.at(-1)!;
    assert.equal(sent.path, '/v1/messages');
    assert.equal(sent.headers['x-api-key'], 'sk-anthropic');
    const body = sent.body as { system: unknown; max_tokens: unknown; messages: unknown };
    assert.equal(body.system, 'be brief');
    assert.equal(body.max_tokens, 200);
    assert.deepEqual(body.messages, [{ role: 'user', content: 'hello gamma' }]);
  });

  it('streams a Response from a Messages provider, a function call and its arguments included', async () => {
    const stream = client('claude').responses.stream({
      model: 'claude-sonnet-4-5',
      input: 'call get_weather please',
      tools: [weatherTool],
    });
    const final = await stream.finalResponse();
    assert.equal(final.status, 'completed');
    const call = final.output.find((item) => item.type === 'function_call');
    assert.equal(call?.type === 'function_call' ? call.name : undefined, 'get_weather');
    assert.equal(typeof JSON.parse(call?.type === 'function_call' ? call.arguments : 'null'), 'object');
    assert.ok((final.usage?.output_tokens ?? 0) > 0);
    const sent = anthropicUpstream.requests.at(-1)!.body as { stream: unknown; tools: { name: string }[] };
    assert.equal(sent.stream, true);
    assert.deepEqual(
      sent.tools.map((tool) => tool.name),
      ['get_weather'],
    );
  });

  it('continues the conversation with the function output, as the SDK sends it back', async () => {
    const first = await client('claude').responses.create({
      model: 'claude-sonnet-4-5',
      input: 'call get_weather please',
      tools: [weatherTool],
    });
    const call = first.output.find((item) => item.type === 'function_call');
    assert.ok(call?.type === 'function_call');
    const second = await client('claude').responses.create({
      model: 'claude-sonnet-4-5',
      input: [
        { role: 'user', content: 'call get_weather please' },
        // The SDK's output items are valid input items (message, function_call).
        ...(first.output as OpenAI.Responses.ResponseInputItem[]),
        { type: 'function_call_output', call_id: call.call_id, output: '18°C and sunny' },
      ],
      tools: [weatherTool],
    });
    assert.equal(second.status, 'completed');
    const messages = (anthropicUpstream.requests.at(-1)!.body as { messages: { role: string; content: unknown }[] })
      .messages;
    assert.deepEqual(
      messages.map((message) => message.role),
      ['user', 'assistant', 'user'],
    );
    assert.deepEqual(messages[2]!.content, [
      { type: 'tool_result', tool_use_id: call.call_id, content: '18°C and sunny' },
    ]);
  });

  it('refuses previous_response_id to a translating provider, in the OpenAI format', async () => {
    const before = anthropicUpstream.requests.length;
    await assert.rejects(
      client('claude').responses.create({ model: 'm', input: 'hi', previous_response_id: 'resp_1' }),
      (error: unknown) =>
        error instanceof OpenAI.BadRequestError && /previous_response_id: not supported here/.test(error.message),
    );
    assert.equal(anthropicUpstream.requests.length, before, 'nothing went upstream');
  });

  it('passes a Response from an OpenAI provider through as it is, streamed', async () => {
    const stream = client('gpt').responses.stream({ model: 'gpt-4o-mini', input: 'hello alpha' });
    const final = await stream.finalResponse();
    assert.equal(final.status, 'completed');
    assert.match(final.output_text, /hello alpha/);
    assert.ok((final.usage?.input_tokens ?? 0) > 0);
    assert.equal(openaiUpstream.requests.at(-1)?.path, '/v1/responses');
  });
});
