// A Secret that exists but does not hold what a backend authentication reads, through gw: a
// secretRef Secret without the data key and a jwtSign Secret holding no key each fail closed with a
// 5xx of gw's own, and the GwBackend's ResolvedRefs is False (InvalidCredentialRef) in the store and
// in `gw status` and `gw explain`, naming the field, the Secret and the data key and quoting no value. Editing the
// Secret's data re-reconciles: ResolvedRefs turns True and the traffic reaches the upstream with
// the key and a token the public key verifies.
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { jwtVerify } from 'jose';
import { runGw, statusOf } from '../../helpers/cli.ts';
import { freePort, gatewayYaml, ownFailureDetail, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { eventually } from '../../helpers/until.ts';

const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const PEM = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
const API_KEY = 'sk-upstream-key-7';
const NOT_A_KEY = 'opaque-signing-material-42';

function secrets(apiKeyData: string, signingKey: string): string {
  const indented = signingKey
    .trim()
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
  return `apiVersion: v1
kind: Secret
metadata: {name: api-key}
stringData: ${apiKeyData}
---
apiVersion: v1
kind: Secret
metadata: {name: signer}
stringData:
  signingKey: |
${indented}
`;
}

/** The ResolvedRefs condition of GwBackend default/`name` in gw's store. */
function resolvedRefsOf(
  gw: TestGateway,
  name: string,
): { status: string; reason: string; message: string } | undefined {
  const status = gw.gateway.files.store.get('gw.dev/GwBackend', `default/${name}`)?.status as
    | { conditions?: { type: string; status: string; reason: string; message: string }[] }
    | undefined;
  return status?.conditions?.find((condition) => condition.type === 'ResolvedRefs');
}

describe('a backend authentication Secret that exists but lacks what is read, through gw', () => {
  let upstream: Server;
  let upstreamPort: number;
  const seen: string[] = [];
  let gw: TestGateway;
  let port: number;

  before(async () => {
    upstream = createServer((req, res) => {
      req.resume();
      seen.push(req.headers.authorization ?? '');
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamPort = (upstream.address() as { port: number }).port;
    port = await freePort();
    const backend = (name: string, auth: string) => `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: ${name}}
spec:
  static: {host: 127.0.0.1, port: ${upstreamPort}}
  policies: {auth: ${auth}}
---
`;
    const rule = (name: string) => `    - matches: [{path: {type: PathPrefix, value: /${name}}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: ${name}}]
`;
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}${backend('keyed', '{secretRef: {name: api-key}}')}${backend(
        'signed',
        '{jwtSign: {alg: ES256, signingKeyRef: {name: signer}, claims: {iss: gw-test}}}',
      )}apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: routes}
spec:
  parentRefs: [{name: ai}]
  rules:
${rule('keyed')}${rule('signed')}`,
      'secrets.yaml': secrets(`{apiKey: ${API_KEY}}`, NOT_A_KEY),
    });
  });

  after(async () => {
    await gw?.stop();
    upstream?.close();
  });

  it('fails closed, and ResolvedRefs is False naming the field, the Secret and the data key', async () => {
    for (const name of ['keyed', 'signed']) {
      const response = await fetch(`http://127.0.0.1:${port}/${name}`);
      const detail = await ownFailureDetail(gw, response);
      assert.doesNotMatch(detail, new RegExp(`${API_KEY}|${NOT_A_KEY}`));
    }
    assert.deepEqual(seen, [], 'nothing reaches the upstream');

    const keyed = resolvedRefsOf(gw, 'keyed')!;
    assert.equal(keyed.status, 'False');
    assert.equal(keyed.reason, 'InvalidCredentialRef');
    assert.equal(keyed.message, 'spec.policies.auth.secretRef.key: Secret default/api-key has no key "Authorization"');
    const signed = resolvedRefsOf(gw, 'signed')!;
    assert.equal(signed.status, 'False');
    assert.equal(signed.reason, 'InvalidCredentialRef');
    assert.equal(
      signed.message,
      'spec.policies.auth.jwtSign.signingKeyRef: key "signingKey" of Secret default/signer is not an unencrypted PEM RSA or EC private key',
    );

    const keyedStatus = await statusOf(gw.dir, 'GwBackend default/keyed');
    assert.match(keyedStatus, /InvalidCredentialRef/);
    assert.match(
      keyedStatus,
      /spec\.policies\.auth\.secretRef\.key: Secret default\/api-key has no key "Authorization"/,
    );
    const signedStatus = await statusOf(gw.dir, 'GwBackend default/signed');
    assert.match(
      signedStatus,
      /spec\.policies\.auth\.jwtSign\.signingKeyRef: key "signingKey" of Secret default\/signer/,
    );
    const explained = await runGw(['explain', '-f', gw.dir, 'backend', 'default/keyed']);
    assert.equal(explained.code, 0, explained.stderr);
    assert.match(
      explained.stdout,
      /UNRESOLVED \(InvalidCredentialRef; .*\): auth\.secretRef\.key: Secret default\/api-key has no key "Authorization"/,
    );
    assert.doesNotMatch(
      `${keyedStatus}${signedStatus}${explained.stdout}${gw.logs.join('\n')}`,
      new RegExp(`${API_KEY}|${NOT_A_KEY}`),
    );
  });

  it('fixing the Secrets turns ResolvedRefs True and the traffic flows', async () => {
    gw.write('secrets.yaml', secrets(`{Authorization: ${API_KEY}}`, PEM));
    await eventually(
      'both backends resolve',
      async () => resolvedRefsOf(gw, 'keyed')?.status === 'True' && resolvedRefsOf(gw, 'signed')?.status === 'True',
    );
    const keyed = await fetch(`http://127.0.0.1:${port}/keyed`);
    assert.equal(keyed.status, 200, await keyed.text());
    assert.equal(seen.at(-1), `Bearer ${API_KEY}`);
    const signed = await fetch(`http://127.0.0.1:${port}/signed`);
    assert.equal(signed.status, 200, await signed.text());
    const token = /^Bearer (.+)$/.exec(seen.at(-1)!)![1]!;
    const { payload } = await jwtVerify(token, publicKey, { algorithms: ['ES256'], issuer: 'gw-test' });
    assert.equal(payload.iss, 'gw-test');
    assert.match(await statusOf(gw.dir, 'GwBackend default/signed'), /ResolvedRefs=True \(ResolvedRefs\)/);
    const explained = await runGw(['explain', '-f', gw.dir, 'backend', 'default/keyed']);
    assert.doesNotMatch(explained.stdout, /UNRESOLVED/);
  });
});
