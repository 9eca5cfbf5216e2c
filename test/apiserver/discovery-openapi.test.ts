import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import { startTestApiServer, type TestApiServer } from './helpers.ts';

let api: TestApiServer;
let directory: string;
before(async () => {
  api = await startTestApiServer();
  directory = api.dataDir;
});
after(async () => {
  await api.close();
  rmSync(directory, { recursive: true, force: true });
});

const AGGREGATED =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

describe('discovery', () => {
  test('legacy /api, /apis, /apis/<group> and resource lists', async () => {
    const core = (await api.request('GET', '/api')).json;
    assert.equal(core.kind, 'APIVersions');
    assert.deepEqual(core.versions, ['v1']);
    const groups = (await api.request('GET', '/apis')).json;
    assert.equal(groups.kind, 'APIGroupList');
    assert.deepEqual(
      groups.groups.map((group: { name: string }) => group.name),
      [
        'apps',
        'autoscaling',
        'discovery.k8s.io',
        'gateway.networking.k8s.io',
        'gw.dev',
        'inference.networking.k8s.io',
        'policy',
        'rbac.authorization.k8s.io',
      ],
    );
    const gw = (await api.request('GET', '/apis/gw.dev')).json;
    assert.deepEqual(gw.preferredVersion, { groupVersion: 'gw.dev/v1alpha1', version: 'v1alpha1' });
    const resources = (await api.request('GET', '/apis/gw.dev/v1alpha1')).json;
    assert.equal(resources.groupVersion, 'gw.dev/v1alpha1');
    const backends = resources.resources.find((resource: { name: string }) => resource.name === 'gwbackends');
    assert.deepEqual(
      { ...backends, verbs: undefined },
      {
        name: 'gwbackends',
        singularName: 'gwbackend',
        namespaced: true,
        kind: 'GwBackend',
        verbs: undefined,
        shortNames: ['gwbe'],
        categories: ['gw'],
      },
    );
    assert.ok(resources.resources.some((resource: { name: string }) => resource.name === 'gwbackends/status'));
    const v1 = (await api.request('GET', '/api/v1')).json;
    const namespaces = v1.resources.find((resource: { name: string }) => resource.name === 'namespaces');
    assert.equal(namespaces.namespaced, false);
    assert.deepEqual(namespaces.shortNames, ['ns']);
    assert.equal((await api.request('GET', '/apis/example.com/v1')).status, 404);
  });

  test('aggregated discovery v2 for /api and /apis, with its content type', async () => {
    const reply = await api.request('GET', '/apis', { accept: AGGREGATED });
    assert.equal(reply.headers['content-type'], 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList');
    assert.equal(reply.json.kind, 'APIGroupDiscoveryList');
    assert.equal(reply.json.apiVersion, 'apidiscovery.k8s.io/v2');
    const gateway = reply.json.items.find(
      (item: { metadata: { name: string } }) => item.metadata.name === 'gateway.networking.k8s.io',
    );
    const routes = gateway.versions[0].resources.find(
      (resource: { resource: string }) => resource.resource === 'httproutes',
    );
    assert.deepEqual(routes.responseKind, { group: 'gateway.networking.k8s.io', version: 'v1', kind: 'HTTPRoute' });
    assert.equal(routes.scope, 'Namespaced');
    assert.deepEqual(routes.subresources, [
      { subresource: 'status', responseKind: routes.responseKind, verbs: ['get', 'patch', 'update'] },
    ]);
    const classes = gateway.versions[0].resources.find(
      (resource: { resource: string }) => resource.resource === 'gatewayclasses',
    );
    assert.equal(classes.scope, 'Cluster');
    const core = await api.request('GET', '/api', { accept: AGGREGATED });
    assert.equal(core.json.items.length, 1);
    assert.deepEqual(
      core.json.items[0].versions[0].resources.map((resource: { resource: string }) => resource.resource).sort(),
      ['configmaps', 'namespaces', 'pods', 'secrets', 'serviceaccounts', 'services'],
    );
    const beta = await api.request('GET', '/apis', {
      accept: 'application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList',
    });
    assert.equal(beta.json.apiVersion, 'apidiscovery.k8s.io/v2beta1');
  });

  test('a group served in two versions: both listed, the GA one preferred, ReferenceGrant in each', async () => {
    const group = (await api.request('GET', '/apis/gateway.networking.k8s.io')).json;
    assert.deepEqual(group.versions, [
      { groupVersion: 'gateway.networking.k8s.io/v1', version: 'v1' },
      { groupVersion: 'gateway.networking.k8s.io/v1beta1', version: 'v1beta1' },
    ]);
    assert.deepEqual(group.preferredVersion, { groupVersion: 'gateway.networking.k8s.io/v1', version: 'v1' });
    const listed = (await api.request('GET', '/apis')).json.groups.find(
      (entry: { name: string }) => entry.name === 'gateway.networking.k8s.io',
    );
    assert.deepEqual(listed, { name: group.name, versions: group.versions, preferredVersion: group.preferredVersion });
    const beta = (await api.request('GET', '/apis/gateway.networking.k8s.io/v1beta1')).json;
    assert.deepEqual(beta.resources, [
      {
        name: 'referencegrants',
        singularName: 'referencegrant',
        namespaced: true,
        kind: 'ReferenceGrant',
        verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
        shortNames: ['refgrant'],
        categories: ['gateway-api'],
      },
    ]);
    const v1 = (await api.request('GET', '/apis/gateway.networking.k8s.io/v1')).json;
    assert.ok(v1.resources.some((resource: { name: string }) => resource.name === 'referencegrants'));
    const aggregated = (await api.request('GET', '/apis', { accept: AGGREGATED })).json.items.find(
      (item: { metadata: { name: string } }) => item.metadata.name === 'gateway.networking.k8s.io',
    );
    assert.deepEqual(
      aggregated.versions.map((version: { version: string; resources: { resource: string }[] }) => [
        version.version,
        version.resources.some((resource) => resource.resource === 'referencegrants'),
      ]),
      [
        ['v1', true],
        ['v1beta1', true],
      ],
    );
  });

  test('/version', async () => {
    const version = (await api.request('GET', '/version')).json;
    assert.equal(version.major, '1');
    assert.match(version.gitVersion, /^v1\.\d+\.\d+\+gw\./);
  });
});

describe('OpenAPI v3', () => {
  test('the root lists one document per group-version, each served at its hash and marked immutable', async () => {
    const root = (await api.request('GET', '/openapi/v3')).json;
    assert.deepEqual(Object.keys(root.paths).sort(), [
      'api/v1',
      'apis/apps/v1',
      'apis/autoscaling/v2',
      'apis/discovery.k8s.io/v1',
      'apis/gateway.networking.k8s.io/v1',
      'apis/gateway.networking.k8s.io/v1beta1',
      'apis/gw.dev/v1alpha1',
      'apis/inference.networking.k8s.io/v1',
      'apis/policy/v1',
      'apis/rbac.authorization.k8s.io/v1',
    ]);
    const url = root.paths['apis/gw.dev/v1alpha1'].serverRelativeURL;
    assert.match(url, /^\/openapi\/v3\/apis\/gw\.dev\/v1alpha1\?hash=[0-9A-F]{128}$/);
    const pinned = await api.request('GET', url);
    assert.equal(pinned.headers['cache-control'], 'public, immutable');
    const document = pinned.json;
    assert.equal(document.openapi, '3.0.0');
    const backend = document.components.schemas['dev.gw.v1alpha1.GwBackend'];
    assert.deepEqual(backend['x-kubernetes-group-version-kind'], [
      { group: 'gw.dev', version: 'v1alpha1', kind: 'GwBackend' },
    ]);
    // Named types are published once under components and referenced where they are used.
    const spec = backend.properties.spec;
    assert.equal(spec.allOf.length, 1);
    const specSchema = document.components.schemas[spec.allOf[0].$ref.replace('#/components/schemas/', '')];
    assert.ok(specSchema.properties.ai, 'the CRD schema');
    assert.ok(document.text === undefined && pinned.text.length < 400_000, `${pinned.text.length} bytes`);
    for (const reference of pinned.text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)) {
      assert.ok(document.components.schemas[reference[1]!], `${reference[1]} is defined`);
    }
    assert.deepEqual(backend.properties.metadata.allOf, [
      { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' },
    ]);
  });

  test('every PATCH declares fieldValidation (kubectl leaves validation to the server) and its patch types', async () => {
    for (const path of ['apis/gw.dev/v1alpha1', 'apis/gateway.networking.k8s.io/v1', 'api/v1']) {
      const document = (await api.request('GET', `/openapi/v3/${path}`)).json;
      const patches = Object.values(document.paths)
        .map((item) => (item as { patch?: Record<string, unknown> }).patch)
        .filter((patch) => patch !== undefined);
      assert.ok(patches.length >= 4, path);
      for (const patch of patches) {
        const parameters = patch.parameters as { name: string; in: string }[];
        assert.ok(parameters.some((parameter) => parameter.name === 'fieldValidation' && parameter.in === 'query'));
        assert.ok(patch['x-kubernetes-group-version-kind']);
        const content = Object.keys((patch.requestBody as { content: object }).content);
        assert.equal(content.includes('application/strategic-merge-patch+json'), path === 'api/v1', path);
      }
    }
    const core = (await api.request('GET', '/openapi/v3/api/v1')).json;
    const ports = core.components.schemas['io.k8s.api.core.v1.Service'].properties.spec.properties.ports;
    assert.equal(ports['x-kubernetes-patch-merge-key'], 'port');
    assert.equal((await api.request('GET', '/openapi/v3/apis/example.com/v1')).status, 404);
  });
});

describe('TLS, token and kubeconfig', () => {
  test('the kubeconfig names the server, trusts the generated CA and carries the token; secrets are 0600', () => {
    const kubeconfig = parse(readFileSync(join(api.dataDir, 'kubeconfig'), 'utf8'));
    assert.equal(kubeconfig['current-context'], 'gw');
    const cluster = kubeconfig.clusters[0].cluster;
    assert.equal(cluster.server, `https://127.0.0.1:${api.port}`);
    assert.equal(Buffer.from(cluster['certificate-authority-data'], 'base64').toString(), api.ca);
    assert.equal(kubeconfig.users[0].user.token, api.token);
    for (const file of ['kubeconfig', 'token', 'ca.key', 'apiserver.key']) {
      assert.equal(statSync(join(api.dataDir, file)).mode & 0o777, 0o600, file);
    }
    assert.equal(statSync(api.dataDir).mode & 0o777, 0o700);
    const ca = new X509Certificate(api.ca);
    assert.ok(ca.ca);
    const serving = new X509Certificate(readFileSync(join(api.dataDir, 'apiserver.crt')));
    assert.ok(serving.verify(ca.publicKey));
    assert.equal(serving.checkHost('localhost'), 'localhost');
    assert.equal(serving.checkIP('127.0.0.1'), '127.0.0.1');
  });

  test('a restart reuses the CA, the certificate, the token and the objects', async () => {
    await api.request('POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name: 'kept' } } });
    const before = { ca: api.ca, token: api.token, cert: readFileSync(join(api.dataDir, 'apiserver.crt'), 'utf8') };
    const dataDir = api.dataDir;
    await api.embedded.close();
    const restarted = await startTestApiServer({ dataDir });
    try {
      assert.equal(restarted.ca, before.ca);
      assert.equal(restarted.token, before.token);
      assert.equal(readFileSync(join(dataDir, 'apiserver.crt'), 'utf8'), before.cert);
      assert.equal((await restarted.request('GET', '/api/v1/namespaces/default/configmaps/kept')).status, 200);
    } finally {
      await restarted.close();
    }
    api = await startTestApiServer({ dataDir });
  });
});
