// Backend authentication cloudtwo (Google Cloud) with real traffic through gw: a service account
// key in a Secret (its token_uri at a stand-in of Google's token endpoint, which verifies the
// assertion with the public key), an AI backend that accepts only access tokens the stand-in
// issued, and a static HTTP backend that accepts only an ID token for its audience. While the
// token endpoint refuses gw, the LLM route answers an OpenAI-style 502 that quotes nothing secret
// (the access log names the endpoint's status and error code), and the next request, once the
// endpoint answers, gets through. Credentials gw does not take from a Secret (external_account)
// are refused, named in the backend's status, and fail closed.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { jwtVerify } from 'jose';
import { statusOf } from '../../helpers/cli.ts';
import {
  authBackendYaml,
  freePort,
  gatewayYaml,
  lastAccessLogLine,
  prefixRuleYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import {
  ID_TOKEN_ISSUER,
  ID_TOKEN_PUBLIC_KEY,
  serviceAccount,
  TokenEndpointStandIn,
} from '../../helpers/google-stand-ins.ts';
import {
  answerOk,
  chatCompletionAnswer,
  type RecordingUpstream,
  startRecordingUpstream,
} from '../../helpers/recording-upstream.ts';

const ID_AUDIENCE = 'https://internal-api.example.com';

interface Upstream {
  recording: RecordingUpstream;
  port: number;
  /** Authorization headers of the requests it accepted and refused. */
  accepted: string[];
  refused: string[];
}

/** An upstream that takes a Bearer access token the stand-in issued (/v1/…) or an ID token for ID_AUDIENCE. */
async function googleProtectedUpstream(endpoint: TokenEndpointStandIn): Promise<Upstream> {
  const accepted: string[] = [];
  const refused: string[] = [];
  const valid = async (authorization: string, path: string) => {
    const token = /^Bearer (\S+)$/.exec(authorization)?.[1];
    if (token === undefined) return false;
    if (path.startsWith('/v1/')) return endpoint.accessTokens().has(token);
    try {
      await jwtVerify(token, ID_TOKEN_PUBLIC_KEY, { issuer: ID_TOKEN_ISSUER, audience: ID_AUDIENCE });
      return true;
    } catch {
      return false;
    }
  };
  const recording = await startRecordingUpstream((req, res, seen) => {
    const authorization = seen.headers.authorization ?? '';
    void valid(authorization, seen.url).then((ok) => {
      (ok ? accepted : refused).push(authorization);
      if (!ok) {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end('{"error":{"code":401,"status":"UNAUTHENTICATED"}}');
      } else if (seen.url === '/v1/chat/completions') chatCompletionAnswer('from google')(req, res, seen);
      else answerOk(req, res, seen);
    });
  });
  return { recording, port: recording.port, accepted, refused };
}

const chat = (port: number) =>
  fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer client-token' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });

describe('cloudtwo backend authentication through gw', () => {
  const account = serviceAccount();
  let endpoint: TokenEndpointStandIn;
  let upstream: Upstream;
  let gw: TestGateway;
  let port: number;
  let keyFile: Record<string, unknown>;

  before(async () => {
    endpoint = await TokenEndpointStandIn.start();
    endpoint.trust(account);
    upstream = await googleProtectedUpstream(endpoint);
    port = await freePort();
    keyFile = account.keyFile(endpoint.url);
    const backend = (name: string, spec: string, cloudtwo: string) =>
      authBackendYaml(name, spec, `{cloudtwo: ${cloudtwo}}`);
    const staticSpec = `static: {host: 127.0.0.1, port: ${upstream.port}}`;
    const rule = prefixRuleYaml;
    const external = {
      type: 'external_account',
      audience: '//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/x',
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      token_url: endpoint.url,
      credential_source: { file: '/etc/hostname' },
    };
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}apiVersion: v1
kind: Secret
metadata: {name: google}
stringData:
  credentials.json: '${JSON.stringify(keyFile)}'
---
apiVersion: v1
kind: Secret
metadata: {name: federated}
stringData:
  credentials.json: '${JSON.stringify(external)}'
---
${backend('llm', `ai: {provider: {host: 127.0.0.1, port: ${upstream.port}, alpha: {}}}`, '{secretRef: {name: google}}')}${backend(
  'web',
  staticSpec,
  `{secretRef: {name: google}, type: IdToken, audience: '${ID_AUDIENCE}'}`,
)}${backend('federated', staticSpec, '{secretRef: {name: federated}}')}apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: routes}
spec:
  parentRefs: [{name: ai}]
  rules:
${rule('web', 'web')}${rule('v1', 'llm')}${rule('federated', 'federated')}`,
    });
    assert.match(
      gw.logs.join('\n'),
      /GwBackend default\/federated: .*cloudtwo\.secretRef: key "credentials\.json" of Secret default\/federated holds external_account credentials/,
    );
  });

  after(async () => {
    await gw?.stop();
    await upstream?.recording.close();
    await endpoint?.close();
  });

  it('answers an OpenAI-style 502 without secrets while the token endpoint refuses gw, then serves the next request', async () => {
    endpoint.failWith = 400;
    let failed: Response;
    try {
      failed = await chat(port);
    } finally {
      endpoint.failWith = undefined;
    }
    const body = await failed.text();
    assert.equal(failed.status, 502, body);
    const error = (JSON.parse(body) as { error: { message: string; type: string } }).error;
    // gw's own failure: a request id for the client, the kind and the cause in the log.
    assert.match(error.message, /^gw could not serve this request; .* request id [0-9a-f-]{36}$/);
    assert.equal(upstream.accepted.length + upstream.refused.length, 0, 'nothing reached the backend');
    const logged = String((await lastAccessLogLine(gw, '/v1/chat/completions')).error);
    assert.match(logged, /^gw could not obtain cloudtwo \(Google Cloud\) credentials for the backend\. /);
    assert.match(logged, /service_account credentials of gw-backend@test-project\.iam\.gserviceaccount\.com/);
    assert.match(logged, /answered HTTP 400 \(invalid_grant\)/);
    const privateKey = String(keyFile.private_key);
    for (const text of [body, logged, gw.logs.join('\n')]) {
      assert.doesNotMatch(text, /eyJ|Invalid grant|client-token/, 'no assertion, endpoint answer or client token');
      assert.ok(!text.includes(privateKey.slice(40, 80)));
    }

    const response = await chat(port);
    const answer = await response.text();
    assert.equal(response.status, 200, answer);
    assert.match(answer, /from google/);
    assert.equal(upstream.accepted.length, 1);
    assert.ok(endpoint.accessTokens().has(upstream.accepted[0]!.slice('Bearer '.length)));
    const issued = endpoint.issued.filter((entry) => entry.kind === 'access');
    assert.equal(issued.length, 1);
    assert.equal(issued[0]!.assertion!.iss, account.email);
  });

  it('sends an ID token for the configured audience to an HTTP backend, fetched once for several requests', async () => {
    const before = endpoint.issued.length;
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`http://127.0.0.1:${port}/web/resource`);
      assert.equal(response.status, 200, await response.text());
    }
    const issued = endpoint.issued.slice(before);
    assert.equal(issued.length, 1, 'one ID token, then the cached one');
    assert.equal(issued[0]!.audience, ID_AUDIENCE);
    assert.equal(upstream.refused.length, 0);
  });

  it('refuses external_account credentials from a Secret: named in the status, the traffic fails closed', async () => {
    const before = upstream.accepted.length + upstream.refused.length;
    const response = await fetch(`http://127.0.0.1:${port}/federated`);
    assert.ok(response.status >= 500, `expected a 5xx, got ${response.status}`);
    assert.equal(upstream.accepted.length + upstream.refused.length, before, 'nothing reached the backend');
    const status = await statusOf(gw.dir, 'GwBackend default/federated');
    assert.match(status, /InvalidCredentialRef/);
    assert.match(status, /cloudtwo\.secretRef/);
    assert.match(status, /external_account/);
    assert.ok(
      endpoint.issued.every((entry) => entry.grant !== 'token-exchange'),
      'gw never exchanged it',
    );
  });
});
