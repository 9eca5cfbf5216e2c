// GwBackend kind `aws` (agentCore): an Amazon Bedrock AgentCore runtime invoked through gw. The
// stand-in runtime endpoint (InvokeAgentRuntime in restJson1, every signature re-computed with
// @smithy/signature-v4) is proven first with the AWS SDK's own BedrockAgentCoreClient: an
// invocation reaches it with its ARN, qualifier, session id and payload, and wrong credentials are
// raised by the SDK as its service exception. Then through gw, found by
// AWS_ENDPOINT_URL_BEDROCK_AGENTCORE as the SDK finds it: a client's POST becomes the signed
// InvokeAgentRuntime of the configured runtime (ARN, qualifier, the client's session id, its
// body; the ambient credentials, bedrock-agentcore in the ARN's region), a session id is made when
// the client sends none, a bare runtime id goes with accountId, a streamed answer reaches the
// client piece by piece as the runtime writes it, AWS's errors reach the client under a status it
// acts on (gw's own credential failures as 502 with a request id, AWS's detail only in the log),
// the backend's tunnel and request timeout apply, a method other than POST is refused, and a
// runtime that is down answers 503.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  BedrockAgentCoreClient,
  BedrockAgentCoreServiceException,
  InvokeAgentRuntimeCommand,
  ResourceNotFoundException,
} from '@aws-sdk/client-bedrock-agentcore';
import { request } from 'undici';
import { NO_AWS, replaceEnv } from '../../helpers/aws-stand-ins.ts';
import { failureOf } from '../../helpers/failure-of.ts';
import { freePort, gatewayYaml, ownFailureDetail, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { httpRequest } from '../../helpers/http-request.ts';
import { prefixRuleYaml } from '../../helpers/objects.ts';
import { type ConnectProxy, startConnectProxy } from '../../support/connect-proxy.ts';
import {
  type AgentCoreStandIn,
  ECHO,
  sendAwsError,
  startAgentCoreStandIn,
} from '../../support/providers/agentcore-stand-in.ts';

const AMBIENT = { accessKeyId: 'AKIAAMBIENTAGENT', secretAccessKey: 'ambient/agent+secret' };
const WRONG = { accessKeyId: AMBIENT.accessKeyId, secretAccessKey: 'not-the-secret' };
const ACCOUNT = '123456789012';
const RUNTIME_ID = 'support_agent-a1B2c3D4e5';
const ARN = `arn:aws:bedrock-agentcore:eu-west-1:${ACCOUNT}:runtime/${RUNTIME_ID}`;
const OTHER_ID = 'billing_agent-Z9y8X7w6V5';
const OTHER_ARN = `arn:aws:bedrock-agentcore:us-west-2:${ACCOUNT}:runtime/${OTHER_ID}`;
const SESSION = 'session-0123456789abcdef0123456789abcdef';
const SESSION_HEADER = 'x-amzn-bedrock-agentcore-runtime-session-id';

function agentCoreBackendYaml(name: string, agentCore: string, policies = ''): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: ${name}}
spec:
  aws: {agentCore: ${agentCore}}${policies ? `\n  policies: ${policies}` : ''}
---
`;
}

describe('aws.agentCore: Amazon Bedrock AgentCore runtimes through gw', () => {
  let runtime: AgentCoreStandIn;
  let proxy: ConnectProxy;
  let gw: TestGateway;
  let port: number;
  let restoreEnv: (() => void) | undefined;
  const at = (path: string) => `http://127.0.0.1:${port}${path}`;

  before(async () => {
    runtime = await startAgentCoreStandIn({
      keys: [AMBIENT],
      runtimes: { [ARN]: ['prod'], [OTHER_ARN]: [] },
    });
    restoreEnv = replaceEnv({
      ...NO_AWS,
      AWS_ACCESS_KEY_ID: AMBIENT.accessKeyId,
      AWS_SECRET_ACCESS_KEY: AMBIENT.secretAccessKey,
      AWS_ENDPOINT_URL_BEDROCK_AGENTCORE: runtime.url,
      AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: undefined,
      AWS_ACCOUNT_ID: ACCOUNT,
      AWS_REGION: 'us-west-2',
    });
    proxy = await startConnectProxy();
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': [
        gatewayYaml(port),
        `apiVersion: v1
kind: Secret
metadata: {name: wrong-aws}
stringData: {accessKey: ${WRONG.accessKeyId}, secretKey: ${WRONG.secretAccessKey}}
---
`,
        agentCoreBackendYaml('support', `{agentRuntimeId: "${ARN}", qualifier: prod}`),
        agentCoreBackendYaml('support-default', `{agentRuntimeId: "${ARN}"}`),
        agentCoreBackendYaml('by-id', `{agentRuntimeId: ${OTHER_ID}}`),
        agentCoreBackendYaml('no-such-qualifier', `{agentRuntimeId: "${ARN}", qualifier: staging}`),
        agentCoreBackendYaml('tunnelled', `{agentRuntimeId: "${ARN}"}`, `{tunnel: {url: "${proxy.url}"}}`),
        agentCoreBackendYaml('slow', `{agentRuntimeId: "${ARN}"}`, '{http: {requestTimeout: 300ms}}'),
        agentCoreBackendYaml(
          'wrong-keys',
          `{agentRuntimeId: "${ARN}"}`,
          '{auth: {cloudone: {secretRef: {name: wrong-aws}}}}',
        ),
        `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: agents}
spec:
  parentRefs: [{name: ai}]
  rules:
${prefixRuleYaml('support-default', 'support-default')}${prefixRuleYaml('support', 'support')}${prefixRuleYaml('by-id', 'by-id')}${prefixRuleYaml('no-such-qualifier', 'no-such-qualifier')}${prefixRuleYaml('wrong-keys', 'wrong-keys')}${prefixRuleYaml('tunnelled', 'tunnelled')}${prefixRuleYaml('slow', 'slow')}`,
      ].join(''),
    });
  });

  after(async () => {
    await gw?.stop();
    await runtime?.close();
    await proxy?.close();
    restoreEnv?.();
  });

  it("is a stand-in the AWS SDK's BedrockAgentCoreClient invokes, and whose refusals it raises as its own errors", async () => {
    const client = (credentials: typeof AMBIENT) =>
      new BedrockAgentCoreClient({ region: 'eu-west-1', endpoint: runtime.url, credentials, maxAttempts: 1 });
    const answer = await client(AMBIENT).send(
      new InvokeAgentRuntimeCommand({
        agentRuntimeArn: ARN,
        qualifier: 'prod',
        runtimeSessionId: SESSION,
        contentType: 'application/json',
        payload: new TextEncoder().encode('{"prompt":"hello"}'),
      }),
    );
    assert.equal(answer.runtimeSessionId, SESSION);
    assert.deepEqual(JSON.parse(await answer.response!.transformToString()), {
      echo: '{"prompt":"hello"}',
      session: SESSION,
    });
    const seen = runtime.seen.at(-1)!;
    assert.equal(seen.runtimeArn, ARN);
    assert.equal(seen.qualifier, 'prod');
    assert.equal(seen.sessionId, SESSION);
    assert.equal(seen.region, 'eu-west-1');
    assert.equal(seen.service, 'bedrock-agentcore');
    assert.equal(seen.headers['content-type'], 'application/json');

    const refused = await failureOf(
      client(WRONG).send(
        new InvokeAgentRuntimeCommand({ agentRuntimeArn: ARN, runtimeSessionId: SESSION, payload: Buffer.from('{}') }),
      ),
    );
    assert.ok(refused instanceof BedrockAgentCoreServiceException);
    assert.equal(refused.name, 'InvalidSignatureException');
    assert.equal(refused.$metadata.httpStatusCode, 403);

    const missing = await failureOf(
      client(AMBIENT).send(
        new InvokeAgentRuntimeCommand({
          agentRuntimeArn: ARN.replace(RUNTIME_ID, 'gone_agent-0000000000'),
          runtimeSessionId: SESSION,
          payload: Buffer.from('{}'),
        }),
      ),
    );
    assert.ok(missing instanceof ResourceNotFoundException);
  });

  it("sends a client's POST as the signed InvokeAgentRuntime of the configured runtime and qualifier, with the client's session id and body", async () => {
    const reply = await httpRequest(at('/support/any/path?ignored=1'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', [SESSION_HEADER]: SESSION },
      body: '{"prompt":"where is my order?"}',
    });
    assert.equal(reply.status, 200, reply.body);
    assert.deepEqual(JSON.parse(reply.body), { echo: '{"prompt":"where is my order?"}', session: SESSION });
    assert.equal(reply.headers[SESSION_HEADER], SESSION);
    const seen = runtime.seen.at(-1)!;
    // The ARN as the SDK writes the path label: ':' and '/' percent-encoded; the client's path and query gone.
    assert.equal(seen.url, `/runtimes/${encodeURIComponent(ARN)}/invocations?qualifier=prod`);
    assert.equal(seen.runtimeArn, ARN);
    assert.equal(seen.sessionId, SESSION);
    assert.equal(seen.body.toString(), '{"prompt":"where is my order?"}');
    assert.equal(seen.headers['content-type'], 'application/json');
    assert.equal(seen.headers.accept, 'application/json');
    // Signed with the ambient credentials, for bedrock-agentcore in the ARN's region; the session id is signed too.
    assert.equal(seen.accessKeyId, AMBIENT.accessKeyId);
    assert.equal(seen.region, 'eu-west-1');
    assert.equal(seen.service, 'bedrock-agentcore');
    assert.ok(seen.signedHeaders.includes(SESSION_HEADER) && seen.signedHeaders.includes('host'));
    assert.ok(seen.signedHeaders.includes('x-amz-content-sha256'), 'the payload is signed, as the SDK signs it');
  });

  it('makes a session id when the client sends none (as the SDK does), and the client gets it back', async () => {
    const reply = await httpRequest(at('/support-default'), { method: 'POST', body: 'plain words' });
    assert.equal(reply.status, 200, reply.body);
    const seen = runtime.seen.at(-1)!;
    assert.match(seen.sessionId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(reply.headers[SESSION_HEADER], seen.sessionId);
    assert.equal(seen.qualifier, undefined, 'no qualifier: the runtime default endpoint');
    assert.equal(seen.url, `/runtimes/${encodeURIComponent(ARN)}/invocations`);
    // A payload without a type goes as bytes, as the SDK sends it.
    assert.equal(seen.headers['content-type'], 'application/octet-stream');
  });

  it("invokes a bare runtime id with accountId from AWS_ACCOUNT_ID, signed for gw's AWS_REGION", async () => {
    const reply = await httpRequest(at('/by-id'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', [SESSION_HEADER]: SESSION },
      body: '{"invoice":42}',
    });
    assert.equal(reply.status, 200, reply.body);
    const seen = runtime.seen.at(-1)!;
    assert.equal(seen.url, `/runtimes/${OTHER_ID}/invocations?accountId=${ACCOUNT}`);
    assert.equal(seen.runtimeArn, OTHER_ARN);
    assert.equal(seen.region, 'us-west-2');
  });

  it('passes a streamed answer to the client piece by piece, as the runtime writes it', async () => {
    // The runtime writes its next event only once the client has the previous one: an answer gw
    // held back until the end would never complete (the test's timeout), one passed as it comes does.
    const events = ['data: {"text":"Looking"}\n\n', 'data: {"text":" it up"}\n\n', 'data: {"done":true}\n\n'];
    let clientHas = 0;
    const written: number[] = [];
    const waitForClient = async (count: number) => {
      const deadline = Date.now() + 20_000;
      while (clientHas < count) {
        if (Date.now() > deadline) throw new Error(`the client never got event ${count}`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    };
    runtime.answer = async (seen, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', [SESSION_HEADER]: seen.sessionId });
      for (const [index, event] of events.entries()) {
        if (index > 0) await waitForClient(index);
        written.push(Date.now());
        res.write(event);
      }
      res.end();
    };
    try {
      const response = await request(at('/support'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', [SESSION_HEADER]: SESSION },
        body: '{"prompt":"stream please"}',
      });
      assert.equal(response.statusCode, 200);
      assert.equal(response.headers['content-type'], 'text/event-stream');
      let text = '';
      const arrived: number[] = [];
      for await (const chunk of response.body) {
        text += (chunk as Buffer).toString('utf8');
        const complete = events.filter((_, index) => text.startsWith(events.slice(0, index + 1).join(''))).length;
        while (arrived.length < complete) arrived.push(Date.now());
        clientHas = complete;
      }
      assert.equal(text, events.join(''));
      assert.equal(arrived.length, 3);
      // Each event reached the client before the runtime wrote the next one.
      assert.ok(arrived[0]! <= written[1]! && arrived[1]! <= written[2]!, `arrived ${arrived}, written ${written}`);
      assert.equal(runtime.seen.at(-1)!.headers.accept, 'text/event-stream');
    } finally {
      runtime.answer = ECHO;
    }
  });

  it("answers AWS's errors under the status a client acts on, with AWS's body where it is the client's", async () => {
    // A session id AWS refuses (too short): 400 with AWS's validation message.
    const invalid = await httpRequest(at('/support'), {
      method: 'POST',
      headers: { [SESSION_HEADER]: 'short' },
      body: '{}',
    });
    assert.equal(invalid.status, 400);
    assert.match(invalid.headers['x-amzn-errortype'] as string, /^ValidationException:/);
    assert.match(JSON.parse(invalid.body).message, /runtimeSessionId/);

    const scripted = async (status: number, code: string, message: string) => {
      runtime.answer = (_seen, res) => sendAwsError(res, status, code, message);
      try {
        return await httpRequest(at('/support'), {
          method: 'POST',
          headers: { [SESSION_HEADER]: SESSION },
          body: '{}',
        });
      } finally {
        runtime.answer = ECHO;
      }
    };
    const throttled = await scripted(429, 'ThrottlingException', 'Rate exceeded');
    assert.equal(throttled.status, 429);
    const quota = await scripted(402, 'ServiceQuotaExceededException', 'Too many sessions');
    assert.equal(quota.status, 429, 'a quota is a reason to back off, not a payment');
    assert.match(quota.headers['x-amzn-errortype'] as string, /^ServiceQuotaExceededException:/);
    // The agent itself failed: a bad gateway, with the runtime's message for the client.
    const agentFailed = await scripted(424, 'RuntimeClientError', 'The agent raised ValueError');
    assert.equal(agentFailed.status, 502);
    assert.equal(JSON.parse(agentFailed.body).message, 'The agent raised ValueError');
    const awsFailed = await scripted(500, 'InternalServerException', 'internal');
    assert.equal(awsFailed.status, 502);
  });

  it("answers gw's own failures with AWS (credentials refused, an unknown qualifier) as 502 with a request id, AWS's detail in the log only", async () => {
    const wrongKeys = await httpRequest(at('/wrong-keys'), { method: 'POST', body: '{}' });
    const signatureDetail = await ownFailureDetail(gw, wrongKeys);
    assert.equal(wrongKeys.status, 502);
    assert.match(signatureDetail, /403 InvalidSignatureException: The request signature we calculated/);
    assert.ok(!wrongKeys.body.includes('InvalidSignature'));

    const noQualifier = await httpRequest(at('/no-such-qualifier'), { method: 'POST', body: '{}' });
    assert.equal(noQualifier.status, 502);
    assert.match(await ownFailureDetail(gw, noQualifier), /404 ResourceNotFoundException: No endpoint staging/);
  });

  it("applies the backend's connection settings: a tunnel through a CONNECT proxy, the request timeout", async () => {
    const tunnelled = await httpRequest(at('/tunnelled'), {
      method: 'POST',
      headers: { [SESSION_HEADER]: SESSION },
      body: '{"via":"proxy"}',
    });
    assert.equal(tunnelled.status, 200, tunnelled.body);
    assert.equal(proxy.servedTo(`127.0.0.1:${runtime.port}`), 1);
    assert.equal(runtime.seen.at(-1)!.body.toString(), '{"via":"proxy"}');

    // A runtime that never answers: the backend's requestTimeout answers 504.
    runtime.answer = () => undefined;
    try {
      const slow = await httpRequest(at('/slow'), {
        method: 'POST',
        headers: { [SESSION_HEADER]: SESSION },
        body: '{}',
      });
      assert.equal(slow.status, 504);
    } finally {
      runtime.answer = ECHO;
    }
  });

  it('refuses a method other than POST before AWS is called', async () => {
    const before = runtime.received.length;
    const reply = await httpRequest(at('/support'));
    assert.equal(reply.status, 405);
    assert.equal(reply.headers.allow, 'POST');
    assert.equal(runtime.received.length, before);
  });

  it('answers 503 when the runtime endpoint cannot be reached', async () => {
    await runtime.close();
    const reply = await httpRequest(at('/support'), {
      method: 'POST',
      headers: { [SESSION_HEADER]: SESSION },
      body: '{}',
    });
    assert.equal(reply.status, 503);
  });
});
