// The delta family (the Gemini API) through gw. A Gemini stand-in on loopback is first proven in
// the exact wire format by @google/genai's own client; then the openai SDK (Chat Completions,
// streamed and not, with a tool call) and @anthropic-ai/sdk (Messages) reach it through gw, whose
// key goes in x-goog-api-key and whose model goes in the URL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { WEATHER_TOOL } from '../../helpers/weather-tool.ts';
import { type GeminiMock, startGeminiMock } from '../../support/providers/gemini-mock.ts';

const ROUTES = '{/v1/chat/completions: Completions, /v1/messages: Messages}';
const KEY = 'AIza-test-key';

describe('delta (Gemini API) provider', () => {
  let gemini: GeminiMock;
  let gw: TestGateway;
  let port: number;

  before(async () => {
    gemini = await startGeminiMock({ apiKey: KEY });
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('gemini', gemini.port, 'delta: {}', KEY, ROUTES),
        llmRouteYaml(['gemini']),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await gemini?.close();
  });

  it('the stand-in speaks the Gemini API as @google/genai expects it', async () => {
    const ai = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: gemini.url, apiVersion: 'v1beta' } });
    const response = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'hello there' });
    assert.equal(response.text, 'echo: hello there');
    assert.equal(response.candidates?.[0]?.finishReason, 'STOP');
    assert.ok((response.usageMetadata?.promptTokenCount ?? 0) > 0);
    const streamed: string[] = [];
    let last: unknown;
    for await (const chunk of await ai.models.generateContentStream({
      model: 'gemini-2.5-flash',
      contents: 'one two three',
    })) {
      streamed.push(chunk.text ?? '');
      last = chunk.usageMetadata;
    }
    assert.equal(streamed.join(''), 'echo: one two three');
    assert.ok(streamed.length > 1, 'streamed in several chunks');
    assert.ok(last !== undefined, 'usage in the last chunk');
    const sent = gemini.requests.at(-1)!;
    assert.equal(sent.path, '/v1beta/models/gemini-2.5-flash:streamGenerateContent');
    assert.equal(sent.query.get('alt'), 'sse');
    const wrongKey = new GoogleGenAI({ apiKey: 'wrong', httpOptions: { baseUrl: gemini.url, apiVersion: 'v1beta' } });
    await assert.rejects(
      wrongKey.models.generateContent({ model: 'gemini-2.5-flash', contents: 'x' }),
      /API key not valid/,
    );
  });

  it('serves Chat Completions from generateContent, the key in x-goog-api-key and the model in the URL', async () => {
    const client = new OpenAI({ apiKey: 'client-token', baseURL: `http://127.0.0.1:${port}/gemini/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: 'gemini-2.5-flash',
      max_tokens: 100,
      temperature: 0.5,
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hello delta' },
      ],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: hello delta');
    assert.equal(completion.choices[0]!.finish_reason, 'stop');
    assert.ok(completion.usage!.prompt_tokens > 0);
    const sent = gemini.requests.at(-1)!;
    assert.equal(sent.path, '/v1beta/models/gemini-2.5-flash:generateContent');
    assert.equal(sent.headers['x-goog-api-key'], KEY);
    assert.equal(sent.headers.authorization, undefined, "the client's token is not forwarded");
    assert.deepEqual(sent.body.systemInstruction, { parts: [{ text: 'be brief' }] });
    assert.deepEqual(sent.body.generationConfig, { maxOutputTokens: 100, temperature: 0.5 });
    assert.equal(sent.body.model, undefined);
  });

  it('carries a tool call and its result both ways (Chat Completions)', async () => {
    const client = new OpenAI({ apiKey: 'client-token', baseURL: `http://127.0.0.1:${port}/gemini/v1`, maxRetries: 0 });
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'what is the weather?' }];
    const first = await client.chat.completions.create({ model: 'gemini-2.5-flash', messages, tools: [WEATHER_TOOL] });
    const choice = first.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    const call = choice.message.tool_calls![0]!;
    assert.equal(call.type, 'function');
    assert.equal(call.type === 'function' && call.function.name, 'get_weather');
    assert.deepEqual(call.type === 'function' && JSON.parse(call.function.arguments), { city: 'Paris' });
    const declared = gemini.requests.at(-1)!.body.tools as {
      functionDeclarations: { name: string; parametersJsonSchema: unknown }[];
    }[];
    assert.equal(declared[0]!.functionDeclarations[0]!.name, 'get_weather');
    assert.deepEqual(declared[0]!.functionDeclarations[0]!.parametersJsonSchema, WEATHER_TOOL.function.parameters);

    messages.push(choice.message, { role: 'tool', tool_call_id: call.id, content: 'sunny' });
    const second = await client.chat.completions.create({ model: 'gemini-2.5-flash', messages, tools: [WEATHER_TOOL] });
    assert.equal(second.choices[0]!.message.content, 'result: "sunny"');
    const contents = gemini.requests.at(-1)!.body.contents as { role: string; parts: Record<string, unknown>[] }[];
    assert.deepEqual(
      contents.map((content) => content.role),
      ['user', 'model', 'user'],
    );
    assert.deepEqual(contents[2]!.parts[0], {
      functionResponse: { id: call.id, name: 'get_weather', response: { output: 'sunny' } },
    });
  });

  it('streams Chat Completions from streamGenerateContent?alt=sse, usage included', async () => {
    const client = new OpenAI({ apiKey: 'client-token', baseURL: `http://127.0.0.1:${port}/gemini/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'stream these words' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    assert.equal(text, 'echo: stream these words');
    assert.equal(finish, 'stop');
    assert.ok(usage && usage.completion_tokens > 0);
    const sent = gemini.requests.at(-1)!;
    assert.equal(sent.path, '/v1beta/models/gemini-2.5-flash:streamGenerateContent');
    assert.equal(sent.query.get('alt'), 'sse');
    assert.equal(sent.body.stream, undefined);
  });

  it('streams a tool call to a Chat Completions client', async () => {
    const client = new OpenAI({ apiKey: 'client-token', baseURL: `http://127.0.0.1:${port}/gemini/v1`, maxRetries: 0 });
    const stream = client.chat.completions.stream({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'weather please' }],
      tools: [WEATHER_TOOL],
    });
    const final = await stream.finalChatCompletion();
    const call = final.choices[0]!.message.tool_calls![0]!;
    assert.equal(final.choices[0]!.finish_reason, 'tool_calls');
    assert.equal(call.type === 'function' && call.function.name, 'get_weather');
    assert.deepEqual(call.type === 'function' && JSON.parse(call.function.arguments), { city: 'Paris' });
  });

  it('serves Messages (streamed and not) from generateContent', async () => {
    const client = new Anthropic({ apiKey: 'client-token', baseURL: `http://127.0.0.1:${port}/gemini`, maxRetries: 0 });
    const message = await client.messages.create({
      model: 'gemini-2.5-flash',
      max_tokens: 64,
      system: 'be brief',
      messages: [{ role: 'user', content: 'hello from claude' }],
    });
    assert.deepEqual(message.content, [{ type: 'text', text: 'echo: hello from claude' }]);
    assert.equal(message.stop_reason, 'end_turn');
    assert.ok(message.usage.input_tokens > 0);
    assert.equal(gemini.requests.at(-1)!.headers['x-api-key'], undefined);

    const stream = client.messages.stream({
      model: 'gemini-2.5-flash',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'what is the weather?' }],
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
    });
    const final = await stream.finalMessage();
    assert.equal(final.stop_reason, 'tool_use');
    const block = final.content.find((item) => item.type === 'tool_use');
    assert.ok(block && block.type === 'tool_use');
    assert.equal(block.name, 'get_weather');
    assert.deepEqual(block.input, { city: 'Paris' });
  });

  it("answers Gemini's own errors in the client's format", async () => {
    const wrong = 'wrong-key';
    const port2 = await freePort();
    const gw2 = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port2),
        aiBackendYaml('gemini', gemini.port, 'delta: {}', wrong, ROUTES),
        llmRouteYaml(['gemini']),
      ].join(''),
    });
    try {
      const client = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port2}/gemini/v1`, maxRetries: 0 });
      await assert.rejects(
        client.chat.completions.create({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] }),
        (error: unknown) => error instanceof OpenAI.AuthenticationError && /API key not valid/.test(error.message),
      );
      const bad = await fetch(`http://127.0.0.1:${port2}/gemini/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: '../admin', messages: [{ role: 'user', content: 'x' }] }),
      });
      assert.equal(bad.status, 400);
      assert.match(((await bad.json()) as { error: { message: string } }).error.message, /not a Gemini model id/);
    } finally {
      await gw2.stop();
    }
  });
});
