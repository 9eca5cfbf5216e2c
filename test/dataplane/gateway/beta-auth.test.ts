// Backend authentication beta (Azure) with real traffic through gw: a static HTTP backend, an AI
// backend (an OpenAI-style provider) and an MCP target, each authenticated with the access token
// gw obtains from a stand-in for the Microsoft identity platform with the service principal of a
// Secret. The stand-in is first shown to be what @azure/identity's ClientSecretCredential gets its
// token from. The upstreams accept only that token. A token endpoint that refuses gw's client
// answers the LLM route with a 502 in OpenAI's error format that carries no secret (the access
// log says what failed, without it), and the next request, once the endpoint accepts gw again,
// goes through. The SDK finds the stand-in through AZURE_AUTHORITY_HOST, set for this file only.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ClientSecretCredential } from '@azure/identity';
import { AZURE_AI_SCOPE } from '../../../src/dataplane/auth/backend/beta.ts';
import { freePort, gatewayYaml, lastAccessLogLine, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import {
  type Answer,
  answerOk,
  chatCompletionAnswer,
  type RecordingUpstream,
  startRecordingUpstream,
} from '../../helpers/recording-upstream.ts';
import { type EntraStandIn, entraStandIn, setEnvironment, trustTestCa } from '../backend-auth/entra-stand-ins.ts';
import { echoTools, mcpYaml, startStreamableServer, streamableClient, type TestMcpServer } from '../mcp/helpers.ts';

const TENANT = 'contoso.onmicrosoft.com';
const CLIENT_SECRET = 'gw-azure-client-secret-7c6b5a';
const BROKEN_SECRET = 'gw-azure-refused-secret-3f2e1d';
const ACCESS_TOKEN = 'entra-access-token-for-gw';

/** Answers only requests carrying ACCESS_TOKEN: a chat completion on the LLM path, else 200. */
const tokenChecking: Answer = (req, res, seen) => {
  if (req.headers.authorization !== `Bearer ${ACCESS_TOKEN}`) {
    res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid token"}');
    return;
  }
  (seen.url === '/v1/chat/completions' ? chatCompletionAnswer('from azure') : answerOk)(req, res, seen);
};

const secretYaml = (name: string, clientId: string, clientSecret: string) => `apiVersion: v1
kind: Secret
metadata: {name: ${name}}
stringData: {clientID: ${clientId}, tenantID: ${TENANT}, clientSecret: ${clientSecret}}
---
`;

const chat = (port: number, path: string) =>
  fetch(`http://127.0.0.1:${port}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer client-own-token' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });

/** The access log's `error` of the last request to `path`. */
async function loggedDetail(gw: TestGateway, path: string): Promise<string> {
  return String((await lastAccessLogLine(gw, path)).error);
}

describe('beta (Azure) backend authentication through gw', () => {
  let entra: EntraStandIn;
  let upstream: RecordingUpstream;
  let tools: TestMcpServer;
  let gw: TestGateway;
  let port: number;
  /** Whether the stand-in refuses the client "broken-client" (as Entra refuses a wrong secret). */
  let refuseBroken = true;
  const restore: (() => void)[] = [];

  before(async () => {
    restore.push(trustTestCa());
    entra = await entraStandIn();
    entra.answer = (request) =>
      request.form.client_id === 'broken-client' && refuseBroken
        ? {
            status: 401,
            error: 'invalid_client',
            description: `AADSTS7000215: Invalid client secret provided. Got ${request.form.client_secret}.`,
          }
        : { token: ACCESS_TOKEN, expiresIn: 3599 };
    restore.push(setEnvironment({ AZURE_AUTHORITY_HOST: entra.origin, AZURE_CLIENT_SECRET: undefined }));
    upstream = await startRecordingUpstream(tokenChecking);
    tools = await startStreamableServer(echoTools('azure-tools'));
    port = await freePort();
    const backend = (name: string, spec: string, secret: string) => `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: ${name}}
spec:
  ${spec}
  policies:
    auth: {beta: {secretRef: {name: ${secret}}}}
---
`;
    const rule = (prefix: string, name: string) => `    - matches: [{path: {type: PathPrefix, value: /${prefix}}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: ${name}}]
`;
    const rewritten = (prefix: string, name: string) => `    - matches: [{path: {type: PathPrefix, value: /${prefix}}}]
      filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: ${name}}]
`;
    const provider = `ai: {provider: {host: 127.0.0.1, port: ${upstream.port}, alpha: {}}}`;
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}${secretYaml('azure', 'gw-client', CLIENT_SECRET)}${secretYaml(
        'azure-broken',
        'broken-client',
        BROKEN_SECRET,
      )}${backend('web', `static: {host: 127.0.0.1, port: ${upstream.port}}`, 'azure')}${backend(
        'llm',
        provider,
        'azure',
      )}${backend('llm-broken', provider, 'azure-broken')}apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: routes}
spec:
  parentRefs: [{name: ai}]
  rules:
${rule('web', 'web')}${rule('v1', 'llm')}${rewritten('broken', 'llm-broken')}---
${mcpYaml([{ name: 'azure', port: tools.port, policies: '{auth: {beta: {secretRef: {name: azure}}}}' }])}`,
    });
  });

  after(async () => {
    await gw?.stop();
    await upstream?.close();
    await tools?.close();
    await entra?.close();
    for (const undo of restore.reverse()) undo();
  });

  it('the stand-in is the identity platform for @azure/identity: ClientSecretCredential gets its token', async () => {
    const token = await new ClientSecretCredential(TENANT, 'sdk-proof', 'sdk-proof-secret', {
      disableInstanceDiscovery: true,
    }).getToken(AZURE_AI_SCOPE);
    assert.equal(token.token, ACCESS_TOKEN);
    const request = entra.tokenRequests.at(-1)!;
    assert.deepEqual(
      [request.tenant, request.form.client_id, request.form.client_secret, request.form.scope],
      [TENANT, 'sdk-proof', 'sdk-proof-secret', AZURE_AI_SCOPE],
    );
  });

  it('a static HTTP backend and an AI backend get the Entra ID token, fetched once for both and cached', async () => {
    const before = entra.tokenRequests.filter((r) => r.form.client_id === 'gw-client').length;
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`http://127.0.0.1:${port}/web/resource`, {
        headers: { authorization: 'Bearer client-own-token' },
      });
      assert.equal(response.status, 200, await response.text());
    }
    const response = await chat(port, '/v1/chat/completions');
    const body = await response.text();
    assert.equal(response.status, 200, body);
    assert.equal(
      (JSON.parse(body) as { choices: { message: { content: string } }[] }).choices[0]!.message.content,
      'from azure',
    );
    const seen = upstream.seen.slice(-4);
    assert.deepEqual(
      seen.map((request) => request.url),
      ['/web/resource', '/web/resource', '/web/resource', '/v1/chat/completions'],
    );
    for (const request of seen) assert.equal(request.headers.authorization, `Bearer ${ACCESS_TOKEN}`);
    const fetched = entra.tokenRequests.filter((r) => r.form.client_id === 'gw-client');
    // Both backends use the same credential for the same scope: one state, kept in gw's runtime.
    assert.equal(fetched.length - before, 1, 'one token request for both backends and all four requests');
    for (const request of fetched) {
      assert.equal(request.tenant, TENANT);
      assert.equal(request.form.client_secret, CLIENT_SECRET);
      assert.equal(request.form.scope, AZURE_AI_SCOPE);
    }
  });

  it('an MCP target gets the token too', async () => {
    const { client } = await streamableClient(new URL(`http://127.0.0.1:${port}/mcp`));
    try {
      const result = await client.callTool({ name: 'echo', arguments: { text: 'hello' } });
      assert.deepEqual(result.content, [{ type: 'text', text: 'azure-tools: hello' }]);
    } finally {
      await client.close();
    }
    assert.ok(tools.seen.length > 0);
    for (const seen of tools.seen) assert.equal(seen.headers.authorization, `Bearer ${ACCESS_TOKEN}`);
  });

  it('a refused token request answers 502 in OpenAI’s format without a secret; the next request retries', async () => {
    const response = await chat(port, '/broken/v1/chat/completions');
    const text = await response.text();
    assert.equal(response.status, 502, text);
    const body = JSON.parse(text) as { error: { message: string; type: string } };
    assert.equal(body.error.message, 'gw could not obtain beta (Azure) credentials for the backend.');
    assert.equal(typeof body.error.type, 'string');
    for (const secret of [BROKEN_SECRET, CLIENT_SECRET, ACCESS_TOKEN]) assert.ok(!text.includes(secret), secret);
    const logged = await loggedDetail(gw, '/broken/v1/chat/completions');
    assert.match(logged, /invalid_client/);
    assert.match(logged, /AADSTS7000215/);
    assert.ok(!logged.includes(BROKEN_SECRET), 'the log does not carry the secret the endpoint echoed');
    assert.ok(!gw.logs.join('\n').includes(BROKEN_SECRET), 'nor does any other log line');

    refuseBroken = false;
    const retried = await chat(port, '/broken/v1/chat/completions');
    assert.equal(retried.status, 200, await retried.text());
  });
});
