// GwModels whose provider is a named OpenAI-compatible service (Provider07 Cohere ... Provider19
// Fireworks AI) through gw. Each service gets a stand-in on 127.0.0.1 that answers under the
// service's own base path (Groq's /openai/v1, Cohere's /compatibility/v1...) by relaying to an
// OpenAI mock, and records the path and the Authorization header it received; each GwModel's
// baseURL points at its stand-in with that base path. The openai SDK (Chat Completions, streamed
// and not, Embeddings, Responses) and @anthropic-ai/sdk (Messages) reach them through gw: the key
// of the model's policies is sent as a bearer (none to Ollama, which takes none by default), the
// client's own never, and Messages and Responses arrive as Chat Completions.
import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import {
  freePort,
  gatewayYaml,
  gwModelYaml,
  MODEL_ROUTE_YAML,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { closeServer, listen } from '../../helpers/http-server.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';

/** Each service: its GwModel (and model) name, its real base path, whether it serves Embeddings. */
const SERVICES = [
  { provider: 'Provider07', name: 'cohere', base: '/compatibility/v1', embeddings: true },
  { provider: 'Provider08', name: 'ollama', base: '/v1', embeddings: true },
  { provider: 'Provider09', name: 'baseten', base: '/v1', embeddings: false },
  { provider: 'Provider10', name: 'cerebras', base: '/v1', embeddings: false },
  { provider: 'Provider11', name: 'deepinfra', base: '/v1/openai', embeddings: true },
  { provider: 'Provider12', name: 'deepseek', base: '/v1', embeddings: false },
  { provider: 'Provider13', name: 'groq', base: '/openai/v1', embeddings: false },
  { provider: 'Provider14', name: 'huggingface', base: '/v1', embeddings: false },
  { provider: 'Provider15', name: 'mistral', base: '/v1', embeddings: true },
  { provider: 'Provider16', name: 'openrouter', base: '/api/v1', embeddings: true },
  { provider: 'Provider17', name: 'together', base: '/v1', embeddings: true },
  { provider: 'Provider18', name: 'xai', base: '/v1', embeddings: false },
  { provider: 'Provider19', name: 'fireworks', base: '/inference/v1', embeddings: true },
] as const;

type Service = (typeof SERVICES)[number];

/** The key gw holds for a service (Ollama has none). */
const keyOf = (service: Service) => (service.provider === 'Provider08' ? undefined : `key-${service.name}`);

/** What a stand-in recorded of a request: its line, its Authorization and any other credential header. */
interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
  otherCredentials: string[];
}

const OTHER_CREDENTIAL_HEADERS = ['x-api-key', 'x-goog-api-key', 'api-key', 'proxy-authorization'];

interface ServiceStandIn {
  port: number;
  seen: Seen[];
  last(): Seen;
  close(): Promise<void>;
}

/**
 * A service on loopback: requests under `base` are relayed to the OpenAI mock's /v1 (streamed
 * back as they come); anything else is a 404. It records what it received.
 */
async function startServiceStandIn(base: string, mock: MockServer): Promise<ServiceStandIn> {
  const seen: ServiceStandIn['seen'] = [];
  const server = createServer((req, res) => {
    const url = req.url ?? '';
    seen.push({
      method: req.method ?? '',
      url,
      authorization: req.headers.authorization,
      otherCredentials: OTHER_CREDENTIAL_HEADERS.filter((name) => req.headers[name] !== undefined),
    });
    if (!url.startsWith(`${base}/`)) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`no route ${url}`);
      return;
    }
    const headers = { ...req.headers, host: `127.0.0.1:${mock.port}`, authorization: 'Bearer stand-in' };
    const relay = request(
      { host: '127.0.0.1', port: mock.port, method: req.method, path: `/v1${url.slice(base.length)}`, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    relay.on('error', () => res.destroy());
    req.pipe(relay);
  });
  const port = await listen(server);
  return {
    port,
    seen,
    last: () => {
      const latest = seen.at(-1);
      assert.ok(latest, 'no request reached the stand-in');
      return latest;
    },
    close: () => closeServer(server),
  };
}

describe('GwModels of the named OpenAI-compatible services through gw', () => {
  let mock: MockServer;
  const standIns = new Map<string, ServiceStandIn>();
  let gw: TestGateway;
  let port: number;
  let openai: OpenAI;

  before(async () => {
    mock = await startOpenAiMock();
    for (const service of SERVICES) standIns.set(service.name, await startServiceStandIn(service.base, mock));
    port = await freePort();
    const models = SERVICES.map((service) => {
      const key = keyOf(service);
      return gwModelYaml(
        service.name,
        `  provider: ${service.provider}
  baseURL: http://127.0.0.1:${standIns.get(service.name)!.port}${service.base}
${key === undefined ? '' : `  policies: {auth: {key: ${key}}}`}`,
      );
    });
    gw = await startTestGateway({ 'gateway.yaml': `${gatewayYaml(port)}${MODEL_ROUTE_YAML}${models.join('')}` });
    openai = new OpenAI({ apiKey: 'client-token', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
  });

  after(async () => {
    await gw?.stop();
    await Promise.all([...standIns.values()].map((standIn) => standIn.close()));
    await mock?.close();
  });

  for (const service of SERVICES) {
    it(`${service.provider} (${service.name}): Chat Completions at ${service.base}/chat/completions with its key`, async () => {
      const completion = await openai.chat.completions.create({
        model: service.name,
        messages: [{ role: 'user', content: `hello ${service.name}` }],
      });
      assert.equal(completion.choices[0]!.message.content, `echo: hello ${service.name}`);
      const seen = standIns.get(service.name)!.last();
      assert.equal(seen.method, 'POST');
      assert.equal(seen.url, `${service.base}/chat/completions`);
      const key = keyOf(service);
      assert.equal(seen.authorization, key === undefined ? undefined : `Bearer ${key}`, "gw's key, never the client's");
    });
  }

  it("sends a provider none of the client's credentials, whichever header they came in (Ollama: no key of gw's)", async () => {
    const completion = await openai.chat.completions.create(
      { model: 'ollama', messages: [{ role: 'user', content: 'hello ollama' }] },
      {
        headers: {
          'x-api-key': 'client-x',
          'x-goog-api-key': 'client-goog',
          'api-key': 'client-azure',
          'proxy-authorization': 'Basic Y2xpZW50OnByb3h5',
        },
      },
    );
    assert.equal(completion.choices[0]!.message.content, 'echo: hello ollama');
    const seen = standIns.get('ollama')!.last();
    assert.equal(seen.authorization, undefined);
    assert.deepEqual(seen.otherCredentials, []);
  });

  it('sends Embeddings to the services that have them, and answers 400 for the others', async () => {
    for (const service of SERVICES) {
      const standIn = standIns.get(service.name)!;
      const before = standIn.seen.length;
      if (service.embeddings) {
        const embeddings = await openai.embeddings.create({ model: service.name, input: 'a few words' });
        assert.equal(embeddings.data.length, 1, service.name);
        assert.equal(standIn.last().url, `${service.base}/embeddings`);
      } else {
        await assert.rejects(
          openai.embeddings.create({ model: service.name, input: 'a few words' }),
          (error: unknown) =>
            error instanceof OpenAI.BadRequestError && /embeddings API is not supported/.test(error.message),
          service.name,
        );
        assert.equal(standIn.seen.length, before, `nothing was sent to ${service.name}`);
      }
    }
  });

  it('streams Chat Completions from a service, usage included when asked', async () => {
    const stream = await openai.chat.completions.create({
      model: 'fireworks',
      messages: [{ role: 'user', content: 'stream these words' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    assert.equal(text, 'echo: stream these words');
    assert.ok(usage && usage.completion_tokens > 0);
    assert.equal(standIns.get('fireworks')!.last().url, '/inference/v1/chat/completions');
  });

  it('serves Messages (streamed and not) by translation to Chat Completions', async () => {
    const anthropic = new Anthropic({ apiKey: 'client-token', baseURL: `http://127.0.0.1:${port}`, maxRetries: 0 });
    const message = await anthropic.messages.create({
      model: 'groq',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hello from claude' }],
    });
    assert.deepEqual(message.content, [{ type: 'text', text: 'echo: hello from claude' }]);
    assert.equal(message.stop_reason, 'end_turn');
    const seen = standIns.get('groq')!.last();
    assert.equal(seen.url, '/openai/v1/chat/completions');
    assert.equal(seen.authorization, 'Bearer key-groq');
    const final = await anthropic.messages
      .stream({ model: 'cohere', max_tokens: 64, messages: [{ role: 'user', content: 'a streamed answer' }] })
      .finalMessage();
    assert.deepEqual(final.content, [{ type: 'text', text: 'echo: a streamed answer' }]);
    assert.equal(standIns.get('cohere')!.last().url, '/compatibility/v1/chat/completions');
  });

  it('serves Responses by translation to Chat Completions', async () => {
    const response = await openai.responses.create({ model: 'mistral', input: 'hello responses' });
    assert.equal(response.output_text, 'echo: hello responses');
    assert.equal(standIns.get('mistral')!.last().url, '/v1/chat/completions');
  });

  it("records the service as the request's gen_ai.provider.name", async () => {
    await openai.chat.completions.create({ model: 'xai', messages: [{ role: 'user', content: 'hi' }] });
    const line = JSON.parse(gw.accessLog.at(-1)!) as Record<string, unknown>;
    assert.equal(line.backend, 'GwModel default/xai');
    assert.equal(line['gen_ai.provider.name'], 'x_ai');
  });
});
