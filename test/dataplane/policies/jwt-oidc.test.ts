// JWT authentication against a real OpenID provider (oidc-provider): it issues JWT access tokens
// with the client_credentials grant and a resource indicator; gw checks them with the provider's
// remote JWKS; clients talk to gw with the official OpenAI SDK, the token as their API key.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import OpenAI from 'openai';
import { request } from 'undici';
import type { TestGateway } from '../../helpers/gateway.ts';
import { closeServer, listen } from '../../helpers/http-server.ts';
import type { RecordingUpstream } from '../../helpers/recording-upstream.ts';
import { until } from '../../helpers/until.ts';
import type { UpstreamGateway } from '../../helpers/upstream-gateway.ts';
import { accessLogYaml, jwtPolicyYaml, startJwtGateway } from './jwt-fixtures.ts';

// oidc-provider ships no type declarations: the little used here is typed here.
interface OidcProvider {
  callback(): (req: IncomingMessage, res: ServerResponse) => void;
}
type OidcProviderClass = new (issuer: string, configuration: Record<string, unknown>) => OidcProvider;

const RESOURCE = 'https://api.example';
const CLIENT_ID = 'gw-test';
const CLIENT_SECRET = 'client-secret-for-tests';

/** oidc-provider's storage, in memory (it warns about its own default one). */
class MemoryAdapter {
  static readonly entries = new Map<string, unknown>();
  private readonly name: string;
  constructor(name: string) {
    this.name = name;
  }
  private key(id: string): string {
    return `${this.name}:${id}`;
  }
  async upsert(id: string, payload: unknown): Promise<void> {
    MemoryAdapter.entries.set(this.key(id), payload);
  }
  async find(id: string): Promise<unknown> {
    return MemoryAdapter.entries.get(this.key(id));
  }
  async findByUserCode(): Promise<undefined> {
    return undefined;
  }
  async findByUid(): Promise<undefined> {
    return undefined;
  }
  async consume(): Promise<void> {}
  async destroy(id: string): Promise<void> {
    MemoryAdapter.entries.delete(this.key(id));
  }
  async revokeByGrantId(): Promise<void> {}
}

interface IdentityProvider {
  issuer: string;
  jwksUri: string;
  tokenEndpoint: string;
  /** Requests for the key set so far. */
  jwksFetches: number;
  server: Server;
}

async function startIdentityProvider(): Promise<IdentityProvider> {
  const moduleName = 'oidc-provider';
  const { default: Provider } = (await import(moduleName)) as { default: OidcProviderClass };
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signing = { ...(await exportJWK(privateKey)), kid: 'idp-key-1', alg: 'RS256', use: 'sig' };
  const server = createServer();
  const port = await listen(server);
  const issuer = `http://127.0.0.1:${port}`;
  const provider = new Provider(issuer, {
    adapter: MemoryAdapter,
    jwks: { keys: [signing] },
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
      },
    ],
    ttl: { ClientCredentials: 600 },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      // A resource indicator makes the provider issue its access token as a JWT for that audience.
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ scope: 'chat', audience: RESOURCE, accessTokenFormat: 'jwt' }),
      },
    },
    extraTokenClaims: () => ({ tier: 'gold' }),
  });
  const handle = provider.callback();
  const idp: IdentityProvider = { issuer, jwksUri: '', tokenEndpoint: '', jwksFetches: 0, server };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.url?.startsWith('/jwks')) idp.jwksFetches += 1;
    handle(req, res);
  });
  const discovery = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as {
    jwks_uri: string;
    token_endpoint: string;
  };
  idp.jwksUri = discovery.jwks_uri;
  idp.tokenEndpoint = discovery.token_endpoint;
  return idp;
}

/** An access token from the provider: client_credentials for the resource. */
async function accessToken(idp: IdentityProvider): Promise<string> {
  const response = await fetch(idp.tokenEndpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'chat', resource: RESOURCE }),
  });
  assert.equal(response.status, 200);
  const body = (await response.json()) as { access_token: string; token_type: string };
  assert.equal(body.token_type, 'Bearer');
  assert.equal(body.access_token.split('.').length, 3, 'the provider issues a JWT access token');
  return body.access_token;
}

function policy(idp: IdentityProvider, audience: string): string {
  return jwtPolicyYaml(
    'jwt',
    'chat',
    `{providers: [{issuer: '${idp.issuer}', audiences: ['${audience}'], jwks: {remote: {url: '${idp.jwksUri}'}}}]}`,
  );
}

describe('JWT authentication with an OpenID provider', () => {
  let idp: IdentityProvider;
  let g: UpstreamGateway;
  let upstream: RecordingUpstream;
  let gw: TestGateway;
  let base: string;
  const tokens: string[] = [];

  const client = (apiKey: string) => new OpenAI({ apiKey, baseURL: `${base}/chat/v1`, maxRetries: 0, timeout: 5000 });
  const chat = (apiKey: string) =>
    client(apiKey).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });

  before(async () => {
    idp = await startIdentityProvider();
    g = await startJwtGateway(['chat'], accessLogYaml({ 'user.tier': 'jwt.tier', 'user.client': 'jwt.client_id' }), {
      'policy.yaml': policy(idp, RESOURCE),
    });
    ({ gw, upstream, base } = g);
  });

  after(async () => {
    await g?.stop();
    await closeServer(idp?.server);
  });

  it('accepts the provider’s access token and hands its claims to CEL, not the token upstream', async () => {
    const token = await accessToken(idp);
    tokens.push(token);
    const completion = await chat(token);
    assert.equal(completion.choices[0]?.message.content, 'hello');
    const seen = upstream.seen.at(-1)!;
    assert.equal(seen.url, '/chat/v1/chat/completions');
    assert.equal(seen.headers.authorization, undefined, 'the verified token is not forwarded');
    assert.ok(await until(() => gw.accessLog.some((line) => line.includes('/chat/v1/chat/completions')), 2000));
    const entry = JSON.parse(gw.accessLog.at(-1)!) as Record<string, unknown>;
    assert.equal(entry['http.response.status_code'], 200);
    assert.equal(entry['jwt.sub'], CLIENT_ID);
    assert.equal(entry['user.tier'], 'gold');
    assert.equal(entry['user.client'], CLIENT_ID);
  });

  it('answers 401 with a Bearer challenge when the token is missing or not the provider’s', async () => {
    const missing = await request(`${base}/chat/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(missing.statusCode, 401);
    assert.equal(missing.headers['www-authenticate'], 'Bearer');
    await missing.body.text();

    const forged = `${(await accessToken(idp)).slice(0, -8)}AAAAAAAA`;
    tokens.push(forged);
    await assert.rejects(chat(forged), (error: unknown) => {
      assert.ok(error instanceof OpenAI.AuthenticationError);
      assert.equal(error.status, 401);
      assert.equal(
        error.headers.get('www-authenticate'),
        'Bearer error="invalid_token", error_description="invalid signature"',
      );
      return true;
    });
    await assert.rejects(chat('not-a-jwt'), OpenAI.AuthenticationError);
  });

  it('keeps the fetched key set across configuration reloads', async () => {
    const token = await accessToken(idp);
    tokens.push(token);
    assert.equal(idp.jwksFetches, 1, 'fetched once, when the policy was compiled');
    gw.write('policy.yaml', policy(idp, 'https://other.example'));
    const refused = () =>
      chat(token).then(
        () => false,
        (error: unknown) => error instanceof OpenAI.AuthenticationError,
      );
    assert.ok(await until(refused, 3000, 20), 'the new audience applies');
    gw.write('policy.yaml', policy(idp, RESOURCE));
    assert.ok(await until(async () => !(await refused()), 3000, 20), 'the old audience applies again');
    assert.equal(idp.jwksFetches, 1, 'reloads reuse the cached key set');
  });

  it('never writes a token to the access log or the gateway log', () => {
    assert.ok(tokens.length >= 3);
    for (const token of tokens) {
      const signature = token.split('.')[2]!;
      for (const line of [...gw.accessLog, ...gw.logs]) assert.ok(!line.includes(signature), line);
    }
  });
});
