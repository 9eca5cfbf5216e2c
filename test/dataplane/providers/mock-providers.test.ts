// Plans sent for real: each planned request goes with undici to the mock OpenAI or Anthropic
// server (test/support/providers/), which checks the path, the headers and the key as the real APIs
// do. A 200 with the right answer proves the path, the headers and the auth placement.
import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { type TestContext, test } from 'node:test';
import { request } from 'undici';
import type { BackendAuth } from '../../../src/api/types/backend-auth.ts';
import type { LLMProvider } from '../../../src/api/types/llm-provider.ts';
import { createStreamTranslator, type JsonObject, translateResponse } from '../../../src/dataplane/ai/formats/index.ts';
import type { CompiledProvider, UpstreamPlan } from '../../../src/dataplane/ai/providers/index.ts';
import { AuthConfigError, compileBackendAuth } from '../../../src/dataplane/auth/backend/index.ts';
import { startAnthropicMock } from '../../support/providers/anthropic-mock.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';
import {
  CHAT_BODY,
  COUNT_TOKENS_BODY,
  compiled,
  EMBEDDINGS_BODY,
  input,
  MESSAGES_BODY,
  planned,
  RESPONSES_BODY,
} from './helpers.ts';

const PROVIDER_KEY = 'sk-provider-5a4b3c2d1e';
/** The key a client uses to authenticate to gw itself: it must never reach a provider. */
const GATEWAY_KEY = 'gw-inbound-1f2e3d';
const CLIENT_HEADERS: IncomingHttpHeaders = {
  authorization: `Bearer ${GATEWAY_KEY}`,
  'x-api-key': GATEWAY_KEY,
  'content-type': 'application/json',
};
const SECRETS: Record<string, Record<string, string>> = {
  'Secret llm/provider': { Authorization: `Bearer ${PROVIDER_KEY}` },
};

async function mocks(t: TestContext): Promise<{ openai: MockServer; anthropic: MockServer }> {
  const [openai, anthropic] = await Promise.all([
    startOpenAiMock({ apiKey: PROVIDER_KEY }),
    startAnthropicMock({ apiKey: PROVIDER_KEY }),
  ]);
  t.after(() => Promise.all([openai.close(), anthropic.close()]));
  return { openai, anthropic };
}

/** A provider pointed at a mock: its family with host and port overrides (plain HTTP: not port 443). */
function at(mock: MockServer, provider: LLMProvider): CompiledProvider {
  return compiled({ ...provider, host: '127.0.0.1', port: mock.port });
}

/** Sends a plan as the proxy would: the client's headers, the plan's, then the backend auth. */
async function send(
  provider: CompiledProvider,
  plan: UpstreamPlan,
  auth: BackendAuth | 'none' = { secretRef: { name: 'provider' } },
): Promise<{ status: number; text: string; json: () => JsonObject }> {
  const configured = auth === 'none' ? undefined : auth;
  const compiledAuth = compileBackendAuth(configured, (ref) => SECRETS[ref], 'llm', { keyStyle: provider.keyStyle });
  if (compiledAuth instanceof AuthConfigError) assert.fail(compiledAuth.message);
  const headers: Record<string, string | string[]> = { ...(CLIENT_HEADERS as Record<string, string>), ...plan.headers };
  const query = new URLSearchParams();
  for (const [name, value] of plan.query) query.set(name, value);
  compiledAuth.apply({ headers, query }, { headers: CLIENT_HEADERS });
  const search = query.size > 0 ? `?${query}` : '';
  const url = `${plan.origin.protocol}//${plan.origin.host}:${plan.origin.port}${plan.path}${search}`;
  const response = await request(url, {
    method: plan.method as 'GET' | 'POST',
    headers,
    body: plan.body === undefined ? undefined : JSON.stringify(plan.body),
  });
  const text = await response.body.text();
  return { status: response.statusCode, text, json: () => JSON.parse(text) as JsonObject };
}

function assertNoGatewayKey(mock: MockServer): void {
  for (const recorded of mock.requests) {
    assert.ok(!JSON.stringify(recorded.headers).includes(GATEWAY_KEY), "the gateway's own key reached the provider");
  }
}

test('alpha: Chat Completions, Responses, Embeddings and the model list are answered by the OpenAI mock', async (t) => {
  const { openai } = await mocks(t);
  const alpha = at(openai, { alpha: {} });

  const chat = await send(alpha, planned(alpha, input('completions', CHAT_BODY)));
  assert.equal(chat.status, 200, chat.text);
  const completion = chat.json() as { choices: { message: { content: string } }[] };
  assert.equal(completion.choices[0]!.message.content, 'echo: hello there');

  const responses = await send(alpha, planned(alpha, input('responses', RESPONSES_BODY)));
  assert.equal(responses.status, 200, responses.text);
  assert.equal(responses.json().object, 'response');

  const embeddings = await send(alpha, planned(alpha, input('embeddings', EMBEDDINGS_BODY)));
  assert.equal(embeddings.status, 200, embeddings.text);
  assert.equal(embeddings.json().object, 'list');

  const models = await send(alpha, planned(alpha, input('models', undefined)));
  assert.equal(models.status, 200, models.text);
  assert.ok(Array.isArray(models.json().data));

  for (const recorded of openai.requests) assert.equal(recorded.headers.authorization, `Bearer ${PROVIDER_KEY}`);
  assert.deepEqual(
    openai.requests.map((recorded) => `${recorded.method} ${recorded.path}`),
    ['POST /v1/chat/completions', 'POST /v1/responses', 'POST /v1/embeddings', 'GET /v1/models'],
  );
  assertNoGatewayKey(openai);
});

test('alpha: a Messages client is translated to Chat Completions and back', async (t) => {
  const { openai } = await mocks(t);
  const alpha = at(openai, { alpha: { model: 'gpt-4o' } });
  const plan = planned(alpha, input('messages', MESSAGES_BODY));
  const answer = await send(alpha, plan);
  assert.equal(answer.status, 200, answer.text);
  assert.equal(plan.response.kind, 'translate');
  const message = translateResponse('completions', 'messages', answer.json());
  assert.equal(message.type, 'message');
  assert.deepEqual(message.content, [{ type: 'text', text: 'echo: hello there' }]);
  // The model override reached the provider, and the answer names the provider's model.
  assert.equal(message.model, 'gpt-4o');
  assert.equal((openai.requests[0]!.body as JsonObject).model, 'gpt-4o');
});

test('gamma: Messages and count_tokens reach the Anthropic mock with x-api-key and anthropic-version', async (t) => {
  const { anthropic } = await mocks(t);
  const gamma = at(anthropic, { gamma: {} });

  const messages = await send(gamma, planned(gamma, input('messages', MESSAGES_BODY)));
  assert.equal(messages.status, 200, messages.text);
  assert.deepEqual((messages.json().content as unknown[])[0], { type: 'text', text: 'echo: hello there' });

  const count = await send(gamma, planned(gamma, input('count_tokens', COUNT_TOKENS_BODY)));
  assert.equal(count.status, 200, count.text);
  assert.equal(typeof count.json().input_tokens, 'number');

  for (const recorded of anthropic.requests) {
    assert.equal(recorded.headers['x-api-key'], PROVIDER_KEY);
    assert.equal(recorded.headers.authorization, undefined);
    assert.equal(recorded.headers['anthropic-version'], '2023-06-01');
  }
  assertNoGatewayKey(anthropic);
});

test('gamma: a Chat Completions client is translated to Messages and back', async (t) => {
  const { anthropic } = await mocks(t);
  const gamma = at(anthropic, { gamma: { model: 'claude-sonnet-4-5' } });
  const plan = planned(gamma, input('completions', CHAT_BODY));
  const answer = await send(gamma, plan, { key: PROVIDER_KEY });
  assert.equal(answer.status, 200, answer.text);
  const completion = translateResponse('messages', 'completions', answer.json()) as {
    model: string;
    choices: { message: { content: string } }[];
  };
  assert.equal(completion.choices[0]!.message.content, 'echo: hello there');
  assert.equal(completion.model, 'claude-sonnet-4-5');
});

test('gamma: a streaming Chat Completions client gets translated chunks with usage', async (t) => {
  const { anthropic } = await mocks(t);
  const gamma = at(anthropic, { gamma: {} });
  const plan = planned(
    gamma,
    input('completions', { ...CHAT_BODY, stream: true, stream_options: { include_usage: true } }),
  );
  assert.equal(plan.response.kind, 'translate');
  const answer = await send(gamma, plan);
  assert.equal(answer.status, 200, answer.text);
  if (plan.response.kind !== 'translate') return;
  const translator = createStreamTranslator(plan.response.from, plan.response.to, {
    includeUsage: plan.response.includeUsage,
  });
  const sse = translator.write(new TextEncoder().encode(answer.text)) + translator.end();
  const chunks = sse
    .split('\n\n')
    .filter((event) => event.startsWith('data: {'))
    .map((event) => JSON.parse(event.slice('data: '.length)) as { choices: { delta: { content?: string } }[] });
  const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
  assert.equal(text, 'echo: hello there');
  assert.ok(sse.trimEnd().endsWith('data: [DONE]'));
  assert.equal(translator.usage?.outputTokens, 3);
});

test('alpha streaming: gw asks for the usage chunk and the mock sends it', async (t) => {
  const { openai } = await mocks(t);
  const alpha = at(openai, { alpha: {} });
  const plan = planned(alpha, input('completions', { ...CHAT_BODY, stream: true }));
  const answer = await send(alpha, plan);
  assert.equal(answer.status, 200, answer.text);
  assert.match(answer.text, /"choices":\[\],"usage":\{/);
  assert.deepEqual(plan.response, { kind: 'same', dropUsageOnlyChunk: true });
});

test('pathPrefix and a query-parameter key are what an OpenAI-compatible server sees', async (t) => {
  const { openai } = await mocks(t);
  const alpha = at(openai, { alpha: {}, pathPrefix: '/v1/' });
  const plan = planned(alpha, input('completions', CHAT_BODY));
  assert.equal(plan.path, '/v1/chat/completions');
  // The OpenAI mock wants the key in Authorization: a key in the query is refused like the real API.
  const refused = await send(alpha, plan, { key: PROVIDER_KEY, location: { queryParameter: { name: 'key' } } });
  assert.equal(refused.status, 401);
  assert.equal(openai.requests.at(-1)?.url, `/v1/chat/completions?key=${PROVIDER_KEY}`);
  assert.equal(openai.requests.at(-1)?.headers.authorization, undefined);
});

test('without backend auth the client key is not forwarded and the provider refuses', async (t) => {
  const { anthropic } = await mocks(t);
  const gamma = at(anthropic, { gamma: {} });
  const answer = await send(gamma, planned(gamma, input('messages', MESSAGES_BODY)), 'none');
  assert.equal(answer.status, 401);
  assert.equal(JSON.parse(answer.text).error.type, 'authentication_error');
  assertNoGatewayKey(anthropic);
});

test("passthrough forwards the client's own provider key", async (t) => {
  const { anthropic } = await mocks(t);
  const gamma = at(anthropic, { gamma: {} });
  const plan = planned(gamma, input('messages', MESSAGES_BODY));
  const compiledAuth = compileBackendAuth({ passthrough: {} }, () => undefined, 'llm', { keyStyle: gamma.keyStyle });
  assert.ok(!(compiledAuth instanceof AuthConfigError));
  const client = { authorization: `Bearer ${PROVIDER_KEY}` };
  const headers: Record<string, string> = { ...client, ...plan.headers };
  compiledAuth.apply({ headers, query: new URLSearchParams() }, { headers: client });
  const response = await request(`http://127.0.0.1:${anthropic.port}${plan.path}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(plan.body),
  });
  const text = await response.body.text();
  assert.equal(response.statusCode, 200, text);
  assert.equal(anthropic.requests[0]!.headers['x-api-key'], PROVIDER_KEY);
});
