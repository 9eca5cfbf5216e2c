// How gw authenticates to a token endpoint (OAuthClientAuth), checked by the authorization server
// stand-in as a real one does: client_secret_basic with the RFC 6749 form-urlencoding of id and
// secret, client_secret_post with and without a secret, private_key_jwt assertions verified with
// the public key (iss, sub, aud, jti, iat/exp, kid), carrying the certificate chain (x5c) or its
// thumbprint (x5t#S256), and the warning when the certificate does not certify the signing key.
import assert from 'node:assert/strict';
import { generateKeyPairSync, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import type { BackendAuth, OAuthClientAuth } from '../../../src/api/types/backend-auth.ts';
import { AuthConfigError, compileBackendAuth } from '../../../src/dataplane/auth/backend/index.ts';
import { PolicyRuntime } from '../../../src/dataplane/policies/runtime.ts';
import { fakeClock } from '../../helpers/fake-clock.ts';
import { type AuthorizationServer, applyAuth, startAuthorizationServer } from './oauth-server.ts';

const tls = (name: string) => readFileSync(new URL(`../../fixtures/tls/${name}`, import.meta.url), 'utf8');
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const rsaPem = rsa.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
const leaf = new X509Certificate(tls('a.crt'));
const ca = new X509Certificate(tls('ca.crt'));

// Characters RFC 6749 2.3.1 makes gw encode before Basic: ':' in the id, '+', '%', ' ' and non-ASCII.
const ODD_ID = 'gw:client+1';
const ODD_SECRET = 'p%ss w+rd:é';

const SECRETS: Record<string, Record<string, string>> = {
  'Secret llm/basic': { clientSecret: ODD_SECRET },
  'Secret llm/post': { secret: 'post-secret' },
  'Secret llm/rsa': { signingKey: rsaPem },
  'Secret llm/ec': { signingKey: tls('a.key'), certificate: `${tls('a.crt')}\n${tls('ca.crt')}` },
  'Secret llm/other-ec': { key: tls('b.key') },
  'Secret llm/not-a-certificate': {
    certificate: '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n-----END CERTIFICATE-----',
  },
};
const data = (ref: string) => SECRETS[ref];

let server: AuthorizationServer;
let runtime: PolicyRuntime;
const clock = fakeClock();

before(async () => {
  runtime = new PolicyRuntime({ clock });
  server = await startAuthorizationServer([
    { id: ODD_ID, method: 'client_secret_basic', secret: ODD_SECRET },
    { id: 'poster', method: 'client_secret_post', secret: 'post-secret' },
    { id: 'public', method: 'none' },
    { id: 'rsa-client', method: 'private_key_jwt', publicKey: rsa.publicKey, audience: 'https://idp.example/token' },
    { id: 'x5c-client', method: 'private_key_jwt', publicKey: leaf.publicKey, audience: 'idp', x5c: [leaf, ca] },
    { id: 'x5t-client', method: 'private_key_jwt', publicKey: leaf.publicKey, audience: 'idp', x5tS256: leaf },
  ]);
});
after(async () => {
  await runtime.close();
  await server.close();
});

function compile(clientAuth: OAuthClientAuth, warn?: (message: string) => void) {
  const auth: BackendAuth = { oauthTokenExchange: { url: server.url, clientAuth } };
  return compileBackendAuth(auth, data, 'llm', {
    endpoints: { backends: {}, namespace: 'llm' },
    runtime,
    clock,
    ...(warn ? { warn } : {}),
  });
}

/** Exchanges once with `clientAuth`; the request the server recorded (its client authenticated). */
async function exchangeWith(clientAuth: OAuthClientAuth, warn?: (message: string) => void) {
  const compiled = compile(clientAuth, warn);
  if (compiled instanceof AuthConfigError) assert.fail(compiled.message);
  const before = server.requests.length;
  const result = await applyAuth(compiled, { authorization: `Bearer subject-${Math.random()}` });
  assert.equal(result.failure, undefined, result.failure?.detail);
  assert.equal(server.requests.length, before + 1);
  return server.requests.at(-1)!;
}

test('ClientSecretBasic (the default) form-urlencodes id and secret before Basic', async () => {
  const request = await exchangeWith({ clientId: ODD_ID, secretRef: { name: 'basic' } });
  assert.equal(request.client, ODD_ID);
  const basic = Buffer.from(String(request.headers.authorization).slice('Basic '.length), 'base64').toString();
  assert.equal(basic, 'gw%3Aclient%2B1:p%25ss+w%2Brd%3A%C3%A9');
  assert.equal(request.form.has('client_id'), false);
  assert.equal(request.form.has('client_secret'), false);
});

test('ClientSecretPost sends id and secret in the form, or the id alone without secretRef', async () => {
  const post = await exchangeWith({
    clientId: 'poster',
    method: 'ClientSecretPost',
    secretRef: { name: 'post', key: 'secret' },
  });
  assert.equal(post.client, 'poster');
  assert.equal(post.form.get('client_secret'), 'post-secret');
  assert.equal(post.headers.authorization, undefined);
  const publicClient = await exchangeWith({ clientId: 'public', method: 'ClientSecretPost' });
  assert.equal(publicClient.client, 'public');
  assert.equal(publicClient.form.has('client_secret'), false);
});

test('PrivateKeyJwt signs an RFC 7523 client assertion the server verifies with the public key', async () => {
  const clientAuth: OAuthClientAuth = {
    clientId: 'rsa-client',
    method: 'PrivateKeyJwt',
    privateKeyJwt: { signingKeyRef: { name: 'rsa' }, assertionAudience: 'https://idp.example/token', kid: 'key-1' },
  };
  const first = await exchangeWith(clientAuth);
  assert.equal(first.client, 'rsa-client');
  assert.deepEqual(first.assertion!.header, { alg: 'RS256', typ: 'JWT', kid: 'key-1' });
  const claims = first.assertion!.claims;
  assert.equal(claims.iat, Math.floor(clock.epochMs() / 1000));
  assert.equal(claims.exp, (claims.iat as number) + 120);
  assert.equal(first.form.get('client_id'), 'rsa-client');
  // Every token request has its own assertion.
  const second = await exchangeWith(clientAuth);
  assert.notEqual(second.assertion!.claims.jti, claims.jti);
  assert.notEqual(second.form.get('client_assertion'), first.form.get('client_assertion'));
});

/** PrivateKeyJwt with the EC key of `signingKeyRef` and the a.example.test chain, in `header`. */
function certifiedClient(
  clientId: string,
  certificateHeader: 'x5c' | 'x5t#S256',
  signingKeyRef: { name: string; key?: string } = { name: 'ec' },
): OAuthClientAuth {
  return {
    clientId,
    method: 'PrivateKeyJwt',
    privateKeyJwt: {
      signingKeyRef,
      alg: 'ES256',
      certificateRef: { name: 'ec' },
      certificateHeader,
      assertionAudience: 'idp',
    },
  };
}

test('PrivateKeyJwt carries the certificate chain in x5c or the leaf thumbprint in x5t#S256', async () => {
  const warnings: string[] = [];
  const x5c = await exchangeWith(certifiedClient('x5c-client', 'x5c'), (message) => warnings.push(message));
  assert.equal(x5c.client, 'x5c-client');
  assert.equal((x5c.assertion!.header.x5c as string[]).length, 2);
  const x5t = await exchangeWith(certifiedClient('x5t-client', 'x5t#S256'), (message) => warnings.push(message));
  assert.equal(x5t.client, 'x5t-client');
  assert.deepEqual(warnings, [], 'the certificate matches the key');
});

test('a certificate that does not certify the signing key is a warning; the token endpoint refuses the assertion', async () => {
  const warnings: string[] = [];
  const compiled = compile(certifiedClient('x5c-client', 'x5c', { name: 'other-ec', key: 'key' }), (message) =>
    warnings.push(message),
  );
  if (compiled instanceof AuthConfigError) assert.fail(compiled.message);
  assert.equal(warnings.length, 1);
  assert.match(
    warnings[0]!,
    /privateKeyJwt\.certificateRef: the leaf certificate \(subject CN=a\.example\.test\) does not certify/,
  );
  const result = await applyAuth(compiled, { authorization: 'Bearer subject' });
  assert.equal(result.failure?.status, 502, 'invalid_client is gw failure');
  assert.match(result.failure!.detail, /answered 401 invalid_client/);
});

test('client authentication that cannot work is refused at compile, naming the field', () => {
  const field = (clientAuth: OAuthClientAuth) => {
    const compiled = compile(clientAuth);
    assert.ok(compiled instanceof AuthConfigError);
    assert.doesNotMatch(compiled.message, /BEGIN|post-secret/);
    return compiled.field;
  };
  const base = 'oauthTokenExchange.clientAuth';
  assert.equal(field({ clientId: 'gw', method: 'ClientSecretBasic' }), `${base}.secretRef`);
  assert.equal(
    field({
      clientId: 'gw',
      method: 'ClientSecretPost',
      privateKeyJwt: { signingKeyRef: { name: 'rsa' }, assertionAudience: 'a' },
    }),
    `${base}.privateKeyJwt`,
  );
  assert.equal(field({ clientId: 'gw', method: 'PrivateKeyJwt' }), `${base}.privateKeyJwt`);
  assert.equal(
    field({
      clientId: 'gw',
      method: 'PrivateKeyJwt',
      secretRef: { name: 'post' },
      privateKeyJwt: { signingKeyRef: { name: 'rsa' }, assertionAudience: 'a' },
    }),
    `${base}.secretRef`,
  );
  // The key must suit alg; the Secret key defaults to signingKey.
  assert.equal(
    field({
      clientId: 'gw',
      method: 'PrivateKeyJwt',
      privateKeyJwt: { signingKeyRef: { name: 'rsa' }, alg: 'ES256', assertionAudience: 'a' },
    }),
    `${base}.privateKeyJwt.signingKeyRef`,
  );
  assert.equal(
    field({
      clientId: 'gw',
      method: 'PrivateKeyJwt',
      privateKeyJwt: { signingKeyRef: { name: 'other-ec' }, alg: 'ES256', assertionAudience: 'a' },
    }),
    `${base}.privateKeyJwt.signingKeyRef.key`,
  );
  assert.equal(
    field({
      clientId: 'gw',
      method: 'PrivateKeyJwt',
      privateKeyJwt: {
        signingKeyRef: { name: 'rsa' },
        certificateRef: { name: 'not-a-certificate' },
        certificateHeader: 'x5c',
        assertionAudience: 'a',
      },
    }),
    `${base}.privateKeyJwt.certificateRef`,
  );
  assert.equal(
    field({
      clientId: 'gw',
      method: 'PrivateKeyJwt',
      privateKeyJwt: {
        signingKeyRef: { name: 'rsa' },
        certificateRef: { name: 'rsa' },
        certificateHeader: 'x5c',
        assertionAudience: 'a',
      },
    }),
    `${base}.privateKeyJwt.certificateRef.key`,
  );
});
