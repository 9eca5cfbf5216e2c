// Stand-ins for Google's credential endpoints, speaking their wire formats, on 127.0.0.1:
// - the OAuth 2.0 token endpoint: the JWT bearer grant (an assertion signed by a service account
//   key, verified here with the public key: iss, aud, scope or target_audience, lifetime) and the
//   refresh token grant of user credentials; it answers access_token/expires_in or id_token;
// - the GCE metadata server: the default service account's token and identity documents, only to
//   requests carrying Metadata-Flavor: Google, answering with that header.
// ID tokens are JWTs signed with the stand-ins' own key (ID_TOKEN_PUBLIC_KEY verifies them).
// fixedAccessToken is the auth client Google's SDKs take, holding one token, for Vertex stand-ins;
// restClientOptions point a Google Cloud client library (google-gax) at a stand-in over REST.
import { generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { OAuth2Client } from 'google-auth-library';
import { decodeJwt, type JWTPayload, jwtVerify, SignJWT } from 'jose';
import { closeServer, listen, readBody, sendJson } from './http-server.ts';

/** Where google-auth-library signs its assertions to (their aud), whatever endpoint receives them. */
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
export const ID_TOKEN_ISSUER = 'https://accounts.google.com';
const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';

const idTokenKeys = generateKeyPairSync('rsa', { modulusLength: 2048 });
/** Verifies the ID tokens the stand-ins issue. */
export const ID_TOKEN_PUBLIC_KEY: KeyObject = idTokenKeys.publicKey;

async function idToken(audience: string, subject: string, email: string | undefined, lifetimeS: number) {
  const iat = Math.floor(Date.now() / 1000);
  // jti: two tokens issued in the same second still differ.
  return new SignJWT({ ...(email ? { email, email_verified: true } : {}), jti: randomBytes(8).toString('hex') })
    .setProtectedHeader({ alg: 'RS256', kid: 'stand-in-1', typ: 'JWT' })
    .setIssuer(ID_TOKEN_ISSUER)
    .setAudience(audience)
    .setSubject(subject)
    .setIssuedAt(iat)
    .setExpirationTime(iat + lifetimeS)
    .sign(idTokenKeys.privateKey);
}

const accessToken = () => `ya29.${randomBytes(24).toString('base64url')}`;

/** A service account: its key file (token_uri set by the caller) and its public key. */
export interface ServiceAccount {
  email: string;
  publicKey: KeyObject;
  /** The credentials JSON Google issues for a key, with token_uri pointing where asked. */
  keyFile(tokenUri: string): Record<string, unknown>;
}

export function serviceAccount(email = 'gw-backend@test-project.iam.gserviceaccount.com'): ServiceAccount {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  const keyId = randomBytes(20).toString('hex');
  return {
    email,
    publicKey,
    keyFile: (tokenUri) => ({
      type: 'service_account',
      project_id: 'test-project',
      private_key_id: keyId,
      private_key: pem,
      client_email: email,
      client_id: '104200000000000000001',
      auth_uri: 'https://accounts.google.com/o/oauth2/auth',
      token_uri: tokenUri,
      auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
      universe_domain: 'googleapis.com',
    }),
  };
}

/** What the token endpoint issued, with the claims of the assertion (or the grant) it honoured. */
export interface Issued {
  kind: 'access' | 'id';
  token: string;
  grant: 'jwt-bearer' | 'refresh_token' | 'token-exchange' | 'metadata';
  /** The service account's email or the user's client ID. */
  subject: string;
  /** The verified assertion's claims (jwt-bearer). */
  assertion?: JWTPayload;
  audience?: string;
}

export interface UserCredentials {
  clientId: string;
  clientSecret: string;
  refreshToken: string;
}

/** Google's OAuth 2.0 token endpoint, at `${url}`. */
export class TokenEndpointStandIn {
  readonly server: Server;
  url = '';
  readonly issued: Issued[] = [];
  /** Requests received (including refused ones). */
  requests = 0;
  /** expires_in of access tokens, and the lifetime of ID tokens, in seconds. */
  lifetimeS = 3600;
  /** How long each answer waits (to hold concurrent fetches in flight). */
  delayMs = 0;
  /** When set, every request is answered with this status and an OAuth error. */
  failWith: number | undefined;
  readonly #accounts = new Map<string, KeyObject>();
  readonly #users = new Map<string, UserCredentials>();
  /** Subject tokens accepted by the token exchange (Security Token Service), by audience. */
  readonly #federated = new Map<string, string>();

  constructor() {
    this.server = createServer((req, res) => {
      this.requests++;
      readBody(req)
        .then(async (body) => {
          if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
          await this.#answer(req, body, res);
        })
        .catch((error: Error) => sendJson(res, 500, { error: 'internal_failure', error_description: error.message }));
    });
  }

  static async start(): Promise<TokenEndpointStandIn> {
    const standIn = new TokenEndpointStandIn();
    standIn.url = `http://127.0.0.1:${await listen(standIn.server)}/token`;
    return standIn;
  }

  trust(account: ServiceAccount): void {
    this.#accounts.set(account.email, account.publicKey);
  }

  trustUser(user: UserCredentials): void {
    this.#users.set(user.clientId, user);
  }

  /** Workload identity federation: `subjectToken` is exchanged for an access token for `audience`. */
  trustFederated(audience: string, subjectToken: string): void {
    this.#federated.set(audience, subjectToken);
  }

  /** The access tokens issued so far (the upstream accepts these). */
  accessTokens(): Set<string> {
    return new Set(this.issued.filter((entry) => entry.kind === 'access').map((entry) => entry.token));
  }

  close(): Promise<void> {
    return closeServer(this.server);
  }

  async #answer(req: IncomingMessage, body: string, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST' || new URL(req.url ?? '/', 'http://x').pathname !== '/token')
      return sendJson(res, 404, { error: 'not_found' });
    if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded'))
      return sendJson(res, 400, { error: 'invalid_request', error_description: 'form body expected' });
    const form = new URLSearchParams(body);
    if (this.failWith !== undefined) {
      // Google's answers quote what they refused; gw must not log or forward it.
      return sendJson(res, this.failWith, {
        error: 'invalid_grant',
        error_description: `Invalid grant: ${form.get('assertion') ?? form.get('refresh_token') ?? ''}`,
      });
    }
    const grant = form.get('grant_type');
    if (grant === 'urn:ietf:params:oauth:grant-type:jwt-bearer') return this.#jwtBearer(form, res);
    if (grant === 'refresh_token') return this.#refresh(form, res);
    if (grant === TOKEN_EXCHANGE_GRANT) return this.#exchange(form, res);
    return sendJson(res, 400, { error: 'unsupported_grant_type' });
  }

  async #jwtBearer(form: URLSearchParams, res: ServerResponse): Promise<void> {
    const assertion = form.get('assertion') ?? '';
    let issuer: unknown;
    try {
      issuer = decodeJwt(assertion).iss;
    } catch {
      return sendJson(res, 400, { error: 'invalid_grant', error_description: 'assertion is not a JWT' });
    }
    const key = typeof issuer === 'string' ? this.#accounts.get(issuer) : undefined;
    if (key === undefined) return sendJson(res, 400, { error: 'invalid_grant', error_description: 'unknown account' });
    let claims: JWTPayload;
    try {
      ({ payload: claims } = await jwtVerify(assertion, key, {
        algorithms: ['RS256'],
        issuer: issuer as string,
        audience: GOOGLE_TOKEN_URL,
        maxTokenAge: '1h',
      }));
    } catch {
      return sendJson(res, 400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
    }
    if (claims.exp === undefined || claims.iat === undefined || claims.exp - claims.iat > 3600)
      return sendJson(res, 400, { error: 'invalid_grant', error_description: 'Invalid JWT: bad lifetime' });
    const subject = issuer as string;
    if (typeof claims.target_audience === 'string') {
      const token = await idToken(claims.target_audience, subject, subject, this.lifetimeS);
      this.issued.push({
        kind: 'id',
        token,
        grant: 'jwt-bearer',
        subject,
        assertion: claims,
        audience: claims.target_audience,
      });
      return sendJson(res, 200, { id_token: token });
    }
    const scopes = typeof claims.scope === 'string' ? claims.scope.split(' ') : [];
    if (!scopes.includes(CLOUD_PLATFORM_SCOPE)) return sendJson(res, 400, { error: 'invalid_scope' });
    const token = accessToken();
    this.issued.push({ kind: 'access', token, grant: 'jwt-bearer', subject, assertion: claims });
    return sendJson(res, 200, { access_token: token, expires_in: this.lifetimeS, token_type: 'Bearer' });
  }

  async #refresh(form: URLSearchParams, res: ServerResponse): Promise<void> {
    const user = this.#users.get(form.get('client_id') ?? '');
    if (user === undefined || form.get('client_secret') !== user.clientSecret)
      return sendJson(res, 401, { error: 'invalid_client' });
    if (form.get('refresh_token') !== user.refreshToken) return sendJson(res, 400, { error: 'invalid_grant' });
    const audience = form.get('target_audience');
    if (audience !== null) {
      const token = await idToken(audience, user.clientId, undefined, this.lifetimeS);
      this.issued.push({ kind: 'id', token, grant: 'refresh_token', subject: user.clientId, audience });
      return sendJson(res, 200, { id_token: token, access_token: accessToken(), expires_in: this.lifetimeS });
    }
    const token = accessToken();
    this.issued.push({ kind: 'access', token, grant: 'refresh_token', subject: user.clientId });
    return sendJson(res, 200, {
      access_token: token,
      expires_in: this.lifetimeS,
      token_type: 'Bearer',
      scope: CLOUD_PLATFORM_SCOPE,
    });
  }

  /** The Security Token Service's exchange (RFC 8693), as external_account credentials use it. */
  async #exchange(form: URLSearchParams, res: ServerResponse): Promise<void> {
    const audience = form.get('audience') ?? '';
    const expected = this.#federated.get(audience);
    if (expected === undefined) return sendJson(res, 400, { error: 'invalid_target' });
    if (
      form.get('subject_token') !== expected ||
      form.get('subject_token_type') !== 'urn:ietf:params:oauth:token-type:jwt' ||
      form.get('requested_token_type') !== 'urn:ietf:params:oauth:token-type:access_token'
    )
      return sendJson(res, 400, { error: 'invalid_grant' });
    if (!(form.get('scope') ?? '').split(' ').includes(CLOUD_PLATFORM_SCOPE))
      return sendJson(res, 400, { error: 'invalid_scope' });
    const token = accessToken();
    this.issued.push({ kind: 'access', token, grant: 'token-exchange', subject: audience });
    return sendJson(res, 200, {
      access_token: token,
      issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      token_type: 'Bearer',
      expires_in: this.lifetimeS,
    });
  }
}

/** A metadata request as the stand-in saw it. */
export interface MetadataRequest {
  path: string;
  query: URLSearchParams;
  flavor: string | undefined;
}

/** The GCE metadata server, at `host` (what GCE_METADATA_HOST takes). */
export class MetadataServerStandIn {
  readonly server: Server;
  host = '';
  readonly requests: MetadataRequest[] = [];
  readonly issued: Issued[] = [];
  lifetimeS = 3600;
  readonly email = 'gw-node@test-project.iam.gserviceaccount.com';

  constructor() {
    this.server = createServer((req, res) => {
      req.resume();
      const url = new URL(req.url ?? '/', 'http://metadata');
      const flavor = req.headers['metadata-flavor'] as string | undefined;
      this.requests.push({ path: url.pathname, query: url.searchParams, flavor });
      res.setHeader('metadata-flavor', 'Google');
      this.#answer(url, flavor, res).catch(() => {
        res.statusCode = 500;
        res.end();
      });
    });
  }

  static async start(): Promise<MetadataServerStandIn> {
    const standIn = new MetadataServerStandIn();
    standIn.host = `127.0.0.1:${await listen(standIn.server)}`;
    return standIn;
  }

  close(): Promise<void> {
    return closeServer(this.server);
  }

  async #answer(url: URL, flavor: string | undefined, res: ServerResponse): Promise<void> {
    if (flavor !== 'Google') {
      res.writeHead(403, { 'content-type': 'text/html' });
      res.end('Missing Metadata-Flavor:Google header.');
      return;
    }
    const text = (body: string) => {
      res.writeHead(200, { 'content-type': 'application/text' });
      res.end(body);
    };
    const account = '/computeMetadata/v1/instance/service-accounts/default';
    switch (url.pathname) {
      case '/computeMetadata/v1/instance':
      case '/computeMetadata/v1/instance/':
        return text('attributes/\nhostname\nid\nservice-accounts/\nzone\n');
      case '/computeMetadata/v1/project/project-id':
        return text('test-project');
      case '/computeMetadata/v1/universe/universe-domain':
        return text('googleapis.com');
      case `${account}/email`:
        return text(this.email);
      case `${account}/token`: {
        const token = accessToken();
        this.issued.push({ kind: 'access', token, grant: 'metadata', subject: this.email });
        return sendJson(res, 200, { access_token: token, expires_in: this.lifetimeS, token_type: 'Bearer' });
      }
      case `${account}/identity`: {
        const audience = url.searchParams.get('audience');
        if (!audience) {
          res.writeHead(400, { 'content-type': 'text/plain' });
          res.end('non-empty audience parameter required');
          return;
        }
        const token = await idToken(audience, this.email, this.email, this.lifetimeS);
        this.issued.push({ kind: 'id', token, grant: 'metadata', subject: this.email, audience });
        return text(token);
      }
      default:
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('Not Found');
    }
  }
}

/** The environment google-auth-library and gcp-metadata read to find ambient credentials. */
export const GOOGLE_LIBRARY_ENVIRONMENT: readonly string[] = [
  'GCE_METADATA_HOST',
  'GCE_METADATA_IP',
  'METADATA_SERVER_DETECTION',
  'DETECT_GCP_RETRIES',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'google_application_credentials',
  'CLOUDSDK_CONFIG',
  'GCLOUD_PROJECT',
  'GOOGLE_CLOUD_PROJECT',
  'GOOGLE_CLOUD_QUOTA_PROJECT',
];

/**
 * An auth client holding a fixed, unexpired access token, for an SDK that asks its auth client for
 * request headers (@google/genai, @anthropic-ai/vertex-sdk). Those SDKs bundle their own copy of
 * google-auth-library, whose classes TypeScript tells apart from this copy's by their protected
 * members: the caller casts to its SDK's type.
 */
export function fixedAccessToken(token: string): OAuth2Client {
  const client = new OAuth2Client();
  client.setCredentials({ access_token: token, expiry_date: Date.now() + 3_600_000 });
  return client;
}

/**
 * The options that make a Google Cloud client library (a google-gax client: RankServiceClient,
 * ModelArmorClient) speak REST (`fallback`) over plain HTTP to a stand-in on 127.0.0.1:`port`,
 * sending the access token `token`. Each library types its own copy of google-auth-library (the
 * client only asks it for headers): the caller casts to its client's options type.
 */
export function restClientOptions(port: number, token: string) {
  return { fallback: true, apiEndpoint: '127.0.0.1', port, protocol: 'http', authClient: fixedAccessToken(token) };
}
