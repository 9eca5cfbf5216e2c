// An AI provider's and an MCP target's own extAuth and transformation (decision 0045), end to end
// with the official SDKs: two providers in priority groups, each with its own transformation (a
// header, a body field, a response header) and its own HTTP authorization server (a GwPolicy
// naming the provider by sectionName); the first provider failing, the second's policies — not
// the first's — reach the second upstream and the client; the merge order GwPolicy < GwBackend <
// provider; an MCP backend whose two targets each have their own authorization server and
// transformation, the MCP SDK client calling tools of both.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import OpenAI from 'openai';
import { freePort, gatewayYaml, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { type RecordingUpstream, startRecordingUpstream } from '../../helpers/recording-upstream.ts';
import type { MockServer } from '../../support/providers/mock-server.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';
import { echoTools, firstText, mcpYaml, startStreamableServer, type TestMcpServer } from '../mcp/helpers.ts';

/** An HTTP authorization server allowing the blue team only, recording what it was asked. */
function startAuthServer(): Promise<RecordingUpstream> {
  return startRecordingUpstream((req, res) => {
    res.writeHead(req.headers['x-team'] === 'blue' ? 200 : 403);
    res.end();
  });
}

/** A GwPolicy whose backend section (flow YAML) targets GwBackend `target`, one section of it when given. */
function backendPolicy(name: string, target: string, backend: string, sectionName?: string): string {
  const section = sectionName === undefined ? '' : `, sectionName: ${sectionName}`;
  return `apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: ${name}}
spec:
  targetRefs: [{group: gw.dev, kind: GwBackend, name: ${target}${section}}]
  backend: ${backend}
---
`;
}

/** A transformation (flow YAML) setting x-layer to `layer`, the body's `user` to it and the response's x-answered-by. */
function layerTransformation(layer: string): string {
  const body = `'{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hello"}], "user": "${layer}"}'`;
  return `{request: {set: [{name: x-layer, value: '"${layer}"'}, {name: x-only-${layer}, value: '"yes"'}], body: ${body}}, response: {set: [{name: x-answered-by, value: '"${layer}"'}]}}`;
}

const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hello' }] };

describe("an AI provider's own extAuth and transformation, per attempt", () => {
  let first: MockServer;
  let second: MockServer;
  let firstAuth: RecordingUpstream;
  let secondAuth: RecordingUpstream;
  let gw: TestGateway;
  let client: OpenAI;

  before(async () => {
    first = await startOpenAiMock({ apiKey: 'sk-upstream' });
    second = await startOpenAiMock({ apiKey: 'sk-upstream' });
    firstAuth = await startAuthServer();
    secondAuth = await startAuthServer();
    const port = await freePort();
    const authz = (server: RecordingUpstream) =>
      `{extAuth: {url: "http://127.0.0.1:${server.port}/check", http: {allowedRequestHeaders: [x-team]}}}`;
    gw = await startTestGateway({
      'gw.yaml': `${gatewayYaml(port)}apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: pair}
spec:
  ai:
    groups:
      - providers:
          - name: first
            host: 127.0.0.1
            port: ${first.port}
            alpha: {}
            policies: {transformation: ${layerTransformation('first')}}
      - providers:
          - name: second
            host: 127.0.0.1
            port: ${second.port}
            alpha: {}
  policies: {auth: {key: sk-upstream}, transformation: ${layerTransformation('backend')}}
---
${backendPolicy('whole', 'pair', `{transformation: ${layerTransformation('gwpolicy')}}`)}${backendPolicy(
  'first-auth',
  'pair',
  authz(firstAuth),
  'first',
)}${backendPolicy('second-auth', 'pair', authz(secondAuth), 'second')}apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: llm}
spec:
  parentRefs: [{name: ai}]
  rules: [{backendRefs: [{group: gw.dev, kind: GwBackend, name: pair}]}]
---
`,
    });
    client = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
  });

  after(async () => {
    await gw?.stop();
    await first?.close();
    await second?.close();
    await firstAuth?.close();
    await secondAuth?.close();
  });

  it('the provider chosen gets its own transformation and is checked by its own authorization server', async () => {
    const checks = [firstAuth.seen.length, secondAuth.seen.length];
    const { data, response } = await client.chat.completions
      .create(CHAT, { headers: { 'x-team': 'blue' } })
      .withResponse();
    assert.ok(data.choices[0]?.message.content);
    const sent = first.requests.at(-1)!;
    assert.equal(sent.headers['x-layer'], 'first', "the provider's value wins over the GwBackend's and the GwPolicy's");
    assert.equal(sent.headers['x-only-backend'], undefined, "the backend's transformation is replaced, not added to");
    assert.equal(sent.headers['x-only-gwpolicy'], undefined);
    assert.equal((sent.body as { user?: string }).user, 'first');
    assert.equal(response.headers.get('x-answered-by'), 'first');
    assert.equal(firstAuth.seen.length, checks[0]! + 1, "the first provider's server checked the attempt");
    assert.equal(secondAuth.seen.length, checks[1], 'the second was not asked');
    assert.equal(second.requests.length, 0);
  });

  it("on failover the second provider gets its policies, not the first's, and the client its response Transform", async () => {
    first.script('/v1/chat/completions', { reply: { kind: 'error', status: 503, message: 'overloaded' } });
    const checks = [firstAuth.seen.length, secondAuth.seen.length];
    const { data, response } = await client.chat.completions
      .create(CHAT, { headers: { 'x-team': 'blue' } })
      .withResponse();
    assert.ok(data.choices[0]?.message.content);
    const sent = second.requests.at(-1)!;
    // The second provider sets no transformation: it has the GwBackend's, which wins over the GwPolicy's.
    assert.equal(sent.headers['x-layer'], 'backend');
    assert.equal(sent.headers['x-only-first'], undefined, "the first provider's header did not leak");
    assert.equal((sent.body as { user?: string }).user, 'backend', "the first provider's body did not leak");
    assert.equal(response.headers.get('x-answered-by'), 'backend', "the first attempt's response Transform is dropped");
    assert.equal(firstAuth.seen.length, checks[0]! + 1);
    assert.equal(secondAuth.seen.length, checks[1]! + 1, "the second provider's server checked its attempt");
  });

  it("a provider's authorization server refusing: the SDK's PermissionDeniedError, no provider called", async () => {
    const sent = [first.requests.length, second.requests.length];
    await assert.rejects(
      client.chat.completions.create(CHAT, { headers: { 'x-team': 'red' } }),
      (error: unknown) => error instanceof OpenAI.PermissionDeniedError,
    );
    assert.deepEqual([first.requests.length, second.requests.length], sent);
  });
});

describe("an MCP target's own extAuth and transformation, on gw's requests to it", () => {
  let one: TestMcpServer;
  let two: TestMcpServer;
  let oneAuth: RecordingUpstream;
  let twoAuth: RecordingUpstream;
  let gw: TestGateway;
  let url: URL;

  before(async () => {
    one = await startStreamableServer(echoTools('one'));
    two = await startStreamableServer(echoTools('two'));
    oneAuth = await startAuthServer();
    twoAuth = await startAuthServer();
    const port = await freePort();
    const own = (server: RecordingUpstream, target: string) =>
      `{extAuth: {url: "http://127.0.0.1:${server.port}", http: {allowedRequestHeaders: [x-team, x-target]}}, transformation: {request: {set: [{name: x-target, value: '"${target}"'}]}}}`;
    gw = await startTestGateway({
      'gw.yaml': [
        gatewayYaml(port),
        mcpYaml([
          { name: 'one', port: one.port },
          { name: 'two', port: two.port },
        ]),
        '---\n',
        backendPolicy('one-own', 'tools', own(oneAuth, 'one'), 'one'),
        backendPolicy('two-own', 'tools', own(twoAuth, 'two'), 'two'),
      ].join(''),
    });
    url = new URL(`http://127.0.0.1:${port}/mcp`);
  });

  after(async () => {
    await gw?.stop();
    await one?.close();
    await two?.close();
    await oneAuth?.close();
    await twoAuth?.close();
  });

  it('each target gets its own transformation and is checked by its own server; the SDK calls tools of both', async () => {
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { 'x-team': 'blue' } } }));
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    assert.ok(names.includes('one_echo') && names.includes('two_echo'), names.join(', '));
    assert.equal(firstText(await client.callTool({ name: 'one_echo', arguments: { text: 'a' } })), 'one: a');
    assert.equal(firstText(await client.callTool({ name: 'two_echo', arguments: { text: 'b' } })), 'two: b');
    await client.close();
    assert.ok(one.seen.length > 0 && two.seen.length > 0);
    assert.ok(
      one.seen.every((seen) => seen.headers['x-target'] === 'one'),
      'target one got only its own header',
    );
    assert.ok(
      two.seen.every((seen) => seen.headers['x-target'] === 'two'),
      'target two got only its own header',
    );
    assert.equal(one.seen.filter((seen) => seen.rpcMethod === 'tools/call').length, 1);
    assert.equal(two.seen.filter((seen) => seen.rpcMethod === 'tools/call').length, 1);
    // Each server checked gw's requests to its own target (the transformation runs after the check).
    assert.ok(oneAuth.seen.length >= one.seen.length, `${oneAuth.seen.length} checks, ${one.seen.length} requests`);
    assert.ok(twoAuth.seen.length >= two.seen.length);
    assert.ok(oneAuth.seen.every((check) => check.headers['x-target'] === undefined));
    assert.ok(
      oneAuth.seen.every((check) => check.url.startsWith('/mcp')),
      'the check names the request to the target',
    );
  });

  it("a client a target's server refuses reaches no target (the MCP SDK's connect fails)", async () => {
    const seen = [one.seen.length, two.seen.length];
    const client = new Client({ name: 'test-client', version: '1.0.0' });
    await assert.rejects(
      client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { 'x-team': 'red' } } })),
    );
    assert.deepEqual([one.seen.length, two.seen.length], seen);
  });
});
