// cloudone assumeRole against a loopback STS that speaks the AssumeRole Query API (form POST,
// XML answer) and checks the caller's own SigV4 signature with the ambient source credentials;
// the SDK's STSClient is pointed at it first (AWS_ENDPOINT_URL_STS). gw sends Action, RoleArn,
// RoleSessionName (fixed, from CEL, or random) and Tags.member.N, signs the backend request with
// the assumed credentials, caches them per (session name, tags), shares one STS call among
// concurrent requests, refreshes before expiry on gw's clock, answers 502 without secrets when STS
// refuses (and retries on the next request), and 400 — with no STS call — when a computed session
// name or tag value is invalid.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import type { BackendAuth, CloudoneAssumeRole } from '../../../src/api/types/backend-auth.ts';
import {
  AuthConfigError,
  BackendCredentialError,
  type CompiledBackendAuth,
  compileBackendAuth,
} from '../../../src/dataplane/auth/backend/index.ts';
import { REFRESH_MARGIN_MS } from '../../../src/dataplane/auth/backend/token-cache.ts';
import {
  issue,
  NO_AWS,
  type StsStandIn,
  send,
  signedService,
  stsStandIn,
  tagsOf,
  withEnv,
} from '../../helpers/aws-stand-ins.ts';
import { type FakeClock, fakeClock } from '../../helpers/fake-clock.ts';

const HOUR = 3_600_000;
const ROLE = 'arn:aws:iam::123456789012:role/gw-bedrock';
const SOURCE = issue('AKIASOURCE', Number.POSITIVE_INFINITY);
const SOURCE_SECRETS = (id: string) =>
  id === SOURCE.accessKeyId
    ? { secretAccessKey: SOURCE.secretAccessKey, sessionToken: SOURCE.sessionToken }
    : undefined;

let clock: FakeClock;
let sts: StsStandIn;
let service: Awaited<ReturnType<typeof signedService>>;
let env: Record<string, string | undefined>;

before(async () => {
  sts = await stsStandIn(SOURCE_SECRETS, () => clock.epochMs(), 'us-east-1');
  service = await signedService((id) => sts.issued.get(id));
  env = {
    ...NO_AWS,
    AWS_ACCESS_KEY_ID: SOURCE.accessKeyId,
    AWS_SECRET_ACCESS_KEY: SOURCE.secretAccessKey,
    AWS_SESSION_TOKEN: SOURCE.sessionToken,
    AWS_ENDPOINT_URL_STS: sts.url,
  };
});
after(async () => {
  await sts.close();
  await service.close();
});
beforeEach(() => {
  clock = fakeClock();
  sts.calls.length = 0;
  sts.gate = undefined;
  sts.next = () => issue('ASIAROLE', clock.epochMs() + HOUR);
});

function compiled(assumeRole: CloudoneAssumeRole): CompiledBackendAuth {
  const auth: BackendAuth = { cloudone: { assumeRole, serviceName: 'bedrock', region: 'us-east-1' } };
  const result = compileBackendAuth(auth, () => undefined, 'llm', { clock });
  if (result instanceof AuthConfigError) assert.fail(result.message);
  return result;
}

const incoming = (headers: Record<string, string> = {}) => ({
  headers,
  variables: () => ({ request: { headers, method: 'POST', path: '/model/m/converse' } }),
});

/** Signs a request with `auth` (for a client sending `headers`), sends it, returns the verified access key. */
async function signedWith(auth: CompiledBackendAuth, headers: Record<string, string> = {}): Promise<string> {
  const out: Record<string, string | string[]> = { 'content-type': 'application/json' };
  await auth.sign!(
    { method: 'POST', origin: service.url, path: '/model/m/converse', headers: out, body: '{}' },
    incoming(headers),
  );
  const answer = await send(service.url, 'POST', '/model/m/converse', out, '{}');
  const seen = service.seen.at(-1)!;
  assert.equal(answer.status, 200, seen.problem);
  return seen.verified!.accessKeyId;
}

async function failure(
  auth: CompiledBackendAuth,
  headers: Record<string, string> = {},
): Promise<BackendCredentialError> {
  const error = await Promise.resolve()
    .then(() =>
      auth.sign!({ method: 'POST', origin: service.url, path: '/', headers: {}, body: '{}' }, incoming(headers)),
    )
    .then(
      () => assert.fail('signed'),
      (caught: unknown) => caught,
    );
  assert.ok(error instanceof BackendCredentialError, String(error));
  return error;
}

const inEnv = (work: () => Promise<void>) => () => withEnv(env, work);

describe('cloudone assumeRole through STS', () => {
  it(
    'the stand-in answers the SDK’s own STSClient (AWS_ENDPOINT_URL_STS) and checks its signature',
    inEnv(async () => {
      const client = new STSClient({ region: 'us-east-1' });
      const answer = await client.send(
        new AssumeRoleCommand({ RoleArn: ROLE, RoleSessionName: 'sdk-check', Tags: [{ Key: 'Team', Value: 'a' }] }),
      );
      assert.equal(answer.Credentials?.AccessKeyId?.startsWith('ASIAROLE'), true);
      assert.equal(answer.Credentials?.Expiration?.getTime(), clock.epochMs() + HOUR);
      assert.equal(answer.AssumedRoleUser?.Arn, 'arn:aws:sts::123456789012:assumed-role/gw-bedrock/sdk-check');
      assert.equal(sts.calls[0]!.verified?.accessKeyId, SOURCE.accessKeyId);
      assert.deepEqual(tagsOf(sts.calls[0]!.form), { Team: 'a' });
    }),
  );

  it(
    'assumes the role with the session name and tags, signed by the ambient credentials, and signs with what STS gave',
    inEnv(async () => {
      const auth = compiled({
        roleId: ROLE,
        sessionName: 'gw-payments',
        tags: [
          { key: 'Team', value: 'payments' },
          { key: 'App', expression: 'request.headers["x-app"]' },
        ],
      });
      const key = await signedWith(auth, { 'x-app': 'invoicer' });
      assert.equal(sts.calls.length, 1);
      const call = sts.calls[0]!;
      assert.equal(call.problem, undefined);
      assert.equal(call.verified!.accessKeyId, SOURCE.accessKeyId, 'STS is called with the ambient credentials');
      assert.equal(call.verified!.service, 'sts');
      assert.equal(call.form.get('Action'), 'AssumeRole');
      assert.equal(call.form.get('RoleArn'), ROLE);
      assert.equal(call.form.get('RoleSessionName'), 'gw-payments');
      assert.deepEqual(tagsOf(call.form), { App: 'invoicer', Team: 'payments' });
      assert.ok(sts.issued.has(key), 'the backend request is signed with the assumed credentials');
      assert.equal(service.seen.at(-1)!.verified!.sessionToken, sts.issued.get(key)!.sessionToken);
      // Cached: the same session and tags cost no call.
      assert.equal(await signedWith(auth, { 'x-app': 'invoicer' }), key);
      assert.equal(sts.calls.length, 1);
      // Other tag values are another session.
      const other = await signedWith(auth, { 'x-app': 'ledger' });
      assert.notEqual(other, key);
      assert.equal(sts.calls.length, 2);
      assert.deepEqual(tagsOf(sts.calls[1]!.form), { App: 'ledger', Team: 'payments' });
    }),
  );

  it(
    'takes the session name from sessionNameExpression, or makes a random one',
    inEnv(async () => {
      const byTeam = compiled({ roleId: ROLE, sessionNameExpression: '"team-" + request.headers["x-team"]' });
      await signedWith(byTeam, { 'x-team': 'alpha' });
      await signedWith(byTeam, { 'x-team': 'beta' });
      await signedWith(byTeam, { 'x-team': 'alpha' });
      assert.deepEqual(
        sts.calls.map((call) => call.form.get('RoleSessionName')),
        ['team-alpha', 'team-beta'],
      );
      const random = compiled({ roleId: ROLE });
      await signedWith(random);
      assert.match(sts.calls[2]!.form.get('RoleSessionName')!, /^gw-[0-9a-f]{16}$/);
      assert.equal(sts.calls[2]!.form.has('Tags.member.1.Key'), false);
    }),
  );

  it(
    'rejects with 400, calling no STS, a computed session name or tag value STS would refuse',
    inEnv(async () => {
      const name = compiled({ roleId: ROLE, sessionNameExpression: 'request.headers["x-team"]' });
      for (const team of ['a', 'has space', 'x'.repeat(65), 'semi;colon']) {
        const error = await failure(name, { 'x-team': team });
        assert.equal(error.status, 400, team);
        assert.match(error.detail, /sessionNameExpression yielded a name STS refuses/);
      }
      const missing = await failure(name, {});
      assert.equal(missing.status, 400);
      assert.match(missing.detail, /expression failed/);
      const user = compiled({ roleId: ROLE, tags: [{ key: 'User', expression: 'request.headers["x-user"]' }] });
      const long = await failure(user, { 'x-user': 'u'.repeat(257) });
      assert.equal(long.status, 400);
      assert.match(long.detail, /tags\[0\] \(User\).*longer than 256/);
      const empty = await failure(user, { 'x-user': '' });
      assert.match(empty.detail, /User.*is empty/);
      const list = compiled({
        roleId: ROLE,
        tags: [
          { key: 'Team', value: 'a' },
          { key: 'List', expression: '[1, 2]' },
        ],
      });
      const notText = await failure(list);
      assert.equal(notText.status, 400);
      assert.match(notText.detail, /tags\[1\] \(List\): the expression yielded a list, not a string/);
      assert.equal(sts.calls.length, 0);
      // A number (a JWT claim, say) is its text.
      const number = compiled({ roleId: ROLE, tags: [{ key: 'Org', expression: '40 + 2' }] });
      await signedWith(number);
      assert.deepEqual(tagsOf(sts.calls.at(-1)!.form), { Org: '42' });
      assert.doesNotMatch(`${long.message}${notText.message}`, /uuuu/);
    }),
  );

  it(
    'shares one STS call among concurrent requests and refreshes before expiry on gw’s clock',
    inEnv(async () => {
      const auth = compiled({ roleId: ROLE, sessionName: 'shared' });
      let release!: () => void;
      sts.gate = new Promise((resolve) => {
        release = resolve;
      });
      const signing = Array.from({ length: 5 }, () => signedWith(auth));
      await new Promise((resolve) => setTimeout(resolve, 50));
      release();
      const keys = await Promise.all(signing);
      assert.equal(sts.calls.length, 1, 'one STS call for five requests');
      assert.equal(new Set(keys).size, 1);
      sts.gate = undefined;

      clock.advance(HOUR - REFRESH_MARGIN_MS - 1);
      assert.equal(await signedWith(auth), keys[0]);
      assert.equal(sts.calls.length, 1, 'no refresh before the margin');
      clock.advance(1);
      assert.equal(await signedWith(auth), keys[0], 'the old credentials sign while the refresh runs');
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(sts.calls.length, 2, 'refreshed before expiry');
      const renewed = await signedWith(auth);
      assert.notEqual(renewed, keys[0]);
      assert.ok(sts.issued.has(renewed));
    }),
  );

  it(
    'answers 502 without secrets when STS refuses, and the next request calls STS again',
    inEnv(async () => {
      const auth = compiled({ roleId: ROLE, sessionName: 'denied' });
      sts.next = () => ({
        status: 403,
        code: 'AccessDenied',
        message: `User ${SOURCE.accessKeyId} is not authorized to perform sts:AssumeRole`,
      });
      const error = await failure(auth);
      assert.equal(error.status, 502);
      assert.equal(error.message, 'gw could not obtain cloudone (AWS) credentials for the backend.');
      assert.match(
        error.detail,
        /STS AssumeRole arn:aws:iam::123456789012:role\/gw-bedrock \(session denied\): AccessDenied/,
      );
      assert.doesNotMatch(
        `${error.message} ${error.detail}`,
        new RegExp(`${SOURCE.secretAccessKey}|${SOURCE.sessionToken.replace(/[+=]/g, '.')}`),
      );
      assert.equal(sts.calls.length, 1);
      sts.next = () => issue('ASIAROLE', clock.epochMs() + HOUR);
      const key = await signedWith(auth);
      assert.equal(sts.calls.length, 2, 'the failure was not remembered');
      assert.ok(sts.issued.has(key));
    }),
  );

  it('refuses invalid configurations naming the field', () => {
    const refused = (assumeRole: CloudoneAssumeRole) => {
      const result = compileBackendAuth(
        { cloudone: { assumeRole, serviceName: 'bedrock', region: 'us-east-1' } },
        () => undefined,
        'llm',
      );
      assert.ok(result instanceof AuthConfigError);
      return result;
    };
    assert.equal(
      refused({ roleId: ROLE, sessionNameExpression: 'request.(' }).field,
      'cloudone.assumeRole.sessionNameExpression',
    );
    assert.equal(
      refused({ roleId: ROLE, tags: [{ key: 'T', expression: '1 +' }] }).field,
      'cloudone.assumeRole.tags[0].expression',
    );
    assert.equal(
      refused({ roleId: ROLE, tags: [{ key: 'T', value: 'a;b' }] }).field,
      'cloudone.assumeRole.tags[0].value',
    );
    assert.equal(
      refused({ roleId: ROLE, tags: Array.from({ length: 51 }, (_, i) => ({ key: `k${i}`, value: 'v' })) }).field,
      'cloudone.assumeRole.tags',
    );
  });
});
