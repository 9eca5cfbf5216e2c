// An OAuth 2.0 authorization server stand-in on loopback for the token exchange tests: it
// authenticates the client of every token request the way RFC 6749 and RFC 7523 say
// (client_secret_basic with the form-urlencoded id and secret, client_secret_post, private_key_jwt
// verified with the client's public key: iss, sub, aud, jti, iat/exp, and its x5c or x5t#S256
// header), records each request (path, headers, form, authenticated client), and answers what
// the test says (by default a fresh token per request, with expires_in).
import { createHash, type KeyObject, type X509Certificate } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type RequestListener, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import {
  type AuthIncoming,
  type BackendCredentialError,
  type CompiledBackendAuth,
  finishBackendAuth,
} from '../../../src/dataplane/auth/backend/index.ts';
import { closeServer, listen } from '../../helpers/http-server.ts';

export interface RegisteredClient {
  id: string;
  method: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';
  secret?: string;
  /** private_key_jwt: the key assertions are verified with, and the audience they must have. */
  publicKey?: KeyObject;
  audience?: string;
  /** private_key_jwt: the chain expected in x5c, or whose leaf's thumbprint x5t#S256 must be. */
  x5c?: X509Certificate[];
  x5tS256?: X509Certificate;
}

export interface RecordedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  form: URLSearchParams;
  /** The client that authenticated, or undefined for a request without client authentication. */
  client: string | undefined;
  assertion?: { header: Record<string, unknown>; claims: Record<string, unknown> };
}

export interface Answer {
  status: number;
  body: unknown;
  /** Milliseconds to wait before answering. */
  delayMs?: number;
}

export interface AuthorizationServer {
  url: string;
  port: number;
  requests: RecordedRequest[];
  /** How the next token requests are answered (after client authentication succeeded). */
  answer: (request: RecordedRequest, count: number) => Answer;
  close(): Promise<void>;
}

/** RFC 6749 appendix B: form-urlencoded decoding. */
function formDecode(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, ' '));
}

type Authenticated = { client: string | undefined; assertion?: RecordedRequest['assertion'] } | { error: string };

async function authenticate(
  clients: RegisteredClient[],
  headers: IncomingHttpHeaders,
  form: URLSearchParams,
): Promise<Authenticated> {
  const byId = (id: string | null) => clients.find((client) => client.id === id);
  const authorization = headers.authorization;
  if (authorization !== undefined) {
    const match = /^Basic ([A-Za-z0-9+/=]+)$/.exec(authorization);
    if (!match) return { error: 'unusable Authorization header' };
    const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const id = formDecode(decoded.slice(0, colon));
    const secret = formDecode(decoded.slice(colon + 1));
    const client = byId(id);
    if (client?.method !== 'client_secret_basic' || client.secret !== secret) return { error: 'basic: wrong client' };
    if (form.has('client_secret')) return { error: 'two client authentication methods' };
    return { client: id };
  }
  const assertion = form.get('client_assertion');
  if (assertion !== null) {
    if (form.get('client_assertion_type') !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer')
      return { error: 'wrong client_assertion_type' };
    const header = decodeProtectedHeader(assertion) as Record<string, unknown>;
    const claimedId = JSON.parse(Buffer.from(assertion.split('.')[1]!, 'base64url').toString()).iss as string;
    const client = byId(claimedId);
    if (client?.method !== 'private_key_jwt' || !client.publicKey) return { error: 'assertion: unknown client' };
    if (form.has('client_id') && form.get('client_id') !== client.id) return { error: 'client_id differs from iss' };
    let claims: Record<string, unknown>;
    try {
      ({ payload: claims } = await jwtVerify(assertion, client.publicKey, {
        issuer: client.id,
        subject: client.id,
        audience: client.audience!,
        requiredClaims: ['jti', 'iat', 'exp'],
        // The tests move gw's clock; the lifetime is what is checked here.
        currentDate: new Date(
          ((JSON.parse(Buffer.from(assertion.split('.')[1]!, 'base64url').toString()).iat as number) + 1) * 1000,
        ),
      }));
    } catch (error) {
      return { error: `assertion: ${(error as Error).message}` };
    }
    const lifetime = (claims.exp as number) - (claims.iat as number);
    if (lifetime <= 0 || lifetime > 300) return { error: `assertion lives ${lifetime}s` };
    if (client.x5c) {
      const expected = client.x5c.map((certificate) => certificate.raw.toString('base64'));
      if (JSON.stringify(header.x5c) !== JSON.stringify(expected)) return { error: 'x5c is not the chain' };
    } else if ('x5c' in header) return { error: 'unexpected x5c' };
    if (client.x5tS256) {
      const thumbprint = createHash('sha256').update(client.x5tS256.raw).digest('base64url');
      if (header['x5t#S256'] !== thumbprint) return { error: 'x5t#S256 is not the thumbprint' };
    } else if ('x5t#S256' in header) return { error: 'unexpected x5t#S256' };
    return { client: client.id, assertion: { header, claims } };
  }
  if (form.has('client_secret')) {
    const client = byId(form.get('client_id'));
    if (client?.method !== 'client_secret_post' || client.secret !== form.get('client_secret'))
      return { error: 'post: wrong client' };
    return { client: client.id };
  }
  if (form.has('client_id')) {
    const client = byId(form.get('client_id'));
    if (client?.method !== 'none') return { error: 'client_id alone for a client with credentials' };
    return { client: client.id };
  }
  return { client: undefined };
}

let issued = 0;

/** A fresh token per request, an hour long. */
export function freshToken(request: RecordedRequest): Answer {
  issued += 1;
  const type = request.form.get('requested_token_type') ?? 'urn:ietf:params:oauth:token-type:access_token';
  return {
    status: 200,
    body: { access_token: `exchanged-${issued}`, issued_token_type: type, token_type: 'Bearer', expires_in: 3600 },
  };
}

export async function startAuthorizationServer(
  clients: RegisteredClient[],
  options: { requireClient?: boolean; tls?: { key: string; cert: string } } = {},
): Promise<AuthorizationServer> {
  let server: Server | undefined;
  const state: AuthorizationServer = {
    url: '',
    port: 0,
    requests: [],
    answer: freshToken,
    close: () => closeServer(server),
  };
  const handler: RequestListener = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const send = (status: number, body: unknown) => {
        const text = typeof body === 'string' ? body : JSON.stringify(body);
        res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(text);
      };
      if (req.method !== 'POST' || req.headers['content-type'] !== 'application/x-www-form-urlencoded')
        return send(400, { error: 'invalid_request', error_description: 'not a form POST' });
      if (req.headers.accept !== 'application/json') return send(400, { error: 'invalid_request' });
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const authenticated = await authenticate(clients, req.headers, form);
      if ('error' in authenticated)
        return send(401, { error: 'invalid_client', error_description: authenticated.error });
      if (options.requireClient !== false && authenticated.client === undefined && clients.length > 0)
        return send(401, { error: 'invalid_client', error_description: 'no client authentication' });
      const recorded: RecordedRequest = { path: req.url ?? '', headers: req.headers, form, ...authenticated };
      state.requests.push(recorded);
      const answer = state.answer(recorded, state.requests.length);
      if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
      if (!res.destroyed) send(answer.status, answer.body);
    });
  };
  server = options.tls ? createTlsServer(options.tls, handler) : createServer(handler);
  state.port = await listen(server);
  state.url = `${options.tls ? 'https' : 'http'}://127.0.0.1:${state.port}`;
  return state;
}

/** What a backend request got from a backend authentication: its headers and query, or the failure. */
export interface Applied {
  headers: Record<string, string | string[]>;
  query: URLSearchParams;
  failure: BackendCredentialError | undefined;
}

/**
 * Applies `auth` to a request with the client's `headers` (and query, and CEL variables), as the
 * proxy does: apply(), then finishBackendAuth() waiting for a token being fetched.
 */
export async function applyAuth(
  auth: CompiledBackendAuth,
  clientHeaders: IncomingHttpHeaders,
  options: { query?: string; variables?: Record<string, unknown> } = {},
): Promise<Applied> {
  const headers = Object.fromEntries(
    Object.entries(clientHeaders).filter((entry): entry is [string, string | string[]] => entry[1] !== undefined),
  );
  const query = new URLSearchParams(options.query ?? '');
  const variables = options.variables;
  const incoming: AuthIncoming = variables
    ? { headers: clientHeaders, variables: () => variables as never }
    : { headers: clientHeaders };
  const pending = auth.apply({ headers, query }, incoming);
  const failure = await finishBackendAuth(
    pending,
    auth,
    () => ({ method: 'GET', origin: 'http://backend', path: '/', headers, body: undefined }),
    incoming,
  );
  return { headers, query, failure };
}
