// Realtime sessions with TLS on both sides: a client opens wss:// on gw's HTTPS listener (the
// openai package's realtime client, as it connects to OpenAI itself), and gw opens wss:// to a
// stand-in realtime server whose certificate only the backend policy's CA (tls.caCertificateRefs)
// trusts — and refuses a provider whose certificate it cannot verify.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import { freePort, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { tlsFixture as fixture, testCaConfigMapYaml, tlsSecretYaml } from '../../helpers/https-get.ts';
import { type RealtimeMock, startRealtimeMock } from '../../support/providers/realtime-mock.ts';

const KEY = 'realtime-upstream-key-0123456789';
const CA = fixture('ca.crt');

function backend(name: string, port: number, tls: string): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: ${name}}
spec:
  ai: {provider: {host: 127.0.0.1, port: ${port}, alpha: {}}}
  policies:
    auth: {key: ${KEY}}
    tls: ${tls}
    ai: {routes: {/v1/realtime: Realtime}}
---
`;
}

describe('Realtime over TLS', () => {
  let upstream: RealtimeMock;
  let gw: TestGateway;
  let port: number;
  const realtime = (rule: string) =>
    new OpenAIRealtimeWS(
      { model: 'gpt-realtime', options: { ca: CA, servername: 'a.example.test' } as import('ws').ClientOptions },
      new OpenAI({ apiKey: 'client-token', baseURL: `https://127.0.0.1:${port}/${rule}/v1` }),
    );

  before(async () => {
    upstream = await startRealtimeMock(KEY, { tls: { cert: fixture('backend.crt'), key: fixture('backend.key') } });
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gw}
spec: {controllerName: gw.dev/gateway-controller}
---
${tlsSecretYaml('cert-a', 'a')}${testCaConfigMapYaml('ca')}apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ai}
spec:
  gatewayClassName: gw
  listeners:
    - {name: https, protocol: HTTPS, port: ${port}, tls: {mode: Terminate, certificateRefs: [{name: cert-a}]}}
---
${backend('trusted', upstream.port, '{caCertificateRefs: [{name: ca}]}')}${backend('untrusted', upstream.port, '{}')}apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: llm}
spec:
  parentRefs: [{name: ai}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /trusted}}]
      filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: trusted}]
    - matches: [{path: {type: PathPrefix, value: /untrusted}}]
      filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: untrusted}]
`,
    });
    assert.deepEqual(
      gw.logs.filter((line) => /problem|cannot|not served/i.test(line)),
      [],
    );
  });

  after(async () => {
    await gw?.stop();
    await upstream?.close();
  });

  it('carries a session from wss on the HTTPS listener to wss at a provider trusted through the backend CA', async () => {
    const rt = realtime('trusted');
    const created = await new Promise<{ model?: string }>((resolve, reject) => {
      rt.on('session.created', (event) => resolve(event.session as { model?: string }));
      rt.on('error', reject);
    });
    assert.equal(created.model, 'gpt-realtime');
    const reply = new Promise<string>((resolve) => rt.on('response.output_text.done', (event) => resolve(event.text)));
    rt.send({
      type: 'conversation.item.create',
      item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'over tls' }] },
    });
    rt.send({ type: 'response.create' });
    assert.equal(await reply, 'echo: over tls');
    assert.equal(upstream.handshakes.at(-1)!.headers.authorization, `Bearer ${KEY}`);
    rt.close();
  });

  it('refuses the session (502, before the upgrade) when the provider certificate is not trusted', async () => {
    const before = upstream.events.length;
    const rt = realtime('untrusted');
    const failure = await new Promise<Error>((resolve) => rt.on('error', resolve));
    assert.match(failure.message, /502/);
    assert.equal(upstream.events.length, before, 'no session opened upstream');
  });
});
