import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BACKENDS_PATH, backend, CONFIG_MAPS_PATH, startTestApiServer, type TestApiServer } from './helpers.ts';

let api: TestApiServer;
before(async () => {
  api = await startTestApiServer();
});
after(() => api.close());

const TABLE =
  'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

describe('authentication', () => {
  test('requests without the token, or with another, get 401 Unauthorized as a Status', async () => {
    for (const token of [null, 'wrong-token']) {
      const reply = await api.request('GET', '/api/v1/namespaces', { token });
      assert.equal(reply.status, 401);
      assert.deepEqual(reply.json, {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Unauthorized',
        reason: 'Unauthorized',
        code: 401,
      });
    }
    const health = await api.request('GET', '/readyz', { token: null });
    assert.equal(health.status, 200, 'health checks need no token');
  });
});

describe('create, get, update, delete', () => {
  test('create answers 201 with the stored object; get returns it; a second create is 409 AlreadyExists', async () => {
    const created = await api.request('POST', BACKENDS_PATH, { body: backend('crud') });
    assert.equal(created.status, 201);
    assert.equal(created.json.metadata.generation, 1);
    assert.match(created.json.metadata.uid, /^[0-9a-f-]{36}$/);
    const got = await api.request('GET', `${BACKENDS_PATH}/crud`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.json, created.json);
    const again = await api.request('POST', BACKENDS_PATH, { body: backend('crud') });
    assert.equal(again.status, 409);
    assert.equal(again.json.reason, 'AlreadyExists');
    assert.deepEqual(again.json.details, { name: 'crud', group: 'gw.dev', kind: 'gwbackends' });
    const missing = await api.request('GET', `${BACKENDS_PATH}/nope`);
    assert.equal(missing.status, 404);
    assert.equal(missing.json.message, 'gwbackends.gw.dev "nope" not found');
  });

  test('update with a stale resourceVersion is 409 Conflict; with the current one it bumps generation', async () => {
    const created = (await api.request('POST', BACKENDS_PATH, { body: backend('upd') })).json;
    const first = structuredClone(created);
    first.spec.ai.provider.alpha.model = 'o3';
    const updated = await api.request('PUT', `${BACKENDS_PATH}/upd`, { body: first });
    assert.equal(updated.status, 200);
    assert.equal(updated.json.metadata.generation, 2);
    const stale = structuredClone(created);
    stale.spec.ai.provider.alpha.model = 'o4';
    const conflict = await api.request('PUT', `${BACKENDS_PATH}/upd`, { body: stale });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.json.reason, 'Conflict');
    assert.match(conflict.json.message, /the object has been modified/);
  });

  test('invalid objects are 422 with causes and field paths', async () => {
    const bad = backend('bad');
    (bad.spec as Record<string, unknown>).policies = { tcp: { keepalive: { retries: 65 } } };
    const reply = await api.request('POST', BACKENDS_PATH, { body: bad });
    assert.equal(reply.status, 422);
    assert.equal(reply.json.reason, 'Invalid');
    assert.deepEqual(reply.json.details.causes, [
      {
        reason: 'FieldValueInvalid',
        message: 'Invalid value: 65: spec.policies.tcp.keepalive.retries in body should be less than or equal to 64',
        field: 'spec.policies.tcp.keepalive.retries',
      },
    ]);
  });

  test('fieldValidation: Strict refuses unknown fields, Warn (the default) prunes them with a Warning header', async () => {
    const extra = backend('fv');
    (extra.spec as Record<string, unknown>).colour = 'blue';
    const strict = await api.request('POST', `${BACKENDS_PATH}?fieldValidation=Strict`, { body: extra });
    assert.equal(strict.status, 400);
    assert.equal(
      strict.json.message,
      'GwBackend in version "v1alpha1" cannot be handled as a GwBackend: strict decoding error: unknown field "spec.colour"',
    );
    const warned = await api.request('POST', BACKENDS_PATH, { body: extra });
    assert.equal(warned.status, 201);
    assert.equal(warned.headers.warning, '299 - "unknown field \\"spec.colour\\""');
    assert.equal(warned.json.spec.colour, undefined);
    const bogus = await api.request('POST', `${BACKENDS_PATH}?fieldValidation=Loose`, { body: backend('fv2') });
    assert.equal(bogus.status, 400);
  });

  test('dryRun=All validates and answers without storing', async () => {
    const reply = await api.request('POST', `${BACKENDS_PATH}?dryRun=All`, { body: backend('dry') });
    assert.equal(reply.status, 201);
    assert.equal((await api.request('GET', `${BACKENDS_PATH}/dry`)).status, 404);
  });

  test('delete answers a Success Status; with a finalizer it answers the object with a deletionTimestamp', async () => {
    await api.request('POST', CONFIG_MAPS_PATH, { body: { metadata: { name: 'gone' } } });
    const deleted = await api.request('DELETE', `${CONFIG_MAPS_PATH}/gone`, {
      body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' },
    });
    assert.equal(deleted.status, 200);
    assert.equal(deleted.json.kind, 'Status');
    assert.equal(deleted.json.status, 'Success');
    assert.equal(deleted.json.details.name, 'gone');
    assert.equal(deleted.json.details.kind, 'configmaps');

    await api.request('POST', CONFIG_MAPS_PATH, {
      body: { metadata: { name: 'held', finalizers: ['example.com/x'] } },
    });
    const pending = await api.request('DELETE', `${CONFIG_MAPS_PATH}/held`);
    assert.equal(pending.status, 200);
    assert.equal(pending.json.kind, 'ConfigMap');
    assert.ok(pending.json.metadata.deletionTimestamp);
    const released = await api.request('PATCH', `${CONFIG_MAPS_PATH}/held`, {
      body: { metadata: { finalizers: null } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(released.status, 200);
    assert.equal((await api.request('GET', `${CONFIG_MAPS_PATH}/held`)).status, 404);
  });

  test('unknown paths are 404 and unsupported methods 405, as Status objects', async () => {
    const unknown = await api.request('GET', '/apis/gw.dev/v1alpha1/namespaces/default/widgets');
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json.message, 'the server could not find the requested resource');
    const method = await api.request('POST', `${BACKENDS_PATH}/x`, { body: backend('x') });
    assert.equal(method.status, 405);
    assert.equal(method.json.reason, 'MethodNotAllowed');
  });
});

describe('patch', () => {
  test('merge patch, JSON patch and (for core kinds) strategic merge patch, each by Content-Type', async () => {
    await api.request('POST', CONFIG_MAPS_PATH, { body: { metadata: { name: 'p' }, data: { a: '1' } } });
    const merge = await api.request('PATCH', `${CONFIG_MAPS_PATH}/p`, {
      body: { data: { b: '2' } },
      contentType: 'application/merge-patch+json',
    });
    assert.deepEqual(merge.json.data, { a: '1', b: '2' });
    const json = await api.request('PATCH', `${CONFIG_MAPS_PATH}/p`, {
      body: [{ op: 'remove', path: '/data/a' }],
      contentType: 'application/json-patch+json',
    });
    assert.deepEqual(json.json.data, { b: '2' });
    const strategic = await api.request('PATCH', `${CONFIG_MAPS_PATH}/p`, {
      body: { metadata: { finalizers: ['x/y'] }, data: { c: '3' } },
      contentType: 'application/strategic-merge-patch+json',
    });
    assert.deepEqual(strategic.json.data, { b: '2', c: '3' });
    await api.request('PATCH', `${CONFIG_MAPS_PATH}/p`, {
      body: [{ op: 'remove', path: '/metadata/finalizers' }],
      contentType: 'application/json-patch+json',
    });

    await api.request('POST', BACKENDS_PATH, { body: backend('patched') });
    const refused = await api.request('PATCH', `${BACKENDS_PATH}/patched`, {
      body: {},
      contentType: 'application/strategic-merge-patch+json',
    });
    assert.equal(refused.status, 415);
    assert.equal(refused.json.reason, 'UnsupportedMediaType');
  });

  test('server-side apply creates (201), records the manager, and reports conflicts unless force=true', async () => {
    const config = JSON.stringify(backend('applied', 'gpt-4o'));
    const path = `${BACKENDS_PATH}/applied`;
    const noManager = await api.request('PATCH', path, { body: config, contentType: 'application/apply-patch+yaml' });
    assert.equal(noManager.status, 400);
    const created = await api.request('PATCH', `${path}?fieldManager=alice`, {
      body: config,
      contentType: 'application/apply-patch+yaml',
    });
    assert.equal(created.status, 201);
    assert.deepEqual(
      created.json.metadata.managedFields.map((entry: { manager: string; operation: string }) => [
        entry.manager,
        entry.operation,
      ]),
      [['alice', 'Apply']],
    );
    const yaml =
      'apiVersion: gw.dev/v1alpha1\nkind: GwBackend\nmetadata: {name: applied}\nspec: {ai: {provider: {alpha: {model: o3}}}}\n';
    const conflict = await api.request('PATCH', `${path}?fieldManager=bob`, {
      body: yaml,
      contentType: 'application/apply-patch+yaml',
    });
    assert.equal(conflict.status, 409);
    assert.equal(
      conflict.json.message,
      'Apply failed with 1 conflict: conflict with "alice": .spec.ai.provider.alpha.model',
    );
    assert.deepEqual(conflict.json.details.causes, [
      { reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.ai.provider.alpha.model' },
    ]);
    const forced = await api.request('PATCH', `${path}?fieldManager=bob&force=true`, {
      body: yaml,
      contentType: 'application/apply-patch+yaml',
    });
    assert.equal(forced.status, 200);
    assert.equal(forced.json.spec.ai.provider.alpha.model, 'o3');
  });
});

describe('status subresource', () => {
  test('PUT /status changes only status; a main update keeps it; generation does not move', async () => {
    const created = (await api.request('POST', BACKENDS_PATH, { body: backend('st') })).json;
    const status = {
      conditions: [
        {
          type: 'Accepted',
          status: 'True',
          reason: 'Accepted',
          message: 'ok',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    };
    const withStatus = await api.request('PUT', `${BACKENDS_PATH}/st/status`, {
      body: { ...created, spec: { ai: { provider: { alpha: { model: 'changed?' } } } }, status },
    });
    assert.equal(withStatus.status, 200);
    assert.deepEqual(withStatus.json.status, status);
    assert.equal(withStatus.json.spec.ai.provider.alpha.model, 'gpt-4o');
    assert.equal(withStatus.json.metadata.generation, 1);
    const badStatus = await api.request('PATCH', `${BACKENDS_PATH}/st/status`, {
      body: { status: { conditions: [{ type: 'Accepted' }] } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(badStatus.status, 422, 'status is validated against the status schema');
    const noStatus = await api.request('GET', `${CONFIG_MAPS_PATH}/p/status`);
    assert.equal(noStatus.status, 404, 'ConfigMaps have no status subresource');
  });
});

describe('list', () => {
  before(async () => {
    for (let i = 0; i < 7; i++) {
      await api.request('POST', CONFIG_MAPS_PATH, {
        body: { metadata: { name: `page-${i}`, labels: { page: 'yes', parity: i % 2 === 0 ? 'even' : 'odd' } } },
      });
    }
  });

  test('label selectors (=, !=, in, notin, exists, !) and field selectors on metadata.name', async () => {
    const names = async (query: string) =>
      (await api.request('GET', `${CONFIG_MAPS_PATH}?${query}`)).json.items.map(
        (item: { metadata: { name: string } }) => item.metadata.name,
      );
    assert.deepEqual(await names('labelSelector=page%3Dyes%2Cparity%3Deven'), ['page-0', 'page-2', 'page-4', 'page-6']);
    assert.deepEqual(await names('labelSelector=parity%20in%20(odd),page'), ['page-1', 'page-3', 'page-5']);
    assert.deepEqual((await names('labelSelector=parity%20notin%20(odd,even)')).includes('page-1'), false);
    assert.deepEqual(
      (await names('labelSelector=!parity')).some((name: string) => name.startsWith('page-')),
      false,
    );
    assert.deepEqual(await names('fieldSelector=metadata.name%3Dpage-3'), ['page-3']);
    const badLabel = await api.request('GET', `${CONFIG_MAPS_PATH}?labelSelector=a%20in%20b`);
    assert.equal(badLabel.status, 400);
    const badField = await api.request('GET', `${CONFIG_MAPS_PATH}?fieldSelector=spec.x%3D1`);
    assert.equal(badField.status, 400);
    assert.match(badField.json.message, /"spec\.x" is not a known field selector/);
  });

  test('limit/continue pages form one consistent list, as of the first page, even when objects change', async () => {
    const first = (await api.request('GET', `${CONFIG_MAPS_PATH}?labelSelector=page&limit=3`)).json;
    assert.equal(first.items.length, 3);
    assert.ok(first.metadata.continue);
    assert.equal(first.metadata.remainingItemCount, 4);
    // Changes after the first page do not show in the later ones.
    await api.request('DELETE', `${CONFIG_MAPS_PATH}/page-5`);
    await api.request('POST', CONFIG_MAPS_PATH, { body: { metadata: { name: 'page-9', labels: { page: 'yes' } } } });
    const seen = first.items.map((item: { metadata: { name: string } }) => item.metadata.name);
    let token = first.metadata.continue;
    while (token) {
      const page = (await api.request('GET', `${CONFIG_MAPS_PATH}?labelSelector=page&limit=3&continue=${token}`)).json;
      assert.equal(page.metadata.resourceVersion, first.metadata.resourceVersion);
      seen.push(...page.items.map((item: { metadata: { name: string } }) => item.metadata.name));
      token = page.metadata.continue;
    }
    assert.deepEqual(seen, ['page-0', 'page-1', 'page-2', 'page-3', 'page-4', 'page-5', 'page-6']);
    const fresh = (await api.request('GET', `${CONFIG_MAPS_PATH}?labelSelector=page`)).json;
    assert.deepEqual(
      fresh.items.map((item: { metadata: { name: string } }) => item.metadata.name),
      ['page-0', 'page-1', 'page-2', 'page-3', 'page-4', 'page-6', 'page-9'],
    );
    const badToken = await api.request('GET', `${CONFIG_MAPS_PATH}?continue=garbage`);
    assert.equal(badToken.status, 400);
  });

  test('lists across all namespaces, and a resourceVersion beyond the store is 504 Too large resource version', async () => {
    const all = (await api.request('GET', '/api/v1/configmaps')).json;
    assert.equal(all.kind, 'ConfigMapList');
    assert.ok(all.items.length >= 7);
    const future = await api.request('GET', `${CONFIG_MAPS_PATH}?resourceVersion=999999`);
    assert.equal(future.status, 504);
    assert.match(future.json.message, /^Too large resource version: 999999, current: \d+$/);
  });

  test('as=Table: the printer columns, ages, and the object as PartialObjectMetadata unless includeObject says', async () => {
    await api.request('POST', '/apis/gw.dev/v1alpha1/namespaces/default/gwmodels', {
      body: {
        apiVersion: 'gw.dev/v1alpha1',
        kind: 'GwModel',
        metadata: { name: 'claude' },
        spec: {
          parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'models' }],
          match: { model: 'claude-*' },
          provider: 'Gamma',
        },
      },
    });
    const table = (await api.request('GET', '/apis/gw.dev/v1alpha1/namespaces/default/gwmodels', { accept: TABLE }))
      .json;
    assert.equal(table.kind, 'Table');
    assert.equal(table.apiVersion, 'meta.k8s.io/v1');
    assert.deepEqual(
      table.columnDefinitions.map((column: { name: string }) => column.name),
      ['Name', 'Model Match', 'Visibility', 'Age'],
    );
    const [row] = table.rows;
    assert.deepEqual(row.cells.slice(0, 3), ['claude', 'claude-*', 'Public']);
    assert.match(row.cells[3], /^\d+s$/);
    assert.equal(row.object.kind, 'PartialObjectMetadata');
    const full = (
      await api.request('GET', '/apis/gw.dev/v1alpha1/namespaces/default/gwmodels/claude?includeObject=Object', {
        accept: TABLE,
      })
    ).json;
    assert.equal(full.rows[0].object.kind, 'GwModel');
    const secrets = (await api.request('GET', '/api/v1/namespaces/default/configmaps/page-0', { accept: TABLE })).json;
    assert.deepEqual(
      secrets.columnDefinitions.map((column: { name: string }) => column.name),
      ['Name', 'Data', 'Age'],
    );
    assert.equal(secrets.rows[0].cells[1], 0);
  });

  test('as=PartialObjectMetadataList, and 406 when nothing acceptable is asked for', async () => {
    const partial = (
      await api.request('GET', CONFIG_MAPS_PATH, {
        accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io',
      })
    ).json;
    assert.equal(partial.kind, 'PartialObjectMetadataList');
    assert.equal(partial.items[0].kind, 'PartialObjectMetadata');
    assert.equal(partial.items[0].data, undefined);
    const refused = await api.request('GET', CONFIG_MAPS_PATH, { accept: 'application/vnd.kubernetes.protobuf' });
    assert.equal(refused.status, 406);
  });
});

describe('a kind served in two versions (ReferenceGrant: v1beta1 stored, v1)', () => {
  const BETA = '/apis/gateway.networking.k8s.io/v1beta1/namespaces/default/referencegrants';
  const V1 = '/apis/gateway.networking.k8s.io/v1/namespaces/default/referencegrants';
  const grant = (name: string, apiVersion: string) => ({
    apiVersion,
    kind: 'ReferenceGrant',
    metadata: { name },
    spec: {
      from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'team-a' }],
      to: [{ group: '', kind: 'Service' }],
    },
  });

  test('an object written in one version is read in either, each answer in the version asked for', async () => {
    const created = await api.request('POST', V1, { body: grant('written-as-v1', 'gateway.networking.k8s.io/v1') });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.apiVersion, 'gateway.networking.k8s.io/v1');
    const asBeta = await api.request('GET', `${BETA}/written-as-v1`);
    assert.equal(asBeta.json.apiVersion, 'gateway.networking.k8s.io/v1beta1');
    assert.deepEqual({ ...asBeta.json, apiVersion: undefined }, { ...created.json, apiVersion: undefined });
    const stored = api.embedded.store.objects.get('gateway.networking.k8s.io/ReferenceGrant', 'default/written-as-v1');
    assert.equal(stored?.object.apiVersion, 'gateway.networking.k8s.io/v1beta1', 'stored in v1beta1');
    const list = (await api.request('GET', V1)).json;
    assert.equal(list.apiVersion, 'gateway.networking.k8s.io/v1');
    assert.deepEqual(
      list.items.map((item: { apiVersion: string }) => item.apiVersion),
      ['gateway.networking.k8s.io/v1'],
    );
    const mismatched = await api.request('POST', BETA, { body: grant('mismatched', 'gateway.networking.k8s.io/v1') });
    assert.equal(mismatched.status, 400);
  });

  test('update, merge patch and server-side apply through v1 of an object stored in v1beta1', async () => {
    await api.request('POST', BETA, { body: grant('patched', 'gateway.networking.k8s.io/v1beta1') });
    const current = (await api.request('GET', `${V1}/patched`)).json;
    current.spec.to = [{ group: '', kind: 'Secret' }];
    const updated = await api.request('PUT', `${V1}/patched`, { body: current });
    assert.equal(updated.status, 200, updated.text);
    assert.equal(updated.json.metadata.generation, 2);
    const patched = await api.request('PATCH', `${V1}/patched`, {
      body: { spec: { to: [{ group: '', kind: 'Service', name: 'app' }] } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.json.apiVersion, 'gateway.networking.k8s.io/v1');
    const applied = await api.request('PATCH', `${V1}/applied?fieldManager=kubectl`, {
      body: JSON.stringify(grant('applied', 'gateway.networking.k8s.io/v1')),
      contentType: 'application/apply-patch+yaml',
    });
    assert.equal(applied.status, 201, applied.text);
    assert.equal(applied.json.apiVersion, 'gateway.networking.k8s.io/v1');
    assert.equal(applied.json.metadata.managedFields[0].apiVersion, 'gateway.networking.k8s.io/v1');
    const again = await api.request('PATCH', `${BETA}/applied?fieldManager=kubectl`, {
      body: JSON.stringify(grant('applied', 'gateway.networking.k8s.io/v1beta1')),
      contentType: 'application/apply-patch+yaml',
    });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.json.metadata.generation, 1, 'the same configuration in the other version changes nothing');
  });

  test('a watch in v1 sees objects written in v1beta1 as v1', async () => {
    const watch = await api.stream(`${V1}?watch=1&resourceVersion=${api.embedded.store.revision}`);
    await api.request('POST', BETA, { body: grant('watched', 'gateway.networking.k8s.io/v1beta1') });
    const [event] = await watch.waitFor(1);
    watch.close();
    assert.equal(event.type, 'ADDED');
    assert.equal(event.object.apiVersion, 'gateway.networking.k8s.io/v1');
    assert.equal(event.object.metadata.name, 'watched');
  });
});
