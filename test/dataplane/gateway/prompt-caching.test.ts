// BackendAI.promptCaching with real traffic: the OpenAI and Anthropic SDKs through gw to the
// Anthropic mock (gamma: cache_control blocks) and to the Bedrock stand-in (zeta, SigV4 checked:
// cachePoint blocks), asserting the bodies the providers received — the system prompt, the
// second-to-last message and the tools marked, a client's own marker kept, a short prompt and a
// model without caching left alone — and the cached-token usage in the access log and the answer.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { type BedrockStandIn, startBedrockStandIn } from '../../helpers/bedrock-stand-in.ts';
import { WEATHER_SCHEMA } from '../../helpers/families-behind-gw.ts';
import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  lastAccessLogLine,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { authBackendYaml } from '../../helpers/objects.ts';
import { startAnthropicMock } from '../../support/providers/anthropic-mock.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';

const ANTHROPIC_KEY = 'sk-ant-caching';
const AWS = { accessKeyId: 'AKIDCACHING', secretAccessKey: 'caching/secret+key' };
const CLAUDE = 'claude-caching-test';
const CLAUDE_ON_BEDROCK = 'anthropic.claude-3-7-sonnet-20250219-v1:0';
const LLAMA_ON_BEDROCK = 'meta.llama3-70b-instruct-v1:0';
/** Every backend caches from 100 estimated tokens (400 characters) on, tools included. */
const CACHING = 'promptCaching: {cacheTools: true, minTokens: 100}';
/** A system prompt long enough (about 150 estimated tokens) for the markers. */
const SYSTEM = 'You answer questions about the weather, briefly and politely. '.repeat(10);
const EPHEMERAL = { type: 'ephemeral' };
const CACHE_POINT = { cachePoint: { type: 'default' } };
const WEATHER_TOOL = { type: 'function' as const, function: { name: 'get_weather', parameters: WEATHER_SCHEMA } };
/** A conversation of three messages after the system prompt: the second-to-last is the assistant's. */
const CHAT: OpenAI.Chat.ChatCompletionMessageParam[] = [
  { role: 'system', content: SYSTEM },
  { role: 'user', content: 'What is the weather in Paris?' },
  { role: 'assistant', content: 'Sunny.' },
  { role: 'user', content: 'And in Rome?' },
];

/** The parts of a Converse body the tests read. */
interface ConverseBody {
  system?: unknown[];
  messages: { role: string; content: unknown[] }[];
  toolConfig?: { tools: unknown[] };
}

/** Anthropic's answer with cache usage: `written` tokens written to the cache, `read` read from it. */
function cachedAnswer(written: number, read: number): object {
  return {
    id: 'msg_cached',
    type: 'message',
    role: 'assistant',
    model: CLAUDE,
    content: [{ type: 'text', text: 'Warm.' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 20, output_tokens: 2, cache_creation_input_tokens: written, cache_read_input_tokens: read },
  };
}

describe('promptCaching through gw', () => {
  let anthropicMock: MockServer;
  let bedrock: BedrockStandIn;
  let gw: TestGateway;
  let base: string;

  before(async () => {
    anthropicMock = await startAnthropicMock({ apiKey: ANTHROPIC_KEY });
    bedrock = await startBedrockStandIn((id) =>
      id === AWS.accessKeyId ? { secretAccessKey: AWS.secretAccessKey } : undefined,
    );
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const bedrockBackend = (name: string) =>
      authBackendYaml(
        name,
        `ai: {provider: {host: 127.0.0.1, port: ${bedrock.port}, zeta: {region: us-east-1}}}`,
        `{cloudone: {secretRef: {name: aws}}}
    ai: {${CACHING}}`,
      );
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('claude', anthropicMock.port, 'gamma: {}', ANTHROPIC_KEY, '{}', CACHING),
        `apiVersion: v1
kind: Secret
metadata: {name: aws}
stringData: {accessKey: ${AWS.accessKeyId}, secretKey: "${AWS.secretAccessKey}"}
---
`,
        bedrockBackend('bedrock'),
        llmRouteYaml(['claude', 'bedrock']),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await anthropicMock?.close();
    await bedrock?.close();
  });

  const openai = (prefix: string) => new OpenAI({ apiKey: 'client', baseURL: `${base}/${prefix}/v1`, maxRetries: 0 });
  const anthropic = (prefix: string) =>
    new Anthropic({ apiKey: 'client', baseURL: `${base}/${prefix}`, maxRetries: 0 });
  const lastAnthropicBody = () => anthropicMock.requests.at(-1)?.body as Record<string, unknown>;

  it('OpenAI SDK to Anthropic: system, second-to-last message and tools marked; cache usage logged and answered', async () => {
    anthropicMock.script('/v1/messages', { reply: { kind: 'body', body: cachedAnswer(900, 0) } });
    const first = await openai('claude').chat.completions.create({
      model: CLAUDE,
      messages: CHAT,
      tools: [WEATHER_TOOL],
    });
    const sent = lastAnthropicBody();
    assert.deepEqual(sent.system, [{ type: 'text', text: SYSTEM, cache_control: EPHEMERAL }]);
    const messages = sent.messages as { role: string; content: unknown }[];
    assert.deepEqual(messages[1], {
      role: 'assistant',
      content: [{ type: 'text', text: 'Sunny.', cache_control: EPHEMERAL }],
    });
    assert.ok(!JSON.stringify(messages[2]).includes('cache_control'), 'the current turn is not marked');
    const tools = sent.tools as Record<string, unknown>[];
    assert.equal(tools.at(-1)?.name, 'get_weather');
    assert.deepEqual(tools.at(-1)?.cache_control, EPHEMERAL);

    // Anthropic counts cache writes apart from input_tokens; gw's input counts them all.
    assert.equal(first.usage?.prompt_tokens, 920);
    let line = await lastAccessLogLine(gw, '/claude/v1/chat/completions');
    assert.equal(line['gen_ai.usage.input_tokens'], 920);
    assert.equal(line['gen_ai.usage.cache_creation.input_tokens'], 900);
    assert.equal(line['gen_ai.usage.cache_read.input_tokens'], 0);

    anthropicMock.script('/v1/messages', { reply: { kind: 'body', body: cachedAnswer(0, 900) } });
    const second = await openai('claude').chat.completions.create({ model: CLAUDE, messages: CHAT });
    assert.equal(second.usage?.prompt_tokens_details?.cached_tokens, 900);
    line = await lastAccessLogLine(gw, '/claude/v1/chat/completions');
    assert.equal(line['gen_ai.usage.cache_read.input_tokens'], 900);
  });

  it("Anthropic SDK to Anthropic: the client's own marker (with its ttl) is kept, not replaced or doubled", async () => {
    const own = { type: 'ephemeral' as const, ttl: '1h' as const };
    await anthropic('claude').messages.create({
      model: CLAUDE,
      max_tokens: 50,
      system: [{ type: 'text', text: SYSTEM, cache_control: own }],
      messages: [
        { role: 'user', content: 'What is the weather in Paris?' },
        { role: 'assistant', content: 'Sunny.' },
        { role: 'user', content: 'And in Rome?' },
      ],
    });
    const sent = lastAnthropicBody();
    assert.deepEqual(sent.system, [{ type: 'text', text: SYSTEM, cache_control: own }], 'not replaced, not doubled');
    const messages = sent.messages as { content: unknown }[];
    assert.deepEqual(messages[1]?.content, [{ type: 'text', text: 'Sunny.', cache_control: EPHEMERAL }]);
    assert.equal(messages[2]?.content, 'And in Rome?');
  });

  it('a prompt estimated below minTokens is sent without markers', async () => {
    await anthropic('claude').messages.create({
      model: CLAUDE,
      max_tokens: 50,
      system: 'Be brief.',
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello.' },
        { role: 'user', content: 'Weather?' },
      ],
    });
    assert.ok(!JSON.stringify(lastAnthropicBody()).includes('cache_control'));
  });

  it('OpenAI SDK to Bedrock (Claude): cache points after the system prompt, the message and the tools; cache reads logged', async () => {
    const answer = await openai('bedrock').chat.completions.create({
      model: CLAUDE_ON_BEDROCK,
      messages: CHAT,
      tools: [WEATHER_TOOL],
    });
    const call = bedrock.calls.at(-1);
    assert.ok(call?.verified, 'the request was signed');
    const body = call.body as unknown as ConverseBody;
    assert.deepEqual(body.system, [{ text: SYSTEM }, CACHE_POINT]);
    assert.deepEqual(body.messages[1], { role: 'assistant', content: [{ text: 'Sunny.' }, CACHE_POINT] });
    assert.ok(!JSON.stringify(body.messages[2]).includes('cachePoint'));
    assert.deepEqual(body.toolConfig?.tools.at(-1), CACHE_POINT);
    assert.equal(body.toolConfig?.tools.length, 2);
    // The stand-in reports 3 tokens read from the cache.
    assert.equal(answer.usage?.prompt_tokens_details?.cached_tokens, 3);
    const line = await lastAccessLogLine(gw, '/bedrock/v1/chat/completions');
    assert.equal(line['gen_ai.usage.cache_read.input_tokens'], 3);
  });

  it('Anthropic SDK to Bedrock, streamed: the same cache points; cache reads logged from the stream', async () => {
    const stream = await anthropic('bedrock').messages.create({
      model: CLAUDE_ON_BEDROCK,
      max_tokens: 50,
      system: SYSTEM,
      messages: [
        { role: 'user', content: 'What is the weather in Paris?' },
        { role: 'assistant', content: 'Sunny.' },
        { role: 'user', content: 'And in Rome?' },
      ],
      stream: true,
    });
    for await (const _event of stream) {
      // Read to the end: the usage comes in Bedrock's last (metadata) event.
    }
    const body = bedrock.calls.at(-1)?.body as unknown as ConverseBody;
    assert.deepEqual(body.system, [{ text: SYSTEM }, CACHE_POINT]);
    assert.deepEqual(body.messages[1]?.content, [{ text: 'Sunny.' }, CACHE_POINT]);
    assert.equal(body.toolConfig, undefined, 'no tools: no tool cache point');
    const line = await lastAccessLogLine(gw, '/bedrock/v1/messages');
    assert.equal(line['gen_ai.usage.cache_read.input_tokens'], 3);
  });

  it('a Bedrock model without prompt caching (Llama) gets no cache points', async () => {
    await openai('bedrock').chat.completions.create({ model: LLAMA_ON_BEDROCK, messages: CHAT, tools: [WEATHER_TOOL] });
    assert.equal(bedrock.calls.at(-1)?.modelId, LLAMA_ON_BEDROCK);
    assert.ok(!JSON.stringify(bedrock.calls.at(-1)?.body).includes('cachePoint'));
  });
});
