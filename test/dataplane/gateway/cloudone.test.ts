// Backend authentication cloudone (AWS SigV4) with real traffic through gw: a static HTTP backend
// and an AI backend whose loopback upstream accepts only requests whose SigV4 signature it
// recomputes (test/helpers/sigv4.ts) — a JSON POST read whole by a buffer policy, a path with
// ':', a query, a body streamed past the buffer limit — with keys from a Secret, and a backend
// that assumes a role through a loopback STS with the ambient (environment) credentials and a
// session name from a request header. STS refusing answers
// 502 in the client's format (plain text, and an OpenAI error on an LLM route) with no secret; an
// invalid computed session name answers 400; a backend whose signing service cannot be known is
// refused and its traffic fails closed. The environment the SDK reads is set for this file's
// process and restored after.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  issue,
  NO_AWS,
  type SeenRequest,
  type StsStandIn,
  signedService,
  stsStandIn,
  tagsOf,
} from '../../helpers/aws-stand-ins.ts';
import { freePort, gatewayYaml, ownFailureDetail, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { httpRequest } from '../../helpers/http-request.ts';
import { authBackendYaml, prefixRuleYaml } from '../../helpers/objects.ts';

const KEYS = { accessKeyId: 'AKIDGATEWAY', secretAccessKey: 'gateway/secret+key' };
const SOURCE = issue('AKIASOURCE', Number.POSITIVE_INFINITY);
const ROLE = 'arn:aws:iam::123456789012:role/gw-upstream';
const DENIED_ROLE = 'arn:aws:iam::123456789012:role/denied';
const CHAT_ANSWER = JSON.stringify({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'signed' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

describe('cloudone backend authentication through gw', () => {
  let sts: StsStandIn;
  let upstream: Awaited<ReturnType<typeof signedService>>;
  let gw: TestGateway;
  let port: number;
  const savedEnv: Record<string, string | undefined> = {};

  before(async () => {
    sts = await stsStandIn(
      (id) =>
        id === SOURCE.accessKeyId
          ? { secretAccessKey: SOURCE.secretAccessKey, sessionToken: SOURCE.sessionToken }
          : undefined,
      Date.now,
      'eu-west-1',
    );
    sts.next = (call) =>
      call.form.get('RoleArn') === DENIED_ROLE
        ? {
            status: 403,
            code: 'AccessDenied',
            message: `${SOURCE.accessKeyId} is not authorized to perform sts:AssumeRole`,
          }
        : issue('ASIAROLE', Date.now() + 3_600_000);
    upstream = await signedService(
      (id) => (id === KEYS.accessKeyId ? { secretAccessKey: KEYS.secretAccessKey } : sts.issued.get(id)),
      {
        allowUnsignedPayload: true,
        answer: (seen) => (seen.url === '/v1/chat/completions' ? CHAT_ANSWER : '{"ok":true}'),
      },
    );
    const env = {
      ...NO_AWS,
      AWS_ACCESS_KEY_ID: SOURCE.accessKeyId,
      AWS_SECRET_ACCESS_KEY: SOURCE.secretAccessKey,
      AWS_SESSION_TOKEN: SOURCE.sessionToken,
      AWS_ENDPOINT_URL_STS: sts.url,
    };
    for (const [name, value] of Object.entries(env)) {
      savedEnv[name] = process.env[name];
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }

    port = await freePort();
    const backend = (name: string, spec: string, cloudone: string) =>
      authBackendYaml(name, spec, `{cloudone: ${cloudone}}`);
    const staticSpec = `static: {host: 127.0.0.1, port: ${upstream.port}}`;
    const rule = prefixRuleYaml;
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}apiVersion: v1
kind: Secret
metadata: {name: aws}
stringData: {accessKey: ${KEYS.accessKeyId}, secretKey: "${KEYS.secretAccessKey}"}
---
${backend('web', staticSpec, '{secretRef: {name: aws}, serviceName: execute-api, region: eu-west-1}')}${backend(
  'llm',
  `ai: {provider: {host: 127.0.0.1, port: ${upstream.port}, alpha: {}}}`,
  '{secretRef: {name: aws}, serviceName: bedrock, region: us-east-1}',
)}${backend(
  'assumed',
  staticSpec,
  `{serviceName: execute-api, region: eu-west-1, assumeRole: {roleId: "${ROLE}", sessionNameExpression: 'request.headers["x-team"]', tags: [{key: Team, expression: 'request.headers["x-team"]'}, {key: Env, value: test}]}}`,
)}${backend('denied', staticSpec, `{serviceName: execute-api, region: eu-west-1, assumeRole: {roleId: "${DENIED_ROLE}"}}`)}${backend(
  'denied-llm',
  `ai: {provider: {host: 127.0.0.1, port: ${upstream.port}, alpha: {}}}`,
  `{serviceName: bedrock, region: eu-west-1, assumeRole: {roleId: "${DENIED_ROLE}"}}`,
)}${backend('no-service', staticSpec, '{secretRef: {name: aws}, region: eu-west-1}')}apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: routes}
spec:
  parentRefs: [{name: ai}]
  rules:
${rule('web', 'web')}${rule('v1', 'llm')}${rule('assumed', 'assumed')}${rule('denied-llm', 'denied-llm')}${rule('denied', 'denied')}${rule('no-service', 'no-service')}---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: buffered}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai}]
  traffic: {buffer: {request: {maxBytes: 64Ki, failureMode: FailOpen}}}
`,
    });
    assert.match(
      gw.logs.join('\n'),
      /GwBackend default\/no-service: .*cloudone\.serviceName: the AWS service to sign for cannot be derived from the backend host 127\.0\.0\.1; set serviceName/,
    );
  });

  after(async () => {
    await gw?.stop();
    await upstream?.close();
    await sts?.close();
    for (const [name, value] of Object.entries(savedEnv)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  const lastSeen = (): SeenRequest => upstream.seen.at(-1)!;
  const accepted = (seen: SeenRequest) => {
    assert.equal(seen.problem, undefined, `the upstream refused the signature: ${seen.problem}`);
    return seen.verified!;
  };

  it('signs a JSON POST (body read by a buffer policy), a path with ":" and a query; the upstream verifies each', async () => {
    for (const path of [
      '/web/model/us.anthropic.claude-3-5-sonnet-20241022-v2:0/converse',
      '/web/items?b=2&a=x%3Ay&a=1',
    ]) {
      const before = upstream.seen.length;
      const response = await httpRequest(`http://127.0.0.1:${port}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: 'Bearer client-token',
          'x-amz-date': '20000101T000000Z',
        },
        body: '{"messages":[{"role":"user","content":[{"text":"hi"}]}]}',
      });
      assert.equal(response.status, 200, response.body);
      assert.equal(upstream.seen.length, before + 1);
      const seen = lastSeen();
      const verified = accepted(seen);
      assert.equal(verified.accessKeyId, KEYS.accessKeyId);
      assert.equal(verified.service, 'execute-api');
      assert.equal(verified.region, 'eu-west-1');
      assert.equal(seen.url.split('?')[0], path.split('?')[0]);
      // An HTTPRoute forwards the client's Host (a hostRewrite would replace it): signed as sent.
      assert.equal(seen.headers.host, `127.0.0.1:${port}`);
      assert.ok(verified.signedHeaders.includes('host'));
      assert.ok(verified.signedHeaders.includes('content-type'));
      assert.notEqual(verified.payloadHash, 'UNSIGNED-PAYLOAD', 'a buffered body is signed');
    }
  });

  it('signs a body streamed past the buffer limit (FailOpen) as UNSIGNED-PAYLOAD', async () => {
    const part = Buffer.alloc(40 * 1024, 'a');
    const body = async function* () {
      yield part;
      await new Promise((resolve) => setTimeout(resolve, 10));
      yield part;
    };
    const { Readable } = await import('node:stream');
    const response = await httpRequest(`http://127.0.0.1:${port}/web/upload`, {
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream' },
      body: Readable.from(body()),
    });
    assert.equal(response.status, 200, response.body);
    const seen = lastSeen();
    assert.equal(seen.body.length, 2 * part.length);
    assert.equal(accepted(seen).payloadHash, 'UNSIGNED-PAYLOAD');
  });

  it('signs an LLM request to an AI backend', async () => {
    const response = await httpRequest(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer client-token' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(response.status, 200, response.body);
    assert.equal(
      (JSON.parse(response.body) as { choices: { message: { content: string } }[] }).choices[0]!.message.content,
      'signed',
    );
    const verified = accepted(lastSeen());
    assert.equal(verified.service, 'bedrock');
    assert.equal(verified.region, 'us-east-1');
    assert.equal(lastSeen().headers.authorization?.includes('client-token'), false);
  });

  it('assumes the role per session name from the request, with its tags, and signs with the assumed credentials', async () => {
    const calls = sts.calls.length;
    for (const team of ['payments', 'payments', 'ledger']) {
      const response = await httpRequest(`http://127.0.0.1:${port}/assumed/report`, { headers: { 'x-team': team } });
      assert.equal(response.status, 200, response.body);
      const verified = accepted(lastSeen());
      assert.ok(sts.issued.has(verified.accessKeyId), 'signed with credentials STS issued');
      assert.equal(verified.sessionToken, sts.issued.get(verified.accessKeyId)!.sessionToken);
    }
    const made = sts.calls.slice(calls);
    assert.equal(made.length, 2, 'one STS call per session, then cached');
    assert.deepEqual(
      made.map((call) => [call.verified?.accessKeyId, call.form.get('RoleArn'), call.form.get('RoleSessionName')]),
      [
        [SOURCE.accessKeyId, ROLE, 'payments'],
        [SOURCE.accessKeyId, ROLE, 'ledger'],
      ],
    );
    assert.deepEqual(tagsOf(made[0]!.form), { Env: 'test', Team: 'payments' });
  });

  it('a session name STS would refuse answers 400, calling no STS', async () => {
    const calls = sts.calls.length;
    const before = upstream.seen.length;
    const response = await httpRequest(`http://127.0.0.1:${port}/assumed/report`, {
      headers: { 'x-team': 'no spaces allowed' },
    });
    assert.equal(response.status, 400);
    assert.match(response.body, /role session is invalid/);
    assert.equal(sts.calls.length, calls);
    assert.equal(upstream.seen.length, before);
  });

  it("STS refusing answers 502 in the client's format, without secrets, and is retried by the next request", async () => {
    for (let attempt = 0; attempt < 2; attempt++) {
      const calls = sts.calls.length;
      const response = await httpRequest(`http://127.0.0.1:${port}/denied/x`);
      assert.equal(response.status, 502);
      // gw's own failure: a request id for the client, the kind and the cause in the log.
      assert.match(
        await ownFailureDetail(gw, response),
        /^gw could not obtain cloudone \(AWS\) credentials for the backend\. .*AccessDenied/,
      );
      assert.equal(sts.calls.length, calls + 1, 'each request tries STS again');
    }
    const llm = await httpRequest(`http://127.0.0.1:${port}/denied-llm/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(llm.status, 502, llm.body);
    // On an LLM route a failure of gw's own is an OpenAI error naming the request id; the log says why.
    assert.equal(typeof (JSON.parse(llm.body) as { error: { message: string } }).error.message, 'string');
    assert.match(
      await ownFailureDetail(gw, llm),
      /STS AssumeRole arn:aws:iam::123456789012:role\/denied .*AccessDenied/,
    );
    const everything = `${llm.body}${gw.logs.join('\n')}${gw.accessLog.join('\n')}`;
    for (const secret of [SOURCE.secretAccessKey, SOURCE.sessionToken, KEYS.secretAccessKey])
      assert.equal(everything.includes(secret), false, 'no secret in answers or logs');
    assert.match(gw.accessLog.join('\n'), /AccessDenied/);
  });

  it('a backend whose signing service cannot be known fails closed', async () => {
    const before = upstream.seen.length;
    const response = await fetch(`http://127.0.0.1:${port}/no-service`);
    const detail = await ownFailureDetail(gw, response);
    assert.match(detail, /cloudone\.serviceName/);
    assert.equal(upstream.seen.length, before);
  });
});
