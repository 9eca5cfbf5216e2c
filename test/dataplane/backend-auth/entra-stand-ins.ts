// Stand-ins for the Microsoft identity platform and the Azure managed identity endpoint, speaking
// their wire formats as @azure/identity (through MSAL) talks to them: the OpenID configuration
// MSAL discovers a tenant's token endpoint from (GET /{tenant}/v2.0/.well-known/openid-configuration),
// the v2.0 token endpoint (POST /{tenant}/oauth2/v2.0/token, client_credentials with a
// client_secret or a JWT-bearer client_assertion), and IMDS (GET /metadata/identity/oauth2/token
// with the Metadata: true header). The identity platform stand-in is HTTPS (MSAL refuses any other
// authority) with the fixture certificate for 127.0.0.1; `trustTestCa()` makes the process trust it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import type { BetaAuth } from '../../../src/api/types/backend-auth.ts';
import { AuthConfigError, compileBackendAuth } from '../../../src/dataplane/auth/backend/index.ts';
import { closeServer, listen, readBody, sendJson } from '../../helpers/http-server.ts';

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/tls/${name}`, import.meta.url), 'utf8');

/**
 * Makes TLS clients of this process (the SDK's HTTP client among them) trust the test CA besides
 * the default ones; returns the function that restores the defaults.
 */
export function trustTestCa(): () => void {
  const before = getCACertificates('default');
  setDefaultCACertificates([...before, fixture('ca.crt')]);
  return () => setDefaultCACertificates(before);
}

/** One token request the identity platform stand-in received. */
export interface TokenRequest {
  tenant: string;
  form: Record<string, string>;
}

/** What the token endpoint answers: a token (its value and lifetime) or an error. */
export type TokenAnswer =
  | { token: string; expiresIn: number }
  | { status: number; error: string; description: string }
  | { hang: true };

export interface EntraStandIn {
  /** https://127.0.0.1:port — the authority host to point the SDK at. */
  origin: string;
  /** Token requests in order. */
  tokenRequests: TokenRequest[];
  /** OpenID configuration documents served. */
  discoveries: number;
  /** Decides each answer of the token endpoint (by default a token "entra-token-N" for an hour). */
  answer: (request: TokenRequest, index: number) => TokenAnswer;
  close(): Promise<void>;
}

/** The Microsoft identity platform (Entra ID) for any tenant, on 127.0.0.1 over HTTPS. */
export async function entraStandIn(): Promise<EntraStandIn> {
  const state = {
    tokenRequests: [] as TokenRequest[],
    discoveries: 0,
    answer: (_request: TokenRequest, index: number): TokenAnswer => ({
      token: `entra-token-${index + 1}`,
      expiresIn: 3599,
    }),
  };
  let origin = '';
  const server = createHttpsServer({ cert: fixture('backend.crt'), key: fixture('backend.key') }, (req, res) => {
    const url = new URL(req.url ?? '/', origin);
    const discovery = /^\/([^/]+)\/v2\.0\/\.well-known\/openid-configuration$/.exec(url.pathname);
    if (req.method === 'GET' && discovery) {
      const tenant = discovery[1]!;
      state.discoveries++;
      sendJson(res, 200, {
        token_endpoint: `${origin}/${tenant}/oauth2/v2.0/token`,
        token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
        jwks_uri: `${origin}/${tenant}/discovery/v2.0/keys`,
        response_modes_supported: ['query', 'fragment', 'form_post'],
        subject_types_supported: ['pairwise'],
        id_token_signing_alg_values_supported: ['RS256'],
        response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
        scopes_supported: ['openid', 'profile', 'email', 'offline_access'],
        issuer: `${origin}/${tenant}/v2.0`,
        request_uri_parameter_supported: false,
        userinfo_endpoint: `${origin}/oidc/userinfo`,
        authorization_endpoint: `${origin}/${tenant}/oauth2/v2.0/authorize`,
        device_authorization_endpoint: `${origin}/${tenant}/oauth2/v2.0/devicecode`,
        http_logout_supported: true,
        frontchannel_logout_supported: true,
        end_session_endpoint: `${origin}/${tenant}/oauth2/v2.0/logout`,
        claims_supported: ['sub', 'iss', 'aud', 'exp', 'iat', 'tid'],
        tenant_region_scope: 'EU',
        cloud_instance_name: 'microsoftonline.com',
      });
      return;
    }
    const token = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(url.pathname);
    if (req.method === 'POST' && token) {
      void readBody(req).then((body) => {
        const request = { tenant: token[1]!, form: Object.fromEntries(new URLSearchParams(body)) };
        const index = state.tokenRequests.push(request) - 1;
        const answer = state.answer(request, index);
        if ('hang' in answer) return;
        if ('token' in answer) {
          sendJson(res, 200, {
            token_type: 'Bearer',
            expires_in: answer.expiresIn,
            ext_expires_in: answer.expiresIn,
            access_token: answer.token,
          });
          return;
        }
        sendJson(res, answer.status, {
          error: answer.error,
          error_description: answer.description,
          error_codes: [7000215],
          timestamp: new Date().toISOString(),
          trace_id: '0b7e4c1e-0000-4000-8000-000000000000',
          correlation_id: '6f1d2c3b-0000-4000-8000-000000000000',
        });
      });
      return;
    }
    sendJson(res, 404, { error: 'not_found', error_description: `no ${req.method} ${url.pathname}` });
  });
  origin = `https://127.0.0.1:${await listen(server as unknown as Server)}`;
  // The state itself, so that the server and the test read and set the same fields.
  return Object.assign(state, { origin, close: () => closeServer(server as unknown as Server) });
}

/** One request the IMDS stand-in received. */
export interface ImdsRequest {
  query: Record<string, string>;
  metadataHeader: string | undefined;
}

export interface ImdsStandIn {
  /** http://127.0.0.1:port — what AZURE_POD_IDENTITY_AUTHORITY_HOST points the SDK at. */
  origin: string;
  requests: ImdsRequest[];
  /** Decides each token: its value and lifetime in seconds. */
  answer: (request: ImdsRequest, index: number) => { token: string; expiresIn: number };
  close(): Promise<void>;
}

/** The Azure Instance Metadata Service's managed identity token endpoint. */
export async function imdsStandIn(): Promise<ImdsStandIn> {
  const state = {
    requests: [] as ImdsRequest[],
    answer: (_request: ImdsRequest, index: number) => ({ token: `imds-token-${index + 1}`, expiresIn: 3599 }),
  };
  const server = createHttpServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://imds');
    const metadata = req.headers.metadata;
    const request: ImdsRequest = {
      query: Object.fromEntries(url.searchParams),
      metadataHeader: Array.isArray(metadata) ? metadata[0] : metadata,
    };
    // MSAL asks for the path with a trailing slash; IMDS takes both.
    if (req.method !== 'GET' || url.pathname.replace(/\/$/, '') !== '/metadata/identity/oauth2/token') {
      sendJson(res, 404, { error: 'not_found' });
      return;
    }
    // IMDS refuses requests without the header: it is what keeps a forwarded request (SSRF) out.
    if (request.metadataHeader !== 'true') {
      sendJson(res, 400, { error: 'invalid_request', error_description: 'Required metadata header not specified' });
      return;
    }
    const index = state.requests.push(request) - 1;
    const { token, expiresIn } = state.answer(request, index);
    const now = Math.floor(Date.now() / 1000);
    // IMDS writes its numbers as strings.
    sendJson(res, 200, {
      access_token: token,
      client_id: request.query.client_id ?? 'system-assigned-client',
      expires_in: String(expiresIn),
      expires_on: String(now + expiresIn),
      ext_expires_in: String(expiresIn),
      not_before: String(now),
      resource: request.query.resource,
      token_type: 'Bearer',
    });
  });
  const origin = `http://127.0.0.1:${await listen(server)}`;
  return Object.assign(state, { origin, close: () => closeServer(server) });
}

/**
 * Sets environment variables (undefined removes one) and returns the function that puts back what
 * was there: the SDK reads its configuration from the environment.
 */
export function setEnvironment(values: Record<string, string | undefined>): () => void {
  const before = Object.fromEntries(Object.keys(values).map((name) => [name, process.env[name]]));
  const apply = (entries: Record<string, string | undefined>) => {
    for (const [name, value] of Object.entries(entries)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  apply(values);
  return () => apply(before);
}

/** The Authorization header gw writes with `beta` (no Secrets) on a request to an Azure OpenAI host. */
export async function betaAuthorization(beta: BetaAuth): Promise<string | string[] | undefined> {
  const auth = compileBackendAuth({ beta }, () => undefined, 'llm', { target: { host: 'gw-test.openai.azure.com' } });
  if (auth instanceof AuthConfigError) assert.fail(auth.message);
  const target = { headers: {}, query: new URLSearchParams() };
  await auth.apply(target, { headers: {} });
  return (target.headers as Record<string, string | string[] | undefined>).authorization;
}
