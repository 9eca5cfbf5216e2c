// A stand-in for Keycloak on 127.0.0.1 (no Keycloak can run here): the realm token endpoint
// (password and refresh_token grants of admin-cli, tokens that expire), the OpenID Connect
// discovery document and key set, and the admin REST API subset of admin-api.ts. Tests inspect
// its state, move its clock, make calls fail, and can hand a realm's OpenID Connect endpoints to
// a real OpenID provider (mountProvider). See README.md for where each behaviour comes from.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { closeServer, listen } from '../../helpers/http-server.ts';
import { adminRoute } from './admin-api.ts';
import { addUser, createRealm, REGISTRATION_POLICY_TYPE, type Realm, type User } from './model.ts';
import { TokenStore } from './tokens.ts';

export const ADMIN_USER = { username: 'admin', password: 'admin-password-for-tests' };

export interface SeenCall {
  method: string;
  /** Path and query. */
  path: string;
  status: number;
}

export interface Fault {
  method: string;
  /** Matches the path (and query) of the request. */
  path: RegExp;
  status: number;
  body: string;
  contentType?: string;
  /** How many matching requests get it (default 1). */
  times?: number;
}

export interface KeycloakOptions {
  /** Realms besides master (which has the admin user). */
  realms?: string[];
  /** Access token lifespan of every realm, in seconds (Keycloak's master realm: 60). */
  accessTokenLifespan?: number;
  /** Refresh token (SSO session idle) lifespan in seconds (Keycloak's default: 1800). */
  ssoSessionIdleTimeout?: number;
}

export interface KeycloakStandIn {
  /** http://127.0.0.1:<port> */
  url: string;
  realm(name: string): Realm;
  /** Calls received, oldest first (at most 10 000 kept). */
  calls: SeenCall[];
  /** Every token the stand-in has handed out. */
  tokens(): string[];
  /** Moves the stand-in's clock forward (tokens expire by it). */
  advanceClock(seconds: number): void;
  /** The next matching request(s) get this answer instead. */
  failNext(fault: Fault): void;
  /** Runs before each request is handled (a test can move the clock at a chosen call). */
  onRequest(hook: ((call: { method: string; path: string }) => void) | undefined): void;
  /**
   * From now on requests under /realms/<realm>/ go to `handler` (a real OpenID provider mounted at
   * the realm path); undefined gives them back to the stand-in.
   */
  mountProvider(realm: string, handler: ((req: IncomingMessage, res: ServerResponse) => void) | undefined): void;
  addUser(realm: string, user: Parameters<typeof addUser>[1]): User;
  close(): Promise<void>;
}

const MAX_CALLS = 10_000;
const MAX_BODY = 1024 * 1024;

export async function startKeycloak(options: KeycloakOptions = {}): Promise<KeycloakStandIn> {
  const lifetimes = {
    accessTokenLifespan: options.accessTokenLifespan ?? 60,
    ssoSessionIdleTimeout: options.ssoSessionIdleTimeout ?? 1800,
  };
  const realms = new Map<string, Realm>();
  for (const name of ['master', ...(options.realms ?? [])]) realms.set(name, await createRealm(name, lifetimes));
  addUser(realms.get('master')!, { ...ADMIN_USER, admin: true });

  let clockOffset = 0;
  const now = () => Math.floor(Date.now() / 1000) + clockOffset;
  const server: Server = createServer();
  const port = await listen(server);
  const url = `http://127.0.0.1:${port}`;
  const issuer = (realm: string) => `${url}/realms/${encodeURIComponent(realm)}`;
  const tokens = new TokenStore(now, issuer);
  const calls: SeenCall[] = [];
  const faults: Fault[] = [];
  const mounts = new Map<string, (req: IncomingMessage, res: ServerResponse) => void>();
  let hook: ((call: { method: string; path: string }) => void) | undefined;

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const call: SeenCall = { method, path, status: 0 };
    calls.push(call);
    if (calls.length > MAX_CALLS) calls.shift();
    res.on('finish', () => {
      call.status = res.statusCode;
    });
    hook?.({ method, path });
    const fault = faults.find((candidate) => candidate.method === method && candidate.path.test(path));
    if (fault) {
      fault.times = (fault.times ?? 1) - 1;
      if (fault.times <= 0) faults.splice(faults.indexOf(fault), 1);
      req.resume();
      res.writeHead(fault.status, { 'content-type': fault.contentType ?? 'application/json' }).end(fault.body);
      return;
    }
    const realmMatch = /^\/realms\/([^/?]+)(\/.*)?$/.exec(path.split('?')[0]!);
    const mounted = realmMatch ? mounts.get(decodeURIComponent(realmMatch[1]!)) : undefined;
    if (mounted && realmMatch) {
      forwardToProvider(realms.get(decodeURIComponent(realmMatch[1]!)), realmMatch[1]!, req, res, mounted);
      return;
    }
    readBody(req).then(
      (body) => handle(method, path, req.headers, body).then((answer) => send(res, answer)),
      () => send(res, { status: 413, body: { error: 'request too large' } }),
    );
  });

  async function handle(
    method: string,
    path: string,
    headers: IncomingMessage['headers'],
    body: string,
  ): Promise<{ status: number; body?: unknown; location?: string }> {
    const parsed = new URL(path, url);
    const segments = parsed.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    if (segments[0] === 'realms' && segments.length >= 2) {
      const realm = realms.get(segments[1]!);
      if (!realm) return { status: 404, body: { error: 'Realm does not exist' } };
      const rest = segments.slice(2).join('/');
      if (rest === 'protocol/openid-connect/token' && method === 'POST') return tokenEndpoint(realm, headers, body);
      if (rest === '.well-known/openid-configuration' && method === 'GET')
        return { status: 200, body: discovery(realm) };
      if (rest === 'protocol/openid-connect/certs' && method === 'GET')
        return { status: 200, body: { keys: [realm.key.publicJwk] } };
      return { status: 404, body: { error: 'Unable to find matching target resource method' } };
    }
    if (segments[0] === 'admin' && segments[1] === 'realms' && segments.length >= 3) {
      const token = /^Bearer (.+)$/i.exec(headers.authorization ?? '')?.[1];
      const issued = token ? tokens.valid(token, 'access') : undefined;
      if (!issued) return { status: 401, body: { error: 'HTTP 401 Unauthorized' } };
      const realm = realms.get(segments[2]!);
      if (!realm) return { status: 404, body: { error: 'Realm not found.' } };
      const caller = realms.get(issued.realm)?.users.get(issued.userId);
      const allowed = caller?.admin === true && (issued.realm === 'master' || issued.realm === realm.name);
      if (!allowed) return { status: 403, body: { error: 'HTTP 403 Forbidden' } };
      let json: unknown;
      if (body !== '') {
        try {
          json = JSON.parse(body);
        } catch {
          return { status: 400, body: { error: 'Cannot parse the JSON' } };
        }
      }
      const answer = adminRoute(realm, segments.slice(3), method, parsed.searchParams, json);
      return {
        status: answer.status,
        body: answer.body,
        location: answer.created ? `${url}${answer.created}` : undefined,
      };
    }
    return { status: 404, body: { error: 'Unable to find matching target resource method' } };
  }

  async function tokenEndpoint(realm: Realm, headers: IncomingMessage['headers'], body: string) {
    if (!(headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded'))
      return {
        status: 400,
        body: { error: 'invalid_request', error_description: 'Missing form parameter: grant_type' },
      };
    const form = new URLSearchParams(body);
    const clientId = form.get('client_id');
    const client = [...realm.clients.values()].find((candidate) => candidate.clientId === clientId);
    if (!client?.publicClient)
      return {
        status: 401,
        body: { error: 'invalid_client', error_description: 'Invalid client or Invalid client credentials' },
      };
    const grant = form.get('grant_type');
    if (grant === 'password') {
      if (!client.directAccessGrantsEnabled)
        return {
          status: 400,
          body: { error: 'unauthorized_client', error_description: 'Client not allowed for direct access grants' },
        };
      const name = (form.get('username') ?? '').toLowerCase();
      const user = [...realm.users.values()].find(
        (candidate) => candidate.username === name || candidate.email === name,
      );
      if (!user || user.password === undefined || user.password !== form.get('password'))
        return { status: 401, body: { error: 'invalid_grant', error_description: 'Invalid user credentials' } };
      if (!user.enabled)
        return { status: 400, body: { error: 'invalid_grant', error_description: 'Account disabled' } };
      if (user.requiredActions.length > 0)
        return { status: 400, body: { error: 'invalid_grant', error_description: 'Account is not fully set up' } };
      return { status: 200, body: await tokens.grant(realm, user, client.clientId) };
    }
    if (grant === 'refresh_token') {
      const issued = tokens.valid(form.get('refresh_token') ?? '', 'refresh');
      const user = issued && issued.realm === realm.name ? realm.users.get(issued.userId) : undefined;
      if (!issued || !user || issued.clientId !== client.clientId)
        return { status: 400, body: { error: 'invalid_grant', error_description: 'Token is not active' } };
      return { status: 200, body: await tokens.grant(realm, user, client.clientId) };
    }
    return { status: 400, body: { error: 'unsupported_grant_type', error_description: 'Unsupported grant_type' } };
  }

  function discovery(realm: Realm): Record<string, unknown> {
    const base = issuer(realm.name);
    const oidc = `${base}/protocol/openid-connect`;
    return {
      issuer: base,
      authorization_endpoint: `${oidc}/auth`,
      token_endpoint: `${oidc}/token`,
      introspection_endpoint: `${oidc}/token/introspect`,
      userinfo_endpoint: `${oidc}/userinfo`,
      end_session_endpoint: `${oidc}/logout`,
      jwks_uri: `${oidc}/certs`,
      registration_endpoint: `${base}/clients-registrations/openid-connect`,
      grant_types_supported: ['authorization_code', 'implicit', 'refresh_token', 'password', 'client_credentials'],
      response_types_supported: ['code', 'none', 'id_token', 'token', 'id_token token', 'code id_token', 'code token'],
      subject_types_supported: ['public', 'pairwise'],
      id_token_signing_alg_values_supported: ['RS256'],
      code_challenge_methods_supported: ['plain', 'S256'],
      scopes_supported: [
        'openid',
        ...[...realm.clientScopes.values()].filter((s) => s.protocol === 'openid-connect').map((s) => s.name),
      ],
    };
  }

  return {
    url,
    realm: (name) => {
      const realm = realms.get(name);
      if (!realm) throw new Error(`no realm ${name}`);
      return realm;
    },
    calls,
    tokens: () => tokens.all(),
    advanceClock: (seconds) => {
      clockOffset += seconds;
    },
    failNext: (fault) => faults.push({ ...fault }),
    onRequest: (next) => {
      hook = next;
    },
    mountProvider: (realm, handler) => {
      if (handler) mounts.set(realm, handler);
      else mounts.delete(realm);
    },
    addUser: (realm, user) => addUser(realms.get(realm)!, user),
    close: () => closeServer(server),
  };
}

/**
 * Hands a request under /realms/<realm>/ to the mounted provider, the realm prefix taken off its
 * URL. Anonymous client registration is refused first, as Keycloak's Trusted Hosts policy does,
 * while the realm still has that policy.
 */
function forwardToProvider(
  realm: Realm | undefined,
  encodedRealm: string,
  req: IncomingMessage,
  res: ServerResponse,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): void {
  const prefix = `/realms/${encodedRealm}`;
  const rest = (req.url ?? '/').slice(prefix.length) || '/';
  const anonymousRegistration =
    req.method === 'POST' && rest.startsWith('/clients-registrations/openid-connect') && !req.headers.authorization;
  const trustedHosts = [...(realm?.components.values() ?? [])].find(
    (component) =>
      component.providerType === REGISTRATION_POLICY_TYPE &&
      component.providerId === 'trusted-hosts' &&
      component.subType === 'anonymous',
  );
  if (anonymousRegistration && trustedHosts) {
    req.resume();
    send(res, {
      status: 403,
      body: {
        error: 'insufficient_scope',
        error_description: `Policy '${trustedHosts.name}' rejected request to client-registration service. Details: Host not trusted.`,
      },
    });
    return;
  }
  (req as IncomingMessage & { originalUrl: string }).originalUrl = req.url ?? '/';
  req.url = rest;
  handler(req, res);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        req.destroy();
        reject(new Error('too large'));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, answer: { status: number; body?: unknown; location?: string }): void {
  const headers: Record<string, string> = {};
  if (answer.location) headers.location = answer.location;
  if (answer.body === undefined) {
    res.writeHead(answer.status, headers).end();
    return;
  }
  headers['content-type'] = 'application/json';
  res.writeHead(answer.status, headers).end(JSON.stringify(answer.body));
}
