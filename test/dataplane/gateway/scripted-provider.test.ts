// The family matrix's scripted stand-in (test/helpers/scripted-provider.ts) speaks each provider's
// wire format as that provider's own SDK reads it: the openai SDK (Chat Completions and the
// Responses API), @anthropic-ai/sdk (Messages), @google/genai (Gemini) and the AWS SDK (Converse
// and ConverseStream) get its answers and usage, whole and streamed, and raise its scripted
// errors — error bodies, mid-stream error events, Bedrock's exception frames — as the provider's.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { standInClient } from '../../helpers/bedrock-stand-in.ts';
import {
  SCRIPTED_TEXT,
  SCRIPTED_USAGE,
  type ScriptedProvider,
  startScriptedProvider,
} from '../../helpers/scripted-provider.ts';

const U = SCRIPTED_USAGE;
const CREDENTIALS = { accessKeyId: 'AKIDSCRIPTED', secretAccessKey: 'scripted/secret' };

describe('the scripted stand-in, read by each provider SDK', () => {
  let provider: ScriptedProvider;
  let url: string;
  before(async () => {
    provider = await startScriptedProvider();
    url = `http://127.0.0.1:${provider.port}`;
  });
  after(async () => {
    await provider?.close();
  });

  it('Chat Completions and the Responses API, as the openai SDK reads them', async () => {
    const openai = new OpenAI({ apiKey: 'sk-x', baseURL: `${url}/v1`, maxRetries: 0 });
    const messages = [{ role: 'user' as const, content: 'hi' }];
    const completion = await openai.chat.completions.create({ model: 'gpt-4o', messages });
    assert.equal(completion.choices[0]!.message.content, SCRIPTED_TEXT);
    assert.equal(completion.usage?.prompt_tokens_details?.cached_tokens, U.cached);
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of await openai.chat.completions.create({ model: 'gpt-4o', messages, stream: true })) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    assert.equal(text, SCRIPTED_TEXT);
    assert.equal(usage?.completion_tokens_details?.reasoning_tokens, U.reasoning);

    const response = await openai.responses.create({ model: 'gpt-5', input: 'hi' });
    assert.equal(response.output_text, SCRIPTED_TEXT);
    assert.equal(response.usage?.input_tokens, U.input);
    const stream = openai.responses.stream({ model: 'gpt-5', input: 'hi' });
    const final = await stream.finalResponse();
    assert.equal(final.output_text, SCRIPTED_TEXT);
    assert.equal(final.usage?.output_tokens_details.reasoning_tokens, U.reasoning);

    provider.next({
      kind: 'error',
      status: 429,
      headers: { 'retry-after': '7' },
      body: { error: { message: 'slow down', type: 'requests', param: null, code: 'rate_limit_exceeded' } },
    });
    await assert.rejects(openai.chat.completions.create({ model: 'gpt-4o', messages }), (error: unknown) => {
      assert.ok(error instanceof OpenAI.RateLimitError);
      assert.equal(error.message, '429 slow down');
      assert.equal(error.headers?.get('retry-after'), '7');
      return true;
    });
    provider.next({ kind: 'stream-error', error: { type: 'server_error', code: 500, message: 'broke' } });
    await assert.rejects(async () => {
      for await (const _ of await openai.chat.completions.create({ model: 'gpt-4o', messages, stream: true })) {
      }
    }, /broke/);
    provider.next({ kind: 'stream-error', error: { type: 'server_error', code: 500, message: 'broke too' } });
    await assert.rejects(openai.responses.stream({ model: 'gpt-5', input: 'hi' }).finalResponse(), /broke too/);
  });

  it('Messages, as @anthropic-ai/sdk reads them', async () => {
    const anthropic = new Anthropic({ apiKey: 'sk-ant-x', baseURL: url, maxRetries: 0 });
    const request = {
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      messages: [{ role: 'user' as const, content: 'hi' }],
    };
    const message = await anthropic.messages.create(request);
    assert.deepEqual(
      message.content.map((block) => (block.type === 'text' ? block.text : '')),
      [SCRIPTED_TEXT],
    );
    assert.equal(message.usage.cache_read_input_tokens, U.cached);
    const streamed = await anthropic.messages.stream(request).finalMessage();
    assert.equal(streamed.usage.output_tokens, U.output);
    assert.equal(streamed.usage.input_tokens + (streamed.usage.cache_read_input_tokens ?? 0), U.input);

    provider.next({
      kind: 'error',
      status: 529,
      body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    });
    await assert.rejects(anthropic.messages.create(request), (error: unknown) => {
      assert.ok(error instanceof Anthropic.APIError);
      assert.equal(error.status, 529);
      assert.match(error.message, /overloaded_error/);
      return true;
    });
    provider.next({ kind: 'stream-error', error: { type: 'overloaded_error', code: 529, message: 'Overloaded' } });
    await assert.rejects(anthropic.messages.stream(request).finalMessage(), /Overloaded/);
  });

  it('Gemini generateContent, as @google/genai reads it', async () => {
    const ai = new GoogleGenAI({ apiKey: 'AIza-x', httpOptions: { baseUrl: url, apiVersion: 'v1beta' } });
    const response = await ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi' });
    assert.equal(response.text, SCRIPTED_TEXT);
    assert.equal(response.usageMetadata?.thoughtsTokenCount, U.reasoning);
    let text = '';
    for await (const chunk of await ai.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'hi' })) {
      text += chunk.text ?? '';
    }
    assert.equal(text, SCRIPTED_TEXT);
    assert.equal(provider.requests.at(-1)!.path, '/v1beta/models/gemini-2.5-flash:streamGenerateContent');

    provider.next({
      kind: 'error',
      status: 429,
      body: { error: { code: 429, message: 'Resource has been exhausted', status: 'RESOURCE_EXHAUSTED' } },
    });
    await assert.rejects(ai.models.generateContent({ model: 'gemini-2.5-flash', contents: 'hi' }), (error: unknown) => {
      assert.equal((error as { status?: number }).status, 429);
      assert.match(String(error), /Resource has been exhausted/);
      return true;
    });
  });

  it('Converse and ConverseStream, as the AWS SDK reads them', async () => {
    const bedrock = standInClient({ url }, 'us-east-1', CREDENTIALS);
    const input = {
      modelId: 'anthropic.claude-3-haiku-20240307-v1:0',
      messages: [{ role: 'user' as const, content: [{ text: 'hi' }] }],
    };
    const answer = await bedrock.send(new ConverseCommand(input));
    assert.equal(answer.output?.message?.content?.[0]?.text, SCRIPTED_TEXT);
    assert.equal(answer.usage?.cacheReadInputTokens, U.cached);
    const streamed = await bedrock.send(new ConverseStreamCommand(input));
    let text = '';
    let outputTokens: number | undefined;
    for await (const event of streamed.stream!) {
      text += event.contentBlockDelta?.delta?.text ?? '';
      outputTokens = event.metadata?.usage?.outputTokens ?? outputTokens;
    }
    assert.equal(text, SCRIPTED_TEXT);
    assert.equal(outputTokens, U.output);

    provider.next({
      kind: 'error',
      status: 429,
      headers: { 'x-amzn-errortype': 'ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/' },
      body: { message: 'Too many requests' },
    });
    await assert.rejects(bedrock.send(new ConverseCommand(input)), (error: unknown) => {
      assert.equal((error as Error).name, 'ThrottlingException');
      assert.equal((error as Error).message, 'Too many requests');
      return true;
    });
    provider.next({
      kind: 'stream-error',
      error: { type: 'throttlingException', code: 429, message: 'Too many tokens' },
    });
    const failing = await bedrock.send(new ConverseStreamCommand(input));
    await assert.rejects(async () => {
      for await (const _ of failing.stream!) {
      }
    }, /Too many tokens/);
  });
});
