// A custom provider reached through a backendRef to a Service (spec document 2: CustomProvider and
// CustomProviderSettings backendRef): gw resolves the Service of the provider's namespace from the
// configuration, as it does for HTTPRoute backendRefs and MCP targets, and sends to the address
// the Service names (its clusterIP here) at the referenced port, with the Host of that address and
// TLS when the backend policy asks. The same for a GwModel with provider Custom. A Service that
// does not exist fails closed: 500 with a request id, the detail in the log only. (The controller's
// side — the configuration carries the Service, ResolvedRefs on the owner, an InferencePool with
// its ready Pods — is the translate golden case custom-backend-ref, run on the embedded and the
// informer stores; InferencePools are served in inference-pool.test.ts.)
import assert from 'node:assert/strict';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import {
  freePort,
  GW_MODELS_RULE,
  gatewayYaml,
  llmRouteYaml,
  ownFailureDetail,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { closeServer, listen, readBody, sendJson } from '../../helpers/http-server.ts';
import { testCaConfigMapYaml, tlsFixture } from '../../helpers/https-get.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';

const KEY = 'sk-behind-service';

function serviceYaml(name: string, port: number): string {
  return `apiVersion: v1
kind: Service
metadata: {name: ${name}}
spec: {clusterIP: 127.0.0.1, ports: [{name: http, port: ${port}}]}
---
`;
}

function customBackendYaml(name: string, service: string, port: number, policies = `{auth: {key: ${KEY}}}`): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: ${name}}
spec:
  ai: {provider: {custom: {backendRef: {name: ${service}, port: ${port}}, formats: [{type: Completions}]}}}
  policies: ${policies}
---
`;
}

const POOL_BACKEND = `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: pool}
spec:
  ai:
    provider:
      custom:
        backendRef: {group: inference.networking.k8s.io, kind: InferencePool, name: llm}
        formats: [{type: Completions}]
---
`;

describe('a custom provider with a backendRef to a Service', () => {
  let mock: MockServer;
  let secure: HttpsServer;
  let securePort: number;
  const secureSeen: { host: string | undefined; path: string | undefined; body: string }[] = [];
  let gw: TestGateway;
  let port: number;
  let client: (path: string) => OpenAI;

  before(async () => {
    mock = await startOpenAiMock({ apiKey: KEY });
    // A Chat Completions server over TLS (the test CA's certificate names 127.0.0.1).
    secure = createHttpsServer(
      { key: tlsFixture('backend.key'), cert: tlsFixture('backend.crt') },
      async (req, res) => {
        secureSeen.push({ host: req.headers.host, path: req.url, body: await readBody(req) });
        sendJson(res, 200, {
          id: 'chatcmpl-tls',
          object: 'chat.completion',
          created: 1,
          model: 'tls-model',
          choices: [{ index: 0, message: { role: 'assistant', content: 'over tls' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
        });
      },
    );
    securePort = await listen(secure as never);
    port = await freePort();
    const model = `apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: llama}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: llm, sectionName: models}]
  provider: Custom
  custom: {backendRef: {name: llm, port: ${mock.port}}, formats: [{type: Completions}]}
  policies: {auth: {key: ${KEY}}}
---
`;
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}${serviceYaml('llm', mock.port)}${serviceYaml('llm-tls', securePort)}${testCaConfigMapYaml()}${customBackendYaml('svc', 'llm', mock.port)}${customBackendYaml('tls', 'llm-tls', securePort, '{tls: {caCertificateRefs: [{name: test-ca}]}}')}${customBackendYaml('lost', 'nowhere', mock.port)}${customBackendYaml('wrong-port', 'llm', 1)}${POOL_BACKEND}${llmRouteYaml(['svc', 'tls', 'lost', 'wrong-port', 'pool'], GW_MODELS_RULE)}---
${model}`,
    });
    client = (path) => new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}${path}`, maxRetries: 0 });
  });

  after(async () => {
    await gw?.stop();
    await mock?.close();
    await closeServer(secure as never);
  });

  it('a GwBackend reaches the Service at its address and port, with that Host and the backend key', async () => {
    const answer = await client('/svc/v1').chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'through a Service' }],
    });
    assert.equal(answer.choices[0]!.message.content, 'echo: through a Service');
    const seen = mock.requests.at(-1)!;
    assert.equal(seen.path, '/v1/chat/completions');
    assert.equal(seen.headers.host, `127.0.0.1:${mock.port}`);
    assert.equal(seen.headers.authorization, `Bearer ${KEY}`);
  });

  it('streams through the Service too', async () => {
    const stream = await client('/svc/v1').chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'streamed' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.equal(text, 'echo: streamed');
  });

  it('originates TLS to the Service when the backend policy asks, verifying its certificate', async () => {
    const answer = await client('/tls/v1').chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'secret' }],
    });
    assert.equal(answer.choices[0]!.message.content, 'over tls');
    assert.deepEqual(
      { host: secureSeen.at(-1)!.host, path: secureSeen.at(-1)!.path },
      { host: `127.0.0.1:${securePort}`, path: '/v1/chat/completions' },
    );
  });

  it('a GwModel with provider Custom reaches the Service named by custom.backendRef', async () => {
    const answer = await client('/models').chat.completions.create({
      model: 'llama',
      messages: [{ role: 'user', content: 'model via Service' }],
    });
    assert.equal(answer.choices[0]!.message.content, 'echo: model via Service');
    assert.equal(mock.requests.at(-1)!.headers.host, `127.0.0.1:${mock.port}`);
  });

  it('a Service that does not exist or lacks the port, and a missing InferencePool, fail closed: 500 naming nothing internal', async () => {
    for (const [backend, detail] of [
      ['lost', /custom\.backendRef: Service default\/nowhere: does not exist/],
      ['wrong-port', /custom\.backendRef: Service default\/llm: the Service has no port 1/],
      ['pool', /custom\.backendRef: InferencePool default\/llm: does not exist/],
    ] as const) {
      const before = mock.requests.length;
      const response = await fetch(`http://127.0.0.1:${port}/${backend}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
      });
      assert.equal(response.status, 500);
      assert.match(await ownFailureDetail(gw, response), detail);
      assert.equal(mock.requests.length, before, 'nothing reached a provider');
    }
  });
});
