// A custom provider that speaks only the OpenAI Responses API serves Chat Completions and Messages
// clients through gw's Responses provider side. A stand-in that answers only POST /v1/responses
// is first proven in the wire format by the openai SDK's responses.create (whole and streamed);
// then the openai SDK (chat.completions, with a tool call, streamed with usage) and
// @anthropic-ai/sdk (messages, streamed with thinking) reach it through gw, which sends it only
// Responses requests.
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
import {
  type ResponsesStandIn,
  STAND_IN_REASONING,
  STAND_IN_USAGE,
  startResponsesStandIn,
} from '../../helpers/responses-stand-in.ts';
import { WEATHER_TOOL } from '../../helpers/weather-tool.ts';

const KEY = 'sk-responses-only';
const ROUTES = '{/v1/chat/completions: Completions, /v1/messages: Messages}';

describe('a custom provider that speaks only the Responses API', () => {
  let standIn: ResponsesStandIn;
  let gw: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;

  before(async () => {
    standIn = await startResponsesStandIn(KEY);
    const port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('responses', standIn.port, 'custom: {formats: [{type: Responses}]}', KEY, ROUTES),
        llmRouteYaml(['responses']),
      ].join(''),
    });
    openai = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/responses/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/responses`, maxRetries: 0 });
  });

  after(async () => {
    await gw?.stop();
    await standIn?.close();
  });

  it('the stand-in speaks the Responses API as the openai SDK reads it, and nothing else', async () => {
    const direct = new OpenAI({ apiKey: KEY, baseURL: standIn.url, maxRetries: 0 });
    const whole = await direct.responses.create({
      model: 'o4-mini',
      input: 'hello there',
      reasoning: { effort: 'low' },
    });
    assert.equal(whole.output_text, 'echo: hello there');
    assert.equal(whole.usage?.input_tokens_details.cached_tokens, 2);
    const stream = direct.responses.stream({ model: 'o4-mini', input: 'streamed', reasoning: { effort: 'low' } });
    let text = '';
    let summary = '';
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.reasoning_summary_text.delta') summary += event.delta;
    }
    const final = await stream.finalResponse();
    assert.equal(text, 'echo: streamed');
    assert.equal(summary, STAND_IN_REASONING);
    assert.equal(final.output_text, 'echo: streamed');
    assert.equal(final.usage?.output_tokens_details.reasoning_tokens, 3);
    await assert.rejects(
      direct.chat.completions.create({ model: 'o4-mini', messages: [{ role: 'user', content: 'x' }] }),
      (error: unknown) => error instanceof OpenAI.NotFoundError,
    );
  });

  it('Chat Completions: a tool call and its result, translated both ways', async () => {
    const from = standIn.requests.length;
    const first = await openai.chat.completions.create({
      model: 'o4-mini',
      messages: [{ role: 'user', content: 'please call get_weather' }],
      tools: [WEATHER_TOOL],
    });
    const call = first.choices[0]!.message.tool_calls?.[0];
    assert.equal(first.choices[0]!.finish_reason, 'tool_calls');
    assert.equal(call?.type === 'function' && call.function.name, 'get_weather');
    assert.deepEqual(call?.type === 'function' && JSON.parse(call.function.arguments), { city: 'Paris' });
    assert.deepEqual(first.usage, {
      prompt_tokens: 12,
      completion_tokens: 7,
      total_tokens: 19,
      prompt_tokens_details: { cached_tokens: 2 },
      completion_tokens_details: { reasoning_tokens: 3 },
    });
    const second = await openai.chat.completions.create({
      model: 'o4-mini',
      messages: [
        { role: 'user', content: 'please call get_weather' },
        first.choices[0]!.message,
        { role: 'tool', tool_call_id: call!.id, content: 'sunny' },
      ],
      tools: [WEATHER_TOOL],
    });
    assert.equal(second.choices[0]!.message.content, 'echo: tool said sunny');
    assert.equal(second.choices[0]!.finish_reason, 'stop');
    // The provider got Responses requests only, with gw's key, not stored, tools not made strict.
    const sent = standIn.requests.slice(from);
    assert.deepEqual(
      sent.map((r) => r.path),
      ['/v1/responses', '/v1/responses'],
    );
    assert.ok(sent.every((r) => r.authorization === `Bearer ${KEY}` && r.body.store === false));
    assert.deepEqual(sent[0]!.body.tools, [
      {
        type: 'function',
        name: 'get_weather',
        description: 'The weather in a city',
        parameters: WEATHER_TOOL.function.parameters,
        strict: false,
      },
    ]);
    assert.deepEqual((sent[1]!.body.input as unknown[]).slice(1), [
      { type: 'function_call', call_id: call!.id, name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: call!.id, output: 'sunny' },
    ]);
  });

  it('Chat Completions streamed: text deltas, the finish reason and usage with cached and reasoning tokens', async () => {
    const stream = await openai.chat.completions.create({
      model: 'o4-mini',
      messages: [{ role: 'user', content: 'stream this please' }],
      stream: true,
      stream_options: { include_usage: true },
      reasoning_effort: 'low',
    });
    let text = '';
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, 'echo: stream this please');
    assert.equal(finish, 'stop');
    assert.equal(usage?.prompt_tokens_details?.cached_tokens, 2);
    assert.equal(usage?.completion_tokens_details?.reasoning_tokens, 3);
    assert.deepEqual(standIn.requests.at(-1)!.body.reasoning, { effort: 'low' });
  });

  it('Messages: text and usage (cache reads apart), whole and streamed; thinking has no Responses equivalent', async () => {
    const message = await anthropic.messages.create({
      model: 'o4-mini',
      max_tokens: 200,
      messages: [{ role: 'user', content: 'hi from claude code' }],
    });
    assert.equal(message.content[0]?.type === 'text' && message.content[0].text, 'echo: hi from claude code');
    assert.equal(message.stop_reason, 'end_turn');
    assert.equal(message.usage.input_tokens, STAND_IN_USAGE.input_tokens - 2);
    assert.equal(message.usage.cache_read_input_tokens, 2);
    assert.equal(message.usage.output_tokens, 7);
    assert.equal(standIn.requests.at(-1)!.body.max_output_tokens, 200);

    const stream = anthropic.messages.stream({
      model: 'o4-mini',
      max_tokens: 200,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: 'think and stream' }],
    });
    let thinking = '';
    stream.on('thinking', (delta) => {
      thinking += delta;
    });
    const final = await stream.finalMessage();
    // thinking has no Responses equivalent: it is dropped, so the stand-in shows no reasoning.
    assert.equal(thinking, '');
    assert.deepEqual(
      final.content.map((block) => block.type),
      ['text'],
    );
    assert.equal(final.content[0]?.type === 'text' && final.content[0].text, 'echo: think and stream');
    assert.equal(final.usage.cache_read_input_tokens, 2);
  });

  it('Messages streamed: a reasoning summary arrives as a thinking block before the text', async () => {
    // A Messages client has no reasoning effort; the model's own reasoning still reaches it when
    // the server sends a summary (the stand-in does when asked through a carried-over field).
    const stream = anthropic.messages.stream({
      model: 'o4-mini',
      max_tokens: 200,
      messages: [{ role: 'user', content: 'reason please' }],
      // A field outside the Messages schema, carried over to the provider as it is.
      reasoning: { effort: 'low' },
    });
    let thinking = '';
    stream.on('thinking', (delta) => {
      thinking += delta;
    });
    const final = await stream.finalMessage();
    assert.equal(thinking, STAND_IN_REASONING);
    assert.deepEqual(
      final.content.map((block) => block.type),
      ['thinking', 'text'],
    );
    assert.equal(final.stop_reason, 'end_turn');
  });
});
