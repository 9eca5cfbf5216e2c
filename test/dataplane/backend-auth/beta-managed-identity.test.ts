// Backend authentication beta with managedIdentity, against a stand-in for the Azure Instance
// Metadata Service that @azure/identity's own ManagedIdentityCredential is first shown to get its
// token from. The SDK finds IMDS at AZURE_POD_IDENTITY_AUTHORITY_HOST, set for this file only and
// restored after it; MSAL picks the managed identity source once per process, so every test here
// uses the same stand-in. The identity gw asks for arrives as IMDS's query parameter: client_id,
// object_id or msi_res_id, none for the system-assigned identity.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManagedIdentityCredential } from '@azure/identity';
import type { BetaManagedIdentity } from '../../../src/api/types/backend-auth.ts';
import { AZURE_AI_SCOPE } from '../../../src/dataplane/auth/backend/beta.ts';
import { betaAuthorization, type ImdsStandIn, imdsStandIn, setEnvironment } from './entra-stand-ins.ts';

const RESOURCE = 'https://cognitiveservices.azure.com';
const RESOURCE_ID =
  '/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/gw/providers/Microsoft.ManagedIdentity/userAssignedIdentities/gw-identity';

/** The Authorization header gw writes with this managed identity. */
describe('beta (Azure) backend authentication with a managed identity', () => {
  let imds: ImdsStandIn;
  let restore: () => void;

  before(async () => {
    imds = await imdsStandIn();
    // IMDS alone: no App Service, Arc or workload identity variables that would take precedence.
    restore = setEnvironment({
      AZURE_POD_IDENTITY_AUTHORITY_HOST: imds.origin,
      IDENTITY_ENDPOINT: undefined,
      IDENTITY_HEADER: undefined,
      MSI_ENDPOINT: undefined,
      IMDS_ENDPOINT: undefined,
      AZURE_FEDERATED_TOKEN_FILE: undefined,
    });
  });
  after(async () => {
    restore();
    await imds.close();
  });

  it('the stand-in is IMDS as @azure/identity knows it: ManagedIdentityCredential gets its token', async () => {
    imds.answer = () => ({ token: 'sdk-proof-token', expiresIn: 3599 });
    const credential = new ManagedIdentityCredential({ clientId: 'sdk-proof-client' });
    const token = await credential.getToken(AZURE_AI_SCOPE);
    assert.equal(token.token, 'sdk-proof-token');
    assert.ok(token.expiresOnTimestamp > Date.now() + 3_500_000);
    const request = imds.requests.at(-1)!;
    assert.equal(request.metadataHeader, 'true');
    assert.equal(request.query['api-version'], '2018-02-01');
    assert.equal(request.query.resource, RESOURCE);
    assert.equal(request.query.client_id, 'sdk-proof-client');
  });

  it('gw asks IMDS for the system-assigned identity when clientId, objectId and resourceId are empty', async () => {
    imds.answer = () => ({ token: 'system-token', expiresIn: 3599 });
    const before = imds.requests.length;
    assert.equal(
      await betaAuthorization({ managedIdentity: { clientId: '', objectId: '', resourceId: '' } }),
      'Bearer system-token',
    );
    assert.equal(imds.requests.length, before + 1);
    const { query, metadataHeader } = imds.requests[before]!;
    assert.equal(metadataHeader, 'true');
    assert.equal(query.resource, RESOURCE, 'the scope becomes the IMDS resource');
    for (const name of ['client_id', 'object_id', 'msi_res_id']) assert.equal(query[name], undefined, name);
  });

  it('gw asks for the user-assigned identity named by clientId, objectId or resourceId', async () => {
    imds.answer = (request) => ({ token: `token-for-${Object.keys(request.query).sort().join('-')}`, expiresIn: 3599 });
    const cases: [BetaManagedIdentity, string, string][] = [
      [{ clientId: ' aaaa-client ', objectId: '', resourceId: '' }, 'client_id', 'aaaa-client'],
      [{ clientId: '', objectId: 'bbbb-object', resourceId: '' }, 'object_id', 'bbbb-object'],
      [{ clientId: '', objectId: '', resourceId: RESOURCE_ID }, 'msi_res_id', RESOURCE_ID],
    ];
    for (const [identity, parameter, value] of cases) {
      const before = imds.requests.length;
      assert.equal(
        await betaAuthorization({ managedIdentity: identity }),
        `Bearer token-for-api-version-${parameter}-resource`,
      );
      assert.equal(imds.requests.length, before + 1, parameter);
      const { query } = imds.requests[before]!;
      assert.equal(query[parameter], value, `${parameter} arrives, trimmed`);
      assert.equal(query.resource, RESOURCE);
    }
  });
});
