// Bedrock's own clients through gw: a platform team puts gw in front of Amazon Bedrock for the
// clients that already speak Converse. A zeta GwBackend whose routes send /converse and
// /converse-stream as Passthrough forwards the client's request as it is to Bedrock's path, signed
// by gw with its own AWS credentials (cloudone): the client's Authorization, X-Amz-Date,
// X-Amz-Security-Token and X-Amz-Content-SHA256 are replaced, so the client's keys — which Bedrock
// does not know here — never reach it. The event stream comes back as Bedrock framed it. Driven by
// the AWS SDK (ConverseCommand, ConverseStreamCommand) and @ai-sdk/amazon-bedrock pointed at gw.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAmazonBedrock } from '@ai-sdk/amazon-bedrock';
import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  type ConverseStreamOutput,
} from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { generateText, jsonSchema, streamText, tool } from 'ai';
import { type BedrockStandIn, startBedrockStandIn } from '../../helpers/bedrock-stand-in.ts';
import {
  freePort,
  gatewayYaml,
  lastAccessLogLine,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { authBackendYaml } from '../../helpers/objects.ts';

/** gw's own keys, the only ones the stand-in (Bedrock) knows. */
const GW_AWS = { accessKeyId: 'AKIDGATEWAY', secretAccessKey: 'gateway/secret+key' };
/** The client's keys, with a session token: Bedrock never sees them. */
const CLIENT_AWS = { accessKeyId: 'AKIDCLIENT', secretAccessKey: 'client/secret', sessionToken: 'client-session' };
const MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';
const WEATHER_SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
} as const;

describe("Bedrock clients through gw: Converse passed through, signed with gw's credentials", () => {
  let bedrock: BedrockStandIn;
  let gw: TestGateway;
  let base: string;

  before(async () => {
    bedrock = await startBedrockStandIn((id) =>
      id === GW_AWS.accessKeyId ? { secretAccessKey: GW_AWS.secretAccessKey } : undefined,
    );
    const port = await freePort();
    base = `http://127.0.0.1:${port}/bedrock`;
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        `apiVersion: v1
kind: Secret
metadata: {name: aws}
stringData: {accessKey: ${GW_AWS.accessKeyId}, secretKey: "${GW_AWS.secretAccessKey}"}
---
`,
        authBackendYaml(
          'bedrock',
          `ai: {provider: {host: 127.0.0.1, port: ${bedrock.port}, zeta: {region: us-east-1}}}`,
          `{cloudone: {secretRef: {name: aws}}}
    ai: {routes: {/converse: Passthrough, /converse-stream: Passthrough}}`,
        ),
        llmRouteYaml(['bedrock']),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await bedrock?.close();
  });

  /** The last call the stand-in accepted was signed by gw's key, without the client's session token. */
  function assertSignedByGw(calls: number) {
    assert.deepEqual(bedrock.refused, [], 'every request was signed as Bedrock checks it');
    assert.equal(bedrock.calls.length, calls);
    for (const call of bedrock.calls) {
      assert.equal(call.verified.accessKeyId, GW_AWS.accessKeyId);
      assert.equal(call.verified.sessionToken, undefined, "the client's session token does not reach Bedrock");
      assert.equal(call.verified.payloadHash.length, 64, 'the body is signed (gw read it whole)');
    }
  }

  const sdkClient = () =>
    new BedrockRuntimeClient({
      endpoint: base,
      region: 'us-east-1',
      credentials: CLIENT_AWS,
      maxAttempts: 1,
      // The test gateway speaks HTTP/1.1; the SDK would stream over HTTP/2.
      requestHandler: new NodeHttpHandler(),
    });

  it('the AWS SDK: ConverseCommand and ConverseStreamCommand, text and a tool call', async () => {
    bedrock.calls.length = 0;
    const client = sdkClient();
    const answer = await client.send(
      new ConverseCommand({
        modelId: MODEL,
        messages: [{ role: 'user', content: [{ text: 'hello there' }] }],
        inferenceConfig: { maxTokens: 100 },
      }),
    );
    assert.deepEqual(answer.output?.message?.content, [{ text: `Hello from ${MODEL}` }]);
    assert.equal(answer.stopReason, 'end_turn');
    assert.equal(answer.usage?.outputTokens, 7);
    assert.equal(bedrock.calls[0]!.modelId, MODEL);
    assert.equal(bedrock.calls[0]!.stream, false);
    assert.deepEqual(bedrock.calls[0]!.body.inferenceConfig, { maxTokens: 100 }, 'the body as the client sent it');

    const streamed = await client.send(
      new ConverseStreamCommand({
        modelId: MODEL,
        messages: [{ role: 'user', content: [{ text: 'call get_weather' }] }],
        toolConfig: {
          tools: [
            { toolSpec: { name: 'get_weather', inputSchema: { json: { ...WEATHER_SCHEMA, required: ['city'] } } } },
          ],
        },
      }),
    );
    const events: ConverseStreamOutput[] = [];
    for await (const event of streamed.stream ?? []) events.push(event);
    const start = events.find((event) => event.contentBlockStart)?.contentBlockStart;
    assert.equal(start?.start?.toolUse?.name, 'get_weather');
    const input = events.map((event) => event.contentBlockDelta?.delta?.toolUse?.input ?? '').join('');
    assert.deepEqual(JSON.parse(input), { city: 'Paris' });
    assert.equal(events.find((event) => event.messageStop)?.messageStop?.stopReason, 'tool_use');
    assert.equal(events.find((event) => event.metadata)?.metadata?.usage?.outputTokens, 7);
    assert.equal(bedrock.calls[1]!.stream, true);
    assertSignedByGw(2);
    const log = await lastAccessLogLine(gw, `/bedrock${bedrock.calls[1]!.url}`);
    assert.equal(log['http.response.status_code'], 200);
    // Passed through unread: not metered (docs/providers.md, zeta).
    assert.equal(log['gen_ai.usage.input_tokens'], undefined);
  });

  it('@ai-sdk/amazon-bedrock: generateText and streamText, text and a tool call', async () => {
    bedrock.calls.length = 0;
    const model = createAmazonBedrock({ region: 'us-east-1', ...CLIENT_AWS, baseURL: base })(MODEL);
    const tools = { get_weather: tool({ inputSchema: jsonSchema<{ city: string }>(WEATHER_SCHEMA) }) };
    const common = { model, maxOutputTokens: 100, maxRetries: 0 };
    const answer = await generateText({ ...common, prompt: 'hello there' });
    assert.equal(answer.text, `Hello from ${MODEL}`);
    assert.equal(answer.usage.outputTokens, 7);
    const called = await generateText({ ...common, prompt: 'call get_weather', tools });
    assert.deepEqual(called.toolCalls[0]?.input, { city: 'Paris' });

    const text = streamText({ ...common, prompt: 'hello there', onError: () => {} });
    let pieces = 0;
    for await (const part of text.fullStream) {
      if (part.type === 'error') throw part.error;
      if (part.type === 'text-delta') pieces++;
    }
    assert.equal(await text.text, `Hello from ${MODEL}`);
    assert.ok(pieces > 1, 'streamed in pieces');
    const toolStream = streamText({ ...common, prompt: 'call get_weather', tools, onError: () => {} });
    for await (const part of toolStream.fullStream) if (part.type === 'error') throw part.error;
    assert.deepEqual((await toolStream.toolCalls)[0]?.input, { city: 'Paris' });
    assertSignedByGw(4);
  });
});
