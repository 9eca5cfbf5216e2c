// Backend authentication crossAppAccess against two authorization server stand-ins: the identity
// provider exchanges the user's ID token for an ID-JAG (RFC 8693, requested_token_type id-jag,
// audience the resource authorization server, resources and scopes), the resource authorization
// server exchanges the ID-JAG for the backend's access token (RFC 7523 jwt-bearer, scopes, no
// resource), each with its own client authentication; one pair of exchanges per user token; the
// failures of either hop.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, beforeEach, test } from 'node:test';
import type { CrossAppAccessAuth } from '../../../src/api/types/backend-auth.ts';
import { credentialMetrics } from '../../../src/dataplane/auth/backend/credential-metrics.ts';
import { AuthConfigError, compileBackendAuth } from '../../../src/dataplane/auth/backend/index.ts';
import { PolicyRuntime } from '../../../src/dataplane/policies/runtime.ts';
import { fakeClock } from '../../helpers/fake-clock.ts';
import { type AuthorizationServer, applyAuth, type RecordedRequest, startAuthorizationServer } from './oauth-server.ts';

const ID_JAG = 'urn:ietf:params:oauth:token-type:id-jag';
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const SECRETS: Record<string, Record<string, string>> = {
  'Secret llm/idp-client': { clientSecret: 'idp-secret' },
  'Secret llm/ras-key': { signingKey: rsa.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString() },
};
const data = (ref: string) => SECRETS[ref];

let idp: AuthorizationServer;
let ras: AuthorizationServer;
let runtime: PolicyRuntime;
let jags = 0;

function idJag(request: RecordedRequest) {
  jags += 1;
  return {
    status: 200,
    body: {
      access_token: `id-jag-${jags}-for-${request.form.get('subject_token')}`,
      issued_token_type: ID_JAG,
      token_type: 'N_A',
      expires_in: 300,
    },
  };
}

function accessToken(request: RecordedRequest) {
  return {
    status: 200,
    body: { access_token: `access-from-${request.form.get('assertion')}`, token_type: 'Bearer', expires_in: 3600 },
  };
}

before(async () => {
  idp = await startAuthorizationServer([{ id: 'gw-at-idp', method: 'client_secret_basic', secret: 'idp-secret' }]);
  ras = await startAuthorizationServer([
    { id: 'gw-at-ras', method: 'private_key_jwt', publicKey: rsa.publicKey, audience: 'https://ras.example' },
  ]);
});
after(async () => {
  await runtime.close();
  await idp.close();
  await ras.close();
});
beforeEach(async () => {
  await runtime?.close();
  runtime = new PolicyRuntime({ clock: fakeClock() });
  idp.requests.length = 0;
  ras.requests.length = 0;
  idp.answer = idJag;
  ras.answer = accessToken;
});

function crossAppAccess(extra: Partial<CrossAppAccessAuth> = {}) {
  const spec: CrossAppAccessAuth = {
    identityProvider: {
      url: idp.url,
      path: '/oauth2/token',
      clientAuth: { clientId: 'gw-at-idp', secretRef: { name: 'idp-client' } },
    },
    resourceAuthorizationServer: {
      url: ras.url,
      path: '/token',
      clientAuth: {
        clientId: 'gw-at-ras',
        method: 'PrivateKeyJwt',
        privateKeyJwt: { signingKeyRef: { name: 'ras-key' }, assertionAudience: 'https://ras.example' },
      },
    },
    audience: 'https://ras.example',
    resources: ['https://api.example/mcp'],
    scopes: ['todos.read', 'todos.write'],
    ...extra,
  };
  const compiled = compileBackendAuth({ crossAppAccess: spec }, data, 'llm', {
    endpoints: { backends: {}, namespace: 'llm' },
    runtime,
  });
  if (compiled instanceof AuthConfigError) assert.fail(compiled.message);
  assert.equal(compiled.mode, 'crossAppAccess');
  return compiled;
}

test('the ID token is exchanged for an ID-JAG, and the ID-JAG for the backend access token', async () => {
  const fetchesBefore = credentialMetrics.get('cross_app_access', 'success');
  const result = await applyAuth(crossAppAccess(), { authorization: 'Bearer user-id-token' });
  assert.equal(result.failure, undefined, result.failure?.detail);
  assert.equal(result.headers.authorization, 'Bearer access-from-id-jag-1-for-user-id-token');

  const first = idp.requests[0]!;
  assert.equal(first.path, '/oauth2/token');
  assert.equal(first.client, 'gw-at-idp');
  assert.deepEqual(Object.fromEntries(first.form), {
    grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
    subject_token: 'user-id-token',
    subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
    requested_token_type: ID_JAG,
    audience: 'https://ras.example',
    scope: 'todos.read todos.write',
    resource: 'https://api.example/mcp',
  });
  const second = ras.requests[0]!;
  assert.equal(second.path, '/token');
  assert.equal(second.client, 'gw-at-ras');
  assert.equal(second.form.get('grant_type'), 'urn:ietf:params:oauth:grant-type:jwt-bearer');
  assert.equal(second.form.get('assertion'), 'id-jag-1-for-user-id-token');
  assert.equal(second.form.get('scope'), 'todos.read todos.write');
  assert.equal(second.form.has('resource'), false);
  assert.equal(second.form.has('audience'), false);
  assert.equal(credentialMetrics.get('cross_app_access', 'success'), fetchesBefore + 1);
});

test('the access token is cached by the user token: one pair of exchanges per user', async () => {
  const auth = crossAppAccess();
  for (const user of ['alice', 'alice', 'bob', 'alice', 'bob']) {
    const result = await applyAuth(auth, { authorization: `Bearer ${user}` });
    assert.equal(result.failure, undefined);
    assert.match(String(result.headers.authorization), new RegExp(`-for-${user}$`));
  }
  assert.equal(idp.requests.length, 2);
  assert.equal(ras.requests.length, 2);
});

test('subjectToken: another place and token type', async () => {
  const auth = crossAppAccess({
    subjectToken: { source: { header: { name: 'x-id-token' } }, tokenType: 'Jwt' },
  });
  const result = await applyAuth(auth, { 'x-id-token': 'from-header' });
  assert.equal(result.failure, undefined);
  assert.equal(result.headers['x-id-token'], undefined);
  assert.equal(idp.requests[0]!.form.get('subject_token'), 'from-header');
  assert.equal(idp.requests[0]!.form.get('subject_token_type'), 'urn:ietf:params:oauth:token-type:jwt');
});

test('failures: no user token 401, a refused user 401, a wrong token type or a failing server 502', async () => {
  const auth = crossAppAccess();
  assert.equal((await applyAuth(auth, {})).failure?.status, 401);
  assert.equal(idp.requests.length, 0);

  idp.answer = () => ({ status: 400, body: { error: 'invalid_grant' } });
  const refused = await applyAuth(auth, { authorization: 'Bearer expired' });
  assert.equal(refused.failure?.status, 401);
  assert.equal(ras.requests.length, 0);

  idp.answer = () => ({
    status: 200,
    body: {
      access_token: 'not-a-jag',
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      token_type: 'Bearer',
    },
  });
  const wrongType = await applyAuth(auth, { authorization: 'Bearer user-2' });
  assert.equal(wrongType.failure?.status, 502);
  assert.match(wrongType.failure!.detail, /id-jag was requested/);
  assert.equal(ras.requests.length, 0);

  idp.answer = idJag;
  ras.answer = () => ({ status: 500, body: 'down' });
  const rasDown = await applyAuth(auth, { authorization: 'Bearer user-3' });
  assert.equal(rasDown.failure?.status, 502);
  assert.equal(rasDown.failure?.message, 'gw could not obtain crossAppAccess credentials for the backend.');
  assert.match(rasDown.failure!.detail, /\/token answered 500/);
});
