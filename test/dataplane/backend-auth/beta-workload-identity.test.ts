// Backend authentication beta with workloadIdentity, and with nothing set (auto-detection), in the
// environment the Azure workload identity webhook projects into a pod: AZURE_CLIENT_ID,
// AZURE_TENANT_ID, AZURE_FEDERATED_TOKEN_FILE (the service account token file) and
// AZURE_AUTHORITY_HOST (here the identity platform stand-in). @azure/identity's own
// WorkloadIdentityCredential is first shown to exchange the file's token at the stand-in (a
// JWT-bearer client_assertion); then gw does the same, explicitly and by auto-detection, and
// auto-detection takes a service principal from AZURE_CLIENT_SECRET when that is set, as the
// SDK's default chain does. The environment is set for this file only and restored after it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WorkloadIdentityCredential } from '@azure/identity';
import { AZURE_AI_SCOPE } from '../../../src/dataplane/auth/backend/beta.ts';
import { BackendCredentialError } from '../../../src/dataplane/auth/backend/credential-error.ts';
import { betaAuthorization, type EntraStandIn, entraStandIn, setEnvironment, trustTestCa } from './entra-stand-ins.ts';

const TENANT = '0f0e0d0c-0b0a-4909-8807-060504030201';
const CLIENT = 'aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee';
/** What the kubelet projects: a service account token for audience api://AzureADTokenExchange. */
const FEDERATED_TOKEN = 'eyJhbGciOiJSUzI1NiJ9.eyJhdWQiOlsiYXBpOi8vQXp1cmVBRFRva2VuRXhjaGFuZ2UiXX0.c2lnbmF0dXJl';
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

describe('beta (Azure) backend authentication with workload identity', () => {
  let entra: EntraStandIn;
  let directory: string;
  const restore: (() => void)[] = [];

  before(async () => {
    restore.push(trustTestCa());
    entra = await entraStandIn();
    directory = mkdtempSync(join(tmpdir(), 'gw-beta-'));
    const tokenFile = join(directory, 'azure-identity-token');
    writeFileSync(tokenFile, FEDERATED_TOKEN);
    restore.push(
      setEnvironment({
        AZURE_CLIENT_ID: CLIENT,
        AZURE_TENANT_ID: TENANT,
        AZURE_FEDERATED_TOKEN_FILE: tokenFile,
        AZURE_AUTHORITY_HOST: entra.origin,
        AZURE_CLIENT_SECRET: undefined,
        AZURE_CLIENT_CERTIFICATE_PATH: undefined,
        AZURE_USERNAME: undefined,
        AZURE_TOKEN_CREDENTIALS: undefined,
      }),
    );
  });
  after(async () => {
    for (const undo of restore.reverse()) undo();
    rmSync(directory, { recursive: true, force: true });
    await entra.close();
  });

  /** Asserts the last token request is the exchange of the federated token for CLIENT in TENANT. */
  function assertFederatedExchange(before: number): void {
    assert.equal(entra.tokenRequests.length, before + 1, 'one token request');
    const { tenant, form } = entra.tokenRequests[before]!;
    assert.equal(tenant, TENANT);
    assert.equal(form.grant_type, 'client_credentials');
    assert.equal(form.client_id, CLIENT);
    assert.equal(form.client_assertion_type, JWT_BEARER);
    assert.equal(form.client_assertion, FEDERATED_TOKEN, "the projected token is the client's assertion");
    assert.equal(form.client_secret, undefined);
    assert.equal(form.scope, AZURE_AI_SCOPE);
  }

  it('the stand-in takes the federated token as @azure/identity sends it: WorkloadIdentityCredential gets its token', async () => {
    entra.answer = () => ({ token: 'sdk-proof-token', expiresIn: 3599 });
    const before = entra.tokenRequests.length;
    const token = await new WorkloadIdentityCredential({ disableInstanceDiscovery: true }).getToken(AZURE_AI_SCOPE);
    assert.equal(token.token, 'sdk-proof-token');
    assertFederatedExchange(before);
  });

  it('workloadIdentity: {} exchanges the projected token for an access token', async () => {
    entra.answer = () => ({ token: 'workload-token', expiresIn: 3599 });
    const before = entra.tokenRequests.length;
    assert.equal(await betaAuthorization({ workloadIdentity: {} }), 'Bearer workload-token');
    assertFederatedExchange(before);
  });

  it('with nothing set, gw detects workload identity from the environment of the pod', async () => {
    entra.answer = () => ({ token: 'detected-token', expiresIn: 3599 });
    const before = entra.tokenRequests.length;
    assert.equal(await betaAuthorization({}), 'Bearer detected-token');
    assertFederatedExchange(before);
  });

  it('with nothing set and AZURE_CLIENT_SECRET in the environment, gw uses that service principal first', async () => {
    const secret = 'environment-client-secret-0987';
    const undo = setEnvironment({ AZURE_CLIENT_SECRET: secret });
    try {
      entra.answer = () => ({ token: 'environment-token', expiresIn: 3599 });
      const before = entra.tokenRequests.length;
      assert.equal(await betaAuthorization({}), 'Bearer environment-token');
      const { form } = entra.tokenRequests[before]!;
      assert.equal(form.client_id, CLIENT);
      assert.equal(form.client_secret, secret);
      assert.equal(form.client_assertion, undefined);

      // A failure of that chain names what failed in the log, without the environment's secret.
      entra.answer = (request) => ({
        status: 401,
        error: 'invalid_client',
        description: `AADSTS7000215: Invalid client secret provided: ${request.form.client_secret}`,
      });
      const failure = await betaAuthorization({}).then(
        () => assert.fail('expected a failure'),
        (error: unknown) => error,
      );
      assert.ok(failure instanceof BackendCredentialError);
      assert.equal(failure.status, 502);
      assert.match(failure.detail, /invalid_client/);
      assert.ok(!failure.detail.includes(secret) && !failure.message.includes(secret), 'no secret in the failure');
    } finally {
      undo();
    }
  });

  it('a token the endpoint refuses is a 502 whose log carries no token', async () => {
    entra.answer = (request) => ({
      status: 400,
      error: 'invalid_client',
      description: `AADSTS700213: No matching federated identity record found for presented assertion ${request.form.client_assertion}`,
    });
    const failure = await betaAuthorization({ workloadIdentity: {} }).then(
      () => assert.fail('expected a failure'),
      (error: unknown) => error,
    );
    assert.ok(failure instanceof BackendCredentialError);
    assert.equal(failure.status, 502);
    assert.match(failure.detail, /AADSTS700213/);
    assert.ok(!failure.detail.includes(FEDERATED_TOKEN), 'the assertion is cut out of the log');
  });
});
