// Provider signatures through gw (docs/decisions/0025-provider-signatures.md): a two-turn tool
// round driven by the official SDKs, where the provider refuses the second turn unless its
// signature comes back. The Gemini stand-in signs its function calls (thoughtSignature) and
// refuses a turn whose functionCall parts lack it, as Gemini 3 does; the Anthropic stand-in with
// thinking enabled signs its thinking and refuses a tool result whose assistant turn does not
// start with the signed thinking, as Anthropic does. The clients send back what they were given
// (the message, the content blocks, the output items) as their SDKs hand it to them; the AI SDK
// is a second client library for Gemini. The other
// way round, a provider that speaks only the Responses API gets its own reasoning item (id and
// encrypted_content) back from a Messages client.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import Anthropic from '@anthropic-ai/sdk';
import { APICallError, generateText, jsonSchema, type LanguageModel, stepCountIs, streamText, tool } from 'ai';
import OpenAI from 'openai';
import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import {
  type ResponsesStandIn,
  STAND_IN_ENCRYPTED_REASONING,
  STAND_IN_REASONING,
  startResponsesStandIn,
} from '../../helpers/responses-stand-in.ts';
import { thinkingSignatureOf } from '../../support/providers/anthropic-messages.ts';
import { startAnthropicMock } from '../../support/providers/anthropic-mock.ts';
import { type GeminiMock, startGeminiMock, thoughtSignatureOf } from '../../support/providers/gemini-mock.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';

const GEMINI_ROUTES = '{/v1/chat/completions: Completions, /v1/messages: Messages, /v1/responses: Responses}';
const GEMINI_KEY = 'AIza-test-key';
const GEMINI_MODEL = 'gemini-3-pro-preview';
const CLAUDE_MODEL = 'claude-sonnet-4-5';
const WEATHER_PARAMETERS = { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] };
const SIGNATURE = thoughtSignatureOf({ name: 'get_weather', args: { city: 'Paris' } });

const CHAT_TOOL = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'The weather in a city', parameters: WEATHER_PARAMETERS },
};
const RESPONSES_TOOL = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: WEATHER_PARAMETERS,
  strict: false,
};
const MESSAGES_TOOL = { name: 'get_weather', description: 'The weather in a city', input_schema: WEATHER_PARAMETERS };
const INCLUDE: OpenAI.Responses.ResponseIncludable[] = ['reasoning.encrypted_content'];

describe('provider signatures through gw', () => {
  let gemini: GeminiMock;
  let anthropic: MockServer;
  let gw: TestGateway;
  let port: number;
  let openaiGemini: OpenAI;
  let openaiClaude: OpenAI;
  let anthropicGemini: Anthropic;
  let responsesOnly: ResponsesStandIn;
  let anthropicResponses: Anthropic;

  before(async () => {
    gemini = await startGeminiMock({ apiKey: GEMINI_KEY });
    anthropic = await startAnthropicMock({ apiKey: 'sk-gamma' });
    responsesOnly = await startResponsesStandIn('sk-responses');
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('gemini', gemini.port, 'delta: {}', GEMINI_KEY, GEMINI_ROUTES),
        aiBackendYaml('claude', anthropic.port, 'gamma: {}', 'sk-gamma', undefined),
        aiBackendYaml(
          'responses',
          responsesOnly.port,
          'custom: {formats: [{type: Responses}]}',
          'sk-responses',
          '{/v1/messages: Messages}',
        ),
        llmRouteYaml(['gemini', 'claude', 'responses']),
      ].join(''),
    });
    openaiGemini = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/gemini/v1`, maxRetries: 0 });
    openaiClaude = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/claude/v1`, maxRetries: 0 });
    anthropicGemini = new Anthropic({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/gemini`, maxRetries: 0 });
    anthropicResponses = new Anthropic({
      apiKey: 'client',
      baseURL: `http://127.0.0.1:${port}/responses`,
      maxRetries: 0,
    });
  });

  after(async () => {
    await gw?.stop();
    await gemini?.close();
    await anthropic?.close();
    await responsesOnly?.close();
  });

  /** The functionCall part of the model turn gw sent Gemini last. */
  function lastFunctionCallPart(): Record<string, unknown> {
    const contents = gemini.requests.at(-1)!.body.contents as { role: string; parts: Record<string, unknown>[] }[];
    const part = contents.flatMap((content) => content.parts).find((p) => p.functionCall !== undefined);
    assert.ok(part, 'a functionCall part was sent');
    return part;
  }

  describe('Gemini: the thoughtSignature of a function call', () => {
    it('Chat Completions: extra_content.google.thought_signature on the tool call, sent back (whole and streamed)', async () => {
      for (const stream of [false, true]) {
        const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'what is the weather?' }];
        const params = { model: GEMINI_MODEL, messages, tools: [CHAT_TOOL] };
        const message = stream
          ? (await openaiGemini.chat.completions.stream(params).finalChatCompletion()).choices[0]!.message
          : (await openaiGemini.chat.completions.create(params)).choices[0]!.message;
        const call = message.tool_calls![0]! as OpenAI.Chat.ChatCompletionMessageToolCall & {
          extra_content?: { google?: { thought_signature?: string } };
        };
        assert.equal(call.extra_content?.google?.thought_signature, SIGNATURE, `stream ${stream}`);
        messages.push(message as OpenAI.Chat.ChatCompletionMessageParam, {
          role: 'tool',
          tool_call_id: call.id,
          content: 'sunny',
        });
        const second = await openaiGemini.chat.completions.create({ ...params, messages });
        assert.equal(second.choices[0]!.message.content, 'result: "sunny"');
        assert.equal(lastFunctionCallPart().thoughtSignature, SIGNATURE);
      }
    });

    it('Chat Completions: a tool call sent back without its signature is refused by Gemini 3, as the stand-in shows', async () => {
      const first = await openaiGemini.chat.completions.create({
        model: GEMINI_MODEL,
        messages: [{ role: 'user', content: 'what is the weather?' }],
        tools: [CHAT_TOOL],
      });
      const call = first.choices[0]!.message.tool_calls![0]! as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
      const bare = { id: call.id, type: 'function' as const, function: call.function };
      await assert.rejects(
        openaiGemini.chat.completions.create({
          model: GEMINI_MODEL,
          tools: [CHAT_TOOL],
          messages: [
            { role: 'user', content: 'what is the weather?' },
            { role: 'assistant', content: null, tool_calls: [bare] },
            { role: 'tool', tool_call_id: call.id, content: 'sunny' },
          ],
        }),
        (error: unknown) =>
          error instanceof OpenAI.BadRequestError && /missing a thought_signature/.test(String(error.message)),
      );
    });

    it('Responses: a reasoning item with encrypted_content before the function_call, sent back (whole and streamed)', async () => {
      for (const stream of [false, true]) {
        const params = {
          model: GEMINI_MODEL,
          input: 'what is the weather?',
          tools: [RESPONSES_TOOL],
          include: INCLUDE,
          store: false,
        };
        const first = stream
          ? await openaiGemini.responses.stream(params).finalResponse()
          : await openaiGemini.responses.create(params);
        const types = first.output.map((item) => item.type);
        assert.deepEqual(types, ['reasoning', 'function_call'], `stream ${stream}`);
        const reasoning = first.output[0] as OpenAI.Responses.ResponseReasoningItem;
        assert.equal(typeof reasoning.encrypted_content, 'string');
        const call = first.output[1] as OpenAI.Responses.ResponseFunctionToolCall;
        const second = await openaiGemini.responses.create({
          ...params,
          input: [
            { role: 'user', content: 'what is the weather?' },
            ...(first.output as OpenAI.Responses.ResponseInputItem[]),
            { type: 'function_call_output', call_id: call.call_id, output: 'sunny' },
          ],
        });
        assert.equal(second.output_text, 'result: "sunny"');
        assert.equal(lastFunctionCallPart().thoughtSignature, SIGNATURE);
        assert.equal(second.output.filter((item) => item.type === 'reasoning').length, 0, 'a text answer has none');
      }
    });

    it('Messages: a thinking block with the signature before the tool_use, sent back (whole and streamed)', async () => {
      for (const stream of [false, true]) {
        const params = {
          model: GEMINI_MODEL,
          max_tokens: 256,
          messages: [{ role: 'user' as const, content: 'what is the weather?' }],
          tools: [MESSAGES_TOOL],
        };
        const first = stream
          ? await anthropicGemini.messages.stream(params).finalMessage()
          : await anthropicGemini.messages.create(params);
        assert.deepEqual(
          first.content.map((block) => block.type),
          ['thinking', 'tool_use'],
          `stream ${stream}`,
        );
        assert.deepEqual(first.content[0], { type: 'thinking', thinking: '', signature: SIGNATURE });
        const use = first.content[1] as Anthropic.ToolUseBlock;
        const second = await anthropicGemini.messages.create({
          ...params,
          messages: [
            ...params.messages,
            { role: 'assistant', content: first.content },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny' }] },
          ],
        });
        assert.deepEqual(second.content, [{ type: 'text', text: 'result: "sunny"' }]);
        const sent = gemini.requests.at(-1)!.body.contents as { role: string; parts: unknown[] }[];
        // The signature is on the functionCall part itself, with no empty thought beside it.
        assert.deepEqual(sent[1], {
          role: 'model',
          parts: [
            {
              functionCall: { id: use.id, name: 'get_weather', args: { city: 'Paris' } },
              thoughtSignature: SIGNATURE,
            },
          ],
        });
      }
    });
  });

  describe('Gemini through a second client library: the AI SDK', () => {
    /** A two-step tool round (the call, then the answer to its result), whole and streamed. */
    async function toolRound(model: LanguageModel): Promise<string[]> {
      const round = {
        model,
        prompt: 'what is the weather?',
        maxRetries: 0,
        stopWhen: stepCountIs(2),
        // The AI SDK's Responses model sends reasoning items back only unstored, with their encrypted_content.
        providerOptions: { openai: { store: false, include: ['reasoning.encrypted_content'] } },
        tools: {
          get_weather: tool({
            inputSchema: jsonSchema<{ city: string }>(WEATHER_PARAMETERS),
            execute: async () => 'sunny',
          }),
        },
      };
      const whole = await generateText(round);
      const streamed = streamText({ ...round, onError: () => {} });
      for await (const part of streamed.fullStream) if (part.type === 'error') throw part.error;
      return [whole.text, await streamed.text];
    }

    it('@ai-sdk/anthropic and the Responses model of @ai-sdk/openai complete the round: the signature comes back', async () => {
      const baseURL = `http://127.0.0.1:${port}/gemini/v1`;
      for (const model of [
        createAnthropic({ baseURL, apiKey: 'client' })(GEMINI_MODEL),
        createOpenAI({ baseURL, apiKey: 'client' }).responses(GEMINI_MODEL),
      ]) {
        assert.deepEqual(await toolRound(model), ['result: "sunny"', 'result: "sunny"']);
        assert.equal(lastFunctionCallPart().thoughtSignature, SIGNATURE);
      }
    });

    it("the chat model of @ai-sdk/openai keeps no extra_content: Gemini 3's refusal reaches it as a 400", async () => {
      // As against Google's own OpenAI-compatible endpoint (decision 0025): the client drops the field.
      const model = createOpenAI({ baseURL: `http://127.0.0.1:${port}/gemini/v1`, apiKey: 'client' }).chat(
        GEMINI_MODEL,
      );
      await assert.rejects(
        toolRound(model),
        (error: unknown) =>
          APICallError.isInstance(error) && error.statusCode === 400 && /thought_signature/.test(error.message),
      );
    });
  });

  describe('Claude with extended thinking: the thinking signature through the Responses API', () => {
    const THINKING = `thinking about: call get_weather please`;
    const params = {
      model: CLAUDE_MODEL,
      input: 'call get_weather please',
      tools: [RESPONSES_TOOL],
      include: INCLUDE,
      store: false,
      // Carried to the Messages body unchanged (a field outside the Responses API).
      thinking: { type: 'enabled', budget_tokens: 1024 },
    };

    it('a reasoning item with the thinking text and encrypted_content, sent back (whole and streamed)', async () => {
      for (const stream of [false, true]) {
        const first = stream
          ? await openaiClaude.responses
              .stream(params as unknown as OpenAI.Responses.ResponseCreateParamsStreaming)
              .finalResponse()
          : await openaiClaude.responses.create(params as OpenAI.Responses.ResponseCreateParamsNonStreaming);
        assert.deepEqual(
          first.output.map((item) => item.type),
          ['reasoning', 'function_call'],
          `stream ${stream}`,
        );
        const reasoning = first.output[0] as OpenAI.Responses.ResponseReasoningItem;
        assert.deepEqual(reasoning.content, [{ type: 'reasoning_text', text: THINKING }]);
        assert.ok(reasoning.encrypted_content, 'the signature is in encrypted_content');
        const call = first.output[1] as OpenAI.Responses.ResponseFunctionToolCall;
        const second = await openaiClaude.responses.create({
          ...params,
          input: [
            { role: 'user', content: 'call get_weather please' },
            ...(first.output as OpenAI.Responses.ResponseInputItem[]),
            { type: 'function_call_output', call_id: call.call_id, output: 'sunny' },
          ],
        } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
        assert.match(second.output_text, /sunny/);
        const sent = anthropic.requests.at(-1)!.body as { messages: { role: string; content: unknown[] }[] };
        assert.deepEqual(sent.messages[1]!.content[0], {
          type: 'thinking',
          thinking: THINKING,
          signature: thinkingSignatureOf(THINKING),
        });
      }
    });

    it('without the reasoning item the next turn is refused, as Anthropic refuses it', async () => {
      const first = await openaiClaude.responses.create(params as OpenAI.Responses.ResponseCreateParamsNonStreaming);
      const call = first.output.find((item) => item.type === 'function_call')!;
      await assert.rejects(
        openaiClaude.responses.create({
          ...params,
          input: [
            { role: 'user', content: 'call get_weather please' },
            call as OpenAI.Responses.ResponseInputItem,
            { type: 'function_call_output', call_id: call.call_id, output: 'sunny' },
          ],
        } as OpenAI.Responses.ResponseCreateParamsNonStreaming),
        (error: unknown) =>
          error instanceof OpenAI.BadRequestError && /must start with a thinking block/.test(String(error.message)),
      );
    });
  });

  describe('a Responses-only provider: its reasoning item back from a Messages client', () => {
    it('the item id and encrypted_content ride in the thinking signature and go back as the item (whole and streamed)', async () => {
      for (const stream of [false, true]) {
        const params = {
          model: 'o4-mini',
          max_tokens: 256,
          output_config: { effort: 'low' as const },
          messages: [{ role: 'user' as const, content: 'call get_weather please' }],
          tools: [MESSAGES_TOOL],
        };
        const first = stream
          ? await anthropicResponses.messages.stream(params).finalMessage()
          : await anthropicResponses.messages.create(params);
        assert.deepEqual(
          first.content.map((block) => block.type),
          ['thinking', 'tool_use'],
          `stream ${stream}`,
        );
        const asked = responsesOnly.requests.at(-1)!.body;
        assert.deepEqual(asked.include, ['reasoning.encrypted_content'], 'gw asks for the encrypted reasoning');
        const thinking = first.content[0] as Anthropic.ThinkingBlock;
        assert.equal(thinking.thinking, STAND_IN_REASONING);
        const use = first.content[1] as Anthropic.ToolUseBlock;
        await anthropicResponses.messages.create({
          ...params,
          messages: [
            ...params.messages,
            { role: 'assistant', content: first.content },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny' }] },
          ],
        });
        const input = responsesOnly.requests.at(-1)!.body.input as Record<string, unknown>[];
        assert.deepEqual(input[1], {
          type: 'reasoning',
          id: 'rs_0',
          summary: [{ type: 'summary_text', text: STAND_IN_REASONING }],
          encrypted_content: STAND_IN_ENCRYPTED_REASONING,
        });
        assert.equal(input[2]!.type, 'function_call');
      }
    });
  });
});
