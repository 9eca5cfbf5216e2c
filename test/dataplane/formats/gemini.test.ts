// The Gemini generateContent adapters (the delta family's provider side): requests written from
// Chat Completions and Messages requests, responses and streams read back, and the stream reader
// fed random splits, truncations and garbage.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type OpenAI from 'openai';
import {
  createStreamTranslator,
  translateRequest,
  translateResponse,
  usageFromResponse,
} from '../../../src/dataplane/ai/formats/index.ts';
import { feed, parseSse, prng, randomSplits, splitAt } from './stream-helpers.ts';

test('a Chat Completions request becomes a generateContent body', () => {
  const { body, warnings } = translateRequest('completions', 'gemini', {
    model: 'gemini-2.5-flash',
    stream: true,
    max_completion_tokens: 50,
    temperature: 0.2,
    top_p: 0.9,
    stop: ['END'],
    seed: 7,
    reasoning_effort: 'low',
    response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object' } } },
    messages: [
      { role: 'developer', content: 'rules' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'done' },
    ],
    tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }],
    tool_choice: { type: 'function', function: { name: 'f' } },
  });
  assert.equal(warnings, undefined);
  assert.deepEqual(body, {
    contents: [
      { role: 'user', parts: [{ text: 'look' }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }] },
      { role: 'model', parts: [{ functionCall: { name: 'f', args: { a: 1 }, id: 'c1' } }] },
      { role: 'user', parts: [{ functionResponse: { id: 'c1', name: 'f', response: { output: 'done' } } }] },
    ],
    systemInstruction: { parts: [{ text: 'rules' }] },
    tools: [{ functionDeclarations: [{ name: 'f', parametersJsonSchema: { type: 'object' } }] }],
    toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['f'] } },
    generationConfig: {
      maxOutputTokens: 50,
      stopSequences: ['END'],
      temperature: 0.2,
      topP: 0.9,
      seed: 7,
      responseMimeType: 'application/json',
      responseJsonSchema: { type: 'object' },
      thinkingConfig: { thinkingLevel: 'LOW' },
    },
  });
});

test('a Messages request becomes a generateContent body; what Gemini lacks is reported', () => {
  const { body, warnings } = translateRequest('messages', 'gemini', {
    model: 'gemini-2.5-pro',
    max_tokens: 1000,
    top_k: 5,
    system: [{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } }],
    thinking: { type: 'enabled', budget_tokens: 512 },
    metadata: { user_id: 'u1' },
    messages: [
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 'sig' },
          { type: 'text', text: 'yo' },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'unknown', content: 'x' },
          { type: 'text', text: 'more' },
        ],
      },
    ],
  });
  assert.deepEqual(body.contents, [
    { role: 'user', parts: [{ text: 'hi' }] },
    { role: 'model', parts: [{ text: 'hmm', thought: true, thoughtSignature: 'sig' }, { text: 'yo' }] },
    { role: 'user', parts: [{ text: 'more' }] },
  ]);
  assert.deepEqual(body.generationConfig, {
    maxOutputTokens: 1000,
    topK: 5,
    thinkingConfig: { includeThoughts: true, thinkingBudget: 512 },
  });
  assert.deepEqual(
    warnings?.map((warning) => warning.path),
    ['system[0].cache_control', 'messages[2].content[0]', 'metadata.user_id'],
  );
});

test('thinking with an empty signature, as gw streams a thought that had none, goes back to Gemini without one', () => {
  const { body } = translateRequest('messages', 'gemini', {
    model: 'gemini-2.5-flash',
    max_tokens: 100,
    messages: [
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Greeting.', signature: '' },
          { type: 'text', text: 'Hello' },
        ],
      },
      { role: 'user', content: 'more' },
    ],
  });
  const model = (body.contents as { role: string; parts: unknown[] }[])[1]!;
  assert.deepEqual(model.parts, [{ text: 'Greeting.', thought: true }, { text: 'Hello' }]);
});

test('a generateContent response is read: parts, finishReason and usageMetadata', () => {
  const response = {
    responseId: 'r1',
    modelVersion: 'gemini-2.5-flash',
    candidates: [
      {
        content: {
          role: 'model',
          parts: [{ text: 'plan', thought: true }, { text: 'hi' }, { functionCall: { name: 'f', args: { x: 1 } } }],
        },
        finishReason: 'STOP',
      },
    ],
    usageMetadata: {
      promptTokenCount: 10,
      cachedContentTokenCount: 4,
      candidatesTokenCount: 5,
      thoughtsTokenCount: 3,
      totalTokenCount: 18,
    },
  };
  const completion = translateResponse('gemini', 'completions', response) as unknown as OpenAI.ChatCompletion;
  const message = completion.choices[0]!.message;
  assert.equal(message.content, 'hi');
  const call = message.tool_calls![0]!;
  assert.equal(call.type === 'function' && call.function.arguments, '{"x":1}');
  assert.equal(completion.choices[0]!.finish_reason, 'tool_calls');
  assert.deepEqual(usageFromResponse('gemini', response), {
    inputTokens: 10,
    outputTokens: 8,
    totalTokens: 18,
    cachedInputTokens: 4,
    reasoningTokens: 3,
  });
  const finish = (reason: string) =>
    (
      translateResponse('gemini', 'messages', {
        candidates: [{ content: { parts: [{ text: 'a' }] }, finishReason: reason }],
      }) as { stop_reason: string }
    ).stop_reason;
  assert.equal(finish('MAX_TOKENS'), 'max_tokens');
  assert.equal(finish('SAFETY'), 'refusal');
  assert.equal(finish('STOP'), 'end_turn');
  const blocked = translateResponse('gemini', 'completions', {
    promptFeedback: { blockReason: 'SAFETY' },
  }) as unknown as OpenAI.ChatCompletion;
  assert.equal(blocked.choices[0]!.finish_reason, 'content_filter');
  assert.throws(() => translateResponse('gemini', 'completions', { choices: [] }), /not a Gemini response/);
});

const encoder = new TextEncoder();

function chunk(parts: unknown[], last?: { finishReason: string; usage: object }): string {
  const candidate: Record<string, unknown> = { content: { role: 'model', parts }, index: 0 };
  const body: Record<string, unknown> = { candidates: [candidate], modelVersion: 'gemini-2.5-flash', responseId: 'r1' };
  if (last) {
    candidate.finishReason = last.finishReason;
    body.usageMetadata = last.usage;
  }
  return `data: ${JSON.stringify(body)}\r\n\r\n`;
}

const STREAM = encoder.encode(
  chunk([{ text: 'thinking…', thought: true }]) +
    chunk([{ text: 'Hello ' }]) +
    chunk([{ text: 'wörld' }]) +
    chunk([{ functionCall: { id: 'c1', name: 'f', args: { q: 'é' } } }], {
      finishReason: 'STOP',
      usage: { promptTokenCount: 7, candidatesTokenCount: 4, totalTokenCount: 11 },
    }),
);

test('a streamGenerateContent stream is translated the same however it is split', () => {
  for (const to of ['completions', 'messages'] as const) {
    const whole = feed(createStreamTranslator('gemini', to, { includeUsage: true }), [STREAM]);
    const normal = (text: string) => text.replace(/"created":\d+/g, '"created":0');
    for (let offset = 0; offset <= STREAM.length; offset++) {
      const split = feed(createStreamTranslator('gemini', to, { includeUsage: true }), splitAt(STREAM, [offset]));
      if (normal(split) !== normal(whole)) assert.equal(normal(split), normal(whole), `${to} split at ${offset}`);
    }
    const random = prng(0x6e1);
    for (let round = 0; round < 100; round++) {
      const out = feed(createStreamTranslator('gemini', to, { includeUsage: true }), randomSplits(STREAM, random, 30));
      assert.equal(normal(out), normal(whole), `${to} round ${round}`);
    }
  }
  const translator = createStreamTranslator('gemini', 'completions', { includeUsage: true });
  const events = parseSse(feed(translator, [STREAM]));
  const deltas = events.filter((e) => e.data !== '[DONE]').map((e) => JSON.parse(e.data));
  const text = deltas.map((d) => d.choices[0]?.delta?.content ?? '').join('');
  assert.equal(text, 'Hello wörld');
  const call = deltas.find((d) => d.choices[0]?.delta?.tool_calls)?.choices[0].delta.tool_calls[0];
  assert.equal(call.function.name, 'f');
  assert.equal(call.function.arguments, '{"q":"é"}');
  assert.equal(deltas.find((d) => d.choices[0]?.finish_reason)?.choices[0].finish_reason, 'tool_calls');
  assert.equal(deltas.at(-1).usage.prompt_tokens, 7);
  assert.equal(events.at(-1)!.data, '[DONE]');
  assert.equal(translator.usage?.totalTokens, 11);
  assert.equal(translator.model, 'gemini-2.5-flash');
});

test('function calls Gemini sends without ids get call_<n> ids in a Chat Completions stream, as in a whole response', () => {
  const parts = [
    { functionCall: { name: 'get_weather', args: { city: 'Paris' } } },
    { functionCall: { name: 'get_weather', args: { city: 'Zürich' } } },
  ];
  const usage = { promptTokenCount: 7, candidatesTokenCount: 4, totalTokenCount: 11 };
  const stream = encoder.encode(chunk(parts, { finishReason: 'STOP', usage }));
  const streamed = parseSse(feed(createStreamTranslator('gemini', 'completions'), [stream]))
    .filter((event) => event.data !== '[DONE]')
    .flatMap((event) => JSON.parse(event.data).choices[0]?.delta?.tool_calls ?? [])
    .map((call: { id: string }) => call.id);
  assert.deepEqual(streamed, ['call_0', 'call_1']);
  const whole = translateResponse('gemini', 'completions', {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP' }],
    usageMetadata: usage,
  }) as unknown as OpenAI.ChatCompletion;
  assert.deepEqual(
    whole.choices[0]!.message.tool_calls!.map((call) => call.id),
    streamed,
  );
});

/** The client's stream ends with [DONE] or message_stop, or with exactly one error event last. */
function assertEndsWell(output: string, to: 'completions' | 'messages', context: string): string {
  const events = parseSse(output);
  assert.ok(events.length > 0, `${context}: no events`);
  const errors = events.filter((e) => e.event === 'error' || e.data.startsWith('{"error"'));
  assert.ok(errors.length <= 1, `${context}: more than one error`);
  const last = events.at(-1)!;
  const ended = to === 'completions' ? last.data === '[DONE]' : last.event === 'message_stop';
  assert.ok(ended || errors[0] === last, `${context}: ends with ${last.data}`);
  return last.data;
}

test('a truncated stream ends with one error, never a silent cut', () => {
  const random = prng(99);
  for (let round = 0; round < 200; round++) {
    const cut = STREAM.subarray(0, Math.floor(random() * STREAM.length));
    for (const to of ['completions', 'messages'] as const) {
      const out = feed(createStreamTranslator('gemini', to), randomSplits(cut, random, 8));
      const last = assertEndsWell(out, to, `cut at ${cut.length}`);
      if (last.includes('"error"')) assert.match(last, /ended before the response was complete|not valid JSON/);
    }
  }
});

test('garbage and corrupt bytes never throw and end well', () => {
  const random = prng(0xbad);
  for (let round = 0; round < 300; round++) {
    const corrupt = new Uint8Array(STREAM);
    for (let i = 0; i < 1 + Math.floor(random() * 4); i++) {
      corrupt[Math.floor(random() * corrupt.length)] = Math.floor(random() * 256);
    }
    assertEndsWell(
      feed(createStreamTranslator('gemini', 'messages'), randomSplits(corrupt, random, 10)),
      'messages',
      `round ${round}`,
    );
  }
  const noise = new Uint8Array(4096).map(() => Math.floor(random() * 256));
  assertEndsWell(feed(createStreamTranslator('gemini', 'completions'), [noise]), 'completions', 'noise');
  const notObject = feed(createStreamTranslator('gemini', 'completions'), [encoder.encode('data: [1,2]\n\n')]);
  assert.match(assertEndsWell(notObject, 'completions', 'array'), /not a JSON object/);
});

test("an error Gemini sends inside the stream reaches the client with its status's type", () => {
  const bytes = encoder.encode(
    `${chunk([{ text: 'Hi' }])}data: {"error":{"code":429,"message":"Resource has been exhausted","status":"RESOURCE_EXHAUSTED"}}\n\n`,
  );
  const out = feed(createStreamTranslator('gemini', 'messages'), [bytes]);
  const last = JSON.parse(assertEndsWell(out, 'messages', 'error chunk'));
  assert.deepEqual(last, {
    type: 'error',
    error: { type: 'rate_limit_error', message: 'Resource has been exhausted' },
  });
});
