// LangChain's chat models as clients of gw: ChatOpenAI (Chat Completions, and the Responses API
// with useResponsesApi) and ChatAnthropic (Messages) pointed at gw, each into every provider
// family gw serves here (alpha, gamma, zeta, delta, beta stand-ins): invoke, stream, and
// bindTools with a tool call and its arguments, invoked and streamed (LangChain puts the streamed
// argument pieces back together itself, so a piece lost or doubled by gw shows as wrong
// arguments). LangChain's Gemini model (@langchain/google-genai) is not a dependency; Gemini
// clients through gw are run with @google/genai and @ai-sdk/google.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChatAnthropic } from '@langchain/anthropic';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { AIMessageChunk } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import {
  expectedText,
  expectedToolInput,
  FAMILIES,
  type FamiliesBehindGw,
  type Family,
  familiesBehindGwForSuite,
  MODEL_OF,
  TEXT_PROMPT,
  TOOL_PROMPT,
  WEATHER_SCHEMA,
} from '../../helpers/families-behind-gw.ts';

const WEATHER_TOOL = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'The weather in a city', parameters: WEATHER_SCHEMA },
};

type ClientModel = 'ChatOpenAI' | 'ChatOpenAI (Responses API)' | 'ChatAnthropic';
const CLIENT_MODELS: readonly ClientModel[] = ['ChatOpenAI', 'ChatOpenAI (Responses API)', 'ChatAnthropic'];

function chatModel(setup: FamiliesBehindGw, client: ClientModel, family: Family): ChatOpenAI | ChatAnthropic {
  const common = { model: MODEL_OF[family], apiKey: 'client-key', maxRetries: 0, maxTokens: 200 };
  if (client === 'ChatAnthropic') return new ChatAnthropic({ ...common, anthropicApiUrl: setup.base(family) });
  return new ChatOpenAI({
    ...common,
    useResponsesApi: client === 'ChatOpenAI (Responses API)',
    configuration: { baseURL: `${setup.base(family)}/v1` },
  });
}

/** The text of a message's content, whether a string or content blocks. */
function textOf(content: AIMessageChunk['content']): string {
  if (typeof content === 'string') return content;
  return content.map((block) => (block.type === 'text' && 'text' in block ? String(block.text) : '')).join('');
}

async function streamAll(model: Pick<BaseChatModel, 'stream'>, prompt: string) {
  let whole: AIMessageChunk | undefined;
  let chunks = 0;
  for await (const chunk of await model.stream(prompt)) {
    whole = whole === undefined ? chunk : whole.concat(chunk);
    chunks++;
  }
  assert.ok(whole, 'the stream yielded chunks');
  return { message: whole, chunks };
}

describe('LangChain chat models through gw', () => {
  const setup = familiesBehindGwForSuite();

  for (const client of CLIENT_MODELS) {
    for (const family of FAMILIES) {
      it(`${client} → gw → ${family}: invoke and stream`, async () => {
        const model = chatModel(setup(), client, family);
        const before = setup().received(family);
        const answer = await model.invoke(TEXT_PROMPT);
        assert.equal(textOf(answer.content), expectedText(family));
        assert.ok((answer.usage_metadata?.input_tokens ?? 0) > 0, 'input tokens counted');
        assert.ok((answer.usage_metadata?.output_tokens ?? 0) > 0, 'output tokens counted');
        const streamed = await streamAll(model, TEXT_PROMPT);
        assert.equal(textOf(streamed.message.content), expectedText(family));
        assert.ok(streamed.chunks > 1, `streamed in pieces (${streamed.chunks})`);
        assert.equal(setup().received(family) - before, 2, `both requests reached the ${family} stand-in`);
      });

      it(`${client} → gw → ${family}: bindTools, a tool call invoked and streamed`, async () => {
        const model = chatModel(setup(), client, family).bindTools([WEATHER_TOOL], { tool_choice: 'any' });
        const before = setup().received(family);
        const answer = await model.invoke(TOOL_PROMPT);
        assert.equal(answer.tool_calls?.length, 1);
        assert.equal(answer.tool_calls[0]!.name, 'get_weather');
        assert.deepEqual(answer.tool_calls[0]!.args, expectedToolInput(family));
        assert.ok(answer.tool_calls[0]!.id, 'the call has an id');
        const streamed = await streamAll(model, TOOL_PROMPT);
        assert.equal(streamed.message.tool_calls?.length, 1);
        assert.equal(streamed.message.tool_calls[0]!.name, 'get_weather');
        assert.deepEqual(streamed.message.tool_calls[0]!.args, expectedToolInput(family));
        assert.equal(setup().received(family) - before, 2, `both requests reached the ${family} stand-in`);
      });
    }
  }
});
