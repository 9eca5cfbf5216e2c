// zetaGuardrails prompt guards (Amazon Bedrock's ApplyGuardrail) through gw with the official
// SDKs. The Bedrock stand-in is proven first with the AWS SDK's own ApplyGuardrailCommand, found
// through AWS_ENDPOINT_URL_BEDROCK_RUNTIME as gw finds it, and checks every signature. Then: a
// clean prompt passes, signed for bedrock in the guard's region with the ambient credentials; an
// anonymized one reaches the provider masked; a blocked one is refused in the client's format with
// the guard's CustomResponse; response guards read the whole answer (OUTPUT); a masking whose
// outputs do not map onto the texts refuses; a Bedrock API key; bad credentials and an unreachable
// endpoint (AWS_ENDPOINT_URL) refuse with 503; a GwModel's guard; the access log's gw.ai.guards;
// streamed answers checked in windows with streaming: Enabled; a tunnel gw cannot use refused, naming the field.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { ApplyGuardrailCommand, BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import OpenAI from 'openai';
import { NO_AWS, withEnv } from '../../helpers/aws-stand-ins.ts';
import { failureOf } from '../../helpers/failure-of.ts';
import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  lastAccessLogLine,
  llmRouteYaml,
  ownFailureDetail,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { anthropicRefusal, guardedModelYaml } from '../../helpers/guards.ts';
import { MODEL_ROUTE_YAML } from '../../helpers/objects.ts';
import { startAnthropicMock } from '../../support/providers/anthropic-mock.ts';
import {
  type BedrockGuardrailsStandIn,
  type StandInGuardrail,
  startBedrockGuardrailsStandIn,
} from '../../support/providers/bedrock-guardrails-stand-in.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';

const ROUTES = '{/v1/chat/completions: Completions, /v1/messages: Messages, /v1/responses: Responses}';
const AMBIENT = { accessKeyId: 'AKIAAMBIENT', secretAccessKey: 'ambient-secret' };
const API_KEY = 'bedrock-api-key-1';
// An ARN identifier: its ':' and '/' are percent-encoded in the path, and signed so.
const GUARDRAIL_ARN = 'arn:aws:bedrock:eu-west-1:123456789012:guardrail/gr1abc';
const GUARDRAILS: StandInGuardrail[] = [
  {
    identifier: GUARDRAIL_ARN,
    version: '1',
    deniedTopics: [{ name: 'Investment', words: ['stocks', 'crypto'] }],
    emails: 'ANONYMIZED',
  },
  { identifier: 'gr-one-output', version: 'DRAFT', emails: 'ANONYMIZED', oneOutput: true },
];
const GUARD = `{identifier: "${GUARDRAIL_ARN}", version: "1", region: eu-west-1}`;
const guardWith = (policies: string) =>
  `{identifier: "${GUARDRAIL_ARN}", version: "1", region: eu-west-1, policies: ${policies}}`;

describe('zetaGuardrails prompt guards through gw', () => {
  let bedrock: BedrockGuardrailsStandIn;
  let openai: Awaited<ReturnType<typeof startOpenAiMock>>;
  let anthropic: Awaited<ReturnType<typeof startAnthropicMock>>;
  let gw: TestGateway;
  let port: number;
  const savedEnv: Record<string, string | undefined> = {};
  const openaiAt = (backend: string) =>
    new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/${backend}/v1`, maxRetries: 0 });
  const anthropicAt = (backend: string) =>
    new Anthropic({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/${backend}`, maxRetries: 0 });
  const lastOpenAiBody = () => JSON.stringify(openai.requests.at(-1)!.body);

  before(async () => {
    bedrock = await startBedrockGuardrailsStandIn({
      guardrails: GUARDRAILS,
      secrets: (id) => (id === AMBIENT.accessKeyId ? { secretAccessKey: AMBIENT.secretAccessKey } : undefined),
      apiKeys: [API_KEY],
    });
    openai = await startOpenAiMock({ apiKey: 'sk-openai' });
    anthropic = await startAnthropicMock({ apiKey: 'sk-anthropic' });
    const env = {
      ...NO_AWS,
      AWS_ACCESS_KEY_ID: AMBIENT.accessKeyId,
      AWS_SECRET_ACCESS_KEY: AMBIENT.secretAccessKey,
      AWS_ENDPOINT_URL_BEDROCK_RUNTIME: bedrock.url,
      AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: undefined,
    };
    for (const [name, value] of Object.entries(env)) {
      savedEnv[name] = process.env[name];
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    port = await freePort();
    const guarded = (name: string, family: 'openai' | 'anthropic', promptGuard: string) =>
      family === 'openai'
        ? aiBackendYaml(name, openai.port, 'alpha: {}', 'sk-openai', ROUTES, `promptGuard: ${promptGuard}`)
        : aiBackendYaml(name, anthropic.port, 'gamma: {}', 'sk-anthropic', ROUTES, `promptGuard: ${promptGuard}`);
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        `apiVersion: v1
kind: Secret
metadata: {name: bedrock-key}
stringData: {Authorization: ${API_KEY}}
---
apiVersion: v1
kind: Secret
metadata: {name: wrong-aws}
stringData: {accessKey: ${AMBIENT.accessKeyId}, secretKey: not-the-secret}
---
`,
        guarded('requests', 'openai', `{request: [{zetaGuardrails: ${GUARD}}]}`),
        guarded(
          'custom',
          'anthropic',
          `{request: [{zetaGuardrails: ${GUARD}, response: {statusCode: 422, message: 'Not a topic we discuss'}}]}`,
        ),
        guarded('answers', 'openai', `{response: [{zetaGuardrails: ${GUARD}}]}`),
        guarded(
          'oneoutput',
          'openai',
          '{request: [{zetaGuardrails: {identifier: gr-one-output, version: DRAFT, region: eu-west-1}}]}',
        ),
        guarded(
          'apikey',
          'openai',
          `{request: [{zetaGuardrails: ${guardWith('{auth: {secretRef: {name: bedrock-key}}}')}}]}`,
        ),
        guarded(
          'badcreds',
          'openai',
          `{request: [{zetaGuardrails: ${guardWith('{auth: {cloudone: {secretRef: {name: wrong-aws}}}}')}}]}`,
        ),
        guarded(
          'tunnelled',
          'openai',
          `{request: [{zetaGuardrails: ${guardWith('{tunnel: {backendRef: {name: proxy, namespace: elsewhere, port: 3128}}}')}}]}`,
        ),
        guarded('streamed', 'openai', `{streaming: Enabled, response: [{zetaGuardrails: ${GUARD}}]}`),
        llmRouteYaml(['requests', 'custom', 'answers', 'oneoutput', 'apikey', 'badcreds', 'tunnelled', 'streamed']),
        '---\n',
        MODEL_ROUTE_YAML,
        guardedModelYaml('guarded-model', openai.port, 'sk-openai', `{request: [{zetaGuardrails: ${GUARD}}]}`),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await Promise.all([bedrock?.close(), openai?.close(), anthropic?.close()]);
    for (const [name, value] of Object.entries(savedEnv)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it("the stand-in answers the AWS SDK's ApplyGuardrailCommand at AWS_ENDPOINT_URL_BEDROCK_RUNTIME and checks its signature", async () => {
    const client = (secretAccessKey: string) =>
      new BedrockRuntimeClient({
        region: 'eu-west-1',
        credentials: { accessKeyId: AMBIENT.accessKeyId, secretAccessKey },
        maxAttempts: 1,
        requestHandler: new NodeHttpHandler(),
      });
    const command = new ApplyGuardrailCommand({
      guardrailIdentifier: GUARDRAIL_ARN,
      guardrailVersion: '1',
      source: 'INPUT',
      content: [{ text: { text: 'mail jane@example.com' } }, { text: { text: 'and bob@example.org' } }],
    });
    const answer = await client(AMBIENT.secretAccessKey).send(command);
    assert.equal(answer.action, 'GUARDRAIL_INTERVENED');
    assert.deepEqual(answer.outputs, [{ text: 'mail {EMAIL}' }, { text: 'and {EMAIL}' }]);
    assert.equal(answer.assessments?.[0]?.sensitiveInformationPolicy?.piiEntities?.[0]?.action, 'ANONYMIZED');
    const call = bedrock.calls.at(-1)!;
    assert.equal(call.identifier, GUARDRAIL_ARN);
    assert.equal(call.verified?.region, 'eu-west-1');
    const blocked = await client(AMBIENT.secretAccessKey).send(
      new ApplyGuardrailCommand({
        guardrailIdentifier: GUARDRAIL_ARN,
        guardrailVersion: '1',
        source: 'OUTPUT',
        content: [{ text: { text: 'buy crypto now' } }],
      }),
    );
    assert.equal(blocked.action, 'GUARDRAIL_INTERVENED');
    assert.equal(blocked.assessments?.[0]?.topicPolicy?.topics?.[0]?.name, 'Investment');
    const refused = bedrock.refused.length;
    await assert.rejects(client('wrong').send(command), { name: 'InvalidSignatureException' });
    assert.equal(bedrock.refused.length, refused + 1);
  });

  it('a clean prompt passes: ApplyGuardrail INPUT of each text, signed for bedrock in the guard region with the ambient credentials', async () => {
    const completion = await openaiAt('requests').chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'what is the weather' },
      ],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: what is the weather');
    const call = bedrock.calls.at(-1)!;
    assert.equal(call.url, `/guardrail/${encodeURIComponent(GUARDRAIL_ARN)}/version/1/apply`);
    assert.deepEqual(call.body, {
      source: 'INPUT',
      content: [{ text: { text: 'be brief' } }, { text: { text: 'what is the weather' } }],
    });
    assert.equal(call.verified?.service, 'bedrock');
    assert.equal(call.verified?.region, 'eu-west-1');
    assert.equal(call.verified?.accessKeyId, AMBIENT.accessKeyId);
    assert.equal(call.headers.accept, 'application/json');
    const line = await lastAccessLogLine(gw, '/requests/v1/chat/completions');
    assert.match(String(line['gw.ai.guards']), /^request\[0\]\.zetaGuardrails=pass \d+\.\d{3}ms$/);
  });

  it('an anonymizing guardrail: the provider receives the masked text; the access log names the PII entity', async () => {
    const completion = await openaiAt('requests').chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'write to jane@example.com' }],
    });
    const sent = lastOpenAiBody();
    assert.ok(!sent.includes('jane@example.com'), sent);
    assert.match(sent, /write to \{EMAIL\}/);
    assert.equal(completion.choices[0]!.message.content, 'echo: write to {EMAIL}');
    const line = await lastAccessLogLine(gw, '/requests/v1/chat/completions');
    assert.match(String(line['gw.ai.guards']), /^request\[0\]\.zetaGuardrails=mask\(pii:EMAIL\) \d+\.\d{3}ms$/);
  });

  it('an anonymizing guardrail masks a Messages request translated to Chat Completions', async () => {
    await anthropicAt('requests').messages.create({
      model: 'gpt-4o-mini',
      max_tokens: 20,
      system: 'reply to ops@example.net',
      messages: [{ role: 'user', content: 'hello' }],
    });
    const sent = lastOpenAiBody();
    assert.equal(openai.requests.at(-1)!.path, '/v1/chat/completions');
    assert.ok(!sent.includes('ops@example.net'), sent);
    assert.match(sent, /reply to \{EMAIL\}/);
  });

  it("a blocked prompt is refused in the OpenAI formats with the guard's default answer; nothing reaches the provider", async () => {
    const before = openai.requests.length;
    for (const call of [
      () =>
        openaiAt('requests').chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'which stocks should I buy?' }],
        }),
      () => openaiAt('requests').responses.create({ model: 'gpt-4o-mini', input: 'tell me about crypto' }),
    ]) {
      const error = await failureOf(call());
      assert.ok(error instanceof OpenAI.APIError);
      assert.equal(error.status, 403);
      assert.ok(error.message.endsWith('The request was rejected due to inappropriate content'), error.message);
    }
    assert.equal(openai.requests.length, before);
    const line = await lastAccessLogLine(gw, '/requests/v1/responses');
    assert.match(String(line['gw.ai.guards']), /^request\[0\]\.zetaGuardrails=reject\(topic:Investment\)/);
    assert.equal(line['http.response.status_code'], 403);
  });

  it("a blocked prompt is refused in the Messages format with the guard's CustomResponse, not the guardrail's blocked message", async () => {
    const before = anthropic.requests.length;
    const error = await failureOf(
      anthropicAt('custom').messages.create({
        model: 'claude-guarded',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'is crypto a good bet?' }],
      }),
    );
    assert.deepEqual(anthropicRefusal(error), { status: 422, message: 'Not a topic we discuss' });
    assert.equal(anthropic.requests.length, before);
  });

  it('a response guard reads the whole answer (OUTPUT): blocked answers are refused, anonymized ones masked', async () => {
    const error = await failureOf(
      anthropicAt('answers').messages.create({
        model: 'gpt-4o-mini',
        max_tokens: 20,
        messages: [{ role: 'user', content: 'stocks' }],
      }),
    );
    assert.deepEqual(anthropicRefusal(error), {
      status: 403,
      message: 'The response was rejected due to inappropriate content',
    });
    assert.match(lastOpenAiBody(), /stocks/);
    assert.deepEqual(bedrock.calls.at(-1)!.body, { source: 'OUTPUT', content: [{ text: { text: 'echo: stocks' } }] });

    const masked = await openaiAt('answers').responses.create({ model: 'gpt-4o-mini', input: 'jane@example.com' });
    assert.match(lastOpenAiBody(), /jane@example\.com/);
    assert.equal(masked.output_text, 'echo: {EMAIL}');
    const line = await lastAccessLogLine(gw, '/answers/v1/responses');
    assert.match(String(line['gw.ai.guards']), /^response\[0\]\.zetaGuardrails=mask\(pii:EMAIL\)/);
  });

  it('a masking whose outputs do not map one-to-one onto the texts refuses rather than let the originals through', async () => {
    const before = openai.requests.length;
    const error = await failureOf(
      openaiAt('oneoutput').chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'cc ops@example.net' },
          { role: 'user', content: 'write to jane@example.com' },
        ],
      }),
    );
    assert.ok(error instanceof OpenAI.APIError);
    assert.equal(error.status, 403);
    assert.equal(openai.requests.length, before);
    // One text maps onto its one output: masked.
    await openaiAt('oneoutput').chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'write to jane@example.com' }],
    });
    assert.match(lastOpenAiBody(), /write to \{EMAIL\}/);
  });

  it('a Bedrock API key from a Secret is sent as Authorization: Bearer', async () => {
    const completion = await openaiAt('apikey').chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: hi');
    const call = bedrock.calls.at(-1)!;
    assert.equal(call.headers.authorization, `Bearer ${API_KEY}`);
    assert.equal(call.verified, undefined);
  });

  it('credentials Bedrock refuses: 503, the guardrail named in the access log, nothing reaches the provider', async () => {
    const before = openai.requests.length;
    const error = await failureOf(
      openaiAt('badcreds').chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hi' }],
      }),
    );
    assert.ok(error instanceof OpenAI.APIError);
    assert.equal(error.status, 503);
    assert.match(error.message, /could not be checked by a prompt guard service/);
    assert.equal(openai.requests.length, before);
    const line = await lastAccessLogLine(gw, '/badcreds/v1/chat/completions');
    assert.match(
      String(line['gw.ai.guards']),
      /^request\[0\]\.zetaGuardrails=reject failed: the Bedrock guardrail arn:\S+ \(version 1, eu-west-1\) answered HTTP 403/,
    );
    assert.ok(!String(line['gw.ai.guards']).includes('not-the-secret'));
  });

  it("a GwModel's zetaGuardrails guard masks what its provider receives", async () => {
    const client = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    const completion = await client.chat.completions.create({
      model: 'guarded-model',
      messages: [{ role: 'user', content: 'cc jane@example.com' }],
    });
    assert.match(lastOpenAiBody(), /cc \{EMAIL\}/);
    assert.equal(completion.choices[0]!.message.content, 'echo: cc {EMAIL}');
  });

  it('streaming: Enabled: a streamed answer is checked in windows (OUTPUT); a blocked one ends with the error event, a clean one completes', async () => {
    const stream = anthropicAt('streamed').messages.stream({
      model: 'gpt-4o-mini',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'crypto is the future' }],
    });
    const seen: string[] = [];
    stream.on('text', (delta) => seen.push(delta));
    const error = await failureOf(stream.finalMessage());
    assert.ok(error instanceof Anthropic.APIError, String(error));
    assert.match(error.message, /The response was rejected due to inappropriate content/);
    assert.ok(!seen.join('').includes('crypto'), seen.join(''));
    const call = bedrock.calls.at(-1)!;
    assert.equal(call.body.source, 'OUTPUT');
    assert.match(call.body.content[0]!.text.text, /crypto/);
    const clean = await anthropicAt('streamed')
      .messages.stream({ model: 'gpt-4o-mini', max_tokens: 50, messages: [{ role: 'user', content: 'all clear' }] })
      .finalMessage();
    assert.deepEqual(clean.content, [{ type: 'text', text: 'echo: all clear' }]);
  });

  it('a tunnel in the guard policies that gw cannot use (a proxy of another namespace) refuses the backend, naming the field', async () => {
    const before = openai.requests.length;
    const response = await fetch(`http://127.0.0.1:${port}/tunnelled/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(response.status, 500);
    assert.match(await ownFailureDetail(gw, response), /zetaGuardrails\.policies\.tunnel\.backendRef\.namespace/);
    assert.equal(openai.requests.length, before);
  });
});

describe('zetaGuardrails endpoints', () => {
  it('AWS_ENDPOINT_URL is read when AWS_ENDPOINT_URL_BEDROCK_RUNTIME is unset; an endpoint that refuses connections answers 503', async () => {
    const bedrock = await startBedrockGuardrailsStandIn({
      guardrails: GUARDRAILS,
      secrets: (id) => (id === AMBIENT.accessKeyId ? { secretAccessKey: AMBIENT.secretAccessKey } : undefined),
    });
    const openai = await startOpenAiMock({ apiKey: 'sk-openai' });
    const unreachable = await freePort();
    const configuration = (port: number) => ({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml(
          'guarded',
          openai.port,
          'alpha: {}',
          'sk-openai',
          ROUTES,
          `promptGuard: {request: [{zetaGuardrails: ${GUARD}}]}`,
        ),
        llmRouteYaml(['guarded']),
      ].join(''),
    });
    const ask = (port: number) =>
      new OpenAI({
        apiKey: 'client',
        baseURL: `http://127.0.0.1:${port}/guarded/v1`,
        maxRetries: 0,
      }).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hello' }],
      });
    const ambient = {
      ...NO_AWS,
      AWS_ACCESS_KEY_ID: AMBIENT.accessKeyId,
      AWS_SECRET_ACCESS_KEY: AMBIENT.secretAccessKey,
    };
    try {
      await withEnv(
        { ...ambient, AWS_ENDPOINT_URL_BEDROCK_RUNTIME: undefined, AWS_ENDPOINT_URL: bedrock.url },
        async () => {
          const port = await freePort();
          const gw = await startTestGateway(configuration(port));
          try {
            const completion = await ask(port);
            assert.equal(completion.choices[0]!.message.content, 'echo: hello');
            assert.equal(bedrock.calls.length, 1);
          } finally {
            await gw.stop();
          }
        },
      );
      await withEnv(
        {
          ...ambient,
          AWS_ENDPOINT_URL_BEDROCK_RUNTIME: `http://127.0.0.1:${unreachable}`,
          AWS_ENDPOINT_URL: bedrock.url,
        },
        async () => {
          const port = await freePort();
          const gw = await startTestGateway(configuration(port));
          try {
            const error = await failureOf(ask(port));
            assert.ok(error instanceof OpenAI.APIError);
            assert.equal(error.status, 503);
            assert.equal(openai.requests.length, 1);
            const line = await lastAccessLogLine(gw, '/guarded/v1/chat/completions');
            assert.match(String(line['gw.ai.guards']), /zetaGuardrails=reject failed: .* could not be reached/);
          } finally {
            await gw.stop();
          }
        },
      );
    } finally {
      await Promise.all([bedrock.close(), openai.close()]);
    }
  });
});
