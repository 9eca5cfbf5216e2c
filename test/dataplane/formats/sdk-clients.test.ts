// Proof against gw's real clients: translated streams, bodies and errors are served from a local
// server and read with the official SDKs (openai, @anthropic-ai/sdk), which must accept them and
// assemble the right final message, tool call arguments included.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import {
  type ChatFormat,
  createStreamTranslator,
  errorBody,
  translateErrorBody,
  translateResponse,
} from '../../../src/dataplane/ai/formats/index.ts';
import { fixture, prng, randomSplits } from './stream-helpers.ts';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

/** Serves `handler` on 127.0.0.1 for the duration of `run`, which gets the base URL. */
async function serving(handler: Handler, run: (baseURL: string) => Promise<void>): Promise<void> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => handler(request, response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await run(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

/** Replays a recorded provider stream through a translator, in uneven pieces, as the proxy would. */
function translatedStream(name: string, from: ChatFormat, to: ChatFormat, includeUsage = false, cut?: number): Handler {
  return (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const translator = createStreamTranslator(from, to, { includeUsage });
    const bytes = fixture(name);
    for (const piece of randomSplits(bytes.subarray(0, cut ?? bytes.length), prng(9), 12)) {
      const out = translator.write(piece);
      if (out) response.write(out);
    }
    response.end(translator.end());
  };
}

function json(status: number, body: string): Handler {
  return (_request, response) => {
    response.writeHead(status, { 'content-type': 'application/json' });
    response.end(body);
  };
}

const openai = (baseURL: string) => new OpenAI({ baseURL: `${baseURL}/v1`, apiKey: 'test', maxRetries: 0 });
const anthropic = (baseURL: string) => new Anthropic({ baseURL, apiKey: 'test', maxRetries: 0 });
const chatParams = { model: 'claude-sonnet-4-5', messages: [{ role: 'user' as const, content: 'Weather?' }] };
const messageParams = { model: 'gpt-4o', max_tokens: 256, messages: [{ role: 'user' as const, content: 'Weather?' }] };

test('OpenAI SDK assembles a translated Messages stream: text, three tool calls, finish reason, usage', async () => {
  await serving(translatedStream('messages-tools.sse', 'messages', 'completions', true), async (baseURL) => {
    const stream = openai(baseURL).chat.completions.stream({ ...chatParams, stream_options: { include_usage: true } });
    const completion = await stream.finalChatCompletion();
    const choice = completion.choices[0]!;
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.message.content, "I'll check both cities.");
    assert.deepEqual(
      choice.message.tool_calls?.map((call) => {
        assert.equal(call.type, 'function');
        return call.type === 'function' ? [call.id, call.function.name, JSON.parse(call.function.arguments)] : [];
      }),
      [
        ['toolu_01T1x1fJ34qAmk2tNTrN7Up6', 'get_weather', { location: 'San Francisco, CA', unit: 'celsius' }],
        ['toolu_01WRrBBw8nTGY8hC7LQbLVr4', 'get_weather', { location: 'Zürich' }],
        ['toolu_01AbCdEfGhIjKlMnOpQrStUv', 'get_time', {}],
      ],
    );
    assert.equal(completion.usage?.prompt_tokens, 4672);
    assert.equal(completion.usage?.completion_tokens, 89);
    assert.equal(completion.usage?.prompt_tokens_details?.cached_tokens, 3000);
  });
});

test('OpenAI SDK iterates a translated Messages text stream chunk by chunk', async () => {
  await serving(translatedStream('messages-text.sse', 'messages', 'completions'), async (baseURL) => {
    const stream = await openai(baseURL).chat.completions.create({ ...chatParams, stream: true });
    let text = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      assert.equal(chunk.usage, undefined, 'no usage unless the client asked');
    }
    assert.equal(text, 'Bonjour, ça va ? 🙂 日本語も OK.');
    assert.equal(finish, 'stop');
  });
});

test('Anthropic SDK assembles a translated Chat Completions stream: text, tool_use inputs, stop reason, usage', async () => {
  await serving(translatedStream('completions-tools.sse', 'completions', 'messages'), async (baseURL) => {
    const stream = anthropic(baseURL).messages.stream(messageParams);
    let streamedText = '';
    stream.on('text', (delta) => {
      streamedText += delta;
    });
    const message = await stream.finalMessage();
    assert.equal(streamedText, 'Checking both.');
    assert.equal(message.stop_reason, 'tool_use');
    assert.deepEqual(
      message.content.map((block) => (block.type === 'tool_use' ? [block.id, block.name, block.input] : [block.type])),
      [
        ['text'],
        ['call_DdmO9pD3xa9XTPNJ32zg2hcA', 'get_weather', { location: 'Paris, France' }],
        ['call_ABC9pD3xa9XTPNJ32zg2hcB', 'get_weather', { location: 'Zürich' }],
        ['call_XYZ9pD3xa9XTPNJ32zg2hcC', 'get_time', {}],
      ],
    );
    assert.equal(message.usage.input_tokens, 4310 - 3072);
    assert.equal(message.usage.cache_read_input_tokens, 3072);
    assert.equal(message.usage.output_tokens, 57);
  });
});

test('Anthropic SDK reads a translated stream without usage, stopped at max_tokens', async () => {
  await serving(translatedStream('completions-no-usage.sse', 'completions', 'messages'), async (baseURL) => {
    const message = await anthropic(baseURL).messages.stream(messageParams).finalMessage();
    assert.deepEqual(
      message.content.map((block) => (block.type === 'text' ? block.text : block.type)),
      ['Hi there'],
    );
    assert.equal(message.stop_reason, 'max_tokens');
  });
});

test('both SDKs parse translated non-streaming responses', async () => {
  const anthropicMessage = {
    id: 'msg_01',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { location: 'Paris' } },
    ],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 5 },
  };
  const asCompletion = JSON.stringify(translateResponse('messages', 'completions', anthropicMessage));
  await serving(json(200, asCompletion), async (baseURL) => {
    const completion = await openai(baseURL).chat.completions.create(chatParams);
    const call = completion.choices[0]!.message.tool_calls?.[0];
    assert.equal(call?.type === 'function' && call.function.arguments, '{"location":"Paris"}');
    assert.equal(completion.choices[0]!.finish_reason, 'tool_calls');
  });
  const openaiCompletion = JSON.parse(asCompletion);
  const asMessage = JSON.stringify(translateResponse('completions', 'messages', openaiCompletion));
  await serving(json(200, asMessage), async (baseURL) => {
    const message = await anthropic(baseURL).messages.create(messageParams);
    assert.deepEqual(message.content[1], {
      type: 'tool_use',
      id: 'toolu_1',
      name: 'get_weather',
      input: { location: 'Paris' },
    });
    assert.equal(message.stop_reason, 'tool_use');
  });
});

test('error bodies are read by each SDK as its own error classes', async () => {
  await serving(json(429, errorBody('completions', 429, 'Slow down').body), async (baseURL) => {
    await assert.rejects(openai(baseURL).chat.completions.create(chatParams), (error: unknown) => {
      assert.ok(error instanceof OpenAI.RateLimitError);
      assert.equal(error.type, 'requests');
      assert.equal(error.code, 'rate_limit_exceeded');
      assert.match(error.message, /Slow down/);
      return true;
    });
  });
  const providerError = JSON.stringify({
    error: { message: 'Model overloaded', type: 'server_error', param: null, code: null },
  });
  await serving(json(529, translateErrorBody('completions', 'messages', 529, providerError).body), async (baseURL) => {
    await assert.rejects(anthropic(baseURL).messages.create(messageParams), (error: unknown) => {
      assert.ok(error instanceof Anthropic.APIError);
      assert.equal(error.status, 529);
      assert.equal(error.type, 'overloaded_error');
      assert.match(error.message, /Model overloaded/);
      return true;
    });
  });
});

test('errors inside translated streams reach each SDK as API errors with the provider message', async () => {
  await serving(translatedStream('messages-error.sse', 'messages', 'completions'), async (baseURL) => {
    const stream = openai(baseURL).chat.completions.stream(chatParams);
    await assert.rejects(stream.finalChatCompletion(), (error: unknown) => {
      assert.ok(error instanceof OpenAI.APIError);
      assert.match(error.message, /Overloaded/);
      return true;
    });
  });
  await serving(translatedStream('completions-error.sse', 'completions', 'messages'), async (baseURL) => {
    await assert.rejects(anthropic(baseURL).messages.stream(messageParams).finalMessage(), (error: unknown) => {
      assert.ok(error instanceof Anthropic.APIError);
      assert.match(error.message, /server had an error/);
      return true;
    });
  });
});

test('a provider stream cut short reaches the SDK as an error, not as a short answer', async () => {
  const bytes = fixture('messages-tools.sse');
  await serving(
    translatedStream('messages-tools.sse', 'messages', 'completions', false, bytes.length / 2),
    async (baseURL) => {
      await assert.rejects(openai(baseURL).chat.completions.stream(chatParams).finalChatCompletion(), /ended before/);
    },
  );
  await serving(translatedStream('completions-tools.sse', 'completions', 'messages', false, 900), async (baseURL) => {
    await assert.rejects(anthropic(baseURL).messages.stream(messageParams).finalMessage(), /ended before/);
  });
});
