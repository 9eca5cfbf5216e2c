// What the JWT authentication tests share: an upstream that records what reached it, a JWKS
// server that counts its fetches, signing keys and tokens, and the YAML of routes with policies.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';

export async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

export async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/** Resolves true once `check()` resolves true (tried every 20 ms), false after `timeoutMs`. */
export async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

export interface SeenRequest {
  path: string;
  headers: IncomingHttpHeaders;
}

export interface Upstream {
  port: number;
  /** Every request that reached the upstream, in order. */
  seen: SeenRequest[];
  close(): Promise<void>;
}

/** An upstream answering every request with an OpenAI chat completion, recording what it saw. */
export async function startUpstream(): Promise<Upstream> {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    req.resume();
    req.on('end', () => {
      const body = JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: 'gpt-4o-mini',
        choices: [
          { index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop', logprobs: null },
        ],
        usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  const port = await listen(server);
  return { port, seen, close: () => close(server) };
}

export interface JwksServer {
  /** The key set's URL. */
  url: string;
  /** Fetches of the key set so far. */
  fetches: number;
  /** Serves these keys from now on; undefined answers 503. */
  keys: JWK[] | undefined;
  close(): Promise<void>;
}

/** A JWKS endpoint at /jwks serving `keys` (503 while they are undefined), counting fetches. */
export async function startJwksServer(keys: JWK[] | undefined): Promise<JwksServer> {
  const state: JwksServer = { url: '', fetches: 0, keys, close: async () => undefined };
  const server = createServer((req, res) => {
    if (req.url !== '/jwks') {
      res.writeHead(404).end();
      return;
    }
    state.fetches += 1;
    if (!state.keys) {
      res.writeHead(503).end('unavailable');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: state.keys }));
  });
  const port = await listen(server);
  state.url = `http://127.0.0.1:${port}/jwks`;
  state.close = () => close(server);
  return state;
}

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  /** The public key as a JWK, with kid, alg and use. */
  publicJwk: JWK;
  alg: string;
}

export async function signingKey(kid: string, alg = 'RS256'): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, privateKey, publicJwk, alg };
}

export const ISSUER = 'https://idp.example';
export const AUDIENCE = 'https://api.example';

/** A token signed with `key`: iss ISSUER, aud AUDIENCE, sub user-1, five minutes left, unless `claims` say otherwise; `kid` null for none. */
export async function token(key: SigningKey, claims: JWTPayload = {}, kid: string | null = key.kid) {
  const now = Math.floor(Date.now() / 1000);
  const payload: JWTPayload = { iss: ISSUER, aud: AUDIENCE, sub: 'user-1', iat: now, exp: now + 300, ...claims };
  for (const name of Object.keys(payload)) if (payload[name] === undefined) delete payload[name];
  return await new SignJWT(payload)
    .setProtectedHeader(kid === null ? { alg: key.alg } : { alg: key.alg, kid })
    .sign(key.privateKey);
}

/** GwBackend web on the upstream, and for each name an HTTPRoute `name` serving /<name> from it. */
export function routesYaml(upstreamPort: number, names: string[]): string {
  const routes = names.map(
    (name) => `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}}
spec:
  parentRefs: [{name: ai}]
  rules: [{matches: [{path: {type: PathPrefix, value: /${name}}}], backendRefs: [{group: gw.dev, kind: GwBackend, name: web}]}]
---
`,
  );
  return `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: web}
spec: {static: {host: 127.0.0.1, port: ${upstreamPort}}}
---
${routes.join('')}`;
}

/** GwPolicy `name` on HTTPRoute `route` with traffic.jwtAuthentication set to `jwt` (a YAML flow mapping). */
export function jwtPolicyYaml(name: string, route: string, jwt: string): string {
  return `apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: ${name}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: ${route}}]
  traffic:
    jwtAuthentication: ${jwt}
---
`;
}

/** GwPolicy on Gateway ai adding access log attributes, name to CEL. */
export function accessLogYaml(attributes: Record<string, string>): string {
  const add = Object.entries(attributes)
    .map(([name, expression]) => `{name: ${name}, expression: '${expression}'}`)
    .join(', ');
  return `apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: log}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: ai}]
  frontend: {accessLog: {attributes: {add: [${add}]}}}
---
`;
}
