// Backend authentication cloudone at the compile seam: requests gw signs are sent over the wire to
// a loopback AWS service that recomputes the SigV4 signature from the specification
// (test/helpers/sigv4.ts, node:crypto only): a JSON POST, a Bedrock model id with ':' in the path
// (raw and encoded), a query, session-token credentials, a streamed body (UNSIGNED-PAYLOAD); the
// official Bedrock runtime client's request verifies the same way and agrees with gw's at a fixed
// time. Defaults: service and region from an AWS host name or the provider family; a missing one
// is refused naming the field.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, it, mock } from 'node:test';
import { inspect } from 'node:util';
import { BedrockRuntimeClient, ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import type { BackendAuth } from '../../../src/api/types/backend-auth.ts';
import {
  AuthConfigError,
  type BackendAuthOptions,
  type CompiledBackendAuth,
  compileBackendAuth,
  type OutgoingRequest,
  STREAMED_BODY,
} from '../../../src/dataplane/auth/backend/index.ts';
import { NO_AWS, type SeenRequest, send, signedService, withEnv } from '../../helpers/aws-stand-ins.ts';
import { fakeClock } from '../../helpers/fake-clock.ts';

const KEYS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const TEMPORARY = {
  accessKeyId: 'ASIATEMPORARY',
  secretAccessKey: 'temporary/secret',
  sessionToken: 'FwoGZXIvYXdzEBY+token==',
};
const SECRETS: Record<string, Record<string, string>> = {
  'Secret llm/aws': { accessKey: KEYS.accessKeyId, secretKey: `${KEYS.secretAccessKey}\n` },
  'Secret llm/aws-session': {
    accessKey: TEMPORARY.accessKeyId,
    secretKey: TEMPORARY.secretAccessKey,
    sessionToken: TEMPORARY.sessionToken,
  },
  'Secret llm/no-secret-key': { accessKey: KEYS.accessKeyId },
  'Secret llm/empty-token': { accessKey: KEYS.accessKeyId, secretKey: KEYS.secretAccessKey, sessionToken: ' ' },
};
const data = (ref: string) => SECRETS[ref];
const secrets = (id: string) =>
  id === KEYS.accessKeyId
    ? { secretAccessKey: KEYS.secretAccessKey }
    : id === TEMPORARY.accessKeyId
      ? { secretAccessKey: TEMPORARY.secretAccessKey, sessionToken: TEMPORARY.sessionToken }
      : undefined;

function compiled(auth: BackendAuth, options: BackendAuthOptions = {}): CompiledBackendAuth {
  const result = compileBackendAuth(auth, data, 'llm', { clock: fakeClock(), ...options });
  if (result instanceof AuthConfigError) assert.fail(result.message);
  assert.equal(result.mode, 'cloudone');
  assert.ok(result.sign, 'cloudone signs');
  return result;
}

function refused(auth: BackendAuth, options: BackendAuthOptions = {}): AuthConfigError {
  const result = compileBackendAuth(auth, data, 'llm', { clock: fakeClock(), ...options });
  assert.ok(result instanceof AuthConfigError, 'expected an AuthConfigError');
  return result;
}

let service: Awaited<ReturnType<typeof signedService>>;
before(async () => {
  service = await signedService(secrets, { allowUnsignedPayload: true });
});
after(() => service.close());

/** Applies and signs a request as the proxy does, sends it as signed, and returns what the service saw. */
async function signAndSend(
  auth: CompiledBackendAuth,
  request: Omit<OutgoingRequest, 'origin'>,
  streamed?: () => AsyncIterable<Buffer>,
): Promise<SeenRequest> {
  const headers = request.headers;
  const pending = auth.apply({ headers, query: new URLSearchParams() }, { headers: {} });
  await pending;
  await auth.sign!({ ...request, origin: service.url }, { headers: {} });
  const before = service.seen.length;
  const body = request.body === STREAMED_BODY ? Readable.from(streamed!()) : request.body;
  await send(service.url, request.method, request.path, headers, body);
  assert.equal(service.seen.length, before + 1);
  return service.seen.at(-1)!;
}

function verified(seen: SeenRequest): NonNullable<SeenRequest['verified']> {
  assert.equal(seen.problem, undefined, `the service refused the signature: ${seen.problem}`);
  return seen.verified!;
}

const STATIC = { cloudone: { secretRef: { name: 'aws' }, serviceName: 'bedrock', region: 'us-east-1' } };
const CONVERSE = JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'hello' }] }] });

describe('cloudone SigV4 signing, verified as the service does', () => {
  it('signs a JSON POST: host, content-type, x-amz-date and the body hash, replacing client credentials', async () => {
    const auth = compiled(STATIC);
    const headers: Record<string, string | string[]> = {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(CONVERSE)),
      authorization: 'Bearer client-token',
      'x-api-key': 'client-key',
      'X-Amz-Date': '20000101T000000Z',
      'x-amz-content-sha256': 'UNSIGNED-PAYLOAD',
      'x-amzn-bedrock-trace': 'ENABLED',
      'x-forwarded-for': '10.0.0.1',
      'user-agent': 'client/1.0',
      connection: 'keep-alive',
    };
    const seen = await signAndSend(auth, {
      method: 'POST',
      path: '/model/anthropic.claude-v2/converse',
      headers,
      body: Buffer.from(CONVERSE),
    });
    const result = verified(seen);
    assert.equal(result.accessKeyId, KEYS.accessKeyId);
    assert.equal(result.region, 'us-east-1');
    assert.equal(result.service, 'bedrock');
    assert.equal(result.date, '20300101T000000Z', 'the date is the clock’s');
    assert.deepEqual(result.signedHeaders, [
      'content-type',
      'host',
      'x-amz-content-sha256',
      'x-amz-date',
      'x-amzn-bedrock-trace',
    ]);
    assert.equal(seen.headers.host, `127.0.0.1:${service.port}`, 'the Host signed is the Host sent');
    assert.notEqual(result.payloadHash, 'UNSIGNED-PAYLOAD', "the client's x-amz-content-sha256 is not trusted");
    assert.equal(seen.headers['x-api-key'], undefined, "the client's credentials are not forwarded");
    assert.equal(seen.headers['x-amz-security-token'], undefined, 'long-term keys have no session token');
  });

  it('signs a Bedrock model id with ":" in the path, raw or encoded, as it goes on the wire', async () => {
    const auth = compiled(STATIC);
    for (const path of [
      '/model/us.anthropic.claude-3-5-sonnet-20241022-v2:0/converse',
      '/model/us.anthropic.claude-3-5-sonnet-20241022-v2%3A0/converse-stream',
    ]) {
      const seen = await signAndSend(auth, {
        method: 'POST',
        path,
        headers: { 'content-type': 'application/json' },
        body: CONVERSE,
      });
      assert.equal(seen.url, path, 'the path reaches the service unchanged');
      const result = verified(seen);
      assert.match(result.canonicalRequest.split('\n')[1]!, path.includes('%3A') ? /v2%253A0/ : /v2%3A0/);
    }
  });

  it('signs the query exactly as sent (sorted, encoded, repeated names) and a GET without a body', async () => {
    const auth = compiled(STATIC);
    const seen = await signAndSend(auth, {
      method: 'GET',
      path: '/foundation-models?byProvider=anthropic&b=x%3Ay&a=2&a=1&empty=',
      headers: {},
      body: undefined,
    });
    const result = verified(seen);
    assert.equal(result.canonicalRequest.split('\n')[2], 'a=1&a=2&b=x%3Ay&byProvider=anthropic&empty=');
  });

  it('sends and signs the session token of temporary credentials', async () => {
    const auth = compiled({ cloudone: { ...STATIC.cloudone, secretRef: { name: 'aws-session' } } });
    const seen = await signAndSend(auth, {
      method: 'POST',
      path: '/model/m/invoke',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const result = verified(seen);
    assert.equal(result.sessionToken, TEMPORARY.sessionToken);
    assert.ok(result.signedHeaders.includes('x-amz-security-token'));
  });

  it('signs a streamed body as UNSIGNED-PAYLOAD, which a service that allows it accepts', async () => {
    const auth = compiled({ cloudone: { ...STATIC.cloudone, serviceName: 's3' } });
    const chunks = async function* () {
      yield Buffer.from('first chunk,');
      yield Buffer.from('second chunk');
    };
    const seen = await signAndSend(
      auth,
      {
        method: 'PUT',
        path: '/bucket/key%20with%20space',
        headers: { 'content-type': 'text/plain' },
        body: STREAMED_BODY,
      },
      chunks,
    );
    assert.equal(seen.body.toString(), 'first chunk,second chunk');
    assert.equal(seen.headers['x-amz-content-sha256'], 'UNSIGNED-PAYLOAD');
    // S3 signs the path as sent, not encoded again.
    const { verifySigv4 } = await import('../../helpers/sigv4.ts');
    const result = verifySigv4(seen, { secrets, allowUnsignedPayload: true, s3: true });
    assert.equal(result.payloadHash, 'UNSIGNED-PAYLOAD');
    assert.equal(result.service, 's3');
  });

  it('keeps a Host set before signing (a host rewrite) and signs it', async () => {
    const auth = compiled(STATIC);
    const seen = await signAndSend(auth, {
      method: 'POST',
      path: '/x',
      headers: { host: 'bedrock-runtime.us-east-1.amazonaws.com', 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(seen.headers.host, 'bedrock-runtime.us-east-1.amazonaws.com');
    verified(seen);
  });

  it('agrees with the official Bedrock runtime client: both requests verify, with the same scope, path and body hash', async () => {
    const at = Date.UTC(2030, 0, 1, 12, 30, 45);
    mock.timers.enable({ apis: ['Date'], now: at });
    let sdkSeen: SeenRequest;
    try {
      const client = new BedrockRuntimeClient({
        region: 'us-east-1',
        endpoint: service.url,
        credentials: TEMPORARY,
        maxAttempts: 1,
        requestHandler: new NodeHttpHandler(),
      });
      const before = service.seen.length;
      await client
        .send(
          new ConverseCommand({
            modelId: 'us.anthropic.claude-3-5-sonnet-20241022-v2:0',
            messages: [{ role: 'user', content: [{ text: 'hello' }] }],
          }),
        )
        .catch(() => {});
      assert.equal(service.seen.length, before + 1);
      sdkSeen = service.seen.at(-1)!;
    } finally {
      mock.timers.reset();
    }
    const sdk = verified(sdkSeen);
    const auth = compiled(
      { cloudone: { secretRef: { name: 'aws-session' }, serviceName: 'bedrock', region: 'us-east-1' } },
      { clock: fakeClock(at) },
    );
    const ours = verified(
      await signAndSend(auth, {
        method: 'POST',
        path: sdkSeen.url,
        headers: { 'content-type': String(sdkSeen.headers['content-type']) },
        body: sdkSeen.body,
      }),
    );
    assert.equal(ours.date, sdk.date);
    assert.equal(ours.date, '20300101T123045Z');
    assert.equal(ours.payloadHash, sdk.payloadHash);
    assert.equal(ours.sessionToken, sdk.sessionToken);
    const lines = (request: string) => request.split('\n');
    assert.equal(lines(ours.canonicalRequest)[1], lines(sdk.canonicalRequest)[1], 'the same canonical path');
    assert.equal(sdkSeen.url, '/model/us.anthropic.claude-3-5-sonnet-20241022-v2%3A0/converse');
    for (const name of ['content-type', 'host', 'x-amz-content-sha256', 'x-amz-date', 'x-amz-security-token'])
      assert.ok(sdk.signedHeaders.includes(name) && ours.signedHeaders.includes(name), name);
  });

  it('a request changed after signing (body, path, query, signed header, key) is refused by the service', async () => {
    const auth = compiled(STATIC);
    const sign = async () => {
      const headers: Record<string, string | string[]> = { 'content-type': 'application/json' };
      await auth.sign!(
        { method: 'POST', origin: service.url, path: '/a?x=1', headers, body: '{"a":1}' },
        { headers: {} },
      );
      return headers;
    };
    const tampered: [string, string, Record<string, string | string[]>, string][] = [
      ['body', '/a?x=1', await sign(), '{"a":2}'],
      ['path', '/b?x=1', await sign(), '{"a":1}'],
      ['query', '/a?x=2', await sign(), '{"a":1}'],
      ['content-type', '/a?x=1', { ...(await sign()), 'content-type': 'text/plain' }, '{"a":1}'],
    ];
    for (const [what, path, headers, body] of tampered) {
      const before = service.seen.length;
      const answer = await send(service.url, 'POST', path, headers, body);
      assert.equal(answer.status, 403, what);
      assert.ok(service.seen[before]!.problem, what);
    }
    // And a wrong secret key signs nothing the service accepts.
    SECRETS['Secret llm/wrong'] = { accessKey: KEYS.accessKeyId, secretKey: 'not-the-key' };
    const wrong = compiled({ cloudone: { ...STATIC.cloudone, secretRef: { name: 'wrong' } } });
    const seen = await signAndSend(wrong, { method: 'GET', path: '/', headers: {}, body: undefined });
    assert.equal(seen.problem, 'the signature does not match');
  });

  it('derives a new signing key when the day changes', async () => {
    const clock = fakeClock(Date.UTC(2030, 0, 1, 23, 59, 59));
    const auth = compiled(STATIC, { clock });
    const request = () => ({ method: 'GET', path: '/', headers: {}, body: undefined });
    assert.equal(verified(await signAndSend(auth, request())).date, '20300101T235959Z');
    clock.advance(2_000);
    assert.equal(verified(await signAndSend(auth, request())).date, '20300102T000001Z');
  });

  it("writes byte-identical headers to the AWS SDK's own signer (@smithy/signature-v4) for every kind of request", async () => {
    const epochMs = Date.UTC(2030, 4, 6, 7, 8, 9);
    const cases: { service: string; credentials: typeof KEYS | typeof TEMPORARY; request: OutgoingRequest }[] = [];
    const body = Buffer.from('{"messages":[{"role":"user","content":[{"text":"héllo"}]}]}');
    const paths = [
      '/model/us.anthropic.claude-3-5-sonnet-20241022-v2:0/converse',
      '/model/us.anthropic.claude-3-5-sonnet-20241022-v2%3A0/converse-stream',
      '/a//b/./c/../d/',
      "/it's (all) *here*!?q=a+b&q=a%20a&empty=&z=%2F%3D&A=1",
      '/',
      '/bucket/key with space.txt',
    ];
    for (const service of ['bedrock', 's3'])
      for (const [index, path] of paths.entries())
        cases.push({
          service,
          credentials: index % 2 === 0 ? KEYS : TEMPORARY,
          request: {
            method: index % 3 === 0 ? 'GET' : 'POST',
            origin: 'https://service.us-east-1.amazonaws.com:8443',
            path,
            headers: {
              'Content-Type': 'application/json',
              'x-amz-target': '  spaced   value\t here ',
              'X-Amzn-Trace-Id': ['Root=1', 'Parent=2'],
              'user-agent': 'not signed',
              authorization: 'Bearer client-token',
            },
            body: index === 4 ? STREAMED_BODY : index % 3 === 0 ? undefined : body,
          },
        });
    const { SignatureV4 } = await import('@smithy/signature-v4');
    const { Hash } = await import('@smithy/hash-node');
    for (const { service, credentials, request } of cases) {
      const secret = credentials === KEYS ? 'aws' : 'aws-session';
      const auth = compiled(
        { cloudone: { secretRef: { name: secret }, serviceName: service, region: 'us-east-1' } },
        { clock: fakeClock(epochMs) },
      );
      const ours = { ...request, headers: { ...request.headers } };
      await auth.sign!(ours, { headers: {} });

      // The SDK signs the same headers gw chose to sign, with the path and query split as it takes them.
      const at = request.path.indexOf('?');
      const query: Record<string, string | string[]> = {};
      for (const [name, value] of new URLSearchParams(at === -1 ? '' : request.path.slice(at + 1))) {
        const previous = query[name];
        query[name] = previous === undefined ? value : ([] as string[]).concat(previous, value);
      }
      const signedNames = ours.headers
        .authorization!.toString()
        .match(/SignedHeaders=([^,]+)/)![1]!
        .split(';');
      const sent = new Map(Object.entries(ours.headers).map(([name, value]) => [name.toLowerCase(), value]));
      const headers: Record<string, string> = {};
      for (const name of signedNames) {
        if (name === 'x-amz-date' || name === 'x-amz-security-token') continue;
        const value = sent.get(name)!;
        headers[name] = Array.isArray(value) ? value.join(',') : value;
      }
      // What the SDK would sign of the rest is what gw left out on purpose (user-agent, the trace id).
      assert.ok(!signedNames.includes('x-amzn-trace-id') && !signedNames.includes('user-agent'));
      const sdk = await new SignatureV4({
        credentials,
        region: 'us-east-1',
        service,
        sha256: Hash.bind(null, 'sha256'),
        uriEscapePath: service !== 's3',
      }).sign(
        {
          method: request.method,
          protocol: 'https:',
          hostname: String(ours.headers.host),
          path: at === -1 ? request.path : request.path.slice(0, at),
          query,
          headers,
          body: request.body === STREAMED_BODY ? undefined : request.body,
        },
        { signingDate: new Date(epochMs) },
      );
      for (const name of ['authorization', 'x-amz-date', 'x-amz-content-sha256', 'x-amz-security-token'])
        assert.equal(ours.headers[name], sdk.headers[name], `${service} ${request.path}: ${name}`);
    }
  });

  it('keeps no secret in the compiled auth', () => {
    const auth = compiled(STATIC);
    assert.doesNotMatch(inspect(auth, { depth: 10 }), /wJalrXUtnFEMI/);
    assert.doesNotMatch(JSON.stringify(auth), /wJalrXUtnFEMI/);
  });
});

describe('cloudone service and region', () => {
  const signedScope = async (auth: CompiledBackendAuth) => {
    const headers: Record<string, string | string[]> = {};
    await auth.sign!({ method: 'GET', origin: service.url, path: '/', headers, body: undefined }, { headers: {} });
    return /Credential=[^/]+\/\d{8}\/([^/]+)\/([^/]+)\//.exec(String(headers.authorization))!.slice(1);
  };

  it('derives both from an AWS host name, and Bedrock runtime hosts sign as bedrock', async () => {
    const secretRef = { name: 'aws' };
    const cases: [string, string, string][] = [
      ['bedrock-runtime.us-west-2.amazonaws.com', 'us-west-2', 'bedrock'],
      ['bedrock-runtime-fips.us-gov-west-1.amazonaws.com', 'us-gov-west-1', 'bedrock'],
      ['lambda.eu-central-1.amazonaws.com', 'eu-central-1', 'lambda'],
      ['vpce-0a1b2c-abcd.execute-api.ap-southeast-2.vpce.amazonaws.com', 'ap-southeast-2', 'execute-api'],
      ['sts.cn-north-1.amazonaws.com.cn', 'cn-north-1', 'sts'],
    ];
    for (const [host, region, name] of cases) {
      const auth = compiled({ cloudone: { secretRef } }, { target: { host } });
      assert.deepEqual(await signedScope(auth), [region, name], host);
    }
  });

  it('takes the fields first, then the typed backend region and the provider family', async () => {
    const secretRef = { name: 'aws' };
    const host = 'bedrock-runtime.us-west-2.amazonaws.com';
    assert.deepEqual(
      await signedScope(
        compiled({ cloudone: { secretRef, serviceName: 'execute-api', region: 'eu-west-1' } }, { target: { host } }),
      ),
      ['eu-west-1', 'execute-api'],
    );
    assert.deepEqual(
      await signedScope(
        compiled(
          { cloudone: { secretRef } },
          { target: { host: 'llm.internal', family: 'zeta', region: 'ca-central-1' } },
        ),
      ),
      ['ca-central-1', 'bedrock'],
    );
  });

  it('refuses a backend whose service or region cannot be known, naming the field to set', async () => {
    const secretRef = { name: 'aws' };
    const service = refused({ cloudone: { secretRef, region: 'us-east-1' } }, { target: { host: 'llm.internal' } });
    assert.equal(service.field, 'cloudone.serviceName');
    assert.match(service.message, /llm\.internal.*set serviceName/);
    await withEnv(NO_AWS, async () => {
      const region = refused({ cloudone: { secretRef, serviceName: 'bedrock' } }, { target: { host: 'llm.internal' } });
      assert.equal(region.field, 'cloudone.region');
      assert.match(region.message, /set region/);
    });
    // The environment's region is the default of last resort.
    await withEnv({ ...NO_AWS, AWS_REGION: 'sa-east-1' }, async () => {
      const auth = compiled({ cloudone: { secretRef, serviceName: 'bedrock' } }, { target: { host: 'llm.internal' } });
      assert.deepEqual(await signedScope(auth), ['sa-east-1', 'bedrock']);
    });
  });

  it('reads the profile region through the SDK when AWS_REGION is unset', async () => {
    const { mkdtemp, writeFile, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const dir = await mkdtemp(join(tmpdir(), 'gw-aws-'));
    try {
      const config = join(dir, 'config');
      await writeFile(config, '[default]\nregion = eu-north-1\n[profile team]\nregion = ap-northeast-3\n');
      for (const [profile, region] of [
        [undefined, 'eu-north-1'],
        ['team', 'ap-northeast-3'],
      ] as const) {
        await withEnv({ ...NO_AWS, AWS_CONFIG_FILE: config, AWS_PROFILE: profile }, async () => {
          const auth = compiled({ cloudone: { secretRef: { name: 'aws' }, serviceName: 'bedrock' } });
          assert.deepEqual(await signedScope(auth), [region, 'bedrock']);
        });
      }
    } finally {
      await rm(dir, { recursive: true });
    }
  });

  it('refuses a Secret without its keys, location beside cloudone, and secretRef beside assumeRole', () => {
    const noKey = refused({ cloudone: { ...STATIC.cloudone, secretRef: { name: 'no-secret-key' } } });
    assert.equal(noKey.field, 'cloudone.secretRef.key');
    assert.match(noKey.message, /Secret llm\/no-secret-key has no key "secretKey"/);
    const emptyToken = refused({ cloudone: { ...STATIC.cloudone, secretRef: { name: 'empty-token' } } });
    assert.match(emptyToken.message, /key "sessionToken" of Secret llm\/empty-token is empty/);
    const missing = refused({ cloudone: { ...STATIC.cloudone, secretRef: { name: 'absent' } } });
    assert.equal(missing.field, 'cloudone.secretRef.name');
    const location = refused({ ...STATIC, location: { header: { name: 'x-token' } } });
    assert.equal(location.field, 'location');
    const both = refused({
      cloudone: { ...STATIC.cloudone, assumeRole: { roleId: 'arn:aws:iam::123456789012:role/r' } },
    });
    assert.equal(both.field, 'cloudone.assumeRole');
    for (const error of [noKey, emptyToken, missing]) assert.doesNotMatch(error.message, /wJalrXUtnFEMI/);
  });
});
