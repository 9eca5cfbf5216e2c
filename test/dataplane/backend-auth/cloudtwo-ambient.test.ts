// Backend authentication cloudtwo with ambient credentials (no secretRef): GoogleAuth's
// application default credentials, found as google-auth-library finds them — the GCE metadata
// server at GCE_METADATA_HOST (a stand-in that answers only with Metadata-Flavor: Google), and the
// file GOOGLE_APPLICATION_CREDENTIALS names (external_account credentials exchanged at a
// Security Token Service stand-in). The stand-ins are proven with the library's own clients.
// Finding no credentials fails the request with a 502 and is not remembered: once a metadata
// server answers, the next request gets its token (gcp-metadata's process-wide verdict included).
// Every environment variable the library reads is set here and restored afterwards; this file
// runs in its own process.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Compute, gcpMetadata } from 'google-auth-library';
import { decodeJwt, jwtVerify } from 'jose';
import type { BackendAuth } from '../../../src/api/types/backend-auth.ts';
import {
  AuthConfigError,
  BackendCredentialError,
  type CompiledBackendAuth,
  compileBackendAuth,
} from '../../../src/dataplane/auth/backend/index.ts';
import { PolicyRuntime } from '../../../src/dataplane/policies/runtime.ts';
import { fakeClock } from '../../helpers/fake-clock.ts';
import { freePort } from '../../helpers/gateway.ts';
import {
  CLOUD_PLATFORM_SCOPE,
  GOOGLE_LIBRARY_ENVIRONMENT,
  ID_TOKEN_PUBLIC_KEY,
  MetadataServerStandIn,
  TokenEndpointStandIn,
} from '../../helpers/google-stand-ins.ts';
import { fetchedBearer } from './helpers.ts';

const LIBRARY_ENVIRONMENT = GOOGLE_LIBRARY_ENVIRONMENT;
const saved = new Map(LIBRARY_ENVIRONMENT.map((name) => [name, process.env[name]]));

let metadata: MetadataServerStandIn;
let sts: TokenEndpointStandIn;
let dir: string;

function compiled(auth: BackendAuth, runtime: PolicyRuntime, host = 'svc-abc.a.run.app'): CompiledBackendAuth {
  const result = compileBackendAuth(auth, () => undefined, 'llm', { runtime, target: { host } });
  if (result instanceof AuthConfigError) assert.fail(result.message);
  return result;
}

before(async () => {
  for (const name of LIBRARY_ENVIRONMENT) delete process.env[name];
  dir = mkdtempSync(join(tmpdir(), 'gw-cloudtwo-'));
  // No gcloud credentials file: an empty configuration directory.
  process.env.CLOUDSDK_CONFIG = dir;
  metadata = await MetadataServerStandIn.start();
  sts = await TokenEndpointStandIn.start();
});

after(async () => {
  await Promise.all([metadata.close(), sts.close()]);
  rmSync(dir, { recursive: true, force: true });
  for (const [name, value] of saved) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  gcpMetadata.resetIsAvailableCache();
});

describe('ambient credentials from the metadata server', () => {
  it('without a metadata server the request fails with a 502, and the next request finds the server once it answers', async () => {
    // A port nothing listens on: no metadata server.
    process.env.GCE_METADATA_HOST = `127.0.0.1:${await freePort()}`;
    const runtime = new PolicyRuntime({ clock: fakeClock() });
    const auth = compiled({ cloudtwo: {} }, runtime);
    await assert.rejects(fetchedBearer(auth), (error: unknown) => {
      assert.ok(error instanceof BackendCredentialError);
      assert.equal(error.status, 502);
      assert.equal(error.message, 'gw could not obtain cloudtwo (Google Cloud) credentials for the backend.');
      assert.match(error.detail, /^ambient credentials: no ambient Google credentials/);
      return true;
    });
    process.env.GCE_METADATA_HOST = metadata.host;
    const { token, waited } = await fetchedBearer(auth);
    assert.ok(waited);
    assert.equal(metadata.issued.at(-1)!.token, token);
  });

  it('the stand-in answers google-auth-library’s Compute client, and only with Metadata-Flavor: Google', async () => {
    process.env.GCE_METADATA_HOST = metadata.host;
    const compute = new Compute();
    const { token } = await compute.getAccessToken();
    assert.equal(metadata.issued.at(-1)!.token, token);
    const idToken = await compute.fetchIdToken('https://svc.example.run.app');
    const { payload } = await jwtVerify(idToken, ID_TOKEN_PUBLIC_KEY, { audience: 'https://svc.example.run.app' });
    assert.equal(payload.email, metadata.email);
    const refused = await fetch(`http://${metadata.host}/computeMetadata/v1/instance/service-accounts/default/token`);
    assert.equal(refused.status, 403);
  });

  it('gives gw a cloud-platform access token, cached until its refresh point on gw’s clock', async () => {
    process.env.GCE_METADATA_HOST = metadata.host;
    const clock = fakeClock();
    const auth = compiled({ cloudtwo: { type: 'AccessToken' } }, new PolicyRuntime({ clock }));
    const before = metadata.requests.length;
    const first = await fetchedBearer(auth);
    const tokenRequests = metadata.requests
      .slice(before)
      .filter((request) => request.path.endsWith('/service-accounts/default/token'));
    assert.equal(tokenRequests.length, 1);
    assert.equal(tokenRequests[0]!.flavor, 'Google');
    assert.equal(tokenRequests[0]!.query.get('scopes'), CLOUD_PLATFORM_SCOPE);
    clock.advance(50 * 60_000);
    assert.deepEqual(await fetchedBearer(auth), { token: first.token, waited: false });
    clock.advance(11 * 60_000);
    const renewed = await fetchedBearer(auth);
    assert.ok(renewed.waited, 'an expired token is fetched anew');
    assert.notEqual(renewed.token, first.token);
  });

  it('gives gw an ID token for the audience derived from the backend host', async () => {
    process.env.GCE_METADATA_HOST = metadata.host;
    const auth = compiled({ cloudtwo: { type: 'IdToken' } }, new PolicyRuntime({ clock: fakeClock() }));
    const before = metadata.requests.length;
    const { token } = await fetchedBearer(auth);
    const identity = metadata.requests.slice(before).find((request) => request.path.endsWith('/default/identity'));
    assert.equal(identity?.query.get('audience'), 'https://svc-abc.a.run.app');
    assert.equal(identity?.flavor, 'Google');
    assert.equal(decodeJwt(token).aud, 'https://svc-abc.a.run.app');
  });
});

describe('ambient credentials from GOOGLE_APPLICATION_CREDENTIALS', () => {
  it('exchanges the external_account subject token at the credentials’ token_url', async () => {
    const audience = '//iam.googleapis.com/projects/123456/locations/global/workloadIdentityPools/gw/providers/k8s';
    const subjectToken = 'eyJhbGciOiJSUzI1NiJ9.projected-service-account-token.signature';
    const tokenFile = join(dir, 'token');
    writeFileSync(tokenFile, subjectToken);
    const credentialsFile = join(dir, 'external-account.json');
    writeFileSync(
      credentialsFile,
      JSON.stringify({
        type: 'external_account',
        audience,
        subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
        token_url: sts.url,
        credential_source: { file: tokenFile },
      }),
    );
    sts.trustFederated(audience, subjectToken);
    process.env.GOOGLE_APPLICATION_CREDENTIALS = credentialsFile;
    try {
      const auth = compiled({ cloudtwo: {} }, new PolicyRuntime({ clock: fakeClock() }));
      const { token } = await fetchedBearer(auth);
      assert.equal(sts.issued.at(-1)?.grant, 'token-exchange');
      assert.equal(sts.issued.at(-1)?.token, token);

      // These credentials cannot mint ID tokens: the request fails, saying so in the log only.
      const id = compiled({ cloudtwo: { type: 'IdToken' } }, new PolicyRuntime({ clock: fakeClock() }));
      await assert.rejects(fetchedBearer(id), (error: unknown) => {
        assert.ok(error instanceof BackendCredentialError);
        assert.equal(error.status, 502);
        assert.match(error.detail, /cannot mint ID tokens/);
        return true;
      });
    } finally {
      delete process.env.GOOGLE_APPLICATION_CREDENTIALS;
    }
  });
});
