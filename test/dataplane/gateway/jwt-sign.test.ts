// Backend authentication jwtSign with real traffic through gw: a static HTTP backend and an AI
// backend whose upstream verifies the token with the public key (jose's jwtVerify: alg, kid,
// claims, iat/nbf and exp = iat + ttl); a claims map naming exp is refused at translation
// (Accepted Invalid), a missing Secret is ResolvedRefs False in `gw status`, and a Secret value
// that is no key is refused by the data plane (its log names the Secret); each fails closed with a
// 5xx of gw's own, and nothing anywhere quotes the key.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { type JWTHeaderParameters, type JWTPayload, jwtVerify } from 'jose';
import type { KubeObject } from '../../../src/api/validate/admission.ts';
import { statusOf } from '../../helpers/cli.ts';
import {
  authBackendYaml,
  freePort,
  gatewayYaml,
  ownFailureDetail,
  prefixRuleYaml,
  startTestGateway,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { admitted } from '../../helpers/objects.ts';
import { eventually } from '../../helpers/until.ts';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PEM = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

interface Seen {
  path: string;
  header: JWTHeaderParameters;
  payload: JWTPayload;
  /** Seconds since the epoch when the upstream received the request. */
  receivedAt: number;
}

/** An upstream that accepts only a Bearer JWT gw signed with the key above, and records what it verified. */
async function verifyingUpstream(): Promise<{ server: Server; port: number; seen: Seen[]; rejected: number }> {
  const state = { seen: [] as Seen[], rejected: 0 };
  const verify = async (req: IncomingMessage) => {
    const match = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    if (!match) throw new Error('no bearer token');
    const { payload, protectedHeader } = await jwtVerify(match[1]!, publicKey, {
      algorithms: ['RS256'],
      issuer: 'gw-test',
      audience: 'internal-api',
    });
    return { header: protectedHeader, payload };
  };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      verify(req).then(
        ({ header, payload }) => {
          state.seen.push({ path: req.url ?? '', header, payload, receivedAt: Date.now() / 1000 });
          res.setHeader('content-type', 'application/json');
          if (req.url === '/v1/chat/completions') {
            res.end(
              JSON.stringify({
                id: 'chatcmpl-1',
                object: 'chat.completion',
                created: 1,
                model: 'gpt-4o-mini',
                choices: [{ index: 0, message: { role: 'assistant', content: 'signed' }, finish_reason: 'stop' }],
                usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
              }),
            );
          } else {
            res.end(JSON.stringify({ ok: true }));
          }
        },
        () => {
          state.rejected++;
          res.statusCode = 401;
          res.end('{"error":"bad token"}');
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    server,
    port: typeof address === 'object' && address ? address.port : 0,
    get seen() {
      return state.seen;
    },
    get rejected() {
      return state.rejected;
    },
  };
}

/** The Accepted condition of GwBackend default/`name` in gw's store. */
function acceptedOf(gw: TestGateway, name: string): { status: string; reason: string; message: string } | undefined {
  const status = gw.gateway.files.store.get('gw.dev/GwBackend', `default/${name}`)?.status as
    | { conditions?: { type: string; status: string; reason: string; message: string }[] }
    | undefined;
  return status?.conditions?.find((condition) => condition.type === 'Accepted');
}

/** A Secret value that is no PEM key: it must never appear in an answer or a log. */
const NOT_A_KEY = 'opaque-signing-material-42';

const JWT_SIGN = `{signingKeyRef: {name: signer}, kid: gw-key-1, ttl: 120s, claims: {iss: gw-test, aud: internal-api, sub: team-a, scope: [read, write]}}`;

describe('jwtSign backend authentication through gw', () => {
  let upstream: Awaited<ReturnType<typeof verifyingUpstream>>;
  let gw: TestGateway;
  let port: number;

  before(async () => {
    upstream = await verifyingUpstream();
    port = await freePort();
    const indented = PEM.trim()
      .split('\n')
      .map((line) => `    ${line}`)
      .join('\n');
    const backend = (name: string, spec: string, jwtSign: string) =>
      authBackendYaml(name, spec, `{jwtSign: ${jwtSign}}`);
    const staticSpec = `static: {host: 127.0.0.1, port: ${upstream.port}}`;
    const rule = prefixRuleYaml;
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}apiVersion: v1
kind: Secret
metadata: {name: signer}
stringData:
  signingKey: |
${indented}
---
${backend('web', staticSpec, JWT_SIGN)}${backend(
  'llm',
  `ai: {provider: {host: 127.0.0.1, port: ${upstream.port}, alpha: {}}}`,
  JWT_SIGN,
)}${backend('no-secret', staticSpec, '{signingKeyRef: {name: absent}}')}apiVersion: v1
kind: Secret
metadata: {name: not-a-key}
stringData: {signingKey: "${NOT_A_KEY}"}
---
${backend('bad-key', staticSpec, '{signingKeyRef: {name: not-a-key}}')}apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: routes}
spec:
  parentRefs: [{name: ai}]
  rules:
${rule('web', 'web')}${rule('v1', 'llm')}${rule('no-secret', 'no-secret')}${rule('bad-key', 'bad-key')}${rule('own-exp', 'own-exp')}`,
    });
    // The configuration loads; the operator is told of the missing Secret (own-exp comes next).
    assert.match(
      gw.logs.join('\n'),
      /GwBackend default\/no-secret: .*jwtSign\.signingKeyRef\.name: Secret default\/absent was not found/,
    );
    assert.match(
      gw.logs.join('\n'),
      /GwBackend default\/bad-key: .*jwtSign\.signingKeyRef: key "signingKey" of Secret default\/not-a-key is not an unencrypted PEM RSA or EC private key/,
    );
    // Admission refuses exp in claims; a cluster whose CRD predates that rule may still hold such
    // an object. It goes into the store as such a cluster would hand it.
    const [valid] = admitted(backend('own-exp', staticSpec, '{signingKeyRef: {name: signer}, claims: {sub: a}}'));
    const stored = structuredClone(valid!) as KubeObject & {
      spec: { policies: { auth: { jwtSign: { claims: Record<string, unknown> } } } };
    };
    stored.spec.policies.auth.jwtSign.claims.exp = 1;
    gw.gateway.files.store.apply(stored);
    await eventually('own-exp is translated', async () => acceptedOf(gw, 'own-exp')?.reason === 'Invalid');
  });

  after(async () => {
    await gw?.stop();
    upstream?.server.close();
  });

  it('a static HTTP backend gets a fresh token per request that the public key verifies', async () => {
    const before = upstream.seen.length;
    for (let i = 0; i < 2; i++) {
      const response = await fetch(`http://127.0.0.1:${port}/web/resource`, {
        headers: { authorization: 'Bearer client-token' },
      });
      assert.equal(response.status, 200, await response.text());
    }
    assert.equal(upstream.rejected, 0);
    const seen = upstream.seen.slice(before);
    assert.equal(seen.length, 2);
    for (const { path, header, payload, receivedAt } of seen) {
      assert.equal(path, '/web/resource');
      assert.deepEqual(header, { alg: 'RS256', typ: 'JWT', kid: 'gw-key-1' });
      assert.deepEqual(Object.keys(payload).sort(), ['aud', 'exp', 'iat', 'iss', 'nbf', 'scope', 'sub']);
      assert.equal(payload.sub, 'team-a');
      assert.deepEqual(payload.scope, ['read', 'write']);
      assert.equal(payload.nbf, payload.iat);
      assert.equal(payload.exp, payload.iat! + 120);
      assert.ok(Math.abs(payload.iat! - receivedAt) <= 2, 'iat is the time of the request');
    }
  });

  it('an AI backend gets the token too', async () => {
    const before = upstream.seen.length;
    const response = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer client-token' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const body = await response.text();
    assert.equal(response.status, 200, body);
    assert.equal(
      (JSON.parse(body) as { choices: { message: { content: string } }[] }).choices[0]!.message.content,
      'signed',
    );
    const seen = upstream.seen.slice(before);
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.path, '/v1/chat/completions');
    assert.equal(seen[0]!.header.kid, 'gw-key-1');
    assert.equal(seen[0]!.payload.exp, seen[0]!.payload.iat! + 120);
  });

  it('a missing Secret, a value that is no key and claims naming exp fail closed, each named, quoting no key', async () => {
    for (const name of ['no-secret', 'bad-key', 'own-exp']) {
      const before = upstream.seen.length + upstream.rejected;
      const response = await fetch(`http://127.0.0.1:${port}/${name}`);
      const detail = await ownFailureDetail(gw, response);
      assert.equal(upstream.seen.length + upstream.rejected, before, `${name}: nothing reaches the upstream`);
      assert.doesNotMatch(detail, /BEGIN|PRIVATE KEY|opaque-signing-material/);
    }
    const missing = await statusOf(gw.dir, 'GwBackend default/no-secret');
    assert.match(missing, /signingKeyRef/);
    assert.match(missing, /absent/);
    const ownExp = acceptedOf(gw, 'own-exp')!;
    assert.equal(ownExp.status, 'False');
    assert.match(ownExp.message, /spec\.policies\.auth\.jwtSign\.claims: exp may not be given/);
    assert.doesNotMatch(`${missing}${ownExp.message}${gw.logs.join('\n')}`, /BEGIN|opaque-signing-material/);
  });
});
