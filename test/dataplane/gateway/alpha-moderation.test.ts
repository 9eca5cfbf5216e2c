// The alphaModeration prompt guard through gw, against a stand-in for OpenAI's moderations API
// reached through OPENAI_BASE_URL (decision 0028), with the official SDKs: the stand-in is first
// proven to speak OpenAI's wire format by the openai SDK's moderations.create; then a clean
// prompt passes, a flagged one is refused in the client's format (Chat Completions, Responses,
// and Messages through a route translated to Chat Completions) before the provider sees it; the
// moderation call carries the key (inline or from a Secret), the model and every text of the
// request; a service that fails, is slow or cannot be reached refuses the request with 503; a
// GwModel's guard works the same; a tunnel gw cannot use is refused, naming the field.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { guardFailureMessage } from '../../../src/dataplane/ai/guards/prompt-guard.ts';
import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  lastAccessLogLine,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { failureOf } from '../../helpers/guards.ts';
import { type ModerationStandIn, startModerationStandIn } from '../../helpers/moderation-stand-in.ts';
import { gwModelYaml, MODEL_ROUTE_YAML } from '../../helpers/objects.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';

const ROUTES = '{/v1/chat/completions: Completions, /v1/messages: Messages, /v1/responses: Responses}';
const MODERATION_KEY = 'sk-moderation';

const guard = (alphaModeration: string, response = '') =>
  `promptGuard: {request: [{alphaModeration: ${alphaModeration}${response ? `, response: ${response}` : ''}}]}`;

const SECRET_YAML = `apiVersion: v1
kind: Secret
metadata: {name: moderation-key}
stringData: {Authorization: 'Bearer ${MODERATION_KEY}'}
---
`;

describe('the alphaModeration prompt guard through gw', () => {
  let moderation: ModerationStandIn;
  let openai: Awaited<ReturnType<typeof startOpenAiMock>>;
  let gw: TestGateway;
  let port: number;
  const savedBaseUrl = process.env.OPENAI_BASE_URL;
  const openaiAt = (backend: string) =>
    new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/${backend}/v1`, maxRetries: 0 });
  const anthropicAt = (backend: string) =>
    new Anthropic({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/${backend}`, maxRetries: 0 });

  before(async () => {
    moderation = await startModerationStandIn({ apiKey: MODERATION_KEY });
    openai = await startOpenAiMock({ apiKey: 'sk-openai' });
    port = await freePort();
    // Read when the configuration compiles: set before gw loads it.
    process.env.OPENAI_BASE_URL = moderation.baseUrl;
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        SECRET_YAML,
        aiBackendYaml(
          'moderated',
          openai.port,
          'alpha: {}',
          'sk-openai',
          ROUTES,
          guard(`{policies: {auth: {key: ${MODERATION_KEY}}}}`),
        ),
        aiBackendYaml(
          'secretmodel',
          openai.port,
          'alpha: {}',
          'sk-openai',
          ROUTES,
          guard(
            '{model: omni-moderation-2024-09-26, policies: {auth: {secretRef: {name: moderation-key}}}}',
            "{statusCode: 422, message: 'Keep it civil'}",
          ),
        ),
        aiBackendYaml(
          'wrongkey',
          openai.port,
          'alpha: {}',
          'sk-openai',
          ROUTES,
          guard('{policies: {auth: {key: sk-wrong}}}'),
        ),
        aiBackendYaml(
          'slow',
          openai.port,
          'alpha: {}',
          'sk-openai',
          ROUTES,
          guard(`{policies: {http: {requestTimeout: 200ms}, auth: {key: ${MODERATION_KEY}}}}`),
        ),
        aiBackendYaml(
          'tunnelled',
          openai.port,
          'alpha: {}',
          'sk-openai',
          ROUTES,
          guard(
            `{policies: {tunnel: {backendRef: {name: proxy, namespace: elsewhere, port: 3128}}, auth: {key: ${MODERATION_KEY}}}}`,
          ),
        ),
        llmRouteYaml(['moderated', 'secretmodel', 'wrongkey', 'slow', 'tunnelled']),
        '---\n',
        MODEL_ROUTE_YAML,
        gwModelYaml(
          'moderated-model',
          `  provider: Alpha
  baseURL: http://127.0.0.1:${openai.port}/v1
  policies:
    auth: {key: sk-openai}
    ${guard(`{policies: {auth: {key: ${MODERATION_KEY}}}}`)}
`,
        ),
      ].join(''),
    });
  });

  after(async () => {
    if (savedBaseUrl === undefined) delete process.env.OPENAI_BASE_URL;
    else process.env.OPENAI_BASE_URL = savedBaseUrl;
    await gw?.stop();
    await Promise.all([moderation?.close(), openai?.close()]);
  });

  it("the stand-in speaks OpenAI's moderations API (the openai SDK's moderations.create)", async () => {
    const client = new OpenAI({ apiKey: MODERATION_KEY, baseURL: moderation.baseUrl, maxRetries: 0 });
    const answer = await client.moderations.create({
      model: 'omni-moderation-latest',
      input: ['a hateful remark', 'a kind remark'],
    });
    assert.equal(answer.model, 'omni-moderation-latest');
    assert.equal(answer.results.length, 2);
    assert.equal(answer.results[0]!.flagged, true);
    assert.equal(answer.results[0]!.categories.hate, true);
    assert.equal(answer.results[0]!.category_scores.hate, 0.9);
    assert.equal(answer.results[1]!.flagged, false);
    const refused = await failureOf(
      new OpenAI({ apiKey: 'sk-wrong', baseURL: moderation.baseUrl, maxRetries: 0 }).moderations.create({
        input: 'hello',
      }),
    );
    assert.ok(refused instanceof OpenAI.AuthenticationError);
  });

  it('a clean prompt passes; the moderation call carries the key, the default model and every text', async () => {
    const before = moderation.requests.length;
    const completion = await openaiAt('moderated').chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'You are a weather bot' },
        { role: 'user', content: 'What is the weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'sunny, 21 degrees' },
      ],
    });
    assert.equal(completion.choices[0]!.message.content, 'echo: sunny, 21 degrees');
    assert.equal(moderation.requests.length, before + 1);
    const call = moderation.requests.at(-1)!;
    assert.equal(call.path, '/v1/moderations');
    assert.equal(call.headers.authorization, `Bearer ${MODERATION_KEY}`);
    assert.equal(call.body.model, 'omni-moderation-latest');
    assert.deepEqual(call.body.input, [
      'You are a weather bot',
      'What is the weather in Paris?',
      '{"city":"Paris"}',
      'sunny, 21 degrees',
    ]);
    const line = await lastAccessLogLine(gw, '/moderated/v1/chat/completions');
    assert.match(String(line['gw.ai.guards']), /^request\[0\]\.alphaModeration=pass \d+\.\d{3}ms$/);
  });

  it('a flagged prompt is refused with the default 403 in the Chat Completions and Responses formats; the provider never sees it', async () => {
    const before = openai.requests.length;
    const chat = await failureOf(
      openaiAt('moderated').chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'write a hateful poem' },
        ],
      }),
    );
    assert.ok(chat instanceof OpenAI.PermissionDeniedError, String(chat));
    assert.equal(chat.status, 403);
    assert.match(chat.message, /The request was rejected due to inappropriate content/);
    const line = await lastAccessLogLine(gw, '/moderated/v1/chat/completions');
    assert.match(String(line['gw.ai.guards']), /^request\[0\]\.alphaModeration=reject\(hate\) \d+\.\d{3}ms$/);
    assert.equal(line['http.response.status_code'], 403);
    const responses = await failureOf(
      openaiAt('moderated').responses.create({
        model: 'gpt-4o-mini',
        instructions: 'plan a murder mystery party',
        input: 'and a hateful speech',
      }),
    );
    assert.ok(responses instanceof OpenAI.PermissionDeniedError, String(responses));
    assert.deepEqual(moderation.requests.at(-1)!.body.input, ['plan a murder mystery party', 'and a hateful speech']);
    const responsesLine = await lastAccessLogLine(gw, '/moderated/v1/responses');
    assert.match(String(responsesLine['gw.ai.guards']), /^request\[0\]\.alphaModeration=reject\(violence,hate\) /);
    assert.equal(openai.requests.length, before);
  });

  it('an Anthropic client on a route translated to Chat Completions: the CustomResponse in the Messages format; the key from a Secret; the configured model; tool results are read', async () => {
    const before = openai.requests.length;
    const error = await failureOf(
      anthropicAt('secretmodel').messages.create({
        model: 'gpt-4o-mini',
        max_tokens: 50,
        system: 'You run tools',
        messages: [
          { role: 'user', content: 'look it up' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'search', input: { q: 'x' } }] },
          {
            role: 'user',
            content: [{ type: 'tool_result', tool_use_id: 't1', content: 'I will hurt myself' }],
          },
        ],
      }),
    );
    assert.ok(error instanceof Anthropic.APIError, String(error));
    assert.equal(error.status, 422);
    assert.equal((error.error as { error: { message: string } }).error.message, 'Keep it civil');
    const call = moderation.requests.at(-1)!;
    assert.equal(call.headers.authorization, `Bearer ${MODERATION_KEY}`);
    assert.equal(call.body.model, 'omni-moderation-2024-09-26');
    assert.deepEqual(call.body.input, ['You run tools', 'look it up', 'x', 'I will hurt myself']);
    assert.equal(openai.requests.length, before);
    const line = await lastAccessLogLine(gw, '/secretmodel/v1/messages');
    assert.match(String(line['gw.ai.guards']), /^request\[0\]\.alphaModeration=reject\(self-harm\) /);
    const clean = await anthropicAt('secretmodel').messages.create({
      model: 'gpt-4o-mini',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hello there' }],
    });
    assert.deepEqual(clean.content, [{ type: 'text', text: 'echo: hello there' }]);
    assert.equal(openai.requests.at(-1)!.path, '/v1/chat/completions');
  });

  it("a GwModel's promptGuard moderates its requests", async () => {
    const client = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
    const clean = await client.chat.completions.create({
      model: 'moderated-model',
      messages: [{ role: 'user', content: 'good morning' }],
    });
    assert.equal(clean.choices[0]!.message.content, 'echo: good morning');
    const error = await failureOf(
      client.chat.completions.create({ model: 'moderated-model', messages: [{ role: 'user', content: 'hateful' }] }),
    );
    assert.ok(error instanceof OpenAI.PermissionDeniedError, String(error));
    assert.deepEqual(moderation.requests.at(-1)!.body.input, ['hateful']);
  });

  it('a moderation service that refuses the key, fails or is too slow refuses the request with 503 (no failure mode)', async () => {
    const before = openai.requests.length;
    const expectUnavailable = async (backend: string, reason: RegExp) => {
      const error = await failureOf(
        openaiAt(backend).chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'hello' }],
        }),
      );
      assert.ok(error instanceof OpenAI.InternalServerError, String(error));
      assert.equal(error.status, 503);
      assert.match(error.message, new RegExp(guardFailureMessage('request').replace(/[.]/g, '\\.')));
      const line = await lastAccessLogLine(gw, `/${backend}/v1/chat/completions`);
      assert.match(String(line['gw.ai.guards']), reason);
      assert.ok(!String(line['gw.ai.guards']).includes('sk-'), 'no key in the access log');
    };
    await expectUnavailable('wrongkey', /alphaModeration=reject failed: OpenAI moderation answered HTTP 401/);
    moderation.failWith = 500;
    try {
      await expectUnavailable('moderated', /alphaModeration=reject failed: OpenAI moderation answered HTTP 500/);
    } finally {
      moderation.failWith = undefined;
    }
    moderation.delayMs = 1000;
    try {
      await expectUnavailable('slow', /alphaModeration=reject failed: OpenAI moderation did not answer within 200 ms/);
    } finally {
      moderation.delayMs = 0;
    }
    assert.equal(openai.requests.length, before);
  });

  it('a tunnel on the moderation service that gw cannot use (a proxy of another namespace) is refused, naming the field', async () => {
    const error = await failureOf(
      openaiAt('tunnelled').chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hello' }],
      }),
    );
    assert.ok(error instanceof OpenAI.APIError);
    assert.ok((error.status ?? 0) >= 500, String(error.status));
    assert.ok(
      gw.logs.some((line) => line.includes('alphaModeration.policies.tunnel.backendRef.namespace')),
      gw.logs.join('\n'),
    );
  });

  it('a moderation service that cannot be reached refuses the request with 503', async () => {
    await moderation.close();
    const error = await failureOf(
      openaiAt('moderated').chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hello' }],
      }),
    );
    assert.ok(error instanceof OpenAI.InternalServerError, String(error));
    assert.equal(error.status, 503);
    const line = await lastAccessLogLine(gw, '/moderated/v1/chat/completions');
    assert.match(String(line['gw.ai.guards']), /alphaModeration=reject failed: OpenAI moderation could not be reached/);
  });
});
