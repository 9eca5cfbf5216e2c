// A GwPolicy on a Gateway reaches routes and backends of other namespaces; the Secrets it names
// are its own, read in its namespace — never a same-named Secret of the route's or the backend's
// namespace. Through real traffic: a Gateway-wide API key policy and a Gateway-wide backend key,
// with a team namespace holding Secrets of the same names and other values. Before, both were
// read in the team's namespace: the team's Secret chose which client keys the platform's policy
// accepted and which key reached the provider.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort, startTestGateway, type TestGateway } from '../../helpers/gateway.ts';
import { GATEWAY_CLASS_YAML } from '../../helpers/objects.ts';
import { type RecordingUpstream, startRecordingUpstream } from '../../helpers/recording-upstream.ts';

const PLATFORM_CLIENT_KEY = 'platform-client-key-1';
const TEAM_CLIENT_KEY = 'team-planted-client-key';
const PLATFORM_PROVIDER_KEY = 'platform-provider-key';
const TEAM_PROVIDER_KEY = 'team-provider-key';

describe('a Gateway-wide GwPolicy reaching another namespace', () => {
  let upstream: RecordingUpstream;
  let gw: TestGateway;
  let port: number;

  before(async () => {
    upstream = await startRecordingUpstream();
    port = await freePort();
    gw = await startTestGateway({
      'platform.yaml': `${GATEWAY_CLASS_YAML}apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: shared, namespace: platform}
spec:
  gatewayClassName: gw
  listeners: [{name: http, protocol: HTTP, port: ${port}, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gw.dev/v1alpha1
kind: GwPolicy
metadata: {name: gateway-wide, namespace: platform}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: shared}]
  traffic:
    apiKeyAuthentication: {secretRef: {name: client-keys}}
  backend:
    auth: {secretRef: {name: provider-key}}
---
apiVersion: v1
kind: Secret
metadata: {name: client-keys, namespace: platform}
stringData: {alice: ${PLATFORM_CLIENT_KEY}}
---
apiVersion: v1
kind: Secret
metadata: {name: provider-key, namespace: platform}
stringData: {Authorization: ${PLATFORM_PROVIDER_KEY}}
`,
      'team.yaml': `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app, namespace: team}
spec:
  parentRefs: [{name: shared, namespace: platform}]
  rules:
  - backendRefs: [{group: gw.dev, kind: GwBackend, name: upstream}]
---
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: upstream, namespace: team}
spec:
  static: {host: 127.0.0.1, port: ${upstream.port}}
---
apiVersion: v1
kind: Secret
metadata: {name: client-keys, namespace: team}
stringData: {mallory: ${TEAM_CLIENT_KEY}}
---
apiVersion: v1
kind: Secret
metadata: {name: provider-key, namespace: team}
stringData: {Authorization: ${TEAM_PROVIDER_KEY}}
`,
    });
  });

  after(async () => {
    await gw?.stop();
    await upstream?.close();
  });

  it("checks client keys against the policy's own Secret, not the route namespace's", async () => {
    const planted = await fetch(`http://127.0.0.1:${port}/`, {
      headers: { authorization: `Bearer ${TEAM_CLIENT_KEY}` },
    });
    assert.equal(planted.status, 401, 'a key from the team namespace Secret is not a key of the platform policy');
    await planted.body?.cancel();
    assert.equal(upstream.seen.length, 0);

    const platform = await fetch(`http://127.0.0.1:${port}/`, {
      headers: { authorization: `Bearer ${PLATFORM_CLIENT_KEY}` },
    });
    assert.equal(platform.status, 200);
    await platform.text();
  });

  it("sends the policy's own backend key, not the backend namespace's", () => {
    assert.equal(upstream.last().headers.authorization, `Bearer ${PLATFORM_PROVIDER_KEY}`);
  });
});
