// One parse (gw issue 17, item 5): what gw checks is what the provider receives. An LLM request
// body that parsers would read differently — a key twice in one object (top level or nested),
// bytes that are not UTF-8, an escaped surrogate without its pair — is refused with 400 in the
// client's own error format on every route type that reads bodies (Chat Completions, Messages,
// Responses, Embeddings, a GwModel, Detect), and nothing reaches the provider. The official SDKs
// send the requests (their fetch changes the body where an SDK would never write such a thing).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import {
  aiBackendYaml,
  freePort,
  GW_MODELS_RULE,
  gatewayYaml,
  lastAccessLogLine,
  llmRouteYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { type BodyRewrite, replacedOnce, rewritingFetch, withBytesAfter } from '../../helpers/rewriting-fetch.ts';
import { startAnthropicMock } from '../../support/providers/anthropic-mock.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';

const OPENAI_ROUTES = '{/v1/chat/completions: Completions, /v1/responses: Responses, /v1/embeddings: Embeddings}';
const ANTHROPIC_ROUTES = '{/v1/messages: Messages}';

function gwModelYaml(name: string, port: number): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: ${name}}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: llm, sectionName: models}]
  provider: Alpha
  baseURL: http://127.0.0.1:${port}/v1
  policies: {auth: {key: sk-openai}}
---
`;
}

/** The message of an SDK's APIError, from the body in the client's format (OpenAI's or Anthropic's). */
function clientMessage(error: Error): string {
  const body = (error as { error?: { message?: string; error?: { message?: string } } }).error;
  return body?.error?.message ?? body?.message ?? '';
}

/** A request one SDK sends, the error class it throws for a 400, and the error type its format names. */
interface Format {
  name: string;
  send(rewrite: BodyRewrite, content: string): Promise<unknown>;
  badRequest: new (...args: never[]) => Error;
  /** The provider it reaches. */
  provider: () => MockServer;
  /** A key of an object inside the body, as the SDK writes it. */
  nestedKey?: string;
  /** Where text content starts in the body, as the SDK writes it. */
  contentAt: string;
}

describe('one parse: LLM bodies parsers read differently are refused', () => {
  let openaiMock: MockServer;
  let anthropicMock: MockServer;
  let gw: TestGateway;
  let base: string;

  before(async () => {
    openaiMock = await startOpenAiMock({ apiKey: 'sk-openai' });
    anthropicMock = await startAnthropicMock({ apiKey: 'sk-anthropic' });
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        aiBackendYaml('gpt', openaiMock.port, 'alpha: {}', 'sk-openai', OPENAI_ROUTES),
        aiBackendYaml('claude', anthropicMock.port, 'gamma: {}', 'sk-anthropic', ANTHROPIC_ROUTES),
        aiBackendYaml('detect', openaiMock.port, 'alpha: {}', 'sk-openai', "{'*': Detect}"),
        gwModelYaml('allowed-model', openaiMock.port),
        llmRouteYaml(['gpt', 'claude', 'detect'], GW_MODELS_RULE),
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await Promise.all([openaiMock?.close(), anthropicMock?.close()]);
  });

  const openai = (path: string, rewrite: BodyRewrite) =>
    new OpenAI({ apiKey: 'client', baseURL: `${base}${path}`, maxRetries: 0, fetch: rewritingFetch(rewrite) });
  const anthropic = (rewrite: BodyRewrite) =>
    new Anthropic({ apiKey: 'client', baseURL: `${base}/claude`, maxRetries: 0, fetch: rewritingFetch(rewrite) });

  /** Where the SDKs write a user message: its role (an object inside the body) and its text. */
  const USER_MESSAGE = { nestedKey: '"role":"user"', contentAt: '"content":"' };
  const OPENAI_CLIENT = { badRequest: OpenAI.BadRequestError, provider: () => openaiMock };
  const chatCompletion = (name: string, path: string, model: string): Format => ({
    name,
    send: (rewrite, content) =>
      openai(path, rewrite).chat.completions.create({ model, messages: [{ role: 'user', content }] }),
    ...OPENAI_CLIENT,
    ...USER_MESSAGE,
  });

  const formats: Format[] = [
    chatCompletion('Chat Completions', '/gpt/v1', 'gpt-4o-mini'),
    {
      name: 'Messages',
      send: (rewrite, content) =>
        anthropic(rewrite).messages.create({
          model: 'claude-sonnet-4-5',
          max_tokens: 20,
          messages: [{ role: 'user', content }],
        }),
      badRequest: Anthropic.BadRequestError,
      provider: () => anthropicMock,
      ...USER_MESSAGE,
    },
    {
      name: 'Responses',
      send: (rewrite, content) =>
        openai('/gpt/v1', rewrite).responses.create({ model: 'gpt-4o-mini', input: [{ role: 'user', content }] }),
      ...OPENAI_CLIENT,
      ...USER_MESSAGE,
    },
    {
      name: 'Embeddings',
      send: (rewrite, content) =>
        openai('/gpt/v1', rewrite).embeddings.create({ model: 'text-embedding-3-small', input: content }),
      ...OPENAI_CLIENT,
      contentAt: '"input":"',
    },
    chatCompletion('a GwModel', '/models/v1', 'allowed-model'),
    chatCompletion('Detect', '/detect/v1', 'gpt-4o-mini'),
  ];

  /** Sends through the format's SDK and expects its 400 with `message`, nothing reaching the provider. */
  async function assertRefused(format: Format, rewrite: BodyRewrite, content: string, message: string) {
    const before = format.provider().requests.length;
    await assert.rejects(format.send(rewrite, content), (error: Error) => {
      assert.ok(error instanceof format.badRequest, `${format.name}: ${error}`);
      assert.equal((error as unknown as { status: number }).status, 400);
      assert.ok(clientMessage(error).includes(message), `${format.name}: ${error.message}`);
      return true;
    });
    assert.equal(format.provider().requests.length, before, `${format.name}: nothing reached the provider`);
  }

  const keep: BodyRewrite = () => undefined;

  for (const format of formats) {
    it(`${format.name}: a model named twice is refused, whichever comes first, however it is escaped`, async () => {
      const model = /"model":"[^"]*"/;
      for (const twice of [
        (found: string) => `"model":"expensive-model",${found}`,
        (found: string) => `${found},"mod\\u0065l":"expensive-model"`,
      ]) {
        await assertRefused(
          format,
          (text) => {
            const found = text.match(model)![0];
            return replacedOnce(text, found, twice(found));
          },
          'hi',
          'The request body has the key "model" twice in one object.',
        );
      }
    });

    if (format.nestedKey !== undefined) {
      const key = format.nestedKey;
      it(`${format.name}: a key twice in a nested object is refused`, async () => {
        const [name] = key.split(':');
        await assertRefused(
          format,
          (text) => replacedOnce(text, key, `${name}:"system",${key}`),
          'hi',
          `The request body has the key ${name} twice in one object.`,
        );
      });
    }

    it(`${format.name}: bytes that are not UTF-8 are refused`, async () => {
      for (const bytes of [[0xff], [0xc0, 0xa2], [0xed, 0xa0, 0x80]]) {
        await assertRefused(
          format,
          (text) => withBytesAfter(text, format.contentAt, bytes),
          'hi',
          'The request body is not valid UTF-8.',
        );
      }
    });

    it(`${format.name}: an escaped surrogate without its pair is refused; a pair is served`, async () => {
      // JSON.stringify (the SDK) escapes a lone surrogate: the client's own string holds one.
      await assertRefused(
        format,
        keep,
        'cut emoji \ud83d',
        'The request body has an escaped surrogate without its pair (\\ud83d).',
      );
      await assertRefused(format, keep, '\udc00 first', 'without its pair (\\udc00)');
      const before = format.provider().requests.length;
      await format.send((text) => replacedOnce(text, `${format.contentAt}x`, `${format.contentAt}\\ud83d\\ude00`), 'x');
      assert.equal(format.provider().requests.length, before + 1);
      assert.match(JSON.stringify(format.provider().requests.at(-1)!.body), /😀/);
    });
  }

  it('the refusal is the error object of the client format, logged as a 400', async () => {
    const before = openaiMock.requests.length;
    const answer = await fetch(`${base}/gpt/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"model":"gpt-4o"}',
    });
    assert.equal(answer.status, 400);
    assert.deepEqual(await answer.json(), {
      error: {
        message: 'The request body has the key "model" twice in one object.',
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
    assert.equal(openaiMock.requests.length, before);
    const line = await lastAccessLogLine(gw, '/gpt/v1/chat/completions');
    assert.equal(line['http.response.status_code'], 400);
  });
});
