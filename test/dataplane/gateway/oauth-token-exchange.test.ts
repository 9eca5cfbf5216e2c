// Backend authentication oauthTokenExchange and crossAppAccess with real traffic through gw: an
// authorization server stand-in on loopback (client_secret_basic checked, every form field
// recorded) exchanges the client's token; a plain HTTP backend and an LLM provider record the
// Authorization they get. One exchange serves every request with the same client token; a client
// without a token or with one the token endpoint refuses gets a 401 (in the OpenAI format on an
// LLM route), a failing token endpoint a 502, and neither the client's token, the exchanged one
// nor the endpoint's answer appears in an answer or in the access log. Cross App Access goes
// through two stand-ins.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort, gatewayYaml, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { type RecordingUpstream, startRecordingUpstream } from '../../helpers/recording-upstream.ts';
import {
  type AuthorizationServer,
  freshToken,
  type RecordedRequest,
  startAuthorizationServer,
} from '../backend-auth/oauth-server.ts';

const COMPLETION = JSON.stringify({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'exchanged' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

const LEAK = 'endpoint-said-something-private';

describe('token exchange backend authentication through gw', () => {
  let authServer: AuthorizationServer;
  let identityProvider: AuthorizationServer;
  let upstream: RecordingUpstream;
  let gw: TestGateway;
  let port: number;

  before(async () => {
    authServer = await startAuthorizationServer([{ id: 'gw', method: 'client_secret_basic', secret: 'gw-secret' }]);
    identityProvider = await startAuthorizationServer([
      { id: 'gw-idp', method: 'client_secret_post', secret: 'idp-secret' },
    ]);
    identityProvider.answer = (request: RecordedRequest) => ({
      status: 200,
      body: {
        access_token: `jag-for-${request.form.get('subject_token')}`,
        issued_token_type: 'urn:ietf:params:oauth:token-type:id-jag',
        token_type: 'N_A',
      },
    });
    upstream = await startRecordingUpstream((req, res) => {
      if (req.url === '/v1/chat/completions')
        res.writeHead(200, { 'content-type': 'application/json' }).end(COMPLETION);
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
    port = await freePort();
    const exchange = `{url: "${authServer.url}", path: /token, audiences: [internal-api], scopes: [read],
        clientAuth: {clientId: gw, secretRef: {name: oauth-client}}}`;
    const crossApp = `{audience: "${authServer.url}", scopes: [todos],
        identityProvider: {url: "${identityProvider.url}", clientAuth: {clientId: gw-idp, method: ClientSecretPost, secretRef: {name: oauth-client, key: idp}}},
        resourceAuthorizationServer: {url: "${authServer.url}", path: /token, clientAuth: {clientId: gw, secretRef: {name: oauth-client}}}}`;
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}apiVersion: v1
kind: Secret
metadata: {name: oauth-client}
stringData: {clientSecret: gw-secret, idp: idp-secret}
---
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: web}
spec:
  static: {host: 127.0.0.1, port: ${upstream.port}}
  policies:
    auth:
      oauthTokenExchange: ${exchange}
---
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: llm}
spec:
  ai: {provider: {host: 127.0.0.1, port: ${upstream.port}, alpha: {}}}
  policies:
    auth:
      oauthTokenExchange: ${exchange}
---
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: xaa}
spec:
  static: {host: 127.0.0.1, port: ${upstream.port}}
  policies:
    auth:
      crossAppAccess: ${crossApp}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: routes}
spec:
  parentRefs: [{name: ai}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /web}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: web}]
    - matches: [{path: {type: PathPrefix, value: /xaa}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: xaa}]
    - matches: [{path: {type: PathPrefix, value: /v1}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: llm}]
`,
    });
  });

  after(async () => {
    await gw?.stop();
    await upstream?.close();
    await authServer?.close();
    await identityProvider?.close();
  });

  const web = (token?: string) =>
    fetch(`http://127.0.0.1:${port}/web/resource`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  const chat = (token: string) =>
    fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });

  /** Neither tokens nor the token endpoint's words in the answers or the access log. */
  function assertNothingLeaked(text: string, ...tokens: string[]) {
    for (const secret of [LEAK, 'gw-secret', 'idp-secret', ...tokens])
      assert.ok(!text.includes(secret), `${secret} leaked: ${text}`);
  }

  it('an HTTP backend gets the exchanged token; one exchange per client token', async () => {
    authServer.answer = freshToken;
    const before = authServer.requests.length;
    const seen: string[] = [];
    for (const user of ['alice-token', 'alice-token', 'bob-token', 'alice-token']) {
      const response = await web(user);
      assert.equal(response.status, 200, await response.text());
      seen.push(String(upstream.last().headers.authorization));
    }
    assert.match(seen[0]!, /^Bearer exchanged-\d+$/);
    assert.equal(seen[1], seen[0]);
    assert.equal(seen[3], seen[0]);
    assert.notEqual(seen[2], seen[0]);
    const requests = authServer.requests.slice(before);
    assert.equal(requests.length, 2);
    assert.deepEqual(
      requests.map((request) => [request.path, request.client, request.form.get('subject_token')]),
      [
        ['/token', 'gw', 'alice-token'],
        ['/token', 'gw', 'bob-token'],
      ],
    );
    assert.equal(requests[0]!.form.get('audience'), 'internal-api');
    assert.equal(requests[0]!.form.get('scope'), 'read');
  });

  it('an LLM provider gets the exchanged token', async () => {
    authServer.answer = freshToken;
    const response = await chat('carol-token');
    const body = await response.text();
    assert.equal(response.status, 200, body);
    assert.equal(
      (JSON.parse(body) as { choices: { message: { content: string } }[] }).choices[0]!.message.content,
      'exchanged',
    );
    assert.match(String(upstream.latest('/v1/chat/completions')!.headers.authorization), /^Bearer exchanged-\d+$/);
  });

  it('no client token, a refused one and a failing token endpoint: 401, 401 and 502 without leaks', async () => {
    const reached = upstream.seen.length;
    const missing = await web();
    assert.equal(missing.status, 401);
    const missingText = await missing.text();

    authServer.answer = () => ({ status: 400, body: { error: 'invalid_grant', error_description: LEAK } });
    const refused = await chat('expired-token');
    assert.equal(refused.status, 401);
    const refusedBody = (await refused.json()) as { error: { message: string; type: string } };
    assert.equal(typeof refusedBody.error.message, 'string', 'the OpenAI error format');
    assert.match(refusedBody.error.message, /did not accept/);

    authServer.answer = () => ({ status: 503, body: LEAK });
    const failing = await web('dave-token');
    assert.equal(failing.status, 502);
    const failingText = await failing.text();
    assert.match(failingText, /gw could not obtain oauthTokenExchange credentials/);

    assert.equal(upstream.seen.length, reached, 'nothing reaches the backend');
    const log = gw.accessLog.join('\n');
    assert.match(log, /answered 400 invalid_grant/);
    assert.match(log, /answered 503/);
    assertNothingLeaked(
      `${missingText}${JSON.stringify(refusedBody)}${failingText}${log}`,
      'expired-token',
      'dave-token',
    );
  });

  it('cross app access: the ID-JAG from the identity provider buys the backend token', async () => {
    authServer.answer = (request) => ({
      status: 200,
      body: { access_token: `access-for-${request.form.get('assertion')}`, token_type: 'Bearer', expires_in: 600 },
    });
    const before = identityProvider.requests.length;
    for (let i = 0; i < 2; i++) {
      const response = await fetch(`http://127.0.0.1:${port}/xaa/api`, {
        headers: { authorization: 'Bearer erin-id-token' },
      });
      assert.equal(response.status, 200, await response.text());
      assert.equal(upstream.last().headers.authorization, 'Bearer access-for-jag-for-erin-id-token');
    }
    const exchanges = identityProvider.requests.slice(before);
    assert.equal(exchanges.length, 1);
    assert.equal(exchanges[0]!.client, 'gw-idp');
    assert.equal(exchanges[0]!.form.get('audience'), authServer.url);
    assert.equal(exchanges[0]!.form.get('requested_token_type'), 'urn:ietf:params:oauth:token-type:id-jag');
    assert.equal(authServer.requests.at(-1)!.form.get('grant_type'), 'urn:ietf:params:oauth:grant-type:jwt-bearer');
  });
});
