// Consent across namespaces with real traffic: a GwModel of another namespace serves through an
// HTTPRoute only while a ReferenceGrant in the route's namespace allows it; a backendRef into
// another namespace is served only while a grant there allows it — and then with the backend's
// own spec, its namespace's policies and that namespace's Secrets; an HTTPS listener terminates
// TLS with a certificate of another namespace only while a grant there allows it; a backendRef
// to a GwBackend that is not Accepted is answered 500 with the reason, and the route says why.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import type { KubeObject } from '../../../src/api/validate/admission.ts';
import {
  freePort,
  gatewayYaml,
  ownFailureDetail,
  startTestGateway,
  webRouteYaml as staticWebRouteYaml,
  type TestGateway,
} from '../../helpers/gateway.ts';
import { httpsGet, tlsFixture } from '../../helpers/https-get.ts';
import { admitted, GATEWAY_CLASS_YAML, MODEL_ROUTE_YAML } from '../../helpers/objects.ts';
import { type RecordingUpstream, startRecordingUpstream } from '../../helpers/recording-upstream.ts';
import { eventually } from '../../helpers/until.ts';
import { startOpenAiMock } from '../../support/providers/openai-mock.ts';

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

/** The conditions of an object's first parent entry (routes and models), as the controller wrote them. */
function parentConditions(gw: TestGateway, kind: string, key: string): Condition[] {
  const status = gw.gateway.files.store.get(kind, key)?.status as { parents?: { conditions: Condition[] }[] };
  return status?.parents?.[0]?.conditions ?? [];
}

function condition(conditions: Condition[], type: string): Condition | undefined {
  return conditions.find((c) => c.type === type);
}

/** Gateway ai on `port` and HTTPRoute default/web on it with `rules` (YAML sequence items). */
function webRouteYaml(port: number, rules: string): string {
  return `${gatewayYaml(port)}apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec:
  parentRefs: [{name: ai}]
  rules:
${rules}`;
}

describe('a GwModel attached to an HTTPRoute of another namespace', () => {
  let provider: Awaited<ReturnType<typeof startOpenAiMock>>;
  let gw: TestGateway;
  let client: OpenAI;
  const GRANT = `apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: team-b-models, namespace: default}
spec:
  from: [{group: gw.dev, kind: GwModel, namespace: team-b}]
  to: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: models}]
`;

  before(async () => {
    provider = await startOpenAiMock({ apiKey: 'sk-team-b' });
    const port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': `${gatewayYaml(port)}${MODEL_ROUTE_YAML}`,
      'team-b.yaml': `apiVersion: gw.dev/v1alpha1
kind: GwModel
metadata: {name: gpt, namespace: team-b}
spec:
  parentRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: default, name: models}]
  provider: Alpha
  baseURL: http://127.0.0.1:${provider.port}/v1
  match: {model: gpt-4o-mini}
  policies: {auth: {key: sk-team-b}}
`,
    });
    client = new OpenAI({ apiKey: 'client', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0 });
  });

  after(async () => {
    await gw?.stop();
    await provider?.close();
  });

  const ask = () =>
    client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  const accepted = () => condition(parentConditions(gw, 'gw.dev/GwModel', 'team-b/gpt'), 'Accepted');

  it('is not attached without a ReferenceGrant: RefNotPermitted, and requests do not reach it', async () => {
    await eventually('the model status', async () => accepted() !== undefined);
    const refused = accepted()!;
    assert.equal(refused.status, 'False');
    assert.equal(refused.reason, 'RefNotPermitted');
    assert.match(
      refused.message,
      /^HTTPRoute default\/models: not permitted by any ReferenceGrant in namespace default/,
    );
    assert.match(refused.message, /from \{group: gw\.dev, kind: GwModel, namespace: team-b\}/);
    // The rule's only backend is the models attached to it: none is, so none serves.
    await assert.rejects(ask(), (error: unknown) => error instanceof OpenAI.APIError && error.status === 500);
    assert.equal(provider.requests.length, 0);
  });

  it('is attached once the route owner grants it: the request reaches the provider', async () => {
    gw.write('grant.yaml', GRANT);
    await eventually('the model to be served', async () => {
      try {
        return (await ask()).choices[0]!.message.content === 'echo: hi';
      } catch {
        return false;
      }
    });
    assert.equal((provider.requests.at(-1)!.body as { model: string }).model, 'gpt-4o-mini');
    await eventually('the model status', async () => accepted()?.status === 'True');
  });

  it('is detached again when the grant is deleted', async () => {
    rmSync(join(gw.dir, 'grant.yaml'));
    await eventually('the model to be refused', async () => {
      try {
        await ask();
        return false;
      } catch (error) {
        return error instanceof OpenAI.APIError && error.status === 500;
      }
    });
    const reached = provider.requests.length;
    await assert.rejects(ask());
    assert.equal(provider.requests.length, reached);
    await eventually('the model status', async () => accepted()?.reason === 'RefNotPermitted');
  });
});

describe('HTTPRoute backendRefs into another namespace', () => {
  let upstream: RecordingUpstream;
  let gw: TestGateway;
  let port: number;
  const GRANT = `apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {name: routes-from-default, namespace: team-b}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: default}]
  to: [{group: gw.dev, kind: GwBackend}, {group: '', kind: Service, name: app}]
`;

  before(async () => {
    upstream = await startRecordingUpstream();
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': webRouteYaml(
        port,
        `    - matches: [{path: {value: /backend}}]
      backendRefs: [{group: gw.dev, kind: GwBackend, name: web, namespace: team-b}]
    - matches: [{path: {value: /service}}]
      backendRefs: [{name: app, namespace: team-b, port: ${upstream.port}}]
`,
      ),
      // The backend, the policy on it and the Secret the policy names all live in team-b; a
      // Secret of the same name in the route's namespace must not be the one used.
      'team-b.yaml': `apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: web, namespace: team-b}
spec: {static: {host: 127.0.0.1, port: ${upstream.port}}}
---
apiVersion: v1
kind: Secret
metadata: {name: web-key, namespace: team-b}
stringData: {Authorization: Bearer team-b-key}
---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: web-auth, namespace: team-b}
spec:
  targetRefs: [{group: gw.dev, kind: GwBackend, name: web}]
  backend: {auth: {secretRef: {name: web-key}}}
---
apiVersion: v1
kind: Service
metadata: {name: app, namespace: team-b}
spec: {clusterIP: 127.0.0.1, ports: [{port: ${upstream.port}}]}
---
apiVersion: v1
kind: Secret
metadata: {name: web-key, namespace: default}
stringData: {Authorization: Bearer default-key}
`,
    });
  });

  after(async () => {
    await gw?.stop();
    await upstream?.close();
  });

  const get = async (path: string) => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`);
    // The detail of a refused backend is in the log, under the request id the client got.
    const text = response.status >= 500 ? await ownFailureDetail(gw, response) : await response.text();
    return { status: response.status, text };
  };
  const resolvedRefs = () =>
    condition(parentConditions(gw, 'gateway.networking.k8s.io/HTTPRoute', 'default/web'), 'ResolvedRefs');

  it('without a ReferenceGrant: 500 RefNotPermitted, nothing reaches the backend, ResolvedRefs False', async () => {
    for (const path of ['/backend', '/service']) {
      const answer = await get(path);
      assert.equal(answer.status, 500, path);
      assert.match(answer.text, /RefNotPermitted/, path);
    }
    assert.equal(upstream.seen.length, 0);
    await eventually('the route status', async () => resolvedRefs() !== undefined);
    assert.equal(resolvedRefs()!.status, 'False');
    assert.equal(resolvedRefs()!.reason, 'RefNotPermitted');
    assert.match(
      resolvedRefs()!.message,
      /backendRef gw\.dev\/GwBackend team-b\/web: not permitted by any ReferenceGrant in namespace team-b/,
    );
  });

  it("with the grant: served, with the backend's namespace's policy and Secret", async () => {
    gw.write('grant.yaml', GRANT);
    await eventually('the backend to be served', async () => (await get('/backend')).status === 200);
    assert.equal(upstream.last().headers.authorization, 'Bearer team-b-key');
    const service = await get('/service');
    assert.equal(service.status, 200);
    assert.equal(upstream.last().url, '/service');
    await eventually('the route status', async () => resolvedRefs()?.status === 'True');
  });

  it('the grant deleted: refused again', async () => {
    rmSync(join(gw.dir, 'grant.yaml'));
    await eventually('the backend to be refused', async () => (await get('/backend')).status === 500);
    const reached = upstream.seen.length;
    const answer = await get('/service');
    assert.equal(answer.status, 500);
    assert.match(answer.text, /RefNotPermitted/);
    assert.equal(upstream.seen.length, reached);
  });
});

describe('an HTTPS listener with a certificate of another namespace', () => {
  let upstream: RecordingUpstream;
  let gw: TestGateway;
  let httpsPort: number;
  const GRANT = `apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: gateways-from-default, namespace: certs}
spec:
  from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: default}]
  to: [{group: '', kind: Secret, name: cert-a}]
`;

  before(async () => {
    upstream = await startRecordingUpstream();
    httpsPort = await freePort();
    const pem = JSON.stringify({ 'tls.crt': tlsFixture('a.crt'), 'tls.key': tlsFixture('a.key') });
    gw = await startTestGateway({
      'gateway.yaml': `${GATEWAY_CLASS_YAML}apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ai}
spec:
  gatewayClassName: gw
  listeners:
    - name: https
      protocol: HTTPS
      port: ${httpsPort}
      hostname: a.example.test
      tls: {certificateRefs: [{name: cert-a, namespace: certs}]}
---
apiVersion: v1
kind: Secret
metadata: {name: cert-a, namespace: certs}
type: kubernetes.io/tls
stringData: ${pem}
---
${staticWebRouteYaml(upstream.port)}`,
    });
  });

  after(async () => {
    await gw?.stop();
    await upstream?.close();
  });

  const get = () => httpsGet(httpsPort, 'a.example.test', 'a.example.test', '/tls');
  const listenerResolvedRefs = () => {
    const status = gw.gateway.files.store.get('gateway.networking.k8s.io/Gateway', 'default/ai')?.status as
      | { listeners?: { conditions: Condition[] }[] }
      | undefined;
    return condition(status?.listeners?.[0]?.conditions ?? [], 'ResolvedRefs');
  };

  it('is not served without a ReferenceGrant: RefNotPermitted, the port is not open', async () => {
    await assert.rejects(get(), (error: NodeJS.ErrnoException) => error.code === 'ECONNREFUSED');
    await eventually('the listener status', async () => listenerResolvedRefs() !== undefined);
    assert.equal(listenerResolvedRefs()!.reason, 'RefNotPermitted');
    assert.match(listenerResolvedRefs()!.message, /^certificateRef certs\/cert-a: not permitted by any ReferenceGrant/);
  });

  it("terminates TLS with that certificate once the Secret's namespace grants it", async () => {
    gw.write('grant.yaml', GRANT);
    await eventually('the listener to be served', async () => {
      try {
        return (await get()).status === 200;
      } catch {
        return false;
      }
    });
    const answer = await get();
    assert.equal(answer.peer, 'a.example.test');
    assert.equal(upstream.last().url, '/tls');
    await eventually('the listener status', async () => listenerResolvedRefs()?.status === 'True');
  });
});

describe('a backendRef to a GwBackend that is not Accepted', () => {
  let upstream: RecordingUpstream;
  let gw: TestGateway;
  let port: number;

  before(async () => {
    upstream = await startRecordingUpstream();
    port = await freePort();
    gw = await startTestGateway({
      'gateway.yaml': webRouteYaml(port, '    - backendRefs: [{group: gw.dev, kind: GwBackend, name: signer}]\n'),
    });
    // Admission refuses jwtSign claims the signer sets itself; a cluster whose CRD predates that
    // rule may still hold such an object. It goes into the store as such a cluster would hand it.
    const [valid] = admitted(`apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: signer}
spec:
  static: {host: 127.0.0.1, port: ${upstream.port}}
  policies: {auth: {jwtSign: {signingKeyRef: {name: signing-key}, claims: {sub: gw}}}}
`);
    const stored = structuredClone(valid!) as KubeObject & {
      spec: { policies: { auth: { jwtSign: { claims: Record<string, unknown> } } } };
    };
    stored.spec.policies.auth.jwtSign.claims.iat = 0;
    gw.gateway.files.store.apply(stored);
  });

  after(async () => {
    await gw?.stop();
    await upstream?.close();
  });

  it('is answered 500 with the reason; the route says ResolvedRefs False, BackendNotAccepted', async () => {
    await eventually('the route status', async () => {
      const conditions = parentConditions(gw, 'gateway.networking.k8s.io/HTTPRoute', 'default/web');
      return condition(conditions, 'ResolvedRefs')?.reason === 'BackendNotAccepted';
    });
    const response = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(response.status, 500);
    assert.match(await ownFailureDetail(gw, response), /GwBackend default\/signer: BackendNotAccepted/);
    assert.equal(upstream.seen.length, 0);
    const resolved = condition(
      parentConditions(gw, 'gateway.networking.k8s.io/HTTPRoute', 'default/web'),
      'ResolvedRefs',
    )!;
    assert.equal(resolved.status, 'False');
    assert.match(
      resolved.message,
      /^backendRef gw\.dev\/GwBackend default\/signer: the GwBackend is not Accepted \(Invalid\): spec\.policies\.auth\.jwtSign\.claims: iat may not be given/,
    );
    const backend = gw.gateway.files.store.get('gw.dev/GwBackend', 'default/signer')?.status as {
      conditions: Condition[];
    };
    assert.equal(condition(backend.conditions, 'Accepted')?.reason, 'Invalid');
  });
});
