// The zeta family (Amazon Bedrock) with real traffic: a loopback Bedrock stand-in that checks
// every request's SigV4 signature (test/helpers/bedrock-stand-in.ts), proven first by the AWS
// SDK's own ConverseCommand and ConverseStreamCommand, then reached through gw by the OpenAI SDK
// (Chat Completions, whole and streamed, text and a tool call) and the Anthropic SDK (Messages,
// whole and streamed). One GwBackend signs with keys from a Secret, one has no auth and signs
// with the ambient (environment) credentials, gw's default for zeta (docs/decisions/0019-bedrock.md).
// The region comes from the provider (the signing region), the model id goes in the path as the
// AWS SDK writes it (':' as %3A), and the guardrail is sent as guardrailConfig; its intervention
// (stopReason guardrail_intervened) reaches each client format as that format's content-filter stop.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
import OpenAI from 'openai';
import { NO_AWS } from '../../helpers/aws-stand-ins.ts';
import {
  type BedrockStandIn,
  GUARDED_TOPIC,
  GUARDRAIL_BLOCKED_MESSAGE,
  standInClient,
  startBedrockStandIn,
} from '../../helpers/bedrock-stand-in.ts';
import { freePort, gatewayYaml, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { authBackendYaml, prefixRuleYaml } from '../../helpers/objects.ts';
import { WEATHER_TOOL } from '../../helpers/weather-tool.ts';

const KEYS = { accessKeyId: 'AKIDBEDROCK', secretAccessKey: 'bedrock/secret+key' };
const AMBIENT = { accessKeyId: 'AKIDAMBIENT', secretAccessKey: 'ambient/secret+key' };
const MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';

describe('zeta (Amazon Bedrock) through gw', () => {
  let bedrock: BedrockStandIn;
  let gw: TestGateway;
  let port: number;
  const savedEnv: Record<string, string | undefined> = {};

  before(async () => {
    bedrock = await startBedrockStandIn((id) =>
      id === KEYS.accessKeyId
        ? { secretAccessKey: KEYS.secretAccessKey }
        : id === AMBIENT.accessKeyId
          ? { secretAccessKey: AMBIENT.secretAccessKey }
          : undefined,
    );
    const env = { ...NO_AWS, AWS_ACCESS_KEY_ID: AMBIENT.accessKeyId, AWS_SECRET_ACCESS_KEY: AMBIENT.secretAccessKey };
    for (const [name, value] of Object.entries(env)) {
      savedEnv[name] = process.env[name];
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    port = await freePort();
    const provider = (zeta: string) => `ai: {provider: {host: 127.0.0.1, port: ${bedrock.port}, zeta: ${zeta}}}`;
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}apiVersion: v1
kind: Secret
metadata: {name: aws}
stringData: {accessKey: ${KEYS.accessKeyId}, secretKey: "${KEYS.secretAccessKey}"}
---
${authBackendYaml('bedrock', provider('{region: us-west-2, guardrail: {identifier: gr-1, version: "2"}}'), '{cloudone: {secretRef: {name: aws}}}')}apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: ambient}
spec:
  ${provider(`{region: eu-central-1, model: "${MODEL}"}`)}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: routes}
spec:
  parentRefs: [{name: ai}]
  rules:
${prefixRuleYaml('ambient', 'ambient')}${prefixRuleYaml('v1', 'bedrock')}`,
    });
  });

  after(async () => {
    await gw?.stop();
    await bedrock?.close();
    for (const [name, value] of Object.entries(savedEnv)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it('the stand-in speaks Converse and ConverseStream as the AWS SDK expects them', async () => {
    const client = standInClient(bedrock, 'us-west-2', KEYS);
    const messages = [{ role: 'user' as const, content: [{ text: 'Hi' }] }];
    const whole = await client.send(new ConverseCommand({ modelId: MODEL, messages }));
    assert.deepEqual(whole.output?.message?.content, [{ text: `Hello from ${MODEL}` }]);
    assert.equal(whole.stopReason, 'end_turn');
    assert.equal(whole.usage?.cacheReadInputTokens, 3);
    const streamed = await client.send(new ConverseStreamCommand({ modelId: MODEL, messages }));
    let text = '';
    let stopReason: string | undefined;
    let outputTokens: number | undefined;
    for await (const event of streamed.stream!) {
      text += event.contentBlockDelta?.delta?.text ?? '';
      stopReason ??= event.messageStop?.stopReason;
      outputTokens ??= event.metadata?.usage?.outputTokens;
    }
    assert.equal(text, `Hello from ${MODEL}`);
    assert.equal(stopReason, 'end_turn');
    assert.equal(outputTokens, 7);
    // The SDK writes ':' of the model id as %3A; the stand-in verified its signature.
    const sdkCalls = bedrock.calls.splice(0);
    assert.deepEqual(
      sdkCalls.map((call) => call.url),
      [`/model/${MODEL.replace(':', '%3A')}/converse`, `/model/${MODEL.replace(':', '%3A')}/converse-stream`],
    );
    assert.deepEqual(bedrock.refused, []);
  });

  it('answers Chat Completions from Converse, signed for bedrock in the provider region, with the guardrail', async () => {
    const openai = new OpenAI({ apiKey: 'unused', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    const completion = await openai.chat.completions.create({
      model: MODEL,
      max_tokens: 100,
      temperature: 0.2,
      stop: ['END'],
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
    });
    assert.equal(completion.choices[0]?.message.content, `Hello from ${MODEL}`);
    assert.equal(completion.choices[0]?.finish_reason, 'stop');
    assert.equal(completion.model, MODEL);
    assert.equal(completion.usage?.prompt_tokens, 14);
    assert.equal(completion.usage?.completion_tokens, 7);
    assert.equal(completion.usage?.prompt_tokens_details?.cached_tokens, 3);
    const call = bedrock.calls.at(-1)!;
    assert.equal(call.url, `/model/${MODEL.replace(':', '%3A')}/converse`);
    assert.equal(call.verified.accessKeyId, KEYS.accessKeyId);
    assert.equal(call.verified.region, 'us-west-2');
    assert.equal(call.verified.service, 'bedrock');
    assert.deepEqual(call.body, {
      system: [{ text: 'Be brief.' }],
      messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
      inferenceConfig: { maxTokens: 100, temperature: 0.2, stopSequences: ['END'] },
      guardrailConfig: { guardrailIdentifier: 'gr-1', guardrailVersion: '2' },
    });
  });

  it('streams Chat Completions from ConverseStream, with usage when asked', async () => {
    const openai = new OpenAI({ apiKey: 'unused', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    const stream = await openai.chat.completions.create({
      model: MODEL,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'Hi' }],
    });
    let text = '';
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish ??= chunk.choices[0]?.finish_reason;
      usage ??= chunk.usage ?? undefined;
    }
    assert.equal(text, `Hello from ${MODEL}`);
    assert.equal(finish, 'stop');
    assert.equal(usage?.completion_tokens, 7);
    assert.equal(bedrock.calls.at(-1)?.url, `/model/${MODEL.replace(':', '%3A')}/converse-stream`);
  });

  it('carries a tool call both ways, whole and streamed, and the tool result back', async () => {
    const openai = new OpenAI({ apiKey: 'unused', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    const ask: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const whole = await openai.chat.completions.create({
      model: MODEL,
      tools: [WEATHER_TOOL],
      tool_choice: 'required',
      messages: ask,
    });
    const call = whole.choices[0]?.message.tool_calls?.[0];
    assert.equal(whole.choices[0]?.finish_reason, 'tool_calls');
    assert.equal(call?.type === 'function' ? call.function.name : undefined, 'get_weather');
    assert.deepEqual(JSON.parse(call?.type === 'function' ? call.function.arguments : '{}'), { city: 'Paris' });
    assert.deepEqual(bedrock.calls.at(-1)?.body.toolConfig, {
      tools: [
        {
          toolSpec: {
            name: 'get_weather',
            description: 'The weather in a city',
            inputSchema: { json: WEATHER_TOOL.function.parameters },
          },
        },
      ],
      toolChoice: { any: {} },
    });

    const stream = await openai.chat.completions.create({
      model: MODEL,
      tools: [WEATHER_TOOL],
      messages: ask,
      stream: true,
    });
    let name = '';
    let args = '';
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta.tool_calls?.[0];
      name += delta?.function?.name ?? '';
      args += delta?.function?.arguments ?? '';
      finish ??= chunk.choices[0]?.finish_reason;
    }
    assert.equal(name, 'get_weather');
    assert.deepEqual(JSON.parse(args), { city: 'Paris' });
    assert.equal(finish, 'tool_calls');

    const answer = await openai.chat.completions.create({
      model: MODEL,
      tools: [WEATHER_TOOL],
      messages: [...ask, whole.choices[0]!.message, { role: 'tool', tool_call_id: call!.id, content: 'Sunny, 21 °C' }],
    });
    assert.equal(answer.choices[0]?.message.content, `Hello from ${MODEL}`);
    assert.deepEqual((bedrock.calls.at(-1)!.body.messages as unknown[]).slice(1), [
      {
        role: 'assistant',
        content: [{ toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } } }],
      },
      { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_1', content: [{ text: 'Sunny, 21 °C' }] } }] },
    ]);
  });

  it('answers Messages (the Anthropic SDK), whole and streamed', async () => {
    const anthropic = new Anthropic({ apiKey: 'unused', baseURL: `http://127.0.0.1:${port}`, maxRetries: 0 });
    const message = await anthropic.messages.create({
      model: MODEL,
      max_tokens: 64,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    assert.deepEqual(
      message.content.map((block) => (block.type === 'text' ? block.text : block.type)),
      [`Hello from ${MODEL}`],
    );
    assert.equal(message.stop_reason, 'end_turn');
    assert.equal(message.usage.input_tokens, 11);
    assert.equal(message.usage.cache_read_input_tokens, 3);
    const stream = anthropic.messages.stream({
      model: MODEL,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    const final = await stream.finalMessage();
    assert.deepEqual(
      final.content.map((block) => (block.type === 'text' ? block.text : block.type)),
      [`Hello from ${MODEL}`],
    );
    assert.equal(final.usage.output_tokens, 7);
  });

  it("the guardrail's intervention (stopReason guardrail_intervened) reaches each client format as its content-filter stop", async () => {
    const ask = `any ${GUARDED_TOPIC}?`;
    // The AWS SDK reads the stand-in's intervention as Bedrock's.
    const sdk = await standInClient(bedrock, 'us-west-2', KEYS).send(
      new ConverseCommand({
        modelId: MODEL,
        messages: [{ role: 'user', content: [{ text: ask }] }],
        guardrailConfig: { guardrailIdentifier: 'gr-1', guardrailVersion: '2' },
      }),
    );
    assert.equal(sdk.stopReason, 'guardrail_intervened');
    const openai = new OpenAI({ apiKey: 'unused', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    const whole = await openai.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: ask }] });
    assert.equal(whole.choices[0]?.finish_reason, 'content_filter');
    assert.equal(whole.choices[0]?.message.content, GUARDRAIL_BLOCKED_MESSAGE);
    const stream = await openai.chat.completions.create({
      model: MODEL,
      stream: true,
      messages: [{ role: 'user', content: ask }],
    });
    let text = '';
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish ??= chunk.choices[0]?.finish_reason;
    }
    assert.equal(text, GUARDRAIL_BLOCKED_MESSAGE);
    assert.equal(finish, 'content_filter');
    assert.equal(bedrock.calls.at(-1)?.url, `/model/${MODEL.replace(':', '%3A')}/converse-stream`);
    assert.deepEqual(bedrock.calls.at(-1)?.body.guardrailConfig, {
      guardrailIdentifier: 'gr-1',
      guardrailVersion: '2',
    });

    const anthropic = new Anthropic({ apiKey: 'unused', baseURL: `http://127.0.0.1:${port}`, maxRetries: 0 });
    const message = await anthropic.messages.create({
      model: MODEL,
      max_tokens: 64,
      messages: [{ role: 'user', content: ask }],
    });
    assert.equal(message.stop_reason, 'refusal');
    const streamed = await anthropic.messages
      .stream({ model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: ask }] })
      .finalMessage();
    assert.equal(streamed.stop_reason, 'refusal');
    assert.deepEqual(streamed.content, [{ type: 'text', text: GUARDRAIL_BLOCKED_MESSAGE }]);

    const response = await openai.responses.create({ model: MODEL, input: ask });
    assert.equal(response.status, 'incomplete');
    assert.equal(response.incomplete_details?.reason, 'content_filter');
    assert.equal(response.output_text, GUARDRAIL_BLOCKED_MESSAGE);
  });

  it('signs with the ambient credentials when the backend sets no auth, in its own region, with its model', async () => {
    const openai = new OpenAI({ apiKey: 'unused', baseURL: `http://127.0.0.1:${port}/ambient/v1`, maxRetries: 0 });
    const completion = await openai.chat.completions.create({
      model: 'any',
      messages: [{ role: 'user', content: 'Hi' }],
    });
    assert.equal(completion.choices[0]?.message.content, `Hello from ${MODEL}`);
    const call = bedrock.calls.at(-1)!;
    assert.equal(call.modelId, MODEL);
    assert.equal(call.verified.accessKeyId, AMBIENT.accessKeyId);
    assert.equal(call.verified.region, 'eu-central-1');
    assert.equal(call.body.guardrailConfig, undefined);
    assert.deepEqual(bedrock.refused, []);
  });
});
