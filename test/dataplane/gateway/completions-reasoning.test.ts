// Chat Completions clients of models that sign their thinking (docs/decisions/0025-provider-signatures.md):
// a tool round driven by the openai SDK through gw to Claude with extended thinking (the Anthropic
// stand-in) and to Claude on Bedrock (the Converse stand-in, proven here with the AWS SDK), both
// of which refuse the tool result's turn unless the assistant turn it answers starts with the
// signed thinking. The answer carries message.reasoning_content and reasoning_signature (streamed:
// reasoning_content deltas, then a reasoning_signature delta); the client sends the message back
// as it got it, and the provider receives the thinking block first, signature intact. A Messages
// client of the same Bedrock model is unaffected, and a Chat Completions provider gets the client's
// fields as written (the same format is forwarded, not translated).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
import OpenAI from 'openai';
import { type BedrockStandIn, standInClient, startBedrockStandIn } from '../../helpers/bedrock-stand-in.ts';
import { converseReasoningSignatureOf } from '../../helpers/bedrock-thinking.ts';
import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { authBackendYaml } from '../../helpers/objects.ts';
import { WEATHER_TOOL } from '../../helpers/weather-tool.ts';
import { thinkingSignatureOf } from '../../support/providers/anthropic-messages.ts';
import { startAnthropicMock } from '../../support/providers/anthropic-mock.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';

const CLAUDE_MODEL = 'claude-sonnet-4-5';
const BEDROCK_MODEL = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const AWS = { accessKeyId: 'AKIDTHINKING', secretAccessKey: 'thinking/secret+key' };
const PROMPT = 'call get_weather please';

/** The assistant message of a Chat Completion with gw's reasoning fields. */
type ReasoningMessage = OpenAI.Chat.ChatCompletionMessage & {
  reasoning_content?: string;
  reasoning_signature?: string;
};

/**
 * A streamed answer put together as a client of compatible servers does: reasoning_content
 * deltas concatenated, reasoning_signature taken whole, tool call deltas by index. Also returns
 * the order of the kinds of deltas.
 */
async function assembled(
  stream: AsyncIterable<OpenAI.Chat.ChatCompletionChunk>,
): Promise<{ message: ReasoningMessage; order: string[]; reasoningDeltas: number }> {
  let reasoning = '';
  let signature: string | undefined;
  let reasoningDeltas = 0;
  const order: string[] = [];
  const calls: OpenAI.Chat.ChatCompletionMessageFunctionToolCall[] = [];
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta as
      | (OpenAI.Chat.ChatCompletionChunk.Choice.Delta & { reasoning_content?: string; reasoning_signature?: string })
      | undefined;
    if (delta === undefined) continue;
    const note = (kind: string) => {
      if (order.at(-1) !== kind) order.push(kind);
    };
    if (delta.reasoning_content) {
      reasoning += delta.reasoning_content;
      reasoningDeltas++;
      note('reasoning');
    }
    if (delta.reasoning_signature) {
      signature = delta.reasoning_signature;
      note('signature');
    }
    for (const call of delta.tool_calls ?? []) {
      note('tool_call');
      const known = calls[call.index];
      if (known === undefined) {
        calls[call.index] = {
          id: call.id!,
          type: 'function',
          function: { name: call.function!.name!, arguments: call.function?.arguments ?? '' },
        };
      } else known.function.arguments += call.function?.arguments ?? '';
    }
  }
  const message = { role: 'assistant', content: null, refusal: null, tool_calls: calls } as ReasoningMessage;
  if (reasoning !== '') message.reasoning_content = reasoning;
  if (signature !== undefined) message.reasoning_signature = signature;
  return { message, order, reasoningDeltas };
}

/** The tool round's second request: the first answer's message as the client got it, and the result. */
function secondTurn(message: ReasoningMessage): OpenAI.Chat.ChatCompletionMessageParam[] {
  const call = message.tool_calls![0]!;
  return [
    { role: 'user', content: PROMPT },
    message as OpenAI.Chat.ChatCompletionAssistantMessageParam,
    { role: 'tool', tool_call_id: call.id, content: 'sunny' },
  ];
}

describe('Chat Completions clients of models that sign their thinking', () => {
  let anthropic: MockServer;
  let bedrock: BedrockStandIn;
  let openaiProvider: MockServer;
  let gw: TestGateway;
  let claude: OpenAI;
  let onBedrock: OpenAI;
  let messagesOnBedrock: Anthropic;
  let openai: OpenAI;

  before(async () => {
    anthropic = await startAnthropicMock({ apiKey: 'sk-gamma' });
    bedrock = await startBedrockStandIn((id) =>
      id === AWS.accessKeyId ? { secretAccessKey: AWS.secretAccessKey } : undefined,
    );
    openaiProvider = await startOpenAiMock({ apiKey: 'sk-alpha' });
    const port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('claude', anthropic.port, 'gamma: {}', 'sk-gamma', undefined),
        aiBackendYaml('openai', openaiProvider.port, 'alpha: {}', 'sk-alpha', undefined),
        `apiVersion: v1
kind: Secret
metadata: {name: aws}
stringData: {accessKey: ${AWS.accessKeyId}, secretKey: "${AWS.secretAccessKey}"}
---
`,
        authBackendYaml(
          'bedrock',
          `ai: {provider: {host: 127.0.0.1, port: ${bedrock.port}, zeta: {region: us-east-1}}}`,
          '{cloudone: {secretRef: {name: aws}}}',
        ),
        llmRouteYaml(['claude', 'bedrock', 'openai']),
      ].join(''),
    });
    const client = (path: string) =>
      new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/${path}/v1`, maxRetries: 0 });
    claude = client('claude');
    onBedrock = client('bedrock');
    openai = client('openai');
    messagesOnBedrock = new Anthropic({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/bedrock`, maxRetries: 0 });
  });

  after(async () => {
    await gw?.stop();
    await Promise.all([anthropic?.close(), bedrock?.close(), openaiProvider?.close()]);
  });

  describe('Claude with extended thinking (Messages)', () => {
    const THINKING = `thinking about: ${PROMPT}`;
    // Anthropic's switch, outside Chat Completions: gw reads it as extended thinking.
    const params = {
      model: CLAUDE_MODEL,
      tools: [WEATHER_TOOL],
      thinking: { type: 'enabled', budget_tokens: 1024 },
    } as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;

    /** The assistant turn of the last request the stand-in received. */
    function sentAssistantTurn(): unknown[] {
      const body = anthropic.requests.at(-1)!.body as { messages: { role: string; content: unknown[] }[] };
      return body.messages.find((message) => message.role === 'assistant')!.content;
    }

    it('the answer carries reasoning_content and reasoning_signature; sent back, the signed thinking block starts the turn', async () => {
      const first = await claude.chat.completions.create({ ...params, messages: [{ role: 'user', content: PROMPT }] });
      const message = first.choices[0]!.message as ReasoningMessage;
      assert.equal(message.reasoning_content, THINKING);
      assert.equal(message.reasoning_signature, thinkingSignatureOf(THINKING));
      assert.equal(message.tool_calls?.length, 1);
      const second = await claude.chat.completions.create({ ...params, messages: secondTurn(message) });
      assert.match(second.choices[0]!.message.content ?? '', /sunny/);
      const turn = sentAssistantTurn();
      assert.deepEqual(turn[0], { type: 'thinking', thinking: THINKING, signature: thinkingSignatureOf(THINKING) });
      assert.equal((turn[1] as { type: string }).type, 'tool_use');
    });

    it('streamed: reasoning_content deltas, then reasoning_signature, then the tool call; put together and sent back', async () => {
      const stream = await claude.chat.completions.create({
        ...params,
        messages: [{ role: 'user', content: PROMPT }],
        stream: true,
      } as unknown as OpenAI.Chat.ChatCompletionCreateParamsStreaming);
      const { message, order, reasoningDeltas } = await assembled(stream);
      assert.deepEqual(order, ['reasoning', 'signature', 'tool_call']);
      assert.ok(reasoningDeltas > 1, 'the thinking is streamed as it comes');
      assert.equal(message.reasoning_content, THINKING);
      assert.equal(message.reasoning_signature, thinkingSignatureOf(THINKING));
      const second = await claude.chat.completions.create({ ...params, messages: secondTurn(message) });
      assert.match(second.choices[0]!.message.content ?? '', /sunny/);
      assert.deepEqual(sentAssistantTurn()[0], {
        type: 'thinking',
        thinking: THINKING,
        signature: thinkingSignatureOf(THINKING),
      });
    });

    it('without the reasoning fields the tool turn is refused, as Anthropic refuses it', async () => {
      const first = await claude.chat.completions.create({ ...params, messages: [{ role: 'user', content: PROMPT }] });
      const {
        reasoning_content: _text,
        reasoning_signature: _signature,
        ...bare
      } = first.choices[0]!.message as ReasoningMessage;
      await assert.rejects(
        claude.chat.completions.create({ ...params, messages: secondTurn(bare as ReasoningMessage) }),
        (error: unknown) =>
          error instanceof OpenAI.BadRequestError && /must start with a thinking block/.test(String(error.message)),
      );
    });
  });

  describe('Claude on Bedrock (Converse)', () => {
    it('the stand-in, through the AWS SDK: signed reasoning first, whole and streamed', async () => {
      const sdk = standInClient(bedrock, 'us-east-1', AWS);
      const input = {
        modelId: BEDROCK_MODEL,
        messages: [{ role: 'user' as const, content: [{ text: 'hi' }] }],
        additionalModelRequestFields: { thinking: { type: 'enabled', budget_tokens: 1024 } },
      };
      const whole = await sdk.send(new ConverseCommand(input));
      const reasoning = whole.output?.message?.content?.[0]?.reasoningContent?.reasoningText;
      assert.deepEqual(reasoning, {
        text: 'thinking about: hi',
        signature: converseReasoningSignatureOf('thinking about: hi'),
      });
      const streamed = await sdk.send(new ConverseStreamCommand(input));
      let text = '';
      let signature: string | undefined;
      for await (const event of streamed.stream!) {
        const delta = event.contentBlockDelta?.delta?.reasoningContent;
        text += delta?.text ?? '';
        signature = delta?.signature ?? signature;
      }
      assert.equal(text, 'thinking about: hi');
      assert.equal(signature, converseReasoningSignatureOf(text));
      sdk.destroy();
    });

    const THINKING = `thinking about: ${PROMPT}`;
    // Sent to Bedrock as additionalModelRequestFields.thinking.
    const params = {
      model: BEDROCK_MODEL,
      tools: [WEATHER_TOOL],
      thinking: { type: 'enabled', budget_tokens: 1024 },
    } as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
    const streamed = { ...params, stream: true } as unknown as OpenAI.Chat.ChatCompletionCreateParamsStreaming;

    /** The assistant turn of the last Converse request the stand-in received. */
    function sentAssistantTurn(): Record<string, unknown>[] {
      const body = bedrock.calls.at(-1)!.body as { messages: { role: string; content: Record<string, unknown>[] }[] };
      return body.messages.find((message) => message.role === 'assistant')!.content;
    }

    const SIGNED_BLOCK = {
      reasoningContent: { reasoningText: { text: THINKING, signature: converseReasoningSignatureOf(THINKING) } },
    };

    it('whole and streamed: reasoning_content and reasoning_signature; sent back, reasoningContent starts the turn', async () => {
      for (const stream of [false, true]) {
        const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: PROMPT }];
        const message = stream
          ? (await assembled(await onBedrock.chat.completions.create({ ...streamed, messages }))).message
          : ((await onBedrock.chat.completions.create({ ...params, messages })).choices[0]!
              .message as ReasoningMessage);
        assert.equal(message.reasoning_content, THINKING, `stream ${stream}`);
        assert.equal(message.reasoning_signature, converseReasoningSignatureOf(THINKING));
        const second = await onBedrock.chat.completions.create({ ...params, messages: secondTurn(message) });
        assert.equal(second.choices[0]!.message.content, `Hello from ${BEDROCK_MODEL}`);
        const turn = sentAssistantTurn();
        assert.deepEqual(turn[0], SIGNED_BLOCK);
        assert.ok('toolUse' in turn[1]!);
        assert.deepEqual(bedrock.calls.at(-1)!.body.additionalModelRequestFields, {
          thinking: { type: 'enabled', budget_tokens: 1024 },
        });
      }
    });

    it('reasoning_effort, the OpenAI way to ask, thinks on Claude with the budget of that effort', async () => {
      const { thinking: _thinking, ...withoutSwitch } = params as unknown as Record<string, unknown>;
      const answer = await onBedrock.chat.completions.create({
        ...(withoutSwitch as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming),
        reasoning_effort: 'medium',
        messages: [{ role: 'user', content: PROMPT }],
      });
      assert.deepEqual(bedrock.calls.at(-1)!.body.additionalModelRequestFields, {
        thinking: { type: 'enabled', budget_tokens: 2048 },
      });
      const message = answer.choices[0]!.message as ReasoningMessage;
      assert.equal(message.reasoning_content, THINKING);
      assert.equal(message.reasoning_signature, converseReasoningSignatureOf(THINKING));
    });

    it('without them, or with reasoning_content alone, the tool turn is refused, as Bedrock refuses it', async () => {
      const first = await onBedrock.chat.completions.create({
        ...params,
        messages: [{ role: 'user', content: PROMPT }],
      });
      const { reasoning_signature: _signature, ...unsigned } = first.choices[0]!.message as ReasoningMessage;
      for (const message of [{ ...unsigned, reasoning_content: undefined }, unsigned]) {
        await assert.rejects(
          onBedrock.chat.completions.create({ ...params, messages: secondTurn(message as ReasoningMessage) }),
          (error: unknown) =>
            error instanceof OpenAI.BadRequestError && /must start with a thinking block/.test(String(error.message)),
        );
        // Unsigned reasoning is not sent (Bedrock refuses it too): the turn starts with the call.
        assert.ok('toolUse' in sentAssistantTurn()[0]!);
      }
    });

    it('a Messages client of the same model is unaffected: its thinking block goes back as it was', async () => {
      const thinking = { type: 'enabled' as const, budget_tokens: 1024 };
      const first = await messagesOnBedrock.messages.create({
        model: BEDROCK_MODEL,
        max_tokens: 2048,
        thinking,
        messages: [{ role: 'user', content: PROMPT }],
        tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      });
      assert.deepEqual(first.content[0], {
        type: 'thinking',
        thinking: THINKING,
        signature: converseReasoningSignatureOf(THINKING),
      });
      const use = first.content.find((block) => block.type === 'tool_use')!;
      const second = await messagesOnBedrock.messages.create({
        model: BEDROCK_MODEL,
        max_tokens: 2048,
        thinking,
        messages: [
          { role: 'user', content: PROMPT },
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'sunny' }] },
        ],
        tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      });
      assert.deepEqual(
        second.content.map((block) => block.type),
        ['thinking', 'text'],
      );
      assert.deepEqual(sentAssistantTurn()[0], SIGNED_BLOCK);
    });
  });

  it('a Chat Completions provider gets the fields as the client wrote them (the same format is forwarded)', async () => {
    const messages = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello', reasoning_content: 'thought', reasoning_signature: 'sig' },
      { role: 'user', content: 'again' },
    ] as OpenAI.Chat.ChatCompletionMessageParam[];
    await openai.chat.completions.create({ model: 'gpt-4o', messages });
    const sent = openaiProvider.requests.at(-1)!.body as { messages: unknown[] };
    assert.deepEqual(sent.messages, messages);
  });
});
