// The Gemini adapter's client side: a generateContent request read into the form and written as
// Chat Completions, Messages and Gemini again; responses of the other formats written as
// GenerateContentResponse; Google's error shape; usageMetadata written. (Streams: the golden
// cases to-gemini in stream-helpers.ts.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  errorBody,
  streamErrorEvent,
  translateErrorBody,
  translateRequest,
  translateResponse,
  usageFromResponse,
} from '../../../src/dataplane/ai/formats/index.ts';
import { geminiUsage, usageFromGemini } from '../../../src/dataplane/ai/formats/usage.ts';

// What gw reads from POST …/models/gemini-2.5-flash:streamGenerateContent: the path's model and
// stream in the body, then a conversation with a function call answered (no ids, as older
// clients send them), an image, and Gemini's OpenAPI-style parameters.
const GEMINI_REQUEST = {
  model: 'gemini-2.5-flash',
  stream: true,
  systemInstruction: { parts: [{ text: 'Be terse.' }] },
  contents: [
    {
      role: 'user',
      parts: [{ text: 'Weather here?' }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }],
    },
    { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
    { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: 'sunny' } } }] },
  ],
  tools: [
    {
      functionDeclarations: [
        {
          name: 'get_weather',
          description: 'The weather',
          parameters: {
            type: 'OBJECT',
            properties: { city: { type: 'STRING' } },
            required: ['city'],
            propertyOrdering: ['city'],
          },
        },
      ],
    },
  ],
  toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
  generationConfig: {
    maxOutputTokens: 100,
    temperature: 0.5,
    topP: 0.9,
    stopSequences: ['END'],
    seed: 3,
    responseMimeType: 'application/json',
    responseJsonSchema: { type: 'object' },
    thinkingConfig: { thinkingLevel: 'LOW' },
  },
};

const SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

test('a Gemini request becomes a Chat Completions request (ids made up for the calls and their results)', () => {
  const { body, warnings } = translateRequest('gemini', 'completions', GEMINI_REQUEST);
  assert.equal(warnings, undefined);
  assert.deepEqual(body, {
    model: 'gemini-2.5-flash',
    messages: [
      { role: 'system', content: 'Be terse.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather here?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_gemini_1_0',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_gemini_1_0', content: 'sunny' },
    ],
    max_completion_tokens: 100,
    stop: ['END'],
    temperature: 0.5,
    top_p: 0.9,
    seed: 3,
    stream: true,
    stream_options: { include_usage: true },
    tools: [{ type: 'function', function: { name: 'get_weather', description: 'The weather', parameters: SCHEMA } }],
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'response', schema: { type: 'object' }, strict: true },
    },
    reasoning_effort: 'low',
  });
});

test('a Gemini request becomes a Messages request', () => {
  const { body } = translateRequest('gemini', 'messages', GEMINI_REQUEST);
  assert.equal(body.system, 'Be terse.');
  assert.equal(body.max_tokens, 100);
  assert.deepEqual(body.messages, [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Weather here?' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
      ],
    },
    {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'call_gemini_1_0', name: 'get_weather', input: { city: 'Paris' } }],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_gemini_1_0', content: 'sunny' }] },
  ]);
  assert.deepEqual(body.tools, [{ name: 'get_weather', description: 'The weather', input_schema: SCHEMA }]);
  assert.deepEqual(body.tool_choice, { type: 'tool', name: 'get_weather' });
});

test('read and written again, a Gemini request keeps its meaning (ids added, parameters as JSON Schema)', () => {
  const { model: _model, stream: _stream, ...rest } = GEMINI_REQUEST;
  const { body } = translateRequest('gemini', 'gemini', rest);
  assert.deepEqual(body.contents, [
    { role: 'user', parts: [{ text: 'Weather here?' }, { inlineData: { mimeType: 'image/png', data: 'AAAA' } }] },
    {
      role: 'model',
      parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' }, id: 'call_gemini_1_0' } }],
    },
    {
      role: 'user',
      parts: [{ functionResponse: { id: 'call_gemini_1_0', name: 'get_weather', response: { output: 'sunny' } } }],
    },
  ]);
  assert.deepEqual(body.systemInstruction, { parts: [{ text: 'Be terse.' }] });
  assert.deepEqual(body.tools, [
    { functionDeclarations: [{ name: 'get_weather', description: 'The weather', parametersJsonSchema: SCHEMA }] },
  ]);
  assert.deepEqual(body.toolConfig, rest.toolConfig);
  assert.deepEqual(body.generationConfig, rest.generationConfig);
});

test('results answer calls by id when given, else the oldest unanswered call of that name', () => {
  const { body } = translateRequest('gemini', 'completions', {
    contents: [
      { role: 'user', parts: [{ text: 'two cities' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'w', args: { c: 'a' } } },
          { functionCall: { id: 'x9', name: 'w', args: { c: 'b' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { id: 'x9', name: 'w', response: { output: 'B' } } },
          { functionResponse: { name: 'w', response: { output: 'A' } } },
          { functionResponse: { name: 'w', response: { error: 'no such city' } } },
        ],
      },
    ],
  });
  const messages = body.messages as Record<string, unknown>[];
  assert.deepEqual(
    (messages[1]!.tool_calls as { id: string }[]).map((call) => call.id),
    ['call_gemini_1_0', 'x9'],
  );
  assert.deepEqual(messages.slice(2), [
    { role: 'tool', tool_call_id: 'x9', content: 'B' },
    { role: 'tool', tool_call_id: 'call_gemini_1_0', content: 'A' },
  ]);
});

test("what only Gemini has is reported, not sent; fields outside Gemini's schema are carried", () => {
  const { body, warnings } = translateRequest('gemini', 'completions', {
    contents: [{ parts: [{ text: 'hi' }, { executableCode: { code: 'print(1)' } }] }],
    tools: [{ googleSearch: {} }],
    safetySettings: [{ category: 'HARM_CATEGORY_HATE_SPEECH', threshold: 'BLOCK_NONE' }],
    generationConfig: { responseModalities: ['TEXT'], thinkingConfig: { thinkingBudget: 0 } },
    metadata_of_mine: 1,
  });
  assert.deepEqual(
    warnings?.map((warning) => warning.path),
    ['contents[0].parts[1]', 'tools[0].googleSearch', 'generationConfig.responseModalities', 'safetySettings'],
  );
  assert.equal(body.metadata_of_mine, 1);
  assert.equal(body.reasoning_effort, undefined, 'a thinking budget of 0 is thinking off');
});

test('a body Gemini itself rejects is refused', () => {
  assert.throws(() => translateRequest('gemini', 'completions', { contents: 'hi' }), /contents: must be an array/);
  assert.throws(
    () => translateRequest('gemini', 'completions', { contents: [{ role: 'system', parts: [] }] }),
    /contents\[0\]\.role: must be "user" or "model"/,
  );
  assert.throws(
    () =>
      translateRequest('gemini', 'completions', {
        contents: [{ parts: [{ text: 'x' }] }],
        toolConfig: { functionCallingConfig: { mode: 'SOMETIMES' } },
      }),
    /unknown mode "SOMETIMES"/,
  );
});

test('a Chat Completions response becomes a GenerateContentResponse', () => {
  const gemini = translateResponse('completions', 'gemini', {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    model: 'gpt-4o-mini',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'w', arguments: '{"c":"a"}' } }],
        },
        finish_reason: 'tool_calls',
      },
    ],
    usage: {
      prompt_tokens: 10,
      completion_tokens: 7,
      total_tokens: 17,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 2 },
    },
  });
  assert.deepEqual(gemini, {
    candidates: [
      {
        content: {
          role: 'model',
          parts: [{ text: 'Checking.' }, { functionCall: { name: 'w', args: { c: 'a' }, id: 'call_1' } }],
        },
        finishReason: 'STOP',
        index: 0,
      },
    ],
    usageMetadata: {
      promptTokenCount: 10,
      candidatesTokenCount: 5,
      totalTokenCount: 17,
      cachedContentTokenCount: 4,
      thoughtsTokenCount: 2,
    },
    modelVersion: 'gpt-4o-mini',
    responseId: 'chatcmpl-1',
  });
});

test('a Messages response becomes a GenerateContentResponse (thinking as a thought, max_tokens)', () => {
  const gemini = translateResponse('messages', 'gemini', {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-x',
    content: [
      { type: 'thinking', thinking: 'hmm', signature: 'sig' },
      { type: 'text', text: 'Hello' },
    ],
    stop_reason: 'max_tokens',
    usage: { input_tokens: 3, cache_read_input_tokens: 5, output_tokens: 4 },
  });
  assert.deepEqual(gemini.candidates, [
    {
      content: { role: 'model', parts: [{ text: 'hmm', thought: true, thoughtSignature: 'sig' }, { text: 'Hello' }] },
      finishReason: 'MAX_TOKENS',
      index: 0,
    },
  ]);
  assert.deepEqual(gemini.usageMetadata, {
    promptTokenCount: 8,
    candidatesTokenCount: 4,
    totalTokenCount: 12,
    cachedContentTokenCount: 5,
  });
});

test("usageMetadata written and read back is gw's usage unchanged", () => {
  const usage = { inputTokens: 20, outputTokens: 9, totalTokens: 29, cachedInputTokens: 6, reasoningTokens: 4 };
  assert.deepEqual(usageFromGemini(geminiUsage(usage)), usage);
  assert.deepEqual(usageFromResponse('gemini_count_tokens', { totalTokens: 12 }), {
    inputTokens: 12,
    outputTokens: 0,
    totalTokens: 12,
  });
});

test("gw's errors and other providers' errors reach a Gemini client in Google's shape", () => {
  assert.deepEqual(JSON.parse(errorBody('gemini', 429, 'slow down').body), {
    error: { code: 429, message: 'slow down', status: 'RESOURCE_EXHAUSTED' },
  });
  assert.deepEqual(JSON.parse(errorBody('gemini_count_tokens', 503, 'busy', 'overloaded').body), {
    error: { code: 503, message: 'busy', status: 'UNAVAILABLE' },
  });
  const anthropic = JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: 'bad key' } });
  assert.deepEqual(JSON.parse(translateErrorBody('messages', 'gemini', 401, anthropic).body), {
    error: { code: 401, message: 'bad key', status: 'UNAUTHENTICATED' },
  });
  // A Gemini provider's own error reaches a Gemini client byte for byte.
  const google = JSON.stringify({ error: { code: 400, message: 'bad', status: 'INVALID_ARGUMENT', details: [] } });
  assert.equal(translateErrorBody('gemini', 'gemini', 400, google).body, google);
  assert.equal(
    streamErrorEvent('gemini', 502, 'cut'),
    'data: {"error":{"code":502,"message":"cut","status":"INTERNAL"}}\n\n',
  );
});
