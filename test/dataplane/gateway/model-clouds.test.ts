// GwModels with providers Delta (Gemini API), Epsilon (Vertex AI) and Zeta (Amazon Bedrock)
// through gw, against the stand-ins the delta, epsilon and zeta family tests prove with the
// providers' own SDKs (test/support/providers/gemini-mock.ts, test/helpers/bedrock-stand-in.ts).
// Each model's baseURL points at its stand-in; the model's settings reach the family: Epsilon's
// projectId and region are in the Vertex path, Zeta's region signs the request and its guardrail
// is in the Converse body.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { type BedrockStandIn, startBedrockStandIn } from '../../helpers/bedrock-stand-in.ts';
import {
  freePort,
  gatewayYaml,
  gwModelYaml,
  MODEL_ROUTE_YAML,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { type GeminiMock, startGeminiMock } from '../../support/providers/gemini-mock.ts';

const GEMINI_KEY = 'AIza-model-key';
const PROJECT = 'model-project';
const LOCATION = 'europe-west4';
const VERTEX_TOKEN = 'ya29.model-token';
const AWS = { accessKeyId: 'AKIDMODEL', secretAccessKey: 'model/secret+key' };
const BEDROCK_MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';

describe('GwModels with providers Delta, Epsilon and Zeta', () => {
  let gemini: GeminiMock;
  let vertex: GeminiMock;
  let bedrock: BedrockStandIn;
  let gw: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;

  before(async () => {
    gemini = await startGeminiMock({ apiKey: GEMINI_KEY });
    vertex = await startGeminiMock({ vertex: { project: PROJECT, location: LOCATION, token: VERTEX_TOKEN } });
    bedrock = await startBedrockStandIn((id) =>
      id === AWS.accessKeyId ? { secretAccessKey: AWS.secretAccessKey } : undefined,
    );
    const port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}apiVersion: v1
kind: Secret
metadata: {name: aws}
stringData: {accessKey: ${AWS.accessKeyId}, secretKey: "${AWS.secretAccessKey}"}
---
${MODEL_ROUTE_YAML}${gwModelYaml(
  'gemini',
  `  match: {model: gemini-2.5-flash}
  provider: Delta
  baseURL: http://127.0.0.1:${gemini.port}
  policies: {auth: {key: ${GEMINI_KEY}}}`,
)}${gwModelYaml(
  'vertex',
  `  match: {model: gemini-2.5-pro}
  provider: Epsilon
  epsilon: {projectId: ${PROJECT}, region: ${LOCATION}}
  baseURL: http://127.0.0.1:${vertex.port}
  policies: {auth: {key: ${VERTEX_TOKEN}}}`,
)}${gwModelYaml(
  'bedrock',
  `  match: {model: '${BEDROCK_MODEL}'}
  provider: Zeta
  zeta: {region: eu-west-1, guardrail: {identifier: gr-model, version: "3"}}
  baseURL: http://127.0.0.1:${bedrock.port}
  policies: {auth: {cloudone: {secretRef: {name: aws}}}}`,
)}`,
    });
    openai = new OpenAI({ apiKey: 'client-token', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: 'client-token', baseURL: `http://127.0.0.1:${port}`, maxRetries: 0 });
  });

  after(async () => {
    await gw?.stop();
    await Promise.all([gemini?.close(), vertex?.close(), bedrock?.close()]);
  });

  it('Delta: Chat Completions (streamed and not) from generateContent, the key in x-goog-api-key', async () => {
    const completion = await openai.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'hello delta model' }],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: hello delta model');
    let sent = gemini.requests.at(-1)!;
    assert.equal(sent.path, '/v1beta/models/gemini-2.5-flash:generateContent');
    assert.equal(sent.headers['x-goog-api-key'], GEMINI_KEY);
    assert.equal(sent.headers.authorization, undefined, "the client's token is not forwarded");
    const stream = await openai.chat.completions.create({
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'stream these words' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.equal(text, 'echo: stream these words');
    sent = gemini.requests.at(-1)!;
    assert.equal(sent.path, '/v1beta/models/gemini-2.5-flash:streamGenerateContent');
    assert.equal(sent.query.get('alt'), 'sse');
  });

  it("Epsilon: Chat Completions and Messages from the settings' project and region, the token as a bearer", async () => {
    const completion = await openai.chat.completions.create({
      model: 'gemini-2.5-pro',
      messages: [{ role: 'user', content: 'hello epsilon model' }],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: hello epsilon model');
    const modelPath = `/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/google/models/gemini-2.5-pro`;
    let sent = vertex.requests.at(-1)!;
    assert.equal(sent.path, `${modelPath}:generateContent`);
    assert.equal(sent.headers.authorization, `Bearer ${VERTEX_TOKEN}`);
    const message = await anthropic.messages.create({
      model: 'gemini-2.5-pro',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hello from claude code' }],
    });
    assert.deepEqual(message.content, [{ type: 'text', text: 'echo: hello from claude code' }]);
    sent = vertex.requests.at(-1)!;
    assert.equal(sent.path, `${modelPath}:generateContent`);
    assert.equal(sent.headers['x-api-key'], undefined);
  });

  it("Zeta: Converse signed in the settings' region, with the settings' guardrail", async () => {
    const completion = await openai.chat.completions.create({
      model: BEDROCK_MODEL,
      messages: [{ role: 'user', content: 'Hi' }],
    });
    assert.equal(completion.choices[0]!.message.content, `Hello from ${BEDROCK_MODEL}`);
    const call = bedrock.calls.at(-1)!;
    assert.equal(call.url, `/model/${BEDROCK_MODEL.replace(':', '%3A')}/converse`);
    assert.equal(call.verified.accessKeyId, AWS.accessKeyId);
    assert.equal(call.verified.region, 'eu-west-1');
    assert.equal(call.verified.service, 'bedrock');
    assert.deepEqual(call.body.guardrailConfig, { guardrailIdentifier: 'gr-model', guardrailVersion: '3' });
    assert.deepEqual(bedrock.refused, []);

    const streamed = await anthropic.messages
      .stream({ model: BEDROCK_MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] })
      .finalMessage();
    assert.deepEqual(streamed.content, [{ type: 'text', text: `Hello from ${BEDROCK_MODEL}` }]);
    const streamCall = bedrock.calls.at(-1)!;
    assert.equal(streamCall.url, `/model/${BEDROCK_MODEL.replace(':', '%3A')}/converse-stream`);
    assert.deepEqual(streamCall.body.guardrailConfig, { guardrailIdentifier: 'gr-model', guardrailVersion: '3' });
  });
});
