// gw's own answers on LLM routes, read by the official SDKs (gw issue 18, items 4, 12 and 13): an
// `ai` GwBackend with no `ai.routes` serves each API at its well-known path (the Anthropic SDK
// gets Messages answers from a gamma backend; /v1/models, embeddings and responses reach the
// provider's own paths), a body in the wrong format or a route type its provider does not serve is refused
// naming the route type and ai.routes, and every refusal gw makes itself — API key, JWT and basic
// authentication, authorization, rate limits, the body limit, gw's own 5xx — is an error object
// the openai and @anthropic-ai/sdk clients turn into their own error classes with OpenAI's and
// Anthropic's status, type and code.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';

import {
  aiBackendYaml,
  freePort,
  gatewayYaml,
  loggedFailure,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { trafficPolicyYaml } from '../../helpers/policy-yaml.ts';
import { startAnthropicMock } from '../../support/providers/anthropic-mock.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';

type OpenAIApiError = InstanceType<typeof OpenAI.APIError>;
type AnthropicApiError = InstanceType<typeof Anthropic.APIError>;

/** The keys gw sends the providers, and the one key the API-key policy admits. */
const OPENAI_UPSTREAM_KEY = 'sk-openai-upstream';
const ANTHROPIC_UPSTREAM_KEY = 'sk-ant-upstream';
const CLIENT_KEY = 'gw-client-key-1';

/** The backends set no policies.ai.routes: the default routes apply. */
const NO_ROUTES = undefined;

/** A rule of HTTPRoute llm serving /<name> (prefix stripped) from GwBackend `backend`. */
function rule(name: string, backend: string): string {
  return `    - name: ${name}
      matches: [{path: {type: PathPrefix, value: /${name}}}]
      filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: ${backend}}]
`;
}

/** A GwPolicy on rule `section` of HTTPRoute llm. */
function rulePolicy(section: string, traffic: object): string {
  return trafficPolicyYaml(section, { kind: 'HTTPRoute', name: 'llm', sectionName: section }, traffic);
}

const RULES: [string, string][] = [
  ['openai', 'openai'],
  ['claude', 'claude'],
  ['key-openai', 'openai'],
  ['key-claude', 'claude'],
  ['jwt-openai', 'openai'],
  ['basic-claude', 'claude'],
  ['deny-openai', 'openai'],
  ['deny-claude', 'claude'],
  ['limit-openai', 'openai'],
  ['limit-claude', 'claude'],
  ['broken-claude', 'claude'],
  ['refused-claude', 'refused'],
];

function jwks(): string {
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'ES256', use: 'sig' }] });
}

function configuration(port: number, openaiPort: number, anthropicPort: number): string {
  const policies = [
    `apiVersion: v1
kind: Secret
metadata: {name: client-keys}
stringData: {app: ${CLIENT_KEY}}
---
`,
    rulePolicy('key-openai', { apiKeyAuthentication: { secretRef: { name: 'client-keys' } } }),
    rulePolicy('key-claude', { apiKeyAuthentication: { secretRef: { name: 'client-keys' } } }),
    rulePolicy('jwt-openai', {
      jwtAuthentication: { providers: [{ issuer: 'https://idp.example', jwks: { inline: jwks() } }] },
    }),
    // SHA-1 htpasswd entry of user "ann", password "pw".
    rulePolicy('basic-claude', { basicAuthentication: { users: ['ann:{SHA}GpHWL3ymc5liWkNopqtdSjuqYHM='] } }),
    rulePolicy('deny-openai', {
      authorization: { policy: { matchExpressions: ["request.headers['x-team'] == 'ml'"] } },
    }),
    rulePolicy('deny-claude', {
      authorization: { policy: { matchExpressions: ["request.headers['x-team'] == 'ml'"] } },
    }),
    rulePolicy('limit-openai', { rateLimit: { local: [{ requests: 1, unit: 'Minutes' }] } }),
    rulePolicy('limit-claude', { rateLimit: { local: [{ requests: 1, unit: 'Minutes' }] } }),
    // A policy gw cannot use: the rule is refused (500 of gw's own, with a request id).
    rulePolicy('broken-claude', { apiKeyAuthentication: { secretRef: { name: 'absent' } } }),
  ];
  return (
    gatewayYaml(port) +
    aiBackendYaml('openai', openaiPort, 'alpha: {}', OPENAI_UPSTREAM_KEY, NO_ROUTES) +
    aiBackendYaml('claude', anthropicPort, 'gamma: {}', ANTHROPIC_UPSTREAM_KEY, NO_ROUTES) +
    // A backend whose policy gw refuses (a tunnel through a proxy of another namespace, set by a
    // GwPolicy): its answers still follow its routes.
    aiBackendYaml('refused', anthropicPort, 'gamma: {}', ANTHROPIC_UPSTREAM_KEY, NO_ROUTES) +
    `apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: refused-tunnel}
spec:
  targetRefs: [{group: gw.dev, kind: GwBackend, name: refused}]
  backend:
    ai: {routes: {/v1/messages: Messages}}
    tunnel: {backendRef: {name: proxy, namespace: elsewhere, port: 3128}}
---
` +
    `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: llm}
spec:
  parentRefs: [{name: ai}]
  rules:
${RULES.map(([name, backend]) => rule(name, backend)).join('')}---
` +
    policies.join('')
  );
}

const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hello' }] };
const MESSAGE = { model: 'claude-mock-1', max_tokens: 64, messages: [{ role: 'user' as const, content: 'hello' }] };

/** An OpenAI API error as the SDK reports it: its class, status, type and code. */
function openaiError(
  error: unknown,
  kind: new (...args: never[]) => OpenAIApiError,
  status: number,
  type: string,
  code: string | null,
) {
  assert.ok(error instanceof kind, `expected ${kind.name}, got ${String(error)}`);
  const apiError = error as OpenAIApiError;
  assert.equal(apiError.status, status);
  assert.equal(apiError.type, type, JSON.stringify(apiError.error));
  assert.equal(apiError.code, code);
  return apiError;
}

/** An Anthropic API error as the SDK reports it: its class, status and error type. */
function anthropicError(
  error: unknown,
  kind: new (...args: never[]) => AnthropicApiError,
  status: number,
  type: string,
) {
  assert.ok(error instanceof kind, `expected ${kind.name}, got ${String(error)}`);
  const apiError = error as AnthropicApiError;
  assert.equal(apiError.status, status);
  const body = apiError.error as { type?: string; error?: { type?: string; message?: string } };
  assert.equal(body.type, 'error', JSON.stringify(body));
  assert.equal(body.error?.type, type, JSON.stringify(body));
  return { apiError, message: body.error?.message ?? '' };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('the request succeeded');
}

describe("gw's own answers on LLM routes, read by the official SDKs", () => {
  let gw: TestGateway;
  let openaiUpstream: MockServer;
  let anthropicUpstream: MockServer;
  let base: string;
  const openai = (prefix: string, apiKey = 'client') =>
    new OpenAI({ apiKey, baseURL: `${base}/${prefix}/v1`, maxRetries: 0 });
  const anthropic = (prefix: string, options: { apiKey?: string | null; authToken?: string } = {}) =>
    new Anthropic({ apiKey: 'client', ...options, baseURL: `${base}/${prefix}`, maxRetries: 0 });

  before(async () => {
    openaiUpstream = await startOpenAiMock({ apiKey: OPENAI_UPSTREAM_KEY });
    anthropicUpstream = await startAnthropicMock({ apiKey: ANTHROPIC_UPSTREAM_KEY });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    gw = await startTestGateway({
      'gateway.yaml': configuration(port, openaiUpstream.port, anthropicUpstream.port),
    });
  });

  after(async () => {
    await gw.stop();
    await openaiUpstream.close();
    await anthropicUpstream.close();
  });

  describe('a backend without ai.routes serves each API at its well-known path', () => {
    it('the Anthropic SDK gets a Messages answer from a gamma backend, and counts tokens', async () => {
      const client = anthropic('claude');
      const message = await client.messages.create(MESSAGE);
      assert.equal(message.type, 'message');
      assert.equal(message.role, 'assistant');
      assert.equal(message.content[0]?.type, 'text');
      assert.equal(anthropicUpstream.requests.at(-1)?.path, '/v1/messages');
      const streamed = await client.messages.stream(MESSAGE).finalMessage();
      assert.equal(streamed.content[0]?.type, 'text');
      const count = await client.messages.countTokens({ model: MESSAGE.model, messages: MESSAGE.messages });
      assert.equal(typeof count.input_tokens, 'number');
      assert.equal(anthropicUpstream.requests.at(-1)?.path, '/v1/messages/count_tokens');
    });

    it('Chat Completions to a gamma backend is still translated', async () => {
      const completion = await openai('claude').chat.completions.create(CHAT);
      assert.equal(completion.object, 'chat.completion');
      assert.equal(anthropicUpstream.requests.at(-1)?.path, '/v1/messages');
    });

    it('GET /v1/models lists the provider models (OpenAI and Anthropic shapes)', async () => {
      const models = await openai('openai').models.list();
      assert.ok(models.data.some((model) => model.id === 'gpt-4o-mini'));
      assert.equal(openaiUpstream.requests.at(-1)?.path, '/v1/models');
      const claudeModels = await anthropic('claude').models.list();
      assert.deepEqual(
        claudeModels.data.map((model) => model.id),
        ['claude-mock-1'],
      );
      assert.equal(anthropicUpstream.requests.at(-1)?.headers['anthropic-version'], '2023-06-01');
    });

    it('embeddings and responses reach the provider paths of their APIs', async () => {
      const embeddings = await openai('openai').embeddings.create({ model: 'text-embedding-3-small', input: 'hi' });
      assert.equal(embeddings.object, 'list');
      assert.equal(openaiUpstream.requests.at(-1)?.path, '/v1/embeddings');
      const response = await openai('openai').responses.create({ model: 'gpt-4o-mini', input: 'hi' });
      assert.equal(response.object, 'response');
      assert.equal(openaiUpstream.requests.at(-1)?.path, '/v1/responses');
    });

    it('a gamma backend refuses embeddings clearly, in the OpenAI format, and translates responses', async () => {
      const before = anthropicUpstream.requests.length;
      const error = openaiError(
        await rejection(openai('claude').embeddings.create({ model: 'm', input: 'hi' })),
        OpenAI.BadRequestError,
        400,
        'invalid_request_error',
        null,
      );
      assert.match(error.message, /embeddings API is not supported by provider claude \(gamma, Anthropic\)/);
      assert.equal(anthropicUpstream.requests.length, before, 'nothing went upstream');
      const response = await openai('claude').responses.create({ model: 'm', input: 'hi' });
      assert.equal(response.object, 'response');
      assert.equal(anthropicUpstream.requests.at(-1)?.path, '/v1/messages');
    });

    it('a body in another format is refused naming the route type applied and ai.routes', async () => {
      const before = openaiUpstream.requests.length;
      // A Responses body sent to the Chat Completions path.
      const wrongPath = await fetch(`${base}/openai/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', input: 'hi' }),
      });
      assert.equal(wrongPath.status, 400);
      const body = (await wrongPath.json()) as { error: { message: string; type: string } };
      assert.equal(body.error.type, 'invalid_request_error');
      assert.match(body.error.message, /Completions route type/);
      assert.match(body.error.message, /ai\.routes/);
      // Any other path is Completions: a Messages body there is refused, never answered 200.
      const otherPath = await rejection(
        anthropic('claude').post('/v1/other', { body: { model: 'm', input: 'x' } }) as Promise<unknown>,
      );
      assert.ok(otherPath instanceof Anthropic.BadRequestError);
      assert.match(otherPath.message, /Completions route type/);
      assert.equal(openaiUpstream.requests.length, before, 'nothing went upstream');
    });

    it('a route type the provider does not serve is refused in its own format, never forwarded as Chat Completions', async () => {
      const before = anthropicUpstream.requests.length;
      const rerank = await fetch(`${base}/claude/v1/rerank`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', query: 'q', documents: ['a'] }),
      });
      assert.equal(rerank.status, 400);
      const body = (await rerank.json()) as { message: string };
      assert.match(body.message, /The rerank API is not supported by provider claude/);
      assert.equal(anthropicUpstream.requests.length, before);
    });

    it('a GET on a POST API is refused in its format, not answered "must be a JSON object"', async () => {
      const answer = await fetch(`${base}/claude/v1/messages`);
      assert.equal(answer.status, 400);
      const body = (await answer.json()) as { type: string; error: { type: string; message: string } };
      assert.equal(body.type, 'error');
      assert.match(body.error.message, /a GET has no body; Messages requests are POSTs/);
    });
  });

  describe('refusals of authentication, authorization and rate limits', () => {
    it('API key authentication: 401 invalid_api_key (OpenAI), authentication_error (Anthropic)', async () => {
      openaiError(
        await rejection(openai('key-openai', 'wrong-key').chat.completions.create(CHAT)),
        OpenAI.AuthenticationError,
        401,
        'invalid_request_error',
        'invalid_api_key',
      );
      const completion = await openai('key-openai', CLIENT_KEY).chat.completions.create(CHAT);
      assert.equal(completion.object, 'chat.completion');
      // This Anthropic SDK sends its key as Authorization: Bearer, which the policy reads.
      const admitted = await anthropic('key-claude', { apiKey: CLIENT_KEY }).messages.create(MESSAGE);
      assert.equal(admitted.type, 'message');
      anthropicError(
        await rejection(anthropic('key-claude', { apiKey: 'wrong-key' }).messages.create(MESSAGE)),
        Anthropic.AuthenticationError,
        401,
        'authentication_error',
      );
      // A Messages client sending x-api-key (as Anthropic's API documents) is told where gw reads the key.
      const xApiKey = await fetch(`${base}/key-claude/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': CLIENT_KEY, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify(MESSAGE),
      });
      assert.equal(xApiKey.status, 401);
      const body = (await xApiKey.json()) as { type: string; error: { type: string; message: string } };
      assert.equal(body.type, 'error');
      assert.equal(body.error.type, 'authentication_error');
      assert.match(body.error.message, /Authorization header as "Bearer <key>", not from the x-api-key header/);
    });

    it('JWT authentication: 401 with the Bearer challenge kept', async () => {
      const error = openaiError(
        await rejection(openai('jwt-openai').chat.completions.create(CHAT)),
        OpenAI.AuthenticationError,
        401,
        'invalid_request_error',
        'invalid_api_key',
      );
      assert.match(error.headers?.get('www-authenticate') ?? '', /^Bearer/);
      assert.match(error.message, /invalid JWT/);
    });

    it('basic authentication: 401 authentication_error with the Basic challenge kept', async () => {
      const { apiError } = anthropicError(
        await rejection(anthropic('basic-claude').messages.create(MESSAGE)),
        Anthropic.AuthenticationError,
        401,
        'authentication_error',
      );
      assert.match(apiError.headers?.get('www-authenticate') ?? '', /^Basic realm=/);
    });

    it('authorization: 403 PermissionDeniedError in both formats', async () => {
      openaiError(
        await rejection(openai('deny-openai').chat.completions.create(CHAT)),
        OpenAI.PermissionDeniedError,
        403,
        'invalid_request_error',
        'permission_denied',
      );
      anthropicError(
        await rejection(anthropic('deny-claude').messages.create(MESSAGE)),
        Anthropic.PermissionDeniedError,
        403,
        'permission_error',
      );
      const allowed = await anthropic('deny-claude').messages.create(MESSAGE, { headers: { 'x-team': 'ml' } });
      assert.equal(allowed.type, 'message');
    });

    it('rate limits: 429 RateLimitError with retry-after in both formats', async () => {
      await openai('limit-openai').chat.completions.create(CHAT);
      const error = openaiError(
        await rejection(openai('limit-openai').chat.completions.create(CHAT)),
        OpenAI.RateLimitError,
        429,
        'requests',
        'rate_limit_exceeded',
      );
      assert.ok(Number(error.headers?.get('retry-after')) >= 1);
      await anthropic('limit-claude').messages.create(MESSAGE);
      const { apiError } = anthropicError(
        await rejection(anthropic('limit-claude').messages.create(MESSAGE)),
        Anthropic.RateLimitError,
        429,
        'rate_limit_error',
      );
      assert.ok(Number(apiError.headers?.get('retry-after')) >= 1);
    });
  });

  describe('body limit and failures of gw its own', () => {
    // A PNG of about 1.6 MB as a data URL: over the 2 MiB default once base64-encoded.
    const image = `data:image/png;base64,${Buffer.alloc(1_600_000, 7).toString('base64')}`;

    it('413 over the 2 MiB default names the field that raises it, in both formats', async () => {
      const error = openaiError(
        await rejection(
          openai('openai').chat.completions.create({
            model: 'gpt-4o-mini',
            messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: image } }] }],
          }),
        ),
        OpenAI.APIError,
        413,
        'invalid_request_error',
        'request_too_large',
      );
      assert.match(error.message, /larger than 2 MiB/);
      assert.match(error.message, /Frontend policy field http\.maxBufferSize/);
      const { message } = anthropicError(
        await rejection(
          anthropic('claude').messages.create({
            ...MESSAGE,
            messages: [
              {
                role: 'user',
                content: [
                  { type: 'image', source: { type: 'base64', media_type: 'image/png', data: image.slice(22) } },
                ],
              },
            ],
          }),
        ),
        Anthropic.APIError,
        413,
        'request_too_large',
      );
      assert.match(message, /http\.maxBufferSize/);
    });

    it("a 5xx of gw's own is an InternalServerError with a request id, its detail only in the log", async () => {
      const { apiError, message } = anthropicError(
        await rejection(anthropic('broken-claude').messages.create(MESSAGE)),
        Anthropic.InternalServerError,
        500,
        'api_error',
      );
      const id = apiError.headers?.get('x-request-id') ?? '';
      assert.ok(id !== '');
      assert.match(message, new RegExp(`gw could not serve this request; .* request id ${id}`));
      assert.match(await loggedFailure(gw, id), /apiKeyAuthentication\.secretRef\.name/);
      // A refused GwBackend answers in the format its routes give the path.
      const refused = anthropicError(
        await rejection(anthropic('refused-claude').messages.create(MESSAGE)),
        Anthropic.InternalServerError,
        500,
        'api_error',
      );
      assert.match(
        await loggedFailure(gw, refused.apiError.headers?.get('x-request-id') ?? ''),
        /backend\.tunnel\.backendRef\.namespace/,
      );
    });
  });
});
