// Backend authentication cloudtwo with credentials from a Secret, against a stand-in of Google's
// token endpoint that verifies each assertion with the service account's public key. The
// stand-in is first proven with google-auth-library's own clients; then gw's tokens: the access
// token (scope cloud-platform) and the ID token (audience given or derived from the backend
// host, expiry from its exp claim), cached and refreshed on a clock the test moves, one fetch for
// concurrent requests, kept across configurations, a failing endpoint answered 502 without any
// secret and retried by the next request, and user (authorized_user) credentials.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { inspect } from 'node:util';
import { gaxios, JWT, UserRefreshClient } from 'google-auth-library';
import { decodeJwt, jwtVerify } from 'jose';
import type { BackendAuth } from '../../../src/api/types/backend-auth.ts';
import { credentialMetrics } from '../../../src/dataplane/auth/backend/credential-metrics.ts';
import {
  AuthConfigError,
  type AuthTarget,
  BackendCredentialError,
  type CompiledBackendAuth,
  compileBackendAuth,
} from '../../../src/dataplane/auth/backend/index.ts';
import { REFRESH_MARGIN_MS } from '../../../src/dataplane/auth/backend/token-cache.ts';
import { PolicyRuntime } from '../../../src/dataplane/policies/runtime.ts';
import { fakeClock } from '../../helpers/fake-clock.ts';
import {
  CLOUD_PLATFORM_SCOPE,
  GOOGLE_TOKEN_URL,
  ID_TOKEN_ISSUER,
  ID_TOKEN_PUBLIC_KEY,
  serviceAccount,
  TokenEndpointStandIn,
  type UserCredentials,
} from '../../helpers/google-stand-ins.ts';
import { fetchedBearer } from './helpers.ts';

const account = serviceAccount();
const rotated = serviceAccount('gw-backend-2@test-project.iam.gserviceaccount.com');
const user: UserCredentials = {
  clientId: '764086051850-test.apps.googleusercontent.com',
  clientSecret: 'd-FL95Q19q7MQmFpd7hHD0Ty',
  refreshToken: '1//0refresh-token-secret',
};

let endpoint: TokenEndpointStandIn;
let secrets: Record<string, Record<string, string>>;
const data = (ref: string) => secrets[ref];

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A fresh request target. */
const target = (): AuthTarget => ({ headers: {}, query: new URLSearchParams() });

function compiled(auth: BackendAuth, runtime: PolicyRuntime, host = 'backend.example.com'): CompiledBackendAuth {
  const result = compileBackendAuth(auth, data, 'llm', { runtime, target: { host } });
  if (result instanceof AuthConfigError) assert.fail(result.message);
  return result;
}

/** `auth` refused; `host` is the backend's (null: a backend without one). */
function refused(auth: BackendAuth, host: string | null = 'backend.example.com'): AuthConfigError {
  const result = compileBackendAuth(auth, data, 'llm', host === null ? {} : { target: { host } });
  assert.ok(result instanceof AuthConfigError, 'expected the configuration to be refused');
  return result;
}

before(async () => {
  endpoint = await TokenEndpointStandIn.start();
  endpoint.trust(account);
  endpoint.trust(rotated);
  endpoint.trustUser(user);
  secrets = {
    'Secret llm/sa': { 'credentials.json': JSON.stringify(account.keyFile(endpoint.url)) },
    'Secret llm/sa-other-key': { key: JSON.stringify(account.keyFile(endpoint.url)) },
    'Secret llm/user': {
      'credentials.json': JSON.stringify({
        type: 'authorized_user',
        client_id: user.clientId,
        client_secret: user.clientSecret,
        refresh_token: user.refreshToken,
        token_uri: endpoint.url,
      }),
    },
  };
});

after(() => endpoint.close());

describe('the token endpoint stand-in, proven with google-auth-library', () => {
  it('issues a service account access token and ID token to the library’s JWT client', async () => {
    const key = account.keyFile(endpoint.url);
    // The library posts to Google's URL; the test's transporter delivers it to the stand-in.
    const transporter = new gaxios.Gaxios();
    transporter.interceptors.request.add({
      resolved: async (options) => {
        if (String(options.url) === GOOGLE_TOKEN_URL) options.url = new URL(endpoint.url);
        return options;
      },
    });
    const jwt = new JWT({
      email: key.client_email as string,
      key: key.private_key as string,
      scopes: [CLOUD_PLATFORM_SCOPE],
      transporter,
    });
    const { token } = await jwt.getAccessToken();
    assert.ok(endpoint.accessTokens().has(token!), 'the library got the stand-in’s access token');
    assert.ok(jwt.credentials.expiry_date! > Date.now() + 3_500_000, 'expires_in was read');

    const idClient = new JWT({ email: key.client_email as string, key: key.private_key as string, transporter });
    const idToken = await idClient.fetchIdToken('https://svc.example.run.app');
    const { payload } = await jwtVerify(idToken, ID_TOKEN_PUBLIC_KEY, {
      issuer: ID_TOKEN_ISSUER,
      audience: 'https://svc.example.run.app',
    });
    assert.equal(payload.email, account.email);
  });

  it('refreshes user credentials for the library’s UserRefreshClient at its token endpoint', async () => {
    const client = new UserRefreshClient({
      clientId: user.clientId,
      clientSecret: user.clientSecret,
      refreshToken: user.refreshToken,
      endpoints: { oauth2TokenUrl: endpoint.url },
    });
    const { token } = await client.getAccessToken();
    assert.ok(endpoint.accessTokens().has(token!));
  });
});

describe('cloudtwo access tokens from a service account key', () => {
  it('fetches a cloud-platform token with a verified assertion, then serves it from the cache without waiting', async () => {
    const clock = fakeClock();
    const runtime = new PolicyRuntime({ clock });
    const auth = compiled({ cloudtwo: { secretRef: { name: 'sa' } } }, runtime);
    assert.equal(auth.mode, 'cloudtwo');
    const before = endpoint.issued.length;
    const successes = credentialMetrics.get('gcp', 'success');
    const first = await fetchedBearer(auth);
    assert.ok(first.waited, 'the first request waits for the fetch');
    const issued = endpoint.issued.slice(before);
    assert.equal(issued.length, 1);
    assert.equal(issued[0]!.token, first.token);
    const assertion = issued[0]!.assertion!;
    assert.equal(assertion.iss, account.email);
    assert.equal(assertion.aud, GOOGLE_TOKEN_URL);
    assert.equal(assertion.scope, CLOUD_PLATFORM_SCOPE);
    assert.equal(assertion.target_audience, undefined);
    assert.equal(credentialMetrics.get('gcp', 'success'), successes + 1);

    clock.advance(3_600_000 - REFRESH_MARGIN_MS - 1000);
    const cached = await fetchedBearer(auth);
    assert.deepEqual(cached, { token: first.token, waited: false }, 'before the refresh point: the cached token');
    assert.equal(endpoint.issued.length, before + 1);
  });

  it('refreshes in the background before expiry, keeps answering with the old token meanwhile, and waits once it has expired', async () => {
    const clock = fakeClock();
    const runtime = new PolicyRuntime({ clock });
    const auth = compiled({ cloudtwo: { secretRef: { name: 'sa' }, type: 'AccessToken' } }, runtime);
    const first = await fetchedBearer(auth);
    clock.advance(3_600_000 - REFRESH_MARGIN_MS + 1000);
    const before = endpoint.issued.length;
    const during = await fetchedBearer(auth);
    assert.deepEqual(during, { token: first.token, waited: false }, 'the old token while the refresh runs');
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(endpoint.issued.length, before + 1, 'one refresh');
    const refreshed = await fetchedBearer(auth);
    assert.equal(refreshed.waited, false);
    assert.equal(refreshed.token, endpoint.issued.at(-1)!.token, 'the refreshed token');
    assert.notEqual(refreshed.token, first.token);

    clock.advance(3_600_001);
    const afterExpiry = await fetchedBearer(auth);
    assert.equal(afterExpiry.waited, true, 'an expired token is never used');
    assert.equal(endpoint.issued.length, before + 2);
  });

  it('shares one fetch among concurrent requests', async () => {
    const runtime = new PolicyRuntime({ clock: fakeClock() });
    const auth = compiled({ cloudtwo: { secretRef: { name: 'sa' } } }, runtime);
    const before = endpoint.requests;
    endpoint.delayMs = 100;
    try {
      const tokens = await Promise.all(Array.from({ length: 20 }, () => fetchedBearer(auth)));
      assert.equal(new Set(tokens.map((entry) => entry.token)).size, 1);
      assert.equal(endpoint.requests, before + 1, 'one token request for twenty requests');
    } finally {
      endpoint.delayMs = 0;
    }
  });

  it('keeps its token across configurations while the Secret is unchanged; a rotated Secret fetches anew', async () => {
    const runtime = new PolicyRuntime({ clock: fakeClock() });
    const spec: BackendAuth = { cloudtwo: { secretRef: { name: 'sa' } } };
    const first = await fetchedBearer(compiled(spec, runtime));
    const before = endpoint.issued.length;
    const again = await fetchedBearer(compiled(spec, runtime));
    assert.deepEqual(again, { token: first.token, waited: false });
    assert.equal(endpoint.issued.length, before);
    // The same credentials under another Secret key are the same credential.
    const sameJson = await fetchedBearer(
      compiled({ cloudtwo: { secretRef: { name: 'sa-other-key', key: 'key' } } }, runtime),
    );
    assert.deepEqual(sameJson, { token: first.token, waited: false });
    secrets['Secret llm/rotating'] = { 'credentials.json': JSON.stringify(rotated.keyFile(endpoint.url)) };
    const other = await fetchedBearer(compiled({ cloudtwo: { secretRef: { name: 'rotating' } } }, runtime));
    assert.ok(other.waited);
    assert.notEqual(other.token, first.token);
    assert.equal(endpoint.issued.at(-1)!.subject, rotated.email);
    assert.equal(endpoint.issued.length, before + 1);
  });

  it('writes the token at the auth’s location', async () => {
    const runtime = new PolicyRuntime({ clock: fakeClock() });
    const auth = compiled(
      { cloudtwo: { secretRef: { name: 'sa' } }, location: { header: { name: 'x-goog-token', prefix: 'Token ' } } },
      runtime,
    );
    const request = target();
    await auth.apply(request, { headers: {} });
    assert.match(String(request.headers['x-goog-token']), /^Token ya29\./);
    assert.equal(request.headers.authorization, undefined);
  });

  it('answers a failing token endpoint with a 502 that carries no secret, and the next request tries again', async () => {
    const runtime = new PolicyRuntime({ clock: fakeClock() });
    const auth = compiled({ cloudtwo: { secretRef: { name: 'sa' } } }, runtime);
    const failures = credentialMetrics.get('gcp', 'failure');
    endpoint.failWith = 400;
    let error: unknown;
    try {
      await fetchedBearer(auth);
    } catch (caught) {
      error = caught;
    } finally {
      endpoint.failWith = undefined;
    }
    assert.ok(error instanceof BackendCredentialError);
    assert.equal(error.status, 502);
    assert.equal(error.message, 'gw could not obtain cloudtwo (Google Cloud) credentials for the backend.');
    assert.match(error.detail, new RegExp(`service_account credentials of ${account.email}`));
    assert.match(error.detail, /answered HTTP 400 \(invalid_grant\)/);
    const key = JSON.parse(secrets['Secret llm/sa']!['credentials.json']!) as { private_key: string };
    for (const text of [error.message, error.detail, inspect(error)]) {
      assert.doesNotMatch(text, /eyJ|PRIVATE KEY|Invalid grant/, 'no assertion, key or endpoint answer');
      assert.ok(!text.includes(key.private_key.slice(40, 80)));
    }
    assert.equal(credentialMetrics.get('gcp', 'failure'), failures + 1);
    const retried = await fetchedBearer(auth);
    assert.ok(retried.waited && endpoint.accessTokens().has(retried.token), 'the next request fetched');
  });
});

describe('cloudtwo ID tokens', () => {
  it('derives the audience from the backend host, and takes the expiry from the exp claim', async () => {
    const clock = fakeClock();
    const runtime = new PolicyRuntime({ clock });
    endpoint.lifetimeS = 600;
    try {
      const auth = compiled({ cloudtwo: { secretRef: { name: 'sa' }, type: 'IdToken' } }, runtime, 'Svc-abc.a.run.app');
      const before = endpoint.issued.length;
      const first = await fetchedBearer(auth);
      const issued = endpoint.issued.slice(before);
      assert.equal(issued.length, 1);
      assert.equal(issued[0]!.kind, 'id');
      assert.equal(issued[0]!.assertion!.target_audience, 'https://svc-abc.a.run.app');
      assert.equal(issued[0]!.assertion!.scope, undefined, 'an ID token request names its audience, not a scope');
      const { payload } = await jwtVerify(first.token, ID_TOKEN_PUBLIC_KEY, { audience: 'https://svc-abc.a.run.app' });
      assert.equal(payload.exp! - payload.iat!, 600);

      // A 600 s token is refreshed from half its life on, and not used past its exp.
      clock.advance(299_000);
      assert.deepEqual(await fetchedBearer(auth), { token: first.token, waited: false });
      await tick();
      assert.equal(endpoint.issued.length, before + 1, 'no refresh before half its life');
      clock.advance(302_000);
      const expired = await fetchedBearer(auth);
      assert.equal(expired.waited, true, 'past exp the request waits for a new token');
      assert.notEqual(expired.token, first.token);
    } finally {
      endpoint.lifetimeS = 3600;
    }
  });

  it('uses the configured audience', async () => {
    const runtime = new PolicyRuntime({ clock: fakeClock() });
    const auth = compiled(
      { cloudtwo: { secretRef: { name: 'sa' }, type: 'IdToken', audience: '1234-client.apps.googleusercontent.com' } },
      runtime,
    );
    const { token } = await fetchedBearer(auth);
    assert.equal(decodeJwt(token).aud, '1234-client.apps.googleusercontent.com');
  });
});

describe('cloudtwo with user credentials (authorized_user)', () => {
  it('refreshes at the JSON’s token_uri for access tokens and ID tokens', async () => {
    const runtime = new PolicyRuntime({ clock: fakeClock() });
    const access = await fetchedBearer(compiled({ cloudtwo: { secretRef: { name: 'user' } } }, runtime));
    assert.ok(endpoint.accessTokens().has(access.token));
    assert.equal(endpoint.issued.at(-1)!.grant, 'refresh_token');
    const id = await fetchedBearer(compiled({ cloudtwo: { secretRef: { name: 'user' }, type: 'IdToken' } }, runtime));
    assert.equal(decodeJwt(id.token).aud, 'https://backend.example.com');
    assert.equal(decodeJwt(id.token).sub, user.clientId);
  });
});

describe('cloudtwo configurations gw refuses', () => {
  const withJson = (value: unknown) => {
    secrets['Secret llm/probe'] = { 'credentials.json': typeof value === 'string' ? value : JSON.stringify(value) };
    return refused({ cloudtwo: { secretRef: { name: 'probe' } } });
  };

  it('names the Secret, its key and what is wrong, never quoting the JSON', () => {
    assert.match(
      refused({ cloudtwo: { secretRef: { name: 'absent' } } }).message,
      /cloudtwo\.secretRef\.name: Secret llm\/absent was not found/,
    );
    assert.match(
      refused({ cloudtwo: { secretRef: { name: 'sa-other-key' } } }).message,
      /cloudtwo\.secretRef\.key: Secret llm\/sa-other-key has no key "credentials\.json"/,
    );
    const notJson = withJson('{"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIsecret');
    assert.equal(notJson.field, 'cloudtwo.secretRef');
    assert.match(notJson.message, /key "credentials.json" of Secret llm\/probe is not JSON/);
    assert.doesNotMatch(notJson.message, /MIIsecret|BEGIN/);
    assert.match(withJson([1]).message, /is not a JSON object/);
    assert.match(withJson({ client_email: 'a@b' }).message, /has no "type"/);
    assert.match(
      withJson({ type: 'something_else' }).message,
      /has type "something_else"; gw accepts service_account and authorized_user/,
    );
  });

  it('refuses credential types that reach into the gateway’s own environment or chain to other credentials', () => {
    const external = withJson({
      type: 'external_account',
      audience: '//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/x',
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      token_url: 'https://sts.googleapis.com/v1/token',
      credential_source: { file: '/var/run/secrets/kubernetes.io/serviceaccount/token' },
    });
    assert.match(
      external.message,
      /holds external_account credentials, which takes its subject token from the gateway’s own environment/,
    );
    assert.match(
      withJson({ type: 'impersonated_service_account' }).message,
      /impersonated_service_account credentials/,
    );
    assert.match(withJson({ type: 'gdch_service_account' }).message, /gdch_service_account/);
  });

  it('checks the fields each type needs, the private key and where token_uri points', () => {
    const key = account.keyFile(endpoint.url);
    assert.match(withJson({ ...key, client_email: undefined }).message, /has no client_email/);
    const badKey = withJson({ ...key, private_key: 'not-a-pem-secret-material' });
    assert.match(badKey.message, /has a private_key that is not an unencrypted PEM private key/);
    assert.doesNotMatch(badKey.message, /secret-material/);
    assert.match(
      withJson({ ...key, token_uri: 'http://tokens.example.com/token' }).message,
      /token_uri must be an https URL \(http only to a loopback address\)/,
    );
    assert.match(
      withJson({ type: 'authorized_user', client_id: 'c', client_secret: 's' }).message,
      /has no refresh_token/,
    );
  });

  it('needs an audience for an ID token when the backend has no hostname, and refuses one its request would mangle', () => {
    const spec: BackendAuth = { cloudtwo: { secretRef: { name: 'sa' }, type: 'IdToken' } };
    for (const host of [null, '10.0.0.7', '[fd00::1]']) {
      const error = refused(spec, host);
      assert.equal(error.field, 'cloudtwo.audience');
      assert.match(error.message, /is required: the backend has no hostname/);
    }
    const bad = refused({
      cloudtwo: { secretRef: { name: 'sa' }, type: 'IdToken', audience: 'https://a.example?x=1&y=2' },
    });
    assert.equal(bad.field, 'cloudtwo.audience');
  });

  it('keeps the credentials out of util.inspect and JSON of what it compiled', () => {
    const auth = compiled({ cloudtwo: { secretRef: { name: 'sa' } } }, new PolicyRuntime());
    const key = JSON.parse(secrets['Secret llm/sa']!['credentials.json']!) as { private_key: string };
    const shown = `${inspect(auth, { depth: 10, showHidden: true })}${JSON.stringify(auth)}`;
    assert.ok(!shown.includes(key.private_key.slice(40, 80)));
  });
});
