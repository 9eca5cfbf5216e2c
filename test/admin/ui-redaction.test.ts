// Inline credentials never reach the browser, and editing keeps them: objects applied kubectl-style
// (with the last-applied annotation) into gw's API server hold an inline backend key (GwBackend,
// GwModel, GwPolicy), a moderation guard's key, htpasswd users, an Authorization header set by a
// header modifier and an X-Api-Key set by a route filter; no answer of the UI's API holds any of
// them. A replace of another field keeps every stored credential (read back from the API server),
// and a marker where nothing is stored is refused naming its field path.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import { HIDDEN_CREDENTIAL, LAST_APPLIED } from '../../src/admin/ui/security/redaction.ts';
import { everyGetAnswer, startUiGateway, type UiGateway } from '../helpers/admin-ui.ts';
import { eventually } from '../helpers/until.ts';
import type { Json } from './ui/live-helpers.ts';

const BACKEND_KEY = 'sk-backend-inline-0001';
const MODEL_KEY = 'sk-model-inline-0002';
const POLICY_KEY = 'sk-policy-inline-0003';
const MODERATION_KEY = 'sk-moderation-inline-0004';
const HEADER_KEY = 'header-bearer-inline-0005';
const ROUTE_HEADER_KEY = 'route-api-key-inline-0006';
const HASH = `{SHA}${createHash('sha1').update('alice-password').digest('base64')}`;
const CREDENTIALS = [BACKEND_KEY, MODEL_KEY, POLICY_KEY, MODERATION_KEY, HEADER_KEY, ROUTE_HEADER_KEY, HASH];

const OBJECTS = [
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name: 'gw' },
    spec: { controllerName: 'gw.dev/gateway-controller' },
  },
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name: 'ai', namespace: 'default' },
    spec: { gatewayClassName: 'gw', listeners: [{ name: 'http', protocol: 'HTTP', port: 0 }] },
  },
  {
    apiVersion: 'gw.dev/v1alpha1',
    kind: 'GwBackend',
    metadata: { name: 'keyed', namespace: 'default' },
    spec: {
      ai: { provider: { alpha: {}, host: '127.0.0.1', port: 9 } },
      policies: { auth: { key: BACKEND_KEY } },
    },
  },
  {
    apiVersion: 'gw.dev/v1alpha1',
    kind: 'GwModel',
    metadata: { name: 'keyed-model', namespace: 'default' },
    spec: {
      parentRefs: [{ name: 'ai' }],
      provider: 'Alpha',
      baseURL: 'http://127.0.0.1:9/v1',
      match: { model: 'keyed-model' },
      policies: { auth: { key: MODEL_KEY } },
    },
  },
  {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name: 'keyed-route', namespace: 'default' },
    spec: {
      parentRefs: [{ name: 'ai' }],
      rules: [
        {
          name: 'chat',
          matches: [{ path: { type: 'PathPrefix', value: '/v1' } }],
          filters: [
            {
              type: 'RequestHeaderModifier',
              requestHeaderModifier: {
                set: [
                  { name: 'X-Api-Key', value: ROUTE_HEADER_KEY },
                  { name: 'X-Team', value: 'team-a' },
                ],
              },
            },
          ],
          backendRefs: [{ group: 'gw.dev', kind: 'GwBackend', name: 'keyed' }],
        },
      ],
    },
  },
  {
    apiVersion: 'gw.dev/v1alpha1',
    kind: 'GwPolicy',
    metadata: { name: 'keyed-policy', namespace: 'default' },
    spec: {
      targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'keyed-route' }],
      traffic: {
        basicAuthentication: { users: [`alice:${HASH}`], realm: 'first' },
        headerModifiers: { request: { set: [{ name: 'Authorization', value: `Bearer ${HEADER_KEY}` }] } },
      },
      backend: {
        auth: { key: POLICY_KEY },
        ai: { promptGuard: { request: [{ alphaModeration: { policies: { auth: { key: MODERATION_KEY } } } }] } },
      },
    },
  },
];

/** An object as `kubectl apply` stores it: with the whole applied object in an annotation. */
function appliedByKubectl(object: (typeof OBJECTS)[number]) {
  const annotations = { [LAST_APPLIED]: `${JSON.stringify(object)}\n` };
  return { ...object, metadata: { ...object.metadata, annotations } };
}

async function send(gw: UiGateway, method: 'POST' | 'PUT', yaml: string) {
  const response = await fetch(`${gw.url}/ui/api/object`, {
    method,
    headers: { 'content-type': 'application/json', 'x-gw-ui': '1' },
    body: JSON.stringify({ yaml }),
  });
  return { status: response.status, text: await response.text() };
}

/** The object as gw's API server stores it, read as kubectl would (not through the UI). */
async function stored(gw: UiGateway, path: string) {
  const answer = await gw.gateway.api!.api.request('GET', path);
  assert.equal(answer.status, 200, path);
  return answer.body as Json;
}

/** The object's editable YAML as the Objects page gets it. */
async function editableYaml(gw: UiGateway, kind: string, name: string) {
  const answer = await fetch(`${gw.url}/ui/api/object?kind=${kind}&namespace=default&name=${name}`);
  assert.equal(answer.status, 200);
  return ((await answer.json()) as { yaml: string }).yaml;
}

/**
 * Edits an object from the YAML the Objects page shows and saves it, as a user would: again from a
 * fresh copy when the controller wrote the object's status in between (409 Conflict).
 */
async function editAndSave(gw: UiGateway, kind: string, name: string, edit: (object: Json) => void) {
  for (let attempt = 0; ; attempt++) {
    const object = parse(await editableYaml(gw, kind, name));
    edit(object);
    const saved = await send(gw, 'PUT', stringify(object));
    if (saved.status !== 409 || attempt === 20) return saved;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const POLICY_PATH = '/apis/gw.dev/v1alpha1/namespaces/default/gwpolicies/keyed-policy';
const ROUTE_PATH = '/apis/gateway.networking.k8s.io/v1/namespaces/default/httproutes/keyed-route';

describe('web UI: inline credentials hidden, kept on edit', () => {
  let gw: UiGateway;
  before(async () => {
    gw = await startUiGateway({ apiServer: true });
    OBJECTS[1]!.spec.listeners![0]!.port = gw.listenerPort;
    for (const object of OBJECTS) {
      const created = await send(gw, 'POST', stringify(appliedByKubectl(object)));
      assert.equal(created.status, 201, created.text);
    }
    await eventually('the route attached, its policy in force', async () => {
      const answer = await fetch(`${gw.url}/ui/api/explain?what=route&namespace=default&name=keyed-route`);
      const { placements } = (await answer.json()) as { placements?: { sections: { fields: unknown[] }[] }[] };
      return (placements?.[0]?.sections[1]?.fields.length ?? 0) > 0;
    });
  });
  after(() => gw?.stop());

  it('sends no inline credential in any answer: objects, effective policy, policies, overview', async () => {
    const answers = await everyGetAnswer(gw.url);
    assert.ok(answers.some((a) => a.path.includes('what=route') && a.path.includes('keyed-route')));
    for (const answer of answers) {
      for (const credential of CREDENTIALS)
        assert.ok(!answer.text.includes(credential), `${answer.path} holds ${credential}`);
    }
    // What is hidden is shown as set, the rest as it is.
    const policyView = await fetch(`${gw.url}/ui/api/object?kind=gw.dev/GwPolicy&namespace=default&name=keyed-policy`);
    const { object } = (await policyView.json()) as { object: Json };
    assert.equal(object.metadata.annotations[LAST_APPLIED], HIDDEN_CREDENTIAL);
    assert.deepEqual(object.spec.traffic.basicAuthentication.users, [`alice:${HIDDEN_CREDENTIAL}`]);
    assert.deepEqual(object.spec.traffic.headerModifiers.request.set, [
      { name: 'Authorization', value: HIDDEN_CREDENTIAL },
    ]);
    assert.equal(object.spec.backend.auth.key, HIDDEN_CREDENTIAL);
    const explained = JSON.parse(
      answers.find((a) => a.path.includes('what=route') && a.path.includes('keyed-route'))!.text,
    );
    const traffic = explained.placements[0].sections.find((s: { policy: string }) => s.policy === 'traffic');
    const basic = traffic.fields.find((f: { field: string }) => f.field === 'basicAuthentication');
    assert.deepEqual(basic.value.users, [`alice:${HIDDEN_CREDENTIAL}`]);
    const backend = explained.placements[0].sections.find((s: { policy: string }) => s.policy === 'backend');
    assert.equal(backend.fields.find((f: { field: string }) => f.field === 'auth').value.key, HIDDEN_CREDENTIAL);
    const routeView = JSON.parse(
      answers.find((a) => a.path.includes('kind=gateway.networking.k8s.io%2FHTTPRoute'))!.text,
    );
    const set = routeView.object.spec.rules[0].filters[0].requestHeaderModifier.set;
    assert.deepEqual(set, [
      { name: 'X-Api-Key', value: HIDDEN_CREDENTIAL },
      { name: 'X-Team', value: 'team-a' },
    ]);
  });

  it('keeps every stored credential when another field is edited from the redacted view', async () => {
    const yaml = await editableYaml(gw, 'gw.dev/GwPolicy', 'keyed-policy');
    assert.ok(!CREDENTIALS.some((c) => yaml.includes(c)));
    const saved = await editAndSave(gw, 'gw.dev/GwPolicy', 'keyed-policy', (policy) => {
      policy.spec.traffic.basicAuthentication.realm = 'second';
    });
    assert.equal(saved.status, 200, saved.text);
    assert.ok(!CREDENTIALS.some((c) => saved.text.includes(c)));
    const policy = await stored(gw, POLICY_PATH);
    const spec = policy.spec;
    assert.equal(spec.traffic.basicAuthentication.realm, 'second');
    assert.deepEqual(spec.traffic.basicAuthentication.users, [`alice:${HASH}`]);
    assert.equal(spec.traffic.headerModifiers.request.set[0].value, `Bearer ${HEADER_KEY}`);
    assert.equal(spec.backend.auth.key, POLICY_KEY);
    assert.equal(spec.backend.ai.promptGuard.request[0].alphaModeration.policies.auth.key, MODERATION_KEY);
    assert.equal(policy.metadata.annotations?.[LAST_APPLIED], `${JSON.stringify(OBJECTS[5])}\n`);

    // A header put before the hidden one: the stored value follows its header (by name), not its index.
    const routeSaved = await editAndSave(gw, 'gateway.networking.k8s.io/HTTPRoute', 'keyed-route', (route) => {
      route.spec.rules[0].filters[0].requestHeaderModifier.set.unshift({ name: 'X-First', value: 'one' });
      delete route.metadata.annotations;
    });
    assert.equal(routeSaved.status, 200, routeSaved.text);
    const storedRoute = await stored(gw, ROUTE_PATH);
    assert.deepEqual(storedRoute.spec.rules[0].filters[0].requestHeaderModifier.set, [
      { name: 'X-First', value: 'one' },
      { name: 'X-Api-Key', value: ROUTE_HEADER_KEY },
      { name: 'X-Team', value: 'team-a' },
    ]);
    // The annotation left out is put back as it was.
    assert.match(storedRoute.metadata.annotations?.[LAST_APPLIED] ?? '', new RegExp(ROUTE_HEADER_KEY));
  });

  it('refuses a marker where the stored object has no value, naming the field path', async () => {
    const refused = await editAndSave(gw, 'gateway.networking.k8s.io/HTTPRoute', 'keyed-route', (route) => {
      route.spec.rules[0].filters[0].requestHeaderModifier.set.push({ name: 'X-New-Key', value: HIDDEN_CREDENTIAL });
    });
    assert.equal(refused.status, 422, refused.text);
    const body = JSON.parse(refused.text) as { error: string; causes: { field: string }[] };
    const path = 'spec.rules[0].filters[0].requestHeaderModifier.set[3].value';
    assert.match(body.error, /holds the marker of a hidden credential/);
    assert.ok(body.error.startsWith(path), body.error);
    assert.deepEqual(
      body.causes.map((c) => c.field),
      [path],
    );
    // Nothing was written.
    const storedRoute = await stored(gw, ROUTE_PATH);
    assert.equal(storedRoute.spec.rules[0].filters[0].requestHeaderModifier.set.length, 3);

    // A create has nothing stored: a marker in it is refused too.
    const created = await send(
      gw,
      'POST',
      stringify({
        ...OBJECTS[2],
        metadata: { name: 'copy', namespace: 'default' },
        spec: { ...OBJECTS[2]!.spec, policies: { auth: { key: HIDDEN_CREDENTIAL } } },
      }),
    );
    assert.equal(created.status, 422, created.text);
    assert.match(created.text, /spec\.policies\.auth\.key holds the marker/);
  });
});
