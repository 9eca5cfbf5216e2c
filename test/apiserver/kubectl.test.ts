// The real kubectl against the embedded API server, through the kubeconfig it writes. Skipped,
// loudly, where kubectl is not installed (CI installs it).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { until } from '../helpers/until.ts';
import { KUBECTL, type KubectlSession, kubectlSkip, startKubectlSession } from './kubectl-session.ts';

let session: KubectlSession;
let files: string;
const env = () => session.env();
const kubectl = (...args: string[]) => session.run(...args);
const ok = (...args: string[]) => session.ok(...args);
const file = (name: string, text: string) => session.file(name, text);

const GATEWAY = `apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: gw}
spec: {controllerName: gw.dev/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ai}
spec:
  gatewayClassName: gw
  listeners: [{name: http, protocol: HTTP, port: 8080}]
---
apiVersion: v1
kind: Secret
metadata: {name: openai-key}
stringData: {Authorization: Bearer sk-test}
---
apiVersion: gw.dev/v1alpha1
kind: GwBackend
metadata: {name: openai}
spec:
  ai: {provider: {alpha: {model: gpt-4o-mini}}}
  policies: {auth: {secretRef: {name: openai-key}}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: llm}
spec:
  parentRefs: [{name: ai}]
  rules:
    - backendRefs: [{group: gw.dev, kind: GwBackend, name: openai}]
`;

describe('kubectl against the embedded API server', { skip: kubectlSkip }, () => {
  before(async () => {
    session = await startKubectlSession();
    files = session.files;
  });
  after(async () => {
    await session?.close();
  });

  test('kubectl apply creates, a second apply changes nothing, and get prints the printer columns', async () => {
    const path = file('gateway.yaml', GATEWAY);
    const first = await ok('apply', '-f', path);
    assert.match(first, /^gatewayclass\.gateway\.networking\.k8s\.io\/gw created$/m);
    assert.match(first, /^gwbackend\.gw\.dev\/openai created$/m);
    assert.match(first, /^secret\/openai-key created$/m);
    const second = await ok('apply', '-f', path);
    assert.match(second, /^gwbackend\.gw\.dev\/openai unchanged$/m);
    assert.match(second, /^gatewayclass\.gateway\.networking\.k8s\.io\/gw unchanged$/m);
    const table = await ok('get', 'gwbackends');
    assert.match(table, /^NAME\s+ACCEPTED\s+AGE$/m);
    assert.match(table, /^openai\s+\d+s$/m);
    const byCategory = await ok('get', 'gw');
    assert.match(byCategory, /gwbackend\.gw\.dev\/openai/);
    const gateways = await ok('get', 'gtw');
    assert.match(gateways, /^NAME\s+CLASS\s+ADDRESS\s+PROGRAMMED\s+AGE$/m);
  });

  test('kubectl get -o yaml shows the stored object: defaults, uid, resourceVersion, the applied configuration', async () => {
    const yaml = await ok('get', 'gwbackend', 'openai', '-o', 'yaml');
    assert.match(yaml, /^kind: GwBackend$/m);
    assert.match(yaml, /^ {2}uid: [0-9a-f-]{36}$/m);
    assert.match(yaml, /^ {2}resourceVersion: "\d+"$/m);
    assert.match(yaml, /kubectl\.kubernetes\.io\/last-applied-configuration/);
    const secret = await ok('get', 'secret', 'openai-key', '-o', 'jsonpath={.data.Authorization}');
    assert.equal(Buffer.from(secret, 'base64').toString(), 'Bearer sk-test');
  });

  test('kubectl apply --server-side: applied, conflicts printed as kubectl prints them, --force-conflicts', async () => {
    const config = (model: string) =>
      file(
        `ssa-${model}.yaml`,
        `apiVersion: gw.dev/v1alpha1\nkind: GwBackend\nmetadata: {name: ssa}\nspec: {ai: {provider: {alpha: {model: ${model}}}}}\n`,
      );
    assert.match(
      await ok('apply', '--server-side', '-f', config('gpt-4o')),
      /gwbackend\.gw\.dev\/ssa serverside-applied/,
    );
    const conflict = await kubectl('apply', '--server-side', '--field-manager=other', '-f', config('o3'));
    assert.notEqual(conflict.code, 0);
    assert.match(
      conflict.stderr,
      /Apply failed with 1 conflict: conflict with "kubectl": \.spec\.ai\.provider\.alpha\.model/,
    );
    await ok('apply', '--server-side', '--field-manager=other', '--force-conflicts', '-f', config('o3'));
    assert.equal(await ok('get', 'gwbe', 'ssa', '-o', 'jsonpath={.spec.ai.provider.alpha.model}'), 'o3');
    // Objects applied client-side move to server-side apply without conflicts, as in Kubernetes.
    const moved = await ok('apply', '--server-side', '-f', join(files, 'gateway.yaml'));
    assert.match(moved, /httproute\.gateway\.networking\.k8s\.io\/llm serverside-applied/);
  });

  test('kubectl get -w prints a line per change', async () => {
    const child = spawn(KUBECTL, ['get', 'gwbackends', '-w'], { env: env() });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    try {
      assert.ok(await until(() => /^openai\s/m.test(output), 10_000), output);
      await ok(
        'create',
        '-f',
        file(
          'watched.yaml',
          'apiVersion: gw.dev/v1alpha1\nkind: GwBackend\nmetadata: {name: watched}\nspec: {ai: {provider: {alpha: {model: x}}}}\n',
        ),
      );
      await ok('label', 'gwbackend', 'watched', 'team=a');
      await ok('delete', 'gwbackend', 'watched');
      assert.ok(await until(() => (output.match(/^watched\s/gm) ?? []).length >= 3, 10_000), output);
    } finally {
      child.kill();
    }
  });

  test('kubectl patch: merge on custom resources, strategic (the default) on core kinds, refused on custom resources', async () => {
    assert.match(
      await ok('patch', 'gwbackend', 'openai', '--type=merge', '-p', '{"metadata":{"labels":{"tier":"gold"}}}'),
      /gwbackend\.gw\.dev\/openai patched/,
    );
    assert.equal(await ok('get', 'gwbe', '-l', 'tier=gold', '-o', 'name'), 'gwbackend.gw.dev/openai\n');
    await ok('create', 'configmap', 'settings', '--from-literal=a=1');
    await ok('patch', 'configmap', 'settings', '-p', '{"data":{"b":"2"}}');
    assert.equal(await ok('get', 'cm', 'settings', '-o', 'jsonpath={.data}'), '{"a":"1","b":"2"}');
    const json = await ok(
      'patch',
      'gwbe',
      'openai',
      '--type=json',
      '-p',
      '[{"op":"remove","path":"/metadata/labels/tier"}]',
    );
    assert.match(json, /patched/);
    const refused = await kubectl('patch', 'gwbackend', 'openai', '-p', '{"spec":{}}');
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /application\/strategic-merge-patch\+json is not supported/);
  });

  test('kubectl replace (edit via replace): the new spec, generation 2; a stale copy is a Conflict', async () => {
    const current = await ok('get', 'gwbackend', 'openai', '-o', 'yaml');
    const edited = file('edited.yaml', current.replace('model: gpt-4o-mini', 'model: gpt-4.1'));
    assert.match(await ok('replace', '-f', edited), /gwbackend\.gw\.dev\/openai replaced/);
    assert.equal(await ok('get', 'gwbe', 'openai', '-o', 'jsonpath={.spec.ai.provider.alpha.model}'), 'gpt-4.1');
    const stale = await kubectl('replace', '-f', edited);
    assert.notEqual(stale.code, 0);
    assert.match(
      stale.stderr,
      /Error from server \(Conflict\): error when replacing ".*edited\.yaml": Operation cannot be fulfilled on gwbackends\.gw\.dev "openai": the object has been modified; please apply your changes to the latest version and try again/,
    );
  });

  test('strict validation errors as kubectl prints them', async () => {
    const unknown = file(
      'unknown.yaml',
      'apiVersion: gw.dev/v1alpha1\nkind: GwBackend\nmetadata: {name: colourful}\nspec:\n  ai: {provider: {alpha: {model: x}}}\n  colour: blue\n',
    );
    const strict = await kubectl('apply', '-f', unknown);
    assert.notEqual(strict.code, 0);
    assert.match(
      strict.stderr,
      /Error from server \(BadRequest\): error when creating ".*unknown\.yaml": GwBackend in version "v1alpha1" cannot be handled as a GwBackend: strict decoding error: unknown field "spec\.colour"/,
    );
    const warned = await kubectl('apply', '--validate=warn', '-f', unknown);
    assert.equal(warned.code, 0);
    assert.match(warned.stderr, /Warning: unknown field "spec\.colour"/);

    const invalid = file(
      'invalid.yaml',
      'apiVersion: gw.dev/v1alpha1\nkind: GwBackend\nmetadata: {name: invalid}\nspec:\n  ai: {provider: {alpha: {}, gamma: {}}}\n  policies: {tcp: {keepalive: {retries: 70}}}\n',
    );
    for (const args of [
      ['apply', '-f', invalid],
      ['apply', '--server-side', '-f', invalid],
    ]) {
      const result = await kubectl(...args);
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /The GwBackend "invalid" is invalid: \n/);
      assert.match(
        result.stderr,
        /^\* spec\.ai\.provider: Invalid value: "object": exactly one of alpha \(OpenAI\), betaalpha \(Azure OpenAI\), beta \(Azure AI Foundry\), gamma \(Anthropic\), delta \(Google Gemini\), epsilon \(Google Vertex AI\), zeta \(Amazon Bedrock\), custom must be set$/m,
      );
      assert.match(
        result.stderr,
        /^\* spec\.policies\.tcp\.keepalive\.retries: Invalid value: 70: spec\.policies\.tcp\.keepalive\.retries in body should be less than or equal to 64$/m,
      );
    }
  });

  test('kubectl explain reads the OpenAPI v3 schemas', async () => {
    const explained = await ok('explain', 'gwbackend.spec.ai.provider');
    assert.match(explained, /^KIND:\s+GwBackend$/m);
    assert.match(explained, /^VERSION:\s+v1alpha1$/m);
    // Named types are published once and referenced, so kubectl names them.
    assert.match(explained, /^FIELD: provider <LLMProvider>$/m);
    assert.match(explained, /^DESCRIPTION:\n {4}The single provider\.$/m);
    assert.match(explained, /^ {2}alpha\t<AlphaConfig>$/m);
    const recursive = await ok('explain', 'gwpolicy.spec', '--recursive');
    assert.match(recursive, /^ {2}targetRefs\t<\[\]LocalPolicyTargetReferenceWithSectionName>$/m);
    const route = await ok('explain', 'httproutes.spec.parentRefs');
    assert.match(route, /^GROUP:\s+gateway\.networking\.k8s\.io$/m);
  });

  test('kubectl explain describes nested GwBackend fields, naming the vendor behind a neutral name', async () => {
    // A named type reached through several levels: its description comes with it.
    const alpha = await ok('explain', 'gwbackend.spec.ai.provider.alpha');
    assert.match(alpha, /^FIELD: alpha <AlphaConfig>$/m);
    assert.match(alpha, /^DESCRIPTION:\n {4}Settings for alpha: OpenAI and OpenAI-compatible providers\.$/m);
    // An anonymous leaf deep in the backend policies, and the list of fields under a type.
    const keepalive = await ok('explain', 'gwbackend.spec.policies.tcp.connectTimeout');
    assert.match(keepalive, /^DESCRIPTION:\n {4}\S/m);
    assert.doesNotMatch(keepalive, /<no description>/);
    const tls = await ok('explain', 'gwbackend.spec.policies.tls');
    assert.match(tls, /^DESCRIPTION:\n {4}TLS for connections to the backend/m);
    assert.doesNotMatch(tls, /<no description>/, 'every field of BackendTLS has a description');
    const auth = await ok('explain', 'gwbackend.spec.policies.auth');
    assert.match(auth, /cloudone \(AWS\)|AWS \(cloudone\)/);
  });

  test('kubectl create namespace, secret and service (typed clients send protobuf) and delete', async () => {
    await ok('create', 'namespace', 'team');
    await ok('create', 'secret', 'generic', 'key', '-n', 'team', '--from-literal=token=s3cret');
    await ok('create', 'service', 'clusterip', 'web', '-n', 'team', '--tcp=80:8080');
    const secret = await ok('get', 'secret', 'key', '-n', 'team', '-o', 'jsonpath={.type} {.data.token}');
    const [type, data] = secret.split(' ');
    assert.equal(type, 'Opaque');
    assert.equal(Buffer.from(data!, 'base64').toString(), 's3cret');
    assert.match(await ok('get', 'svc', '-n', 'team'), /^web\s+ClusterIP\s+<none>\s+<none>\s+80\/TCP\s+\d+s$/m);
    assert.match(await ok('delete', 'namespace', 'team'), /namespace "team" deleted/);
    assert.equal((await kubectl('get', 'secret', 'key', '-n', 'team')).code, 1);
    const missing = await kubectl('create', 'configmap', 'x', '-n', 'nowhere');
    assert.match(missing.stderr, /namespaces "nowhere" not found/);
  });

  test('kubectl applies ReferenceGrants in v1beta1 and v1 and reads them by name and short name', async () => {
    const path = file(
      'grants.yaml',
      `apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: routes-from-team-a}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: team-a}]
  to: [{group: '', kind: Service}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {name: models-from-team-b}
spec:
  from: [{group: gw.dev, kind: GwModel, namespace: team-b}]
  to: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: llm}]
`,
    );
    const applied = await ok('apply', '-f', path);
    assert.match(applied, /^referencegrant\.gateway\.networking\.k8s\.io\/routes-from-team-a created$/m);
    assert.match(applied, /^referencegrant\.gateway\.networking\.k8s\.io\/models-from-team-b created$/m);
    assert.match(
      await ok('apply', '-f', path),
      /^referencegrant\.gateway\.networking\.k8s\.io\/models-from-team-b unchanged$/m,
    );
    const table = await ok('get', 'refgrant');
    assert.match(table, /^NAME\s+AGE$/m);
    assert.match(table, /^models-from-team-b\s+\d+s$/m);
    assert.match(table, /^routes-from-team-a\s+\d+s$/m);
    // kubectl reads the group's preferred version (v1); v1beta1 is asked for by its full name.
    const v1 = await ok(
      'get',
      'referencegrant',
      'routes-from-team-a',
      '-o',
      'jsonpath={.apiVersion} {.spec.from[0].namespace}',
    );
    assert.equal(v1, 'gateway.networking.k8s.io/v1 team-a');
    const beta = await ok(
      'get',
      'referencegrants.v1beta1.gateway.networking.k8s.io',
      'models-from-team-b',
      '-o',
      'jsonpath={.apiVersion} {.spec.to[0].name}',
    );
    assert.equal(beta, 'gateway.networking.k8s.io/v1beta1 llm');
    const invalid = await kubectl(
      'apply',
      '-f',
      file(
        'bad-grant.yaml',
        'apiVersion: gateway.networking.k8s.io/v1\nkind: ReferenceGrant\nmetadata: {name: bad}\nspec: {from: [], to: [{group: "", kind: Secret}]}\n',
      ),
    );
    assert.notEqual(invalid.code, 0);
    assert.match(invalid.stderr, /spec\.from: Invalid value: 0: spec\.from in body should have at least 1 items/);
    assert.match(
      await ok('delete', '-f', path),
      /^referencegrant\.gateway\.networking\.k8s\.io "routes-from-team-a" deleted$/m,
    );
  });

  test('kubectl delete -f removes what the file defines', async () => {
    const deleted = await ok('delete', '-f', join(files, 'gateway.yaml'));
    assert.match(deleted, /^gwbackend\.gw\.dev "openai" deleted$/m);
    assert.match(deleted, /^gatewayclass\.gateway\.networking\.k8s\.io "gw" deleted$/m);
    const left = await kubectl('get', 'gwbackend', 'openai');
    assert.match(left.stderr, /Error from server \(NotFound\): gwbackends\.gw\.dev "openai" not found/);
  });
});
