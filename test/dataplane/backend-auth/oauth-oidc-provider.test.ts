// oauthTokenExchange against a real OpenID provider (oidc-provider) with RFC 8693 token exchange
// registered as a grant type (registerGrantType): the provider authenticates gw's client itself —
// client_secret_basic (its own decoding of the RFC 6749 form-urlencoded id and secret),
// client_secret_post, and private_key_jwt (signature with the registered JWKS, audience, jti
// replay, lifetime) — so the client authentication gw sends is checked by a standard server, not
// only by the test's stand-in. The grant handler issues a token for a known subject token and
// answers invalid_grant otherwise.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { after, before, test } from 'node:test';
import type { OAuthClientAuth } from '../../../src/api/types/backend-auth.ts';
import { AuthConfigError, compileBackendAuth } from '../../../src/dataplane/auth/backend/index.ts';
import { PolicyRuntime } from '../../../src/dataplane/policies/runtime.ts';
import { closeServer, listen } from '../../helpers/http-server.ts';
import { applyAuth } from './oauth-server.ts';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const BASIC_ID = 'gw:basic+client';
const BASIC_SECRET = 'se cret%+:/~';
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const providerKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const publicJwk = { ...rsa.publicKey.export({ format: 'jwk' }), kid: 'gw-key', alg: 'RS256', use: 'sig' };

const SECRETS: Record<string, Record<string, string>> = {
  'Secret llm/clients': {
    clientSecret: BASIC_SECRET,
    post: 'post-secret-for-tests',
    signingKey: rsa.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  },
};
const data = (ref: string) => SECRETS[ref];

// oidc-provider ships no type declarations: the little used here is typed here.
interface GrantContext {
  oidc: { client: { clientId: string }; params: Record<string, string | string[] | undefined> };
  body: unknown;
}
interface OidcProvider {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
  registerGrantType(
    name: string,
    handler: (ctx: GrantContext) => Promise<void>,
    params: string[],
    dupes: string[],
  ): void;
}
interface OidcProviderModule {
  default: new (issuer: string, configuration: Record<string, unknown>) => OidcProvider;
  errors: { InvalidGrant: new (description: string) => Error };
}

const server = createServer();
let issuer: string;
let runtime: PolicyRuntime;
const exchanges: { client: string; params: Record<string, unknown> }[] = [];

before(async () => {
  runtime = new PolicyRuntime();
  const moduleName = 'oidc-provider';
  const { default: Provider, errors } = (await import(moduleName)) as OidcProviderModule;
  const port = await listen(server);
  issuer = `http://127.0.0.1:${port}`;
  const client = (id: string, method: string, extra: Record<string, unknown>) => ({
    client_id: id,
    token_endpoint_auth_method: method,
    grant_types: [TOKEN_EXCHANGE],
    response_types: [],
    redirect_uris: [],
    ...extra,
  });
  const provider = new Provider(issuer, {
    cookies: { keys: ['cookie-signing-key-for-tests'] },
    jwks: { keys: [{ ...providerKey.export({ format: 'jwk' }), kid: 'provider-key', alg: 'RS256', use: 'sig' }] },
    features: { devInteractions: { enabled: false } },
    clients: [
      client(BASIC_ID, 'client_secret_basic', { client_secret: BASIC_SECRET }),
      client('gw-post', 'client_secret_post', { client_secret: 'post-secret-for-tests' }),
      client('gw-jwt', 'private_key_jwt', { jwks: { keys: [publicJwk] } }),
    ],
  });
  provider.registerGrantType(
    TOKEN_EXCHANGE,
    async (ctx) => {
      const params = ctx.oidc.params;
      exchanges.push({ client: ctx.oidc.client.clientId, params: { ...params } });
      if (params.subject_token !== 'valid-user-token') throw new errors.InvalidGrant('unknown subject token');
      ctx.body = {
        access_token: `issued-to-${ctx.oidc.client.clientId}`,
        issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        token_type: 'Bearer',
        expires_in: 300,
      };
    },
    ['subject_token', 'subject_token_type', 'audience', 'resource', 'scope', 'requested_token_type'],
    ['audience', 'resource'],
  );
  const handle = provider.callback();
  server.on('request', handle);
});

after(async () => {
  await runtime.close();
  await closeServer(server);
});

async function exchangeWith(clientAuth: OAuthClientAuth, subject = 'valid-user-token') {
  const compiled = compileBackendAuth(
    {
      oauthTokenExchange: {
        url: `${issuer}/token`,
        clientAuth,
        audiences: ['https://api.example', 'https://billing.example'],
        scopes: ['openid'],
      },
    },
    data,
    'llm',
    { endpoints: { backends: {}, namespace: 'llm' }, runtime },
  );
  if (compiled instanceof AuthConfigError) assert.fail(compiled.message);
  return applyAuth(compiled, { authorization: `Bearer ${subject}` });
}

test('client_secret_basic, as oidc-provider decodes it', async () => {
  const result = await exchangeWith({ clientId: BASIC_ID, secretRef: { name: 'clients' } });
  assert.equal(result.failure, undefined, result.failure?.detail);
  assert.equal(result.headers.authorization, `Bearer issued-to-${BASIC_ID}`);
  const last = exchanges.at(-1)!;
  assert.equal(last.client, BASIC_ID);
  assert.equal(last.params.subject_token_type, 'urn:ietf:params:oauth:token-type:access_token');
  assert.deepEqual(last.params.audience, ['https://api.example', 'https://billing.example']);
});

test('client_secret_post', async () => {
  const result = await exchangeWith({
    clientId: 'gw-post',
    method: 'ClientSecretPost',
    secretRef: { name: 'clients', key: 'post' },
  });
  assert.equal(result.failure, undefined, result.failure?.detail);
  assert.equal(result.headers.authorization, 'Bearer issued-to-gw-post');
});

test('private_key_jwt: oidc-provider verifies the assertion; a fresh one for each exchange', async () => {
  const clientAuth: OAuthClientAuth = {
    clientId: 'gw-jwt',
    method: 'PrivateKeyJwt',
    privateKeyJwt: { signingKeyRef: { name: 'clients' }, kid: 'gw-key', assertionAudience: `${issuer}/token` },
  };
  for (let i = 0; i < 2; i++) {
    // A new compile each time: no cached token, so the second exchange proves jti is not replayed.
    const result = await exchangeWith(clientAuth);
    assert.equal(result.failure, undefined, result.failure?.detail);
    assert.equal(result.headers.authorization, 'Bearer issued-to-gw-jwt');
    await runtime.close();
    runtime = new PolicyRuntime();
  }
});

test('wrong client credentials are a 502; a subject token the provider refuses is the client 401', async () => {
  SECRETS['Secret llm/wrong'] = { clientSecret: 'not-the-secret' };
  const wrong = await exchangeWith({ clientId: BASIC_ID, secretRef: { name: 'wrong' } });
  assert.equal(wrong.failure?.status, 502);
  assert.match(wrong.failure!.detail, /answered 401 invalid_client/);
  const refused = await exchangeWith(
    { clientId: 'gw-post', method: 'ClientSecretPost', secretRef: { name: 'clients', key: 'post' } },
    'stolen',
  );
  assert.equal(refused.failure?.status, 401);
  assert.match(refused.failure!.detail, /answered 400 invalid_grant/);
});
