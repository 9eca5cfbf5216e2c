// Backend authentication oauthTokenExchange at the compile seam, against an authorization server
// stand-in on loopback that checks the client authentication and records every form field: the
// RFC 8693 and RFC 7523 requests gw sends, where the subject and actor tokens come from (and that
// they do not reach the backend), may_act, additionalParams, the answers of the token endpoint
// mapped to 401, 403, 400 and 502 without echoing it, and the cache (one exchange per subject
// token, maxEntries 0, defaultTtl and expires_in on a clock the test moves).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { BackendAuth, OAuthTokenExchange } from '../../../src/api/types/backend-auth.ts';
import {
  AuthConfigError,
  type BackendAuthOptions,
  type CompiledBackendAuth,
  compileBackendAuth,
} from '../../../src/dataplane/auth/backend/index.ts';
import { PolicyRuntime } from '../../../src/dataplane/policies/runtime.ts';
import { type FakeClock, fakeClock } from '../../helpers/fake-clock.ts';
import { listen } from '../../helpers/http-server.ts';
import { type AuthorizationServer, applyAuth, freshToken, startAuthorizationServer } from './oauth-server.ts';

const CLIENT_SECRET = 'client-secret-5e4d3c2b1a';
const SECRETS: Record<string, Record<string, string>> = {
  'Secret llm/oauth-client': { clientSecret: `${CLIENT_SECRET}\n` },
};
const data = (ref: string) => SECRETS[ref];

const URN = {
  exchange: 'urn:ietf:params:oauth:grant-type:token-exchange',
  jwtBearer: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
  access: 'urn:ietf:params:oauth:token-type:access_token',
  jwt: 'urn:ietf:params:oauth:token-type:jwt',
  id: 'urn:ietf:params:oauth:token-type:id_token',
};

/** An unsigned JWT (the stand-in does not verify subject tokens; gw only decodes them). */
function jwt(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'RS256', typ: 'JWT' })}.${part(claims)}.c2lnbmF0dXJl`;
}

let server: AuthorizationServer;
let runtime: PolicyRuntime;
let clock: FakeClock;

before(async () => {
  server = await startAuthorizationServer([{ id: 'gw', method: 'client_secret_basic', secret: CLIENT_SECRET }]);
});
after(async () => {
  await runtime?.close();
  await server.close();
});
beforeEach(async () => {
  // Each test its own runtime: no token cached by another.
  await runtime?.close();
  clock = fakeClock();
  runtime = new PolicyRuntime({ clock });
  server.requests.length = 0;
  server.answer = freshToken;
});

const clientAuth = { clientId: 'gw', secretRef: { name: 'oauth-client' } };

function options(extra: BackendAuthOptions = {}): BackendAuthOptions {
  return { endpoints: { backends: {}, namespace: 'llm' }, runtime, clock, ...extra };
}

function exchange(spec: Partial<OAuthTokenExchange>, extra: Omit<BackendAuth, 'oauthTokenExchange'> = {}) {
  const auth: BackendAuth = { ...extra, oauthTokenExchange: { url: server.url, clientAuth, ...spec } };
  const compiled = compileBackendAuth(auth, data, 'llm', options());
  if (compiled instanceof AuthConfigError) assert.fail(compiled.message);
  assert.equal(compiled.mode, 'oauthTokenExchange');
  return compiled;
}

function configError(
  spec: Partial<OAuthTokenExchange>,
  extra: BackendAuthOptions & { location?: BackendAuth['location'] } = {},
) {
  const { location, ...rest } = extra;
  const auth: BackendAuth = { oauthTokenExchange: { url: server.url, clientAuth, ...spec } };
  if (location) auth.location = location;
  const compiled = compileBackendAuth(auth, data, 'llm', options(rest));
  assert.ok(compiled instanceof AuthConfigError, 'expected an AuthConfigError');
  return compiled;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('the token request', () => {
  test('an RFC 8693 exchange carries every field, and the backend gets the exchanged token', async () => {
    const auth = exchange({
      url: `${server.url}/oauth2`,
      path: '/token',
      audiences: ['https://api.example', 'billing'],
      scopes: ['read', 'write'],
      resources: ['https://api.example/v1', 'https://api.example/v2'],
      requestedTokenType: 'Jwt',
    });
    const result = await applyAuth(auth, { ...bearer('subject-1'), 'x-other': 'kept' });
    assert.equal(result.failure, undefined);
    assert.match(String(result.headers.authorization), /^Bearer exchanged-\d+$/);
    assert.equal(result.headers['x-other'], 'kept');
    assert.equal(server.requests.length, 1);
    const request = server.requests[0]!;
    assert.equal(request.path, '/oauth2/token');
    assert.equal(request.client, 'gw');
    assert.deepEqual([...request.form.keys()].sort(), [
      'audience',
      'audience',
      'grant_type',
      'requested_token_type',
      'resource',
      'resource',
      'scope',
      'subject_token',
      'subject_token_type',
    ]);
    assert.equal(request.form.get('grant_type'), URN.exchange);
    assert.equal(request.form.get('subject_token'), 'subject-1');
    assert.equal(request.form.get('subject_token_type'), URN.access);
    assert.deepEqual(request.form.getAll('audience'), ['https://api.example', 'billing']);
    assert.equal(request.form.get('scope'), 'read write');
    assert.deepEqual(request.form.getAll('resource'), ['https://api.example/v1', 'https://api.example/v2']);
    assert.equal(request.form.get('requested_token_type'), URN.jwt);
  });

  test('an RFC 7523 JWT bearer grant sends the subject token as the assertion', async () => {
    const auth = exchange({ grantType: 'JwtBearer', scopes: ['calendar'] });
    const result = await applyAuth(auth, bearer('assertion-jwt'));
    assert.equal(result.failure, undefined);
    const request = server.requests[0]!;
    assert.deepEqual(Object.fromEntries(request.form), {
      grant_type: URN.jwtBearer,
      assertion: 'assertion-jwt',
      scope: 'calendar',
    });
  });

  test('without clientAuth no client authentication is sent; the default path is /', async () => {
    const open = await startAuthorizationServer([], { requireClient: false });
    try {
      const compiled = compileBackendAuth({ oauthTokenExchange: { url: open.url } }, data, 'llm', options());
      if (compiled instanceof AuthConfigError) assert.fail(compiled.message);
      const result = await applyAuth(compiled, bearer('subject-2'));
      assert.equal(result.failure, undefined);
      const request = open.requests[0]!;
      assert.equal(request.path, '/');
      assert.equal(request.client, undefined);
      assert.equal(request.headers.authorization, undefined);
      assert.equal(request.form.has('client_id'), false);
    } finally {
      await open.close();
    }
  });

  test('the subject token is read from a header, a query parameter, a cookie or an expression; custom types pass through', async () => {
    const header = exchange({
      subjectToken: {
        source: { header: { name: 'X-User-Token', prefix: 'Token ' } },
        tokenType: 'urn:example:token-type:session',
      },
    });
    const fromHeader = await applyAuth(header, {
      'x-user-token': 'Token from-header',
      authorization: 'Bearer ignored',
    });
    assert.equal(fromHeader.failure, undefined);
    assert.equal(server.requests.at(-1)!.form.get('subject_token'), 'from-header');
    assert.equal(server.requests.at(-1)!.form.get('subject_token_type'), 'urn:example:token-type:session');
    // The client's token does not reach the backend.
    assert.equal(fromHeader.headers['x-user-token'], undefined);
    assert.match(String(fromHeader.headers.authorization), /^Bearer exchanged-/);

    const query = exchange({ subjectToken: { source: { queryParameter: { name: 'access_token' } } } });
    assert.equal(query.writesQuery, true);
    const fromQuery = await applyAuth(query, {}, { query: 'access_token=from-query&page=2' });
    assert.equal(fromQuery.failure, undefined);
    assert.equal(server.requests.at(-1)!.form.get('subject_token'), 'from-query');
    assert.equal(fromQuery.query.toString(), 'page=2');

    const cookie = exchange({ subjectToken: { source: { cookie: { name: 'session' } } } });
    const fromCookie = await applyAuth(cookie, { cookie: 'theme=dark; session=from-cookie' });
    assert.equal(fromCookie.failure, undefined);
    assert.equal(server.requests.at(-1)!.form.get('subject_token'), 'from-cookie');

    const expression = exchange({
      subjectToken: { source: { expression: 'request.headers["x-forwarded-token"]' }, tokenType: 'IdToken' },
    });
    const variables = { request: { headers: { 'x-forwarded-token': 'from-expression' } } };
    const fromExpression = await applyAuth(expression, {}, { variables });
    assert.equal(fromExpression.failure, undefined);
    assert.equal(server.requests.at(-1)!.form.get('subject_token'), 'from-expression');
    assert.equal(server.requests.at(-1)!.form.get('subject_token_type'), URN.id);
  });

  test('a request without a subject token is refused with 401 and nothing is asked', async () => {
    const auth = exchange({});
    for (const headers of [{}, { authorization: 'Basic dXNlcjpwdw==' }, { authorization: 'Bearer   ' }]) {
      const result = await applyAuth(auth, headers);
      assert.equal(result.failure?.status, 401, JSON.stringify(headers));
      assert.match(result.failure!.message, /no token/);
    }
    // An expression that fails to evaluate gives no token either.
    const expression = exchange({ subjectToken: { source: { expression: 'request.headers["missing"]' } } });
    assert.equal((await applyAuth(expression, {}, { variables: { request: { headers: {} } } })).failure?.status, 401);
    assert.equal(server.requests.length, 0);
  });
});

describe('the actor token', () => {
  const subject = jwt({ sub: 'alice', may_act: { sub: 'agent-7', iss: 'https://idp.example' } });
  const actorSpec = (mayAct?: 'Required') => ({
    actorToken: {
      source: { header: { name: 'x-actor-token' } },
      tokenType: 'Jwt' as const,
      ...(mayAct ? { mayAct } : {}),
    },
  });

  test('is sent with its type, and removed from the backend request', async () => {
    const actor = jwt({ sub: 'anyone' });
    const result = await applyAuth(exchange(actorSpec()), { ...bearer(subject), 'x-actor-token': actor });
    assert.equal(result.failure, undefined);
    const form = server.requests[0]!.form;
    assert.equal(form.get('actor_token'), actor);
    assert.equal(form.get('actor_token_type'), URN.jwt);
    assert.equal(result.headers['x-actor-token'], undefined);
  });

  test('mayAct Required: the subject may_act must name the actor (sub and iss), else 403', async () => {
    const auth = exchange(actorSpec('Required'));
    const allowed = jwt({ sub: 'agent-7', iss: 'https://idp.example', scope: 'x' });
    assert.equal((await applyAuth(auth, { ...bearer(subject), 'x-actor-token': allowed })).failure, undefined);
    assert.equal(server.requests.length, 1);

    const refusals: [string, string][] = [
      [subject, jwt({ sub: 'agent-8', iss: 'https://idp.example' })],
      [subject, jwt({ sub: 'agent-7', iss: 'https://other.example' })],
      [subject, jwt({ sub: 'agent-7' })],
      [jwt({ sub: 'alice' }), allowed],
      [jwt({ sub: 'alice', may_act: {} }), allowed],
      ['opaque-subject', allowed],
      [subject, 'opaque-actor'],
    ];
    for (const [subjectToken, actorToken] of refusals) {
      const result = await applyAuth(auth, { ...bearer(subjectToken), 'x-actor-token': actorToken });
      assert.equal(result.failure?.status, 403, `${subjectToken} / ${actorToken}`);
      assert.match(result.failure!.message, /may_act/);
      assert.doesNotMatch(result.failure!.detail, /agent-8|alice|opaque/);
    }
    // A may_act listing several subjects admits any of them.
    const listed = jwt({ sub: 'alice', may_act: { sub: ['agent-1', 'agent-7'] } });
    assert.equal((await applyAuth(auth, { ...bearer(listed), 'x-actor-token': allowed })).failure, undefined);
    assert.equal(server.requests.length, 2);
  });

  test('a missing actor token is refused with 401', async () => {
    const result = await applyAuth(exchange(actorSpec()), bearer(subject));
    assert.equal(result.failure?.status, 401);
    assert.equal(server.requests.length, 0);
  });
});

describe('additionalParams', () => {
  const variables = (tenant: unknown) => ({ request: { headers: { 'x-tenant': tenant } } });

  test('are evaluated per request, sent, and part of the cache key', async () => {
    const auth = exchange({
      additionalParams: { tenant: 'request.headers["x-tenant"]', fixed: '"constant"' },
    });
    for (const tenant of ['acme', 'acme', 'globex']) {
      const result = await applyAuth(auth, bearer('same-subject'), { variables: variables(tenant) });
      assert.equal(result.failure, undefined);
    }
    // acme twice is one exchange; globex is another.
    assert.deepEqual(
      server.requests.map((request) => [request.form.get('tenant'), request.form.get('fixed')]),
      [
        ['acme', 'constant'],
        ['globex', 'constant'],
      ],
    );
  });

  test('an expression that fails or yields no string rejects the request with 400', async () => {
    const auth = exchange({ additionalParams: { tenant: 'request.headers["x-tenant"]' } });
    for (const bad of [variables(42), { request: { headers: {} } }]) {
      const result = await applyAuth(auth, bearer('subject'), { variables: bad });
      assert.equal(result.failure?.status, 400);
      assert.match(result.failure!.message, /parameter tenant/);
    }
    assert.equal(server.requests.length, 0);
  });

  test('a name gw sets itself or an expression that does not compile is refused', () => {
    assert.equal(
      configError({ additionalParams: { Scope: '"x"' } }).field,
      'oauthTokenExchange.additionalParams.Scope',
    );
    assert.equal(configError({ additionalParams: { a: '1 +' } }).field, 'oauthTokenExchange.additionalParams.a');
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, index) => [`p${index}`, '"v"']));
    assert.equal(configError({ additionalParams: many }).field, 'oauthTokenExchange.additionalParams');
  });
});

describe('the token endpoint answer', () => {
  const secretDescription = 'the subject token subject-9 is expired';

  async function failureOf(answer: () => { status: number; body: unknown }) {
    server.answer = answer;
    const result = await applyAuth(exchange({}), bearer('subject-9'));
    assert.ok(result.failure, 'expected a failure');
    // The endpoint's answer and the tokens never reach the client or the log.
    assert.doesNotMatch(result.failure.message, /subject-9|expired|leaked/);
    assert.doesNotMatch(result.failure.detail, /subject-9|expired|leaked/);
    return result.failure;
  }

  test('an OAuth error about the client token is the client 401', async () => {
    for (const error of ['invalid_grant', 'invalid_target', 'unauthorized_client']) {
      const failure = await failureOf(() => ({
        status: 400,
        body: { error, error_description: secretDescription },
      }));
      assert.equal(failure.status, 401, error);
      assert.match(failure.detail, new RegExp(`answered 400 ${error}`));
    }
  });

  test('invalid_client, a 5xx, garbage and answers without a usable token are a 502', async () => {
    const cases: [string, { status: number; body: unknown }][] = [
      ['invalid_client', { status: 401, body: { error: 'invalid_client', error_description: secretDescription } }],
      ['server error', { status: 503, body: { error: 'temporarily_unavailable' } }],
      ['invalid_request', { status: 400, body: { error: 'invalid_request' } }],
      ['not JSON', { status: 200, body: '<html>leaked</html>' }],
      ['no access_token', { status: 200, body: { token_type: 'Bearer' } }],
      ['empty access_token', { status: 200, body: { access_token: '', token_type: 'Bearer' } }],
      ['a DPoP token', { status: 200, body: { access_token: 'leaked', token_type: 'DPoP' } }],
      ['a 4xx without an OAuth error', { status: 403, body: 'leaked' }],
    ];
    for (const [name, answer] of cases) {
      const failure = await failureOf(() => answer);
      assert.equal(failure.status, 502, name);
      assert.equal(failure.message, 'gw could not obtain oauthTokenExchange credentials for the backend.');
    }
  });

  test('an issued_token_type other than the one requested is a 502', async () => {
    server.answer = () => ({
      status: 200,
      body: { access_token: 'leaked', issued_token_type: URN.access, token_type: 'Bearer' },
    });
    const result = await applyAuth(exchange({ requestedTokenType: 'IdToken' }), bearer('subject'));
    assert.equal(result.failure?.status, 502);
    assert.match(result.failure!.detail, /issued a "urn:ietf:params:oauth:token-type:access_token" token/);
  });

  test('an answer over 64 KiB is a 502', async () => {
    server.answer = () => ({ status: 200, body: { access_token: 'x'.repeat(70 * 1024), token_type: 'Bearer' } });
    const result = await applyAuth(exchange({}), bearer('subject'));
    assert.equal(result.failure?.status, 502);
    assert.match(result.failure!.detail, /larger than 65536 bytes/);
  });

  test('an unreachable endpoint and one that answers after the deadline are a 502', async () => {
    const closed = createServerPort();
    const port = await closed;
    const unreachable = compileBackendAuth(
      { oauthTokenExchange: { url: `http://127.0.0.1:${port}` } },
      data,
      'llm',
      options(),
    );
    if (unreachable instanceof AuthConfigError) assert.fail(unreachable.message);
    const down = await applyAuth(unreachable, bearer('subject'));
    assert.equal(down.failure?.status, 502);
    assert.match(down.failure!.detail, /could not be asked: ECONNREFUSED/);

    // The deadline is the GwBackend's requestTimeout.
    server.answer = (request) => ({ ...freshToken(request), delayMs: 2000 });
    const backends = {
      'GwBackend llm/idp': {
        kind: 'GwBackend',
        spec: { static: { host: '127.0.0.1', port: server.port }, policies: { http: { requestTimeout: '150ms' } } },
      },
    } as never;
    const slow = compileBackendAuth(
      { oauthTokenExchange: { backendRef: { kind: 'GwBackend', group: 'gw.dev', name: 'idp' }, clientAuth } },
      data,
      'llm',
      options({ endpoints: { backends, namespace: 'llm' } }),
    );
    if (slow instanceof AuthConfigError) assert.fail(slow.message);
    const started = Date.now();
    const late = await applyAuth(slow, bearer('subject'));
    assert.equal(late.failure?.status, 502);
    assert.match(late.failure!.detail, /no answer before the deadline/);
    assert.ok(Date.now() - started < 1500, 'the deadline ends the request');
  });
});

describe('a token endpoint over TLS', () => {
  test('a GwBackend with a tls policy is reached with its CA; without it the endpoint cannot be asked', async () => {
    const fixture = (name: string) => readFileSync(new URL(`../../fixtures/tls/${name}`, import.meta.url), 'utf8');
    const secure = await startAuthorizationServer([], {
      requireClient: false,
      tls: { key: fixture('backend.key'), cert: fixture('backend.crt') },
    });
    try {
      const backend = (policies: Record<string, unknown>) =>
        ({
          'GwBackend llm/idp': {
            kind: 'GwBackend',
            spec: { static: { host: '127.0.0.1', port: secure.port }, policies },
          },
        }) as never;
      const withCa = (ref: string) => (ref === 'ConfigMap llm/ca' ? { 'ca.crt': fixture('ca.crt') } : data(ref));
      const compile = (policies: Record<string, unknown>) => {
        const compiled = compileBackendAuth(
          { oauthTokenExchange: { backendRef: { kind: 'GwBackend', group: 'gw.dev', name: 'idp' }, path: '/token' } },
          withCa,
          'llm',
          options({ endpoints: { backends: backend(policies), namespace: 'llm' } }),
        );
        if (compiled instanceof AuthConfigError) assert.fail(compiled.message);
        return compiled;
      };
      const trusted = await applyAuth(compile({ tls: { caCertificateRefs: [{ name: 'ca' }] } }), bearer('subject'));
      assert.equal(trusted.failure, undefined, trusted.failure?.detail);
      assert.equal(secure.requests.at(-1)!.path, '/token');
      const plain = await applyAuth(compile({}), bearer('another-subject'));
      assert.equal(plain.failure?.status, 502);
      assert.equal(secure.requests.length, 1);
    } finally {
      await secure.close();
    }
  });
});

/** A port nothing listens on (a server opened and closed). */
async function createServerPort(): Promise<number> {
  const { createServer } = await import('node:http');
  const probe = createServer();
  const port = await listen(probe);
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('the cache', () => {
  async function requestsFor(auth: CompiledBackendAuth, subjects: string[]): Promise<string[]> {
    const tokens: string[] = [];
    for (const subject of subjects) {
      const result = await applyAuth(auth, bearer(subject));
      assert.equal(result.failure, undefined);
      tokens.push(String(result.headers.authorization));
    }
    return tokens;
  }

  test('one exchange serves every request with the same subject token; another subject gets its own', async () => {
    const auth = exchange({});
    const tokens = await requestsFor(auth, ['alice', 'alice', 'bob', 'alice', 'bob']);
    assert.equal(server.requests.length, 2);
    assert.equal(tokens[0], tokens[1]);
    assert.equal(tokens[0], tokens[3]);
    assert.equal(tokens[2], tokens[4]);
    assert.notEqual(tokens[0], tokens[2]);
    // Concurrent requests share one exchange.
    server.answer = (request) => ({ ...freshToken(request), delayMs: 50 });
    await Promise.all(Array.from({ length: 10 }, () => applyAuth(auth, bearer('carol'))));
    assert.equal(server.requests.length, 3);
  });

  test('maxEntries 0 exchanges for every request', async () => {
    const auth = exchange({ cache: { inMemory: { maxEntries: 0 } } });
    const tokens = await requestsFor(auth, ['alice', 'alice', 'alice']);
    assert.equal(server.requests.length, 3);
    assert.equal(new Set(tokens).size, 3);
  });

  test('defaultTtl applies when the answer has no expires_in; expires_in when it has one', async () => {
    server.answer = (request) => {
      const answer = freshToken(request);
      delete (answer.body as Record<string, unknown>).expires_in;
      return answer;
    };
    const auth = exchange({ cache: { inMemory: { defaultTtl: '60s' } } });
    await requestsFor(auth, ['alice']);
    clock.advance(10_000);
    await requestsFor(auth, ['alice']);
    assert.equal(server.requests.length, 1, 'still cached after 10s');
    clock.advance(51_000);
    await requestsFor(auth, ['alice']);
    assert.equal(server.requests.length, 2, 'exchanged again after 61s');

    server.answer = (request) => ({
      ...freshToken(request),
      body: { ...(freshToken(request).body as object), expires_in: 120 },
    });
    const withExpiry = exchange({ cache: { inMemory: { defaultTtl: '60s' } } });
    await requestsFor(withExpiry, ['bob']);
    clock.advance(30_000);
    await requestsFor(withExpiry, ['bob']);
    assert.equal(server.requests.length, 3, 'expires_in 120 outlives defaultTtl');
    clock.advance(91_000);
    await requestsFor(withExpiry, ['bob']);
    assert.equal(server.requests.length, 4, 'exchanged again after expires_in');
  });

  test('an exchanged token is not used past the subject token exp', async () => {
    const auth = exchange({});
    const subject = jwt({ sub: 'alice', exp: Math.floor(clock.epochMs() / 1000) + 30 });
    await requestsFor(auth, [subject]);
    clock.advance(31_000);
    await requestsFor(auth, [subject]);
    assert.equal(server.requests.length, 2);
  });
});

describe('configuration errors name the field', () => {
  test('grant, location, client authentication, endpoint and cache', () => {
    assert.equal(
      configError({ grantType: 'JwtBearer', requestedTokenType: 'Jwt' }).field,
      'oauthTokenExchange.requestedTokenType',
    );
    assert.equal(
      configError({ location: { header: { name: 'x-token' } } }, { location: { header: { name: 'x-other' } } }).field,
      'oauthTokenExchange.location',
    );
    assert.equal(configError({ clientAuth: { clientId: 'gw' } }).field, 'oauthTokenExchange.clientAuth.secretRef');
    assert.equal(
      configError({ clientAuth: { clientId: 'gw', secretRef: { name: 'missing' } } }).field,
      'oauthTokenExchange.clientAuth.secretRef.name',
    );
    assert.equal(
      configError({ clientAuth: { clientId: 'gw', secretRef: { name: 'oauth-client', key: 'nope' } } }).field,
      'oauthTokenExchange.clientAuth.secretRef.key',
    );
    assert.equal(
      configError({ url: undefined, backendRef: { name: 'idp', port: 80 } }).field,
      'oauthTokenExchange.backendRef',
    );
    assert.equal(configError({ url: 'ftp://idp.example' }).field, 'oauthTokenExchange.url');
    assert.equal(configError({ url: `${server.url}/token?x=1` }).field, 'oauthTokenExchange.url');
    assert.equal(configError({}, { endpoints: undefined }).field, 'oauthTokenExchange');
    assert.equal(
      configError({ cache: { inMemory: { defaultTtl: '0s' } } }).field,
      'oauthTokenExchange.cache.inMemory.defaultTtl',
    );
    assert.equal(
      configError({ subjectToken: { source: { expression: 'request.(' } } }).field,
      'oauthTokenExchange.subjectToken.source.expression',
    );
    // No message quotes the client secret.
    const error = configError({
      clientAuth: { clientId: 'gw', method: 'PrivateKeyJwt', secretRef: { name: 'oauth-client' } },
    });
    assert.doesNotMatch(error.message, new RegExp(CLIENT_SECRET));
  });
});
