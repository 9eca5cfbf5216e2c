// cloudone's ambient credentials, found by the AWS SDK's own default chain: the environment, EC2
// instance metadata (IMDSv2) and ECS container credentials, each from a loopback stand-in that the
// SDK's own provider (fromInstanceMetadata, fromContainerMetadata) is pointed at first. gw signs
// with what the chain gives, fetches it once while it is valid, refreshes it before it expires
// (gw's clock), and answers 502 without secrets when the chain finds nothing. The environment is
// set and restored around each test (this file runs in its own process).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fromContainerMetadata, fromInstanceMetadata } from '@aws-sdk/credential-providers';
import type { BackendAuth } from '../../../src/api/types/backend-auth.ts';
import { credentialMetrics } from '../../../src/dataplane/auth/backend/credential-metrics.ts';
import {
  AuthConfigError,
  BackendCredentialError,
  type CompiledBackendAuth,
  compileBackendAuth,
} from '../../../src/dataplane/auth/backend/index.ts';
import { REFRESH_MARGIN_MS } from '../../../src/dataplane/auth/backend/token-cache.ts';
import {
  ecsStandIn,
  type IssuedCredentials,
  imdsStandIn,
  issue,
  NO_AWS,
  send,
  signedService,
  withEnv,
} from '../../helpers/aws-stand-ins.ts';
import { type FakeClock, fakeClock } from '../../helpers/fake-clock.ts';

const HOUR = 3_600_000;
const AMBIENT: BackendAuth = { cloudone: { serviceName: 'bedrock', region: 'us-east-1' } };

/** Every credential any stand-in handed out, for the signed service. */
const known = new Map<string, IssuedCredentials>();
const remember = (credentials: IssuedCredentials) => {
  known.set(credentials.accessKeyId, credentials);
  return credentials;
};

let service: Awaited<ReturnType<typeof signedService>>;
before(async () => {
  service = await signedService((id) => known.get(id));
});
after(() => service.close());

function compiled(clock: FakeClock): CompiledBackendAuth {
  const result = compileBackendAuth(AMBIENT, () => undefined, 'llm', { clock });
  if (result instanceof AuthConfigError) assert.fail(result.message);
  return result;
}

/** Signs a request with `auth` and sends it; the access key the service verified. */
async function signedWith(auth: CompiledBackendAuth): Promise<string> {
  const headers: Record<string, string | string[]> = { 'content-type': 'application/json' };
  await auth.sign!(
    { method: 'POST', origin: service.url, path: '/model/m/converse', headers, body: '{}' },
    { headers: {} },
  );
  const answer = await send(service.url, 'POST', '/model/m/converse', headers, '{}');
  const seen = service.seen.at(-1)!;
  assert.equal(answer.status, 200, seen.problem);
  return seen.verified!.accessKeyId;
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('cloudone ambient credentials (the AWS SDK default chain)', () => {
  it('signs with AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, read once', async () => {
    const env = remember(issue('ASIAENV', Number.POSITIVE_INFINITY));
    await withEnv(
      {
        ...NO_AWS,
        AWS_ACCESS_KEY_ID: env.accessKeyId,
        AWS_SECRET_ACCESS_KEY: env.secretAccessKey,
        AWS_SESSION_TOKEN: env.sessionToken,
      },
      async () => {
        const fetches = credentialMetrics.get('aws', 'success');
        const auth = compiled(fakeClock());
        assert.equal(await signedWith(auth), env.accessKeyId);
        assert.equal(service.seen.at(-1)!.verified!.sessionToken, env.sessionToken);
        assert.equal(await signedWith(auth), env.accessKeyId);
        assert.equal(credentialMetrics.get('aws', 'success'), fetches + 1, 'static credentials are fetched once');
      },
    );
  });

  it('gets EC2 instance metadata credentials (IMDSv2), as the SDK’s fromInstanceMetadata does, and refreshes them before they expire', async () => {
    const clock = fakeClock();
    const imds = await imdsStandIn(remember(issue('ASIAIMDS', clock.epochMs() + HOUR)));
    try {
      await withEnv(
        { ...NO_AWS, AWS_EC2_METADATA_DISABLED: undefined, AWS_EC2_METADATA_SERVICE_ENDPOINT: imds.url },
        async () => {
          // The SDK's own provider, pointed at the stand-in.
          const sdk = await fromInstanceMetadata({ maxRetries: 0 })();
          assert.equal(sdk.accessKeyId, imds.credentials.accessKeyId);
          assert.equal(sdk.sessionToken, imds.credentials.sessionToken);
          assert.equal(sdk.expiration?.getTime(), imds.credentials.expiresAtMs);
          assert.ok(
            imds.requests.some((r) => r.method === 'PUT' && r.url === '/latest/api/token'),
            'IMDSv2 session token',
          );

          const roleFetches = () =>
            imds.requests.filter((r) => /security-credentials[^/]*\/gw-node-role$/.test(r.url)).length;
          const auth = compiled(clock);
          const first = imds.credentials.accessKeyId;
          const before = roleFetches();
          assert.equal(await signedWith(auth), first);
          assert.equal(await signedWith(auth), first);
          assert.equal(roleFetches(), before + 1, 'one fetch while the credentials are valid');

          // Past the refresh point: the old credentials still sign while new ones are fetched.
          imds.credentials = remember(issue('ASIAIMDS', clock.epochMs() + 2 * HOUR));
          clock.advance(HOUR - REFRESH_MARGIN_MS);
          assert.equal(await signedWith(auth), first);
          await tick();
          assert.equal(roleFetches(), before + 2, 'refreshed before expiry');
          assert.equal(await signedWith(auth), imds.credentials.accessKeyId);
        },
      );
    } finally {
      await imds.close();
    }
  });

  it('gets ECS container credentials from AWS_CONTAINER_CREDENTIALS_FULL_URI, as the SDK’s fromContainerMetadata does', async () => {
    const clock = fakeClock();
    const token = 'ecs-authorization-token';
    const ecs = await ecsStandIn(remember(issue('ASIAECS', clock.epochMs() + HOUR)), token);
    try {
      await withEnv(
        {
          ...NO_AWS,
          AWS_CONTAINER_CREDENTIALS_FULL_URI: `${ecs.url}/v2/credentials/task`,
          AWS_CONTAINER_AUTHORIZATION_TOKEN: token,
        },
        async () => {
          const sdk = await fromContainerMetadata({ maxRetries: 0 })();
          assert.equal(sdk.accessKeyId, ecs.credentials.accessKeyId);
          assert.equal(sdk.expiration?.getTime(), ecs.credentials.expiresAtMs);
          const before = ecs.requests.length;
          const auth = compiled(clock);
          assert.equal(await signedWith(auth), ecs.credentials.accessKeyId);
          assert.equal(service.seen.at(-1)!.verified!.sessionToken, ecs.credentials.sessionToken);
          assert.equal(await signedWith(auth), ecs.credentials.accessKeyId);
          assert.equal(ecs.requests.length, before + 1, 'fetched once');
          assert.equal(ecs.requests.at(-1)!.headers.authorization, token);
        },
      );
    } finally {
      await ecs.close();
    }
  });

  it('answers 502 without secrets when the chain finds nothing, and tries again on the next request', async () => {
    await withEnv(NO_AWS, async () => {
      const failures = credentialMetrics.get('aws', 'failure');
      const auth = compiled(fakeClock());
      const sign = () =>
        auth.sign!(
          { method: 'GET', origin: service.url, path: '/', headers: {}, body: undefined },
          { headers: {} },
        ) as Promise<void>;
      for (let attempt = 1; attempt <= 2; attempt++) {
        const error = await sign().then(
          () => assert.fail('signed without credentials'),
          (caught: unknown) => caught,
        );
        assert.ok(error instanceof BackendCredentialError);
        assert.equal(error.status, 502);
        assert.equal(error.message, 'gw could not obtain cloudone (AWS) credentials for the backend.');
        assert.match(error.detail, /AWS default credential chain: .*Could not load credentials/);
        assert.equal(credentialMetrics.get('aws', 'failure'), failures + attempt, 'each request tries again');
      }
    });
  });
});
