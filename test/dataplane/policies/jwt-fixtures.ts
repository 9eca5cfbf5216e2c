// What the JWT authentication tests share: gw in front of an upstream answering chat completions,
// a JWKS server that counts its fetches, signing keys and tokens, a policy whose signature
// verifications are counted, and the YAML of routes with policies.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mock } from 'node:test';
import { type CryptoKey, exportJWK, generateKeyPair, type JWK, type JWTPayload, SignJWT } from 'jose';
import type { JWTAuthentication } from '../../../src/api/types/inbound-auth.ts';
import type { KeySet, RemoteJwks } from '../../../src/dataplane/policies/auth/jwks.ts';
import { compileJwtAuthentication } from '../../../src/dataplane/policies/auth/jwt.ts';
import type { PolicyRuntime } from '../../../src/dataplane/policies/runtime.ts';
import { type CompiledPolicy, isProblem } from '../../../src/dataplane/policies/types.ts';
import { gatewayYaml } from '../../helpers/gateway.ts';
import { closeServer, listen } from '../../helpers/http-server.ts';
import { compileContext } from '../../helpers/policy-context.ts';
import {
  GATEWAY_AI,
  gwPolicyYaml,
  prefixRouteYaml,
  staticBackendYaml,
  trafficPolicyYaml,
} from '../../helpers/policy-yaml.ts';
import { chatCompletionAnswer } from '../../helpers/recording-upstream.ts';
import { startUpstreamGateway, type UpstreamGateway } from '../../helpers/upstream-gateway.ts';

/** The chat completion the JWT tests' upstream answers every request with. */
const answerHello = chatCompletionAnswer('hello');

/**
 * gw with GwBackend web on an upstream answering answerHello, an HTTPRoute per name of `routes`
 * (routesYaml) and `policies` in gw.yaml, and `moreFiles` (name → YAML).
 */
export function startJwtGateway(
  routes: string[],
  policies: string,
  moreFiles: Record<string, string> = {},
): Promise<UpstreamGateway> {
  return startUpstreamGateway(
    ({ port, upstreamPort }) => ({
      'gw.yaml': `${gatewayYaml(port)}${routesYaml(upstreamPort, routes)}${policies}`,
      ...moreFiles,
    }),
    answerHello,
  );
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
  state.close = () => closeServer(server);
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

/**
 * JWT authentication `value` (one provider, its key set remote) compiled on `runtime`: the policy,
 * the key set's cache, and a count of the signature verifications made against the set loaded
 * now (each one asks the set for its key).
 */
export async function compileRemoteJwt(
  value: JWTAuthentication,
  runtime: PolicyRuntime,
): Promise<{ policy: CompiledPolicy; jwks: RemoteJwks; verifications: () => number }> {
  runtime.beginCompile();
  const policy = compileJwtAuthentication(value, compileContext({ runtime }));
  if (isProblem(policy)) assert.fail(`${policy.field}: ${policy.message}`);
  const [cacheKey] = runtime.endCompile();
  const jwks = runtime.use<RemoteJwks>(cacheKey!, () => assert.fail('the policy keeps its key set in the runtime'));
  const keySet = (await jwks.keySet()) as KeySet;
  assert.ok(keySet, 'the key set loaded');
  const resolve = mock.method(keySet, 'resolve');
  return { policy, jwks, verifications: () => resolve.mock.callCount() };
}

/** GwBackend web on the upstream, and for each name an HTTPRoute `name` serving /<name> from it. */
export function routesYaml(upstreamPort: number, names: string[]): string {
  return staticBackendYaml('web', upstreamPort) + names.map((name) => prefixRouteYaml(name)).join('');
}

/** GwPolicy `name` on HTTPRoute `route` with traffic.jwtAuthentication set to `jwt` (a YAML flow mapping). */
export function jwtPolicyYaml(name: string, route: string, jwt: string): string {
  return trafficPolicyYaml(name, route, `jwtAuthentication: ${jwt}`);
}

/** GwPolicy on Gateway ai adding access log attributes, name to CEL. */
export function accessLogYaml(attributes: Record<string, string>): string {
  const add = Object.entries(attributes)
    .map(([name, expression]) => `{name: ${name}, expression: '${expression}'}`)
    .join(', ');
  return gwPolicyYaml('log', GATEWAY_AI, 'frontend', `{accessLog: {attributes: {add: [${add}]}}}`);
}
