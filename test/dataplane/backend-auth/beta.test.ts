// Backend authentication beta (Azure) with a client secret (src/dataplane/auth/backend/beta.ts),
// against a stand-in for the Microsoft identity platform that @azure/identity's own
// ClientSecretCredential is first shown to get its token from. gw reads the service principal from
// the Secret, asks for the scope of the backend, writes the token at the auth's location, keeps
// it in its TokenCache (refreshed before expiry on a clock the test moves, one fetch for
// concurrent requests, kept across reloads), and fails with a 502 that carries no secret, retried
// by the next request. Configuration errors name the field. The SDK finds the stand-in through
// AZURE_AUTHORITY_HOST, set for this file only and restored after it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { inspect } from 'node:util';
import { ClientSecretCredential } from '@azure/identity';
import type { BackendAuth } from '../../../src/api/types/backend-auth.ts';
import {
  AZURE_AI_SCOPE,
  AZURE_FOUNDRY_SCOPE,
  BETA_SECRET_KEYS,
  betaClientSecret,
  betaScope,
} from '../../../src/dataplane/auth/backend/beta.ts';
import { BackendCredentialError } from '../../../src/dataplane/auth/backend/credential-error.ts';
import { credentialMetrics } from '../../../src/dataplane/auth/backend/credential-metrics.ts';
import {
  AuthConfigError,
  type AuthTarget,
  type BackendAuthOptions,
  type CompiledBackendAuth,
  compileBackendAuth,
} from '../../../src/dataplane/auth/backend/index.ts';
import { PolicyRuntime } from '../../../src/dataplane/policies/runtime.ts';
import { fakeClock } from '../../helpers/fake-clock.ts';
import { type EntraStandIn, entraStandIn, setEnvironment, trustTestCa } from './entra-stand-ins.ts';

const CLIENT_SECRET = 'azure-client-secret-5e4d3c2b1a';
const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47';
const CLIENT = '11111111-2222-3333-4444-555555555555';

const SECRETS: Record<string, Record<string, string>> = {
  'Secret llm/azure': { clientID: CLIENT, tenantID: TENANT, clientSecret: `${CLIENT_SECRET}\n` },
  'Secret llm/azure-other': { clientID: 'other-client', tenantID: TENANT, clientSecret: `${CLIENT_SECRET}-2` },
  'Secret llm/azure-rotated': { clientID: CLIENT, tenantID: TENANT, clientSecret: `${CLIENT_SECRET}-rotated` },
  'Secret llm/no-secret': { clientID: CLIENT, tenantID: TENANT },
  'Secret llm/empty-client': { clientID: '  ', tenantID: TENANT, clientSecret: CLIENT_SECRET },
  'Secret llm/bad-tenant': { clientID: CLIENT, tenantID: 'contoso/../evil', clientSecret: CLIENT_SECRET },
};
const data = (ref: string) => SECRETS[ref];

function compile(auth: BackendAuth, options: BackendAuthOptions = {}): CompiledBackendAuth | AuthConfigError {
  return compileBackendAuth(auth, data, 'llm', { target: { host: '127.0.0.1' }, ...options });
}

function compiled(auth: BackendAuth, options: BackendAuthOptions = {}): CompiledBackendAuth {
  const result = compile(auth, options);
  if (result instanceof AuthConfigError) assert.fail(`unexpected auth error: ${result.message}`);
  return result;
}

function configError(auth: BackendAuth, options: BackendAuthOptions = {}): AuthConfigError {
  const result = compile(auth, options);
  assert.ok(result instanceof AuthConfigError, 'expected an AuthConfigError');
  assert.ok(!result.message.includes(CLIENT_SECRET), 'no error quotes the client secret');
  return result;
}

const newTarget = (): AuthTarget => ({
  headers: { authorization: 'Bearer client-own-token' },
  query: new URLSearchParams(),
});

/** Applies the auth as the proxy does: the headers once the credential is written. */
async function headersOf(auth: CompiledBackendAuth): Promise<AuthTarget['headers']> {
  const target = newTarget();
  await auth.apply(target, { headers: {} });
  return target.headers;
}

describe('beta (Azure) backend authentication with a client secret', () => {
  let entra: EntraStandIn;
  let restore: (() => void)[] = [];

  before(async () => {
    restore.push(trustTestCa());
    entra = await entraStandIn();
    restore.push(setEnvironment({ AZURE_AUTHORITY_HOST: entra.origin, AZURE_CLIENT_SECRET: undefined }));
  });
  after(async () => {
    for (const undo of restore.reverse()) undo();
    restore = [];
    await entra.close();
  });

  it('the stand-in is the identity platform as @azure/identity knows it: ClientSecretCredential gets its token', async () => {
    entra.answer = () => ({ token: 'sdk-proof-token', expiresIn: 3599 });
    const before = entra.tokenRequests.length;
    const credential = new ClientSecretCredential(TENANT, 'sdk-proof-client', 'sdk-proof-secret', {
      disableInstanceDiscovery: true,
    });
    const token = await credential.getToken(AZURE_AI_SCOPE);
    assert.equal(token.token, 'sdk-proof-token');
    assert.ok(token.expiresOnTimestamp > Date.now() + 3_500_000);
    const request = entra.tokenRequests[before]!;
    assert.equal(request.tenant, TENANT);
    assert.equal(request.form.grant_type, 'client_credentials');
    assert.equal(request.form.client_id, 'sdk-proof-client');
    assert.equal(request.form.client_secret, 'sdk-proof-secret');
    assert.equal(request.form.scope, AZURE_AI_SCOPE);
    assert.ok(entra.discoveries >= 1, 'MSAL discovered the token endpoint from the OpenID configuration');
  });

  it('gw obtains a token with the Secret’s service principal and writes it as a Bearer token, once', async () => {
    const tokens = ['gw-token-a'];
    entra.answer = () => ({ token: tokens.shift() ?? 'unexpected-second-token', expiresIn: 3599 });
    const before = entra.tokenRequests.length;
    const successes = credentialMetrics.get('azure', 'success');
    const auth = compiled({ beta: { secretRef: { name: 'azure' } } });
    assert.equal(auth.mode, 'beta');
    assert.ok(!inspect(auth, { depth: 10 }).includes(CLIENT_SECRET), 'the compiled auth shows no secret');

    const target = newTarget();
    const pending = auth.apply(target, { headers: {} });
    assert.ok(pending instanceof Promise, 'the first request waits for the token');
    await pending;
    assert.equal(target.headers.authorization, 'Bearer gw-token-a', "the client's own token is replaced");

    const again = newTarget();
    assert.equal(auth.apply(again, { headers: {} }), undefined, 'a cached token is written without waiting');
    assert.equal(again.headers.authorization, 'Bearer gw-token-a');

    assert.equal(entra.tokenRequests.length, before + 1, 'one token request');
    const request = entra.tokenRequests[before]!;
    assert.deepEqual(
      [request.tenant, request.form.client_id, request.form.client_secret, request.form.grant_type, request.form.scope],
      [TENANT, CLIENT, CLIENT_SECRET, 'client_credentials', AZURE_AI_SCOPE],
      'tenant, client ID and (trimmed) secret from the Secret; the Azure AI scope',
    );
    assert.equal(credentialMetrics.get('azure', 'success'), successes + 1);
  });

  it('asks for the Foundry scope for a *.services.ai.azure.com backend, the Azure AI scope otherwise', async () => {
    assert.equal(betaScope({ host: 'my-foundry.services.ai.azure.com' }), AZURE_FOUNDRY_SCOPE);
    assert.equal(betaScope({ host: 'My-Foundry.Services.AI.Azure.com.' }), AZURE_FOUNDRY_SCOPE);
    assert.equal(betaScope({ host: 'my-resource.openai.azure.com', family: 'beta' }), AZURE_AI_SCOPE);
    assert.equal(betaScope({ host: 'my-resource.cognitiveservices.azure.com' }), AZURE_AI_SCOPE);
    assert.equal(betaScope({ host: 'internal.example.com' }), AZURE_AI_SCOPE);
    assert.equal(betaScope(undefined), AZURE_AI_SCOPE);

    entra.answer = (request) => ({ token: `for ${request.form.scope}`.replace(/\W+/g, '-'), expiresIn: 3599 });
    const before = entra.tokenRequests.length;
    const foundry = compiled(
      { beta: { secretRef: { name: 'azure-other' } } },
      { target: { host: 'my-foundry.services.ai.azure.com' } },
    );
    assert.equal((await headersOf(foundry)).authorization, 'Bearer for-https-ai-azure-com-default');
    assert.equal(entra.tokenRequests[before]!.form.scope, AZURE_FOUNDRY_SCOPE);
  });

  it('writes the token at a configured location', async () => {
    entra.answer = () => ({ token: 'located-token', expiresIn: 3599 });
    const auth = compiled({
      beta: { secretRef: { name: 'azure-rotated' } },
      location: { header: { name: 'api-key' } },
    });
    const headers = await headersOf(auth);
    assert.equal(headers['api-key'], 'located-token');
    assert.equal(headers.authorization, undefined, "the client's token is removed, not forwarded");
  });

  it('shares one token request among concurrent requests, refreshes before expiry and never uses an expired token', async () => {
    const clock = fakeClock();
    let issued = 0;
    // Tokens of four minutes: MSAL keeps no token within five minutes of its expiry, so every
    // fetch of gw reaches the stand-in and gw's cache is the only one at work.
    entra.answer = () => ({ token: `short-${++issued}`, expiresIn: 240 });
    const before = entra.tokenRequests.length;
    const auth = compiled({ beta: { secretRef: { name: 'azure' } } }, { clock });

    const targets = Array.from({ length: 10 }, newTarget);
    const pending = targets.map((target) => auth.apply(target, { headers: {} }));
    assert.ok(pending.every((p) => p instanceof Promise));
    await Promise.all(pending);
    assert.deepEqual(new Set(targets.map((t) => t.headers.authorization)), new Set(['Bearer short-1']));
    assert.equal(entra.tokenRequests.length, before + 1, 'ten concurrent requests, one token request');

    // Half the life of a short token is the refresh point (the SDK rounds expiry up to the
    // second): the request still goes with the cached token while one refresh runs.
    clock.advance(121_000);
    const during = newTarget();
    assert.equal(auth.apply(during, { headers: {} }), undefined);
    assert.equal(during.headers.authorization, 'Bearer short-1');
    await until(() => entra.tokenRequests.length === before + 2);
    await until(() => {
      const target = newTarget();
      return auth.apply(target, { headers: {} }) === undefined && target.headers.authorization === 'Bearer short-2';
    });
    assert.equal(entra.tokenRequests.length, before + 2, 'one refresh');
    assert.equal((await headersOf(auth)).authorization, 'Bearer short-2', 'the refreshed token is used');

    // Past expiry with no refresh in between, a request waits for a new token.
    clock.advance(242_000);
    const expired = newTarget();
    const waiting = auth.apply(expired, { headers: {} });
    assert.ok(waiting instanceof Promise, 'an expired token is never written');
    await waiting;
    assert.equal(expired.headers.authorization, 'Bearer short-3');
    assert.equal(entra.tokenRequests.length, before + 3);
  });

  it('a refused token request fails with a 502 that carries no secret; the next request tries again', async () => {
    // An endpoint that echoes what it was sent: the log must not carry it either.
    entra.answer = (request) => ({
      status: 401,
      error: 'invalid_client',
      description: `AADSTS7000215: Invalid client secret provided (${request.form.client_secret}).`,
    });
    const failures = credentialMetrics.get('azure', 'failure');
    const auth = compiled({ beta: { secretRef: { name: 'azure' } } }, { clock: fakeClock() });
    const failure = await auth.apply(newTarget(), { headers: {} })?.then(
      () => assert.fail('expected a failure'),
      (error: unknown) => error,
    );
    assert.ok(failure instanceof BackendCredentialError);
    assert.equal(failure.status, 502);
    assert.equal(failure.message, 'gw could not obtain beta (Azure) credentials for the backend.');
    assert.match(failure.detail, /invalid_client/, 'the log says what the endpoint answered');
    assert.match(failure.detail, /AADSTS7000215/);
    assert.match(failure.detail, /Invalid client secret provided \(\[redacted\]\)/, 'the echoed secret is cut out');
    for (const text of [failure.message, failure.detail, inspect(failure)]) {
      assert.ok(!text.includes(CLIENT_SECRET), `no secret in ${text}`);
    }
    assert.equal(credentialMetrics.get('azure', 'failure'), failures + 1);

    const before = entra.tokenRequests.length;
    entra.answer = () => ({ token: 'after-the-failure', expiresIn: 3599 });
    assert.equal((await headersOf(auth)).authorization, 'Bearer after-the-failure', 'not remembered: retried');
    assert.equal(entra.tokenRequests.length, before + 1);
  });

  it('keeps the credential and its token across configurations; a rotated Secret starts anew', async () => {
    const runtime = new PolicyRuntime({ clock: fakeClock() });
    let issued = 0;
    entra.answer = () => ({ token: `kept-${++issued}`, expiresIn: 3599 });
    const before = entra.tokenRequests.length;
    const first = compiled({ beta: { secretRef: { name: 'azure-other' } } }, { runtime });
    assert.equal((await headersOf(first)).authorization, 'Bearer kept-1');
    const reloaded = compiled({ beta: { secretRef: { name: 'azure-other' } } }, { runtime });
    const target = newTarget();
    assert.equal(reloaded.apply(target, { headers: {} }), undefined, 'the reload finds the token cached');
    assert.equal(target.headers.authorization, 'Bearer kept-1');
    assert.equal(entra.tokenRequests.length, before + 1);

    SECRETS['Secret llm/azure-other'] = { ...SECRETS['Secret llm/azure-other']!, clientSecret: 'rotated-value' };
    const rotated = compiled({ beta: { secretRef: { name: 'azure-other' } } }, { runtime });
    assert.equal((await headersOf(rotated)).authorization, 'Bearer kept-2');
    assert.equal(entra.tokenRequests.at(-1)!.form.client_secret, 'rotated-value');
  });

  it('refuses configurations that cannot work, naming the field, the Secret and the key', () => {
    assert.equal(
      configError({ beta: { secretRef: { name: 'absent' } } }).message,
      'beta.secretRef.name: Secret llm/absent was not found',
    );
    const missing = configError({ beta: { secretRef: { name: 'no-secret' } } });
    assert.equal(missing.field, 'beta.secretRef.key');
    assert.equal(missing.message, 'beta.secretRef.key: Secret llm/no-secret has no key "clientSecret"');
    assert.equal(
      configError({ beta: { secretRef: { name: 'empty-client' } } }).message,
      'beta.secretRef.key: key "clientID" of Secret llm/empty-client is empty',
    );
    const tenant = configError({ beta: { secretRef: { name: 'bad-tenant' } } });
    assert.match(tenant.message, /^beta\.secretRef\.key: key "tenantID" of Secret llm\/bad-tenant is not a tenant ID/);
    assert.ok(!tenant.message.includes('evil'), 'the value is not quoted');
    assert.equal(
      configError({ beta: { secretRef: { name: 'azure', kind: 'ConfigMap' } } }).field,
      'beta.secretRef.kind',
    );
    const twoIds = configError({ beta: { managedIdentity: { clientId: 'a', objectId: 'b', resourceId: '' } } });
    assert.equal(twoIds.field, 'beta.managedIdentity.objectId');
    assert.match(twoIds.message, /at most one of clientId, objectId and resourceId may be non-empty/);
    const both = configError({ beta: { secretRef: { name: 'azure' }, workloadIdentity: {} } });
    assert.equal(both.field, 'beta.workloadIdentity');

    const restoreEnvironment = setEnvironment({
      AZURE_CLIENT_ID: CLIENT,
      AZURE_TENANT_ID: TENANT,
      AZURE_FEDERATED_TOKEN_FILE: undefined,
    });
    try {
      const workload = configError({ beta: { workloadIdentity: {} } });
      assert.equal(workload.field, 'beta.workloadIdentity');
      assert.match(workload.message, /, and AZURE_FEDERATED_TOKEN_FILE is not set: run gw in a pod/);
    } finally {
      restoreEnvironment();
    }
  });

  it('the Secret is judged by one function, which the controller calls too', () => {
    const secret = betaClientSecret({ name: 'azure' }, data, 'llm');
    assert.ok(!(secret instanceof AuthConfigError));
    assert.deepEqual(secret, { tenantId: TENANT, clientId: CLIENT, clientSecret: CLIENT_SECRET });
    assert.deepEqual(Object.values(BETA_SECRET_KEYS), ['clientID', 'tenantID', 'clientSecret']);
  });
});

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail('condition not met within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
