// The Vercel AI SDK (`ai`) as a client of gw and of the stand-ins. Through gw: generateText and
// streamText, plain text, a tool call with arguments and a whole tool round, from @ai-sdk/openai's
// chat model (Chat Completions) and responses model (the Responses API), from @ai-sdk/anthropic
// (Messages) and from @ai-sdk/google (the Gemini API: gw's default routes map :generateContent and
// :streamGenerateContent), each into every provider family gw serves here (alpha, gamma, zeta,
// delta and beta stand-ins), so every client format meets every provider format with a second client
// library besides the official SDKs. @ai-sdk/amazon-bedrock speaks Converse, which gw passes
// through rather than translates (test/dataplane/clients/bedrock-passthrough.test.ts); here it and
// @ai-sdk/google are also pointed at the stand-ins directly: a second client proving each
// stand-in's wire format (the AI SDK validates answers with strict schemas).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createAmazonBedrock } from '@ai-sdk/amazon-bedrock';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, generateText, jsonSchema, type LanguageModel, stepCountIs, streamText, tool } from 'ai';
import {
  expectedText,
  expectedToolInput,
  FAMILIES,
  type FamiliesBehindGw,
  type Family,
  familiesBehindGwForSuite,
  KEYS,
  MODEL_OF,
  TEXT_PROMPT,
  TOOL_PROMPT,
  WEATHER_SCHEMA,
} from '../../helpers/families-behind-gw.ts';

const tools = {
  get_weather: tool({
    description: 'The weather in a city',
    inputSchema: jsonSchema<{ city: string }>(WEATHER_SCHEMA),
  }),
};

type ClientModel = 'openai chat' | 'openai responses' | 'anthropic' | 'google';
const CLIENT_MODELS: readonly ClientModel[] = ['openai chat', 'openai responses', 'anthropic', 'google'];

/** The AI SDK model for one client format, pointed at gw's backend for `family`. */
function modelThroughGw(setup: FamiliesBehindGw, client: ClientModel, family: Family): LanguageModel {
  if (client === 'google')
    return createGoogleGenerativeAI({ baseURL: `${setup.base(family)}/v1beta`, apiKey: 'client-key' })(
      MODEL_OF[family],
    );
  const baseURL = `${setup.base(family)}/v1`;
  if (client === 'anthropic') return createAnthropic({ baseURL, apiKey: 'client-key' })(MODEL_OF[family]);
  const openai = createOpenAI({ baseURL, apiKey: 'client-key' });
  return client === 'openai chat' ? openai.chat(MODEL_OF[family]) : openai.responses(MODEL_OF[family]);
}

/** Every part of a streamText run, failing on an error part (streamText reports errors there). */
async function streamed(model: LanguageModel, withTools: boolean) {
  const result = streamText({
    model,
    prompt: withTools ? TOOL_PROMPT : TEXT_PROMPT,
    ...(withTools ? { tools, toolChoice: 'required' as const } : {}),
    maxOutputTokens: 200,
    maxRetries: 0,
    onError: () => {},
  });
  let text = '';
  let deltas = 0;
  for await (const part of result.fullStream) {
    if (part.type === 'error') throw part.error;
    if (part.type === 'text-delta') {
      text += part.text;
      deltas++;
    }
  }
  return {
    text,
    deltas,
    toolCalls: await result.toolCalls,
    finishReason: await result.finishReason,
    usage: await result.usage,
  };
}

describe('the AI SDK', () => {
  const setup = familiesBehindGwForSuite();

  for (const client of CLIENT_MODELS) {
    for (const family of FAMILIES) {
      it(`${client} → gw → ${family}: generateText, text and a tool call`, async () => {
        const model = modelThroughGw(setup(), client, family);
        const before = setup().received(family);
        const answer = await generateText({ model, prompt: TEXT_PROMPT, maxOutputTokens: 200, maxRetries: 0 });
        assert.equal(answer.text, expectedText(family));
        assert.equal(answer.finishReason, 'stop');
        assert.ok((answer.usage.inputTokens ?? 0) > 0, 'input tokens counted');
        assert.ok((answer.usage.outputTokens ?? 0) > 0, 'output tokens counted');

        const called = await generateText({
          model,
          prompt: TOOL_PROMPT,
          tools,
          toolChoice: 'required',
          maxOutputTokens: 200,
          maxRetries: 0,
        });
        assert.equal(called.finishReason, 'tool-calls');
        assert.equal(called.toolCalls.length, 1);
        assert.equal(called.toolCalls[0]!.toolName, 'get_weather');
        assert.deepEqual(called.toolCalls[0]!.input, expectedToolInput(family));
        assert.ok(called.toolCalls[0]!.toolCallId.length > 0, 'the call has an id');
        assert.equal(setup().received(family) - before, 2, `both requests reached the ${family} stand-in`);
      });

      it(`${client} → gw → ${family}: streamText, text and a tool call`, async () => {
        const model = modelThroughGw(setup(), client, family);
        const before = setup().received(family);
        const text = await streamed(model, false);
        assert.equal(text.text, expectedText(family));
        assert.ok(text.deltas > 1, `streamed in pieces (${text.deltas})`);
        assert.equal(text.finishReason, 'stop');
        assert.ok((text.usage.outputTokens ?? 0) > 0, 'output tokens counted');

        const called = await streamed(model, true);
        assert.equal(called.finishReason, 'tool-calls');
        assert.equal(called.toolCalls.length, 1);
        assert.equal(called.toolCalls[0]!.toolName, 'get_weather');
        assert.deepEqual(called.toolCalls[0]!.input, expectedToolInput(family));
        assert.equal(setup().received(family) - before, 2, `both requests reached the ${family} stand-in`);
      });
    }
  }

  for (const client of CLIENT_MODELS) {
    for (const family of FAMILIES) {
      it(`${client} → gw → ${family}: a tool round, whole and streamed, the result sent back by the call's id`, async () => {
        const model = modelThroughGw(setup(), client, family);
        const before = setup().received(family);
        const executed: unknown[] = [];
        const round = {
          model,
          prompt: TOOL_PROMPT,
          tools: {
            get_weather: tool({
              description: 'The weather in a city',
              inputSchema: jsonSchema<{ city: string }>(WEATHER_SCHEMA),
              execute: async (input) => {
                executed.push(input);
                return 'sunny, 18 degrees';
              },
            }),
          },
          stopWhen: stepCountIs(2),
          maxOutputTokens: 200,
          maxRetries: 0,
        };
        const whole = await generateText(round);
        const streamedRound = streamText({ ...round, onError: () => {} });
        for await (const part of streamedRound.fullStream) if (part.type === 'error') throw part.error;
        assert.deepEqual(executed, [expectedToolInput(family), expectedToolInput(family)]);
        for (const [text, steps] of [
          [whole.text, whole.steps.length],
          [await streamedRound.text, (await streamedRound.steps).length],
        ] as const) {
          assert.equal(steps, 2);
          // Each stand-in answers a tool result with text of its own: the mocks echo the result.
          if (family === 'zeta') assert.equal(text, expectedText('zeta'));
          else assert.match(text, /sunny, 18 degrees/);
        }
        assert.equal(setup().received(family) - before, 4, `every turn reached the ${family} stand-in`);
      });
    }
  }

  for (const client of CLIENT_MODELS) {
    it(`${client} → gw → gamma: a provider's 429 and a stream cut short reach the AI SDK as errors`, async () => {
      const model = modelThroughGw(setup(), client, 'gamma');
      const anthropic = setup().anthropic;
      anthropic.script('/v1/messages', { reply: { kind: 'error', status: 429, message: 'slow down' } });
      await assert.rejects(
        generateText({ model, prompt: TEXT_PROMPT, maxOutputTokens: 200, maxRetries: 0 }),
        (error) => {
          assert.ok(APICallError.isInstance(error), String(error));
          assert.equal(error.statusCode, 429);
          assert.match(error.message, /slow down/);
          return true;
        },
      );
      // The answer's text begins, then the provider's connection drops: the client's stream ends
      // in its format's error event, which the AI SDK reports with gw's reason.
      anthropic.script('/v1/messages', { resetAfterEvents: 4 });
      await assert.rejects(streamed(model, false), /ended before the response was complete/);
    });
  }

  it("gw's translated Messages answers leave citations out of text blocks, as the real API does", async () => {
    // The AI SDK's Anthropic provider holds answers to the real API's shapes; a `citations: null`
    // the real API never sends is what a stricter client would refuse.
    const ask = (stream: boolean) =>
      fetch(`${setup().base('alpha')}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({
          model: MODEL_OF.alpha,
          max_tokens: 50,
          stream,
          messages: [{ role: 'user', content: TEXT_PROMPT }],
        }),
      });
    const whole = (await (await ask(false)).json()) as { content: unknown[] };
    assert.deepEqual(whole.content, [{ type: 'text', text: expectedText('alpha') }]);
    const events = (await (await ask(true)).text())
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice('data: '.length)) as { type: string; content_block?: unknown });
    const starts = events.filter((event) => event.type === 'content_block_start');
    assert.deepEqual(
      starts.map((event) => event.content_block),
      [{ type: 'text', text: '' }],
    );
  });

  it('@ai-sdk/amazon-bedrock speaks Converse and ConverseStream with the Bedrock stand-in, signed', async () => {
    const bedrock = createAmazonBedrock({
      region: 'us-east-1',
      accessKeyId: KEYS.aws.accessKeyId,
      secretAccessKey: KEYS.aws.secretAccessKey,
      baseURL: setup().bedrock.url,
    });
    const model = bedrock(MODEL_OF.zeta);
    const answer = await generateText({ model, prompt: TEXT_PROMPT, maxOutputTokens: 200, maxRetries: 0 });
    assert.equal(answer.text, expectedText('zeta'));
    assert.equal(answer.usage.outputTokens, 7);
    const called = await generateText({ model, prompt: TOOL_PROMPT, tools, maxOutputTokens: 200, maxRetries: 0 });
    assert.deepEqual(called.toolCalls[0]?.input, expectedToolInput('zeta'));
    const text = await streamed(model, false);
    assert.equal(text.text, expectedText('zeta'));
    const tool = await streamed(model, true);
    assert.deepEqual(tool.toolCalls[0]?.input, expectedToolInput('zeta'));
    assert.deepEqual(setup().bedrock.refused, [], 'every request was signed as Bedrock checks it');
  });

  it('@ai-sdk/google speaks generateContent and streamGenerateContent with the Gemini stand-in', async () => {
    const google = createGoogleGenerativeAI({ baseURL: `${setup().gemini.url}/v1beta`, apiKey: KEYS.gemini });
    const model = google(MODEL_OF.delta);
    const answer = await generateText({ model, prompt: TEXT_PROMPT, maxOutputTokens: 200, maxRetries: 0 });
    assert.equal(answer.text, expectedText('delta'));
    assert.equal(answer.finishReason, 'stop');
    const called = await generateText({ model, prompt: TOOL_PROMPT, tools, maxOutputTokens: 200, maxRetries: 0 });
    assert.deepEqual(called.toolCalls[0]?.input, expectedToolInput('delta'));
    const text = await streamed(model, false);
    assert.equal(text.text, expectedText('delta'));
    assert.ok(text.deltas > 1, 'streamed in pieces');
    const tool = await streamed(model, true);
    assert.deepEqual(tool.toolCalls[0]?.input, expectedToolInput('delta'));
  });

  it('@ai-sdk/openai and @ai-sdk/anthropic accept the OpenAI and Anthropic stand-ins directly', async () => {
    const openai = createOpenAI({ baseURL: `${setup().openai.url}/v1`, apiKey: KEYS.openai });
    const anthropic = createAnthropic({ baseURL: `${setup().anthropic.url}/v1`, apiKey: KEYS.anthropic });
    for (const [model, family] of [
      [openai.chat(MODEL_OF.alpha), 'alpha'],
      [openai.responses(MODEL_OF.alpha), 'alpha'],
      [anthropic(MODEL_OF.gamma), 'gamma'],
    ] as const) {
      assert.equal(
        (await generateText({ model, prompt: TEXT_PROMPT, maxOutputTokens: 200, maxRetries: 0 })).text,
        expectedText(family),
      );
      assert.equal((await streamed(model, false)).text, expectedText(family));
      assert.deepEqual((await streamed(model, true)).toolCalls[0]?.input, expectedToolInput(family));
    }
  });
});
