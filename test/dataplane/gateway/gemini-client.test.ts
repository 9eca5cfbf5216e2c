// A Gemini client of gw: @google/genai (GoogleGenAI with httpOptions.baseUrl at gw) reaches an
// OpenAI stand-in (alpha, by translation to Chat Completions), an Anthropic stand-in (gamma, by
// translation to Messages, countTokens to count_tokens) and the Gemini stand-in (delta, as it is:
// the model from the URL path goes back into the provider's URL) with generateContent,
// generateContentStream and countTokens, tool calls and their arguments included; a token rate
// limit counts a Gemini client's usage and refuses it in Google's error shape.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type FunctionDeclaration, GoogleGenAI, Type } from '@google/genai';
import {
  aiBackendYaml,
  freePort,
  GW_MODELS_RULE,
  gatewayYaml,
  lastAccessLogLine,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { trafficPolicyYaml } from '../../helpers/policy-yaml.ts';
import { startAnthropicMock } from '../../support/providers/anthropic-mock.ts';
import { type GeminiMock, startGeminiMock } from '../../support/providers/gemini-mock.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';

const GEMINI_KEY = 'AIza-test-key';

const WEATHER: FunctionDeclaration = {
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: Type.OBJECT, properties: { city: { type: Type.STRING } }, required: ['city'] },
};

describe('a Gemini client (@google/genai) through gw', () => {
  let openai: MockServer;
  let anthropic: MockServer;
  let gemini: GeminiMock;
  let gw: TestGateway;
  let port: number;

  const client = (backend: string) =>
    new GoogleGenAI({
      apiKey: 'client-key',
      httpOptions: { baseUrl: `http://127.0.0.1:${port}/${backend}`, apiVersion: 'v1beta' },
    });

  before(async () => {
    openai = await startOpenAiMock({ apiKey: 'sk-alpha' });
    anthropic = await startAnthropicMock({ apiKey: 'sk-gamma' });
    gemini = await startGeminiMock({ apiKey: GEMINI_KEY });
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        // No routes: the default routes map :generateContent, :streamGenerateContent and :countTokens.
        aiBackendYaml('alpha', openai.port, 'alpha: {}', 'sk-alpha', undefined),
        aiBackendYaml('gamma', anthropic.port, 'gamma: {}', 'sk-gamma', undefined),
        aiBackendYaml('delta', gemini.port, 'delta: {}', GEMINI_KEY, undefined),
        `apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: gpt-4o-mini}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: llm, sectionName: models}]
  provider: Alpha
  baseURL: http://127.0.0.1:${openai.port}/v1
  policies: {auth: {key: sk-alpha}}
---
`,
        llmRouteYaml(['alpha', 'gamma', 'delta'], GW_MODELS_RULE),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await openai?.close();
    await anthropic?.close();
    await gemini?.close();
  });

  it('generateContent to alpha: translated to Chat Completions, the path model in the body', async () => {
    const response = await client('alpha').models.generateContent({
      model: 'gpt-4o-mini',
      contents: 'hello there',
      config: { systemInstruction: 'Be terse.', maxOutputTokens: 50, temperature: 0.2 },
    });
    assert.match(response.text ?? '', /hello there/);
    assert.equal(response.candidates?.[0]?.finishReason, 'STOP');
    assert.ok((response.usageMetadata?.promptTokenCount ?? 0) > 0);
    assert.ok((response.usageMetadata?.candidatesTokenCount ?? 0) > 0);
    assert.equal(response.modelVersion, 'gpt-4o-mini');
    const sent = openai.requests.at(-1)!;
    assert.equal(sent.path, '/v1/chat/completions');
    const body = sent.body as Record<string, unknown>;
    assert.equal(body.model, 'gpt-4o-mini');
    assert.deepEqual(body.messages, [
      { role: 'system', content: 'Be terse.' },
      { role: 'user', content: 'hello there' },
    ]);
    assert.equal(body.max_completion_tokens, 50);
    assert.equal(sent.headers['x-goog-api-key'], undefined, "the client's Gemini key does not reach OpenAI");
    const log = await lastAccessLogLine(gw, '/alpha/v1beta/models/gpt-4o-mini:generateContent');
    assert.equal(log['gen_ai.request.model'], 'gpt-4o-mini');
    assert.ok(Number(log['gen_ai.usage.input_tokens']) > 0);
  });

  it('generateContentStream to alpha: text chunks, then the finishReason with usageMetadata', async () => {
    const chunks: string[] = [];
    let finish: string | undefined;
    let usage: unknown;
    for await (const chunk of await client('alpha').models.generateContentStream({
      model: 'gpt-4o-mini',
      contents: 'one two three four',
    })) {
      chunks.push(chunk.text ?? '');
      finish = chunk.candidates?.[0]?.finishReason ?? finish;
      usage = chunk.usageMetadata ?? usage;
    }
    assert.match(chunks.join(''), /one two three four/);
    assert.ok(chunks.filter((text) => text !== '').length > 1, 'streamed in several chunks');
    assert.equal(finish, 'STOP');
    assert.ok(usage !== undefined);
    const body = openai.requests.at(-1)!.body as Record<string, unknown>;
    assert.equal(body.stream, true);
    assert.equal(openai.requests.at(-1)!.url.includes('alt='), false, "gw's provider gets no alt query");
  });

  it('a tool call and its result both ways (alpha), the arguments an object', async () => {
    const ai = client('alpha');
    const config = { tools: [{ functionDeclarations: [WEATHER] }] };
    const first = await ai.models.generateContent({
      model: 'gpt-4o-mini',
      contents: 'call get_weather for Paris',
      config,
    });
    const call = first.functionCalls?.[0];
    assert.ok(call, 'a function call');
    assert.equal(call.name, 'get_weather');
    assert.deepEqual(call.args, { city: 'example' });
    const tools = (openai.requests.at(-1)!.body as { tools: unknown[] }).tools;
    assert.deepEqual(tools, [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'The weather in a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
    ]);
    const second = await ai.models.generateContent({
      model: 'gpt-4o-mini',
      contents: [
        { role: 'user', parts: [{ text: 'call get_weather for Paris' }] },
        { role: 'model', parts: [{ functionCall: call }] },
        {
          role: 'user',
          parts: [{ functionResponse: { id: call.id, name: 'get_weather', response: { output: 'sunny' } } }],
        },
      ],
      config,
    });
    assert.ok(second.text !== undefined);
    const messages = (openai.requests.at(-1)!.body as { messages: Record<string, unknown>[] }).messages;
    assert.equal(messages[1]!.role, 'assistant');
    const toolCalls = messages[1]!.tool_calls as { id: string; function: { arguments: string } }[];
    assert.deepEqual(JSON.parse(toolCalls[0]!.function.arguments), { city: 'example' });
    assert.deepEqual(messages[2], { role: 'tool', tool_call_id: toolCalls[0]!.id, content: 'sunny' });
  });

  it('a streamed tool call (alpha) arrives whole as one functionCall part', async () => {
    const calls = [];
    for await (const chunk of await client('alpha').models.generateContentStream({
      model: 'gpt-4o-mini',
      contents: 'call get_weather now',
      config: { tools: [{ functionDeclarations: [WEATHER] }] },
    })) {
      calls.push(...(chunk.functionCalls ?? []));
    }
    assert.equal(calls.length, 1);
    assert.equal(calls[0]!.name, 'get_weather');
    assert.deepEqual(calls[0]!.args, { city: 'example' });
  });

  it('generateContent and its stream to gamma: translated to Messages', async () => {
    const ai = client('gamma');
    const response = await ai.models.generateContent({
      model: 'claude-test',
      contents: 'hello claude',
      config: { systemInstruction: 'Be terse.' },
    });
    assert.match(response.text ?? '', /hello claude/);
    const body = anthropic.requests.at(-1)!.body as Record<string, unknown>;
    assert.equal(body.system, 'Be terse.');
    assert.equal(body.max_tokens, 4096);
    let calls = 0;
    for await (const chunk of await ai.models.generateContentStream({
      model: 'claude-test',
      contents: 'call get_weather please',
      config: { tools: [{ functionDeclarations: [WEATHER] }] },
    })) {
      for (const call of chunk.functionCalls ?? []) {
        calls++;
        assert.equal(call.name, 'get_weather');
        assert.deepEqual(call.args, { city: 'example' });
      }
    }
    assert.equal(calls, 1);
  });

  it('countTokens to gamma is Anthropic count_tokens, answered as totalTokens', async () => {
    const counted = await client('gamma').models.countTokens({ model: 'claude-test', contents: 'one two three' });
    assert.ok((counted.totalTokens ?? 0) > 0);
    const sent = anthropic.requests.at(-1)!;
    assert.equal(sent.path, '/v1/messages/count_tokens');
    assert.deepEqual(sent.body, { model: 'claude-test', messages: [{ role: 'user', content: 'one two three' }] });
  });

  it('countTokens to alpha is refused 400 in Google error shape naming the provider', async () => {
    await assert.rejects(
      client('alpha').models.countTokens({ model: 'gpt-4o-mini', contents: 'x' }),
      (error: Error & { status?: number }) => {
        assert.equal(error.status, 400);
        assert.match(error.message, /Gemini countTokens is not supported by provider alpha/);
        assert.match(error.message, /INVALID_ARGUMENT/);
        return true;
      },
    );
  });

  it('delta: generateContent, its stream and countTokens as they are, the model in the URL only', async () => {
    const ai = client('delta');
    const response = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'hello gemini' });
    assert.equal(response.text, 'echo: hello gemini');
    let sent = gemini.requests.at(-1)!;
    assert.equal(sent.path, '/v1beta/models/gemini-2.5-flash:generateContent');
    assert.equal(sent.headers['x-goog-api-key'], GEMINI_KEY);
    assert.deepEqual(sent.body, { contents: [{ parts: [{ text: 'hello gemini' }], role: 'user' }] });

    const streamed: string[] = [];
    for await (const chunk of await ai.models.generateContentStream({
      model: 'gemini-2.5-flash',
      contents: 'one two three',
    })) {
      streamed.push(chunk.text ?? '');
    }
    assert.equal(streamed.join(''), 'echo: one two three');
    sent = gemini.requests.at(-1)!;
    assert.equal(sent.path, '/v1beta/models/gemini-2.5-flash:streamGenerateContent');
    assert.equal(sent.query.get('alt'), 'sse');
    const log = await lastAccessLogLine(gw, '/delta/v1beta/models/gemini-2.5-flash:streamGenerateContent');
    assert.equal(log['gen_ai.request.model'], 'gemini-2.5-flash');
    assert.ok(Number(log['gen_ai.usage.output_tokens']) > 0);

    const counted = await ai.models.countTokens({ model: 'gemini-2.5-flash', contents: 'count me' });
    assert.ok((counted.totalTokens ?? 0) > 0);
    assert.equal(gemini.requests.at(-1)!.path, '/v1beta/models/gemini-2.5-flash:countTokens');
  });

  it('a tool call through delta as it is', async () => {
    const response = await client('delta').models.generateContent({
      model: 'gemini-2.5-flash',
      contents: 'what is the weather?',
      config: { tools: [{ functionDeclarations: [WEATHER] }] },
    });
    assert.deepEqual(response.functionCalls?.[0]?.args, { city: 'Paris' });
  });

  it('GwModel routes match the model of a Gemini path; an unknown one is 404 NOT_FOUND', async () => {
    const ai = client('models');
    const response = await ai.models.generateContent({ model: 'gpt-4o-mini', contents: 'hello model' });
    assert.match(response.text ?? '', /hello model/);
    const sent = openai.requests.at(-1)!;
    assert.equal(sent.path, '/v1/chat/completions');
    assert.equal((sent.body as { model: string }).model, 'gpt-4o-mini');
    await assert.rejects(
      ai.models.generateContent({ model: 'no-such-model', contents: 'x' }),
      (error: Error & { status?: number }) => {
        assert.equal(error.status, 404);
        assert.match(error.message, /NOT_FOUND/);
        assert.match(error.message, /no-such-model does not exist here/);
        return true;
      },
    );
  });

  it("a client's key query and alt are not forwarded (REST clients put the key in the URL)", async () => {
    const response = await fetch(
      `http://127.0.0.1:${port}/alpha/v1beta/models/gpt-4o-mini:streamGenerateContent?alt=sse&key=client-secret&x=1`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ contents: [{ parts: [{ text: 'hi' }] }] }),
      },
    );
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/event-stream');
    await response.text();
    assert.equal(openai.requests.at(-1)!.url, '/v1/chat/completions?x=1');
  });

  it("gw's own errors reach a Gemini client in Google's shape", async () => {
    const response = await fetch(`http://127.0.0.1:${port}/alpha/v1beta/models/gpt-4o-mini:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'not gemini' }),
    });
    assert.equal(response.status, 400);
    const body = (await response.json()) as { error: Record<string, unknown> };
    assert.equal(body.error.code, 400);
    assert.equal(body.error.status, 'INVALID_ARGUMENT');
    assert.match(String(body.error.message), /GenerateContent route type \(it has no "contents" array\)/);
  });
});

describe('a token rate limit in front of a Gemini client', () => {
  let gemini: GeminiMock;
  let gw: TestGateway;
  let port: number;

  before(async () => {
    gemini = await startGeminiMock({ apiKey: GEMINI_KEY });
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('delta', gemini.port, 'delta: {}', GEMINI_KEY, undefined),
        llmRouteYaml(['delta']),
      ].join(''),
      'policy.yaml': trafficPolicyYaml('tokens', 'llm', 'rateLimit: {local: [{tokens: 10, unit: Minutes}]}'),
    });
  });

  after(async () => {
    await gw?.stop();
    await gemini?.close();
  });

  it('charges the usageMetadata of a stream, then answers 429 RESOURCE_EXHAUSTED', async () => {
    const ai = new GoogleGenAI({
      apiKey: 'client-key',
      httpOptions: { baseUrl: `http://127.0.0.1:${port}/delta`, apiVersion: 'v1beta' },
    });
    let total = 0;
    for await (const chunk of await ai.models.generateContentStream({
      model: 'gemini-2.5-flash',
      contents: 'a few words to count here',
    })) {
      total = chunk.usageMetadata?.totalTokenCount ?? total;
    }
    assert.ok(total >= 10, `the first answer spends the budget (${total} tokens)`);
    await assert.rejects(
      ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'again' }),
      (error: Error & { status?: number }) => {
        assert.equal(error.status, 429);
        assert.match(error.message, /RESOURCE_EXHAUSTED/);
        return true;
      },
    );
    assert.equal(gemini.requests.length, 1, 'the refused request never reached the provider');
  });
});
