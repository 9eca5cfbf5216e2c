import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject } from '../../src/api/validate/admission.ts';
import { ApiStore, type WriteOptions } from '../../src/apiserver/api-store.ts';
import { ApiError } from '../../src/apiserver/errors.ts';
import { resourceOfKind } from '../../src/apiserver/resources.ts';

const BACKENDS = resourceOfKind('gw.dev/GwBackend')!;
const MODELS = resourceOfKind('gw.dev/GwModel')!;
const CONFIG_MAPS = resourceOfKind('/ConfigMap')!;
const SECRETS = resourceOfKind('/Secret')!;
const SERVICES = resourceOfKind('/Service')!;
const NAMESPACES = resourceOfKind('/Namespace')!;
const GATEWAYS = resourceOfKind('gateway.networking.k8s.io/Gateway')!;

const AS = (manager: string, extra: Partial<WriteOptions> = {}): WriteOptions => ({ fieldManager: manager, ...extra });

function backend(name: string, model = 'gpt-4o', extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'gw.dev/v1alpha1',
    kind: 'GwBackend',
    metadata: { name, ...extra },
    spec: { ai: { provider: { alpha: { model } } } },
  };
}

function apiError(code: number, reason: string, message?: string | RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof ApiError, String(error));
    assert.equal(error.code, code, error.message);
    assert.equal(error.reason, reason);
    if (typeof message === 'string') assert.equal(error.message, message);
    else if (message) assert.match(error.message, message);
    return true;
  };
}

function newStore() {
  let tick = 0;
  return new ApiStore(':memory:', { now: () => `2026-01-01T00:00:${String(tick++ % 60).padStart(2, '0')}Z` });
}

function managers(object: KubeObject) {
  return (object.metadata.managedFields ?? []).map((entry) => {
    const { manager, operation, subresource } = entry as Record<string, unknown>;
    return subresource ? `${manager}/${operation}/${subresource}` : `${manager}/${operation}`;
  });
}

describe('API store: create and read', () => {
  test('starts with the default, kube-system and kube-public namespaces, labelled with their names', () => {
    const store = newStore();
    const names = store.list('/Namespace').items.map((ns) => ns.metadata.name);
    assert.deepEqual(names, ['default', 'kube-public', 'kube-system']);
    const ns = store.get(NAMESPACES, undefined, 'default').object;
    assert.deepEqual(ns.metadata.labels, { 'kubernetes.io/metadata.name': 'default' });
    assert.deepEqual(ns.status, { phase: 'Active' });
  });

  test('create sets uid, creationTimestamp, generation 1 and resourceVersion, applies defaults, drops status', () => {
    const store = newStore();
    const before = store.revision;
    const { object, created, warnings } = store.create(
      MODELS,
      'default',
      {
        apiVersion: 'gw.dev/v1alpha1',
        kind: 'GwModel',
        metadata: { name: 'gpt' },
        spec: {
          parentRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'models' }],
          match: { model: 'gpt-*' },
          provider: 'Alpha',
        },
        status: { parents: [] },
      },
      AS('kubectl-create'),
    );
    assert.equal(created, true);
    assert.deepEqual(warnings, []);
    assert.match(object.metadata.uid!, /^[0-9a-f-]{36}$/);
    assert.match(object.metadata.creationTimestamp!, /^2026-01-01T/);
    assert.equal(object.metadata.generation, 1);
    assert.equal(object.metadata.resourceVersion, String(before + 1));
    assert.equal(object.metadata.namespace, 'default');
    assert.equal((object.spec as { visibility: string }).visibility, 'Public', 'structural default');
    assert.equal(object.status, undefined, 'status is a subresource');
    assert.deepEqual(managers(object), ['kubectl-create/Update']);
  });

  test('the kind is inferred from the endpoint; a different one, or another namespace, is refused', () => {
    const store = newStore();
    const { object } = store.create(CONFIG_MAPS, 'default', { metadata: { name: 'a' }, data: { k: 'v' } }, AS('t'));
    assert.equal(object.kind, 'ConfigMap');
    assert.equal(object.apiVersion, 'v1');
    assert.throws(
      () =>
        store.create(CONFIG_MAPS, 'default', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'b' } }, AS('t')),
      apiError(400, 'BadRequest', 'the kind in the data (Secret) does not match the expected kind (ConfigMap)'),
    );
    assert.throws(
      () => store.create(CONFIG_MAPS, 'default', { metadata: { name: 'b', namespace: 'other' } }, AS('t')),
      apiError(400, 'BadRequest', /namespace of the provided object does not match/),
    );
  });

  test('AlreadyExists, a missing namespace, and generateName', () => {
    const store = newStore();
    store.create(BACKENDS, 'default', backend('a'), AS('t'));
    assert.throws(
      () => store.create(BACKENDS, 'default', backend('a'), AS('t')),
      apiError(409, 'AlreadyExists', 'gwbackends.gw.dev "a" already exists'),
    );
    assert.throws(
      () => store.create(BACKENDS, 'nowhere', backend('a'), AS('t')),
      apiError(404, 'NotFound', 'namespaces "nowhere" not found'),
    );
    const generated = store.create(CONFIG_MAPS, 'default', { metadata: { generateName: 'cm-' } }, AS('t')).object;
    assert.match(generated.metadata.name!, /^cm-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  test('invalid objects get 422 Invalid with one cause per field, in kube-apiserver form', () => {
    const store = newStore();
    assert.throws(
      () =>
        store.create(
          BACKENDS,
          'default',
          { ...backend('Bad_Name'), spec: { policies: { tcp: { keepalive: { retries: 65 } } } } },
          AS('t'),
        ),
      (error: unknown) => {
        assert.ok(error instanceof ApiError);
        assert.equal(error.code, 422);
        assert.equal(error.reason, 'Invalid');
        assert.match(error.message, /^GwBackend\.gw\.dev "Bad_Name" is invalid: \[/);
        const causes = error.details!.causes!;
        const retries = causes.find((cause) => cause.field === 'spec.policies.tcp.keepalive.retries');
        assert.deepEqual(retries, {
          reason: 'FieldValueInvalid',
          message: 'Invalid value: 65: spec.policies.tcp.keepalive.retries in body should be less than or equal to 64',
          field: 'spec.policies.tcp.keepalive.retries',
        });
        assert.ok(causes.some((cause) => cause.field === 'metadata.name' && cause.reason === 'FieldValueInvalid'));
        assert.deepEqual(
          { name: error.details!.name, group: error.details!.group, kind: error.details!.kind },
          { name: 'Bad_Name', group: 'gw.dev', kind: 'GwBackend' },
        );
        return true;
      },
    );
  });

  test('unknown fields of gw.dev kinds follow fieldValidation; Gateway API kinds keep them with a warning', () => {
    const store = newStore();
    const withExtra = { ...backend('x'), spec: { ai: { provider: { alpha: {} } }, color: 'blue' } };
    assert.throws(
      () => store.create(BACKENDS, 'default', withExtra, AS('t', { fieldValidation: 'Strict' })),
      apiError(
        400,
        'BadRequest',
        'GwBackend in version "v1alpha1" cannot be handled as a GwBackend: strict decoding error: unknown field "spec.color"',
      ),
    );
    const warned = store.create(BACKENDS, 'default', withExtra, AS('t', { fieldValidation: 'Warn' }));
    assert.deepEqual(warned.warnings, ['unknown field "spec.color"']);
    assert.equal((warned.object.spec as Record<string, unknown>).color, undefined, 'pruned');
    const ignored = store.create(
      BACKENDS,
      'default',
      { ...withExtra, metadata: { name: 'y' } },
      AS('t', { fieldValidation: 'Ignore' }),
    );
    assert.deepEqual(ignored.warnings, []);

    const gateway = store.create(
      GATEWAYS,
      'default',
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: { name: 'g' },
        spec: { gatewayClassName: 'gw', listeners: [{ name: 'h', protocol: 'HTTP', port: 80 }], frobnicate: {} },
      },
      AS('t', { fieldValidation: 'Strict' }),
    );
    assert.deepEqual(gateway.warnings, ['unknown field "spec.frobnicate"']);
    assert.deepEqual((gateway.object.spec as Record<string, unknown>).frobnicate, {}, 'kept');
  });

  test('a misspelt field is named with the declared field it resembles, in warnings and strict errors', () => {
    const store = newStore();
    const misspelt = {
      ...backend('x'),
      spec: { ai: { provider: { alpha: { modle: 'gpt-4o' } } } },
    };
    const warned = store.create(BACKENDS, 'default', misspelt, AS('t', { fieldValidation: 'Warn' }));
    assert.deepEqual(warned.warnings, ['unknown field "spec.ai.provider.alpha.modle" (did you mean "model"?)']);
    assert.throws(
      () =>
        store.create(
          BACKENDS,
          'default',
          { ...misspelt, metadata: { name: 'y' } },
          AS('t', { fieldValidation: 'Strict' }),
        ),
      apiError(
        400,
        'BadRequest',
        'GwBackend in version "v1alpha1" cannot be handled as a GwBackend: strict decoding error: unknown field "spec.ai.provider.alpha.modle" (did you mean "model"?)',
      ),
    );
    const gateway = store.create(
      GATEWAYS,
      'default',
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        metadata: { name: 'g' },
        spec: { gatewayClassName: 'gw', listeners: [{ name: 'h', protocol: 'HTTP', port: 80, hostnme: 'a.example' }] },
      },
      AS('t', { fieldValidation: 'Warn' }),
    );
    assert.deepEqual(gateway.warnings, ['unknown field "spec.listeners[0].hostnme" (did you mean "hostname"?)']);
  });

  test("a Secret's stringData is merged into data, base64-encoded", () => {
    const store = newStore();
    const { object } = store.create(
      SECRETS,
      'default',
      { metadata: { name: 's' }, data: { a: Buffer.from('1').toString('base64') }, stringData: { b: 'two' } },
      AS('t'),
    );
    assert.deepEqual(object.data, { a: 'MQ==', b: 'dHdv' });
    assert.equal(object.stringData, undefined);
  });
});

describe('API store: updates', () => {
  test('optimistic concurrency: a stale resourceVersion is 409 Conflict; custom resources need one', () => {
    const store = newStore();
    const created = store.create(BACKENDS, 'default', backend('a'), AS('t')).object;
    const stale = { ...backend('a', 'gpt-4.1'), metadata: { name: 'a', resourceVersion: '1' } };
    assert.throws(
      () => store.update(BACKENDS, 'default', 'a', stale, AS('t')),
      apiError(
        409,
        'Conflict',
        'Operation cannot be fulfilled on gwbackends.gw.dev "a": the object has been modified; please apply your changes to the latest version and try again',
      ),
    );
    assert.throws(
      () => store.update(BACKENDS, 'default', 'a', backend('a', 'gpt-4.1'), AS('t')),
      apiError(422, 'Invalid', /metadata\.resourceVersion: Invalid value: 0x0: must be specified for an update/),
    );
    const fresh = {
      ...backend('a', 'gpt-4.1'),
      metadata: { name: 'a', resourceVersion: created.metadata.resourceVersion },
    };
    const updated = store.update(BACKENDS, 'default', 'a', fresh, AS('t')).object;
    assert.equal(updated.metadata.generation, 2);
    // Core kinds allow an unconditional update, as in Kubernetes.
    store.create(CONFIG_MAPS, 'default', { metadata: { name: 'c' } }, AS('t'));
    store.update(CONFIG_MAPS, 'default', 'c', { metadata: { name: 'c' }, data: { k: 'v' } }, AS('t'));
  });

  test('generation grows on spec changes only; uid and creationTimestamp are kept; equal writes write nothing', () => {
    const store = newStore();
    const created = store.create(BACKENDS, 'default', backend('a'), AS('t')).object;
    const relabelled = store.patch(
      BACKENDS,
      'default',
      'a',
      'merge',
      '{"metadata":{"labels":{"team":"x"}}}',
      AS('t'),
    ).object;
    assert.equal(relabelled.metadata.generation, 1);
    assert.equal(relabelled.metadata.uid, created.metadata.uid);
    assert.equal(relabelled.metadata.creationTimestamp, created.metadata.creationTimestamp);
    const respecced = store.patch(
      BACKENDS,
      'default',
      'a',
      'merge',
      '{"spec":{"ai":{"provider":{"alpha":{"model":"o3"}}}}}',
      AS('t'),
    ).object;
    assert.equal(respecced.metadata.generation, 2);
    const revision = store.revision;
    const same = store.patch(BACKENDS, 'default', 'a', 'merge', '{"metadata":{"labels":{"team":"x"}}}', AS('t'));
    assert.equal(store.revision, revision, 'nothing written');
    assert.equal(same.object.metadata.resourceVersion, respecced.metadata.resourceVersion);
  });

  test('spec writes keep status; status writes change only status and do not bump generation', () => {
    const store = newStore();
    store.create(BACKENDS, 'default', backend('a'), AS('t'));
    const condition = {
      type: 'Accepted',
      status: 'True',
      reason: 'Accepted',
      message: 'ok',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    };
    const withStatus = store.patch(
      BACKENDS,
      'default',
      'a',
      'merge',
      JSON.stringify({
        spec: { ai: { provider: { alpha: { model: 'ignored' } } } },
        status: { conditions: [condition] },
      }),
      AS('ctl', { subresource: 'status' }),
    ).object;
    assert.deepEqual(withStatus.status, { conditions: [condition] });
    assert.equal(
      (withStatus.spec as { ai: { provider: { alpha: { model: string } } } }).ai.provider.alpha.model,
      'gpt-4o',
    );
    assert.equal(withStatus.metadata.generation, 1);
    assert.ok(managers(withStatus).includes('ctl/Update/status'));

    const spec = store.patch(
      BACKENDS,
      'default',
      'a',
      'merge',
      JSON.stringify({ spec: { ai: { provider: { alpha: { model: 'o3' } } } }, status: null }),
      AS('t'),
    ).object;
    assert.deepEqual(spec.status, { conditions: [condition] }, 'a spec write cannot clear status');
    assert.equal(spec.metadata.generation, 2);
  });

  test('the Store interface: writeStatus writes only a changed status and emits MODIFIED', () => {
    const store = newStore();
    store.create(BACKENDS, 'default', backend('a'), AS('t'));
    const events: string[] = [];
    const stop = store.watch(undefined, String(store.revision), (event) =>
      events.push(`${event.type} ${event.object.metadata.name}`),
    );
    const status = {
      conditions: [
        {
          type: 'Accepted',
          status: 'True',
          reason: 'Accepted',
          message: '',
          lastTransitionTime: '2026-01-01T00:00:00Z',
        },
      ],
    };
    assert.equal(store.writeStatus('gw.dev/GwBackend', 'default/a', status), true);
    assert.equal(store.writeStatus('gw.dev/GwBackend', 'default/a', structuredClone(status)), false);
    assert.equal(store.writeStatus('gw.dev/GwBackend', 'default/missing', status), false);
    stop();
    assert.deepEqual(events, ['MODIFIED a']);
    const object = store.list('gw.dev/GwBackend').items[0]!;
    assert.deepEqual(object.status, status);
    assert.ok(managers(object).includes('gw-controller/Update/status'));
  });
});

describe('API store: patches', () => {
  test('JSON patch applies whole or not at all; a failed test is 422', () => {
    const store = newStore();
    store.create(CONFIG_MAPS, 'default', { metadata: { name: 'c' }, data: { a: '1', b: '2' } }, AS('t'));
    const patched = store.patch(
      CONFIG_MAPS,
      'default',
      'c',
      'json',
      JSON.stringify([
        { op: 'test', path: '/data/a', value: '1' },
        { op: 'remove', path: '/data/b' },
        { op: 'add', path: '/data/c', value: '3' },
        { op: 'add', path: '/metadata/annotations', value: {} },
        { op: 'add', path: '/metadata/annotations/example.com~1note', value: 'x' },
        { op: 'copy', from: '/data/a', path: '/data/e' },
      ]),
      AS('t'),
    ).object;
    assert.deepEqual(patched.data, { a: '1', c: '3', e: '1' });
    assert.deepEqual(patched.metadata.annotations, { 'example.com/note': 'x' });
    assert.throws(
      () =>
        store.patch(
          CONFIG_MAPS,
          'default',
          'c',
          'json',
          JSON.stringify([
            { op: 'remove', path: '/data/a' },
            { op: 'test', path: '/data/e', value: 'nope' },
          ]),
          AS('t'),
        ),
      apiError(422, 'Invalid', /testing value \/data\/e failed/),
    );
    assert.deepEqual(store.get(CONFIG_MAPS, 'default', 'c').object.data, { a: '1', c: '3', e: '1' });
    assert.throws(
      () => store.patch(CONFIG_MAPS, 'default', 'c', 'json', '{"op":1}', AS('t')),
      apiError(400, 'BadRequest'),
    );
  });

  test('strategic merge patch merges Service ports by port and honours $patch and $setElementOrder', () => {
    const store = newStore();
    store.create(
      SERVICES,
      'default',
      {
        metadata: { name: 'svc' },
        spec: {
          ports: [
            { port: 80, targetPort: 8080, name: 'http' },
            { port: 443, name: 'https' },
          ],
        },
      },
      AS('t'),
    );
    const patched = store.patch(
      SERVICES,
      'default',
      'svc',
      'strategic',
      JSON.stringify({
        spec: {
          $setElementOrder: undefined,
          '$setElementOrder/ports': [{ port: 9000 }, { port: 80 }],
          ports: [
            { port: 80, targetPort: 8081 },
            { port: 443, $patch: 'delete' },
            { port: 9000, name: 'admin' },
          ],
        },
      }),
      AS('t'),
    ).object;
    const ports = (patched.spec as { ports: Record<string, unknown>[] }).ports;
    assert.deepEqual(
      ports.map((port) => [port.port, port.targetPort, port.name]),
      [
        [9000, undefined, 'admin'],
        [80, 8081, 'http'],
      ],
    );
    assert.throws(
      () => store.patch(BACKENDS, 'default', 'x', 'strategic', '{}', AS('t')),
      apiError(415, 'UnsupportedMediaType', /application\/merge-patch\+json/),
    );
  });
});

describe('API store: server-side apply', () => {
  const applied = (model: string, labels: Record<string, string> = {}) =>
    JSON.stringify({ ...backend('a', model), metadata: { name: 'a', labels } });

  test('apply creates, records an Apply entry, and a second apply removes what it no longer sets', () => {
    const store = newStore();
    const first = store.patch(BACKENDS, 'default', 'a', 'apply', applied('gpt-4o', { team: 'x', tier: 'a' }), AS('me'));
    assert.equal(first.created, true);
    assert.deepEqual(managers(first.object), ['me/Apply']);
    const fields = (first.object.metadata.managedFields![0] as { fieldsV1: Record<string, unknown> }).fieldsV1;
    assert.deepEqual(fields['f:metadata'], { 'f:labels': { 'f:team': {}, 'f:tier': {} } });
    const second = store.patch(BACKENDS, 'default', 'a', 'apply', applied('gpt-4o', { team: 'x' }), AS('me')).object;
    assert.deepEqual(second.metadata.labels, { team: 'x' });
  });

  test("changing another manager's value is a conflict, with kube-apiserver's message, unless forced", () => {
    const store = newStore();
    store.patch(BACKENDS, 'default', 'a', 'apply', applied('gpt-4o'), AS('alice'));
    // The same value is shared, not a conflict.
    const shared = store.patch(BACKENDS, 'default', 'a', 'apply', applied('gpt-4o'), AS('bob')).object;
    assert.deepEqual(managers(shared).sort(), ['alice/Apply', 'bob/Apply']);
    assert.throws(
      () => store.patch(BACKENDS, 'default', 'a', 'apply', applied('o3'), AS('carol')),
      (error: unknown) => {
        assert.ok(error instanceof ApiError);
        assert.equal(error.code, 409);
        assert.equal(error.reason, 'Conflict');
        assert.equal(
          error.message,
          'Apply failed with 2 conflicts: conflicts with "alice":\n- .spec.ai.provider.alpha.model\nconflicts with "bob":\n- .spec.ai.provider.alpha.model',
        );
        return true;
      },
    );
    const forced = store.patch(BACKENDS, 'default', 'a', 'apply', applied('o3'), {
      fieldManager: 'carol',
      force: true,
    }).object;
    assert.equal((forced.spec as { ai: { provider: { alpha: { model: string } } } }).ai.provider.alpha.model, 'o3');
  });

  test('an update takes the fields it changes; then applying them again conflicts with the updater', () => {
    const store = newStore();
    store.patch(BACKENDS, 'default', 'a', 'apply', applied('gpt-4o'), AS('kubectl'));
    store.patch(
      BACKENDS,
      'default',
      'a',
      'merge',
      '{"spec":{"ai":{"provider":{"alpha":{"model":"edited"}}}}}',
      AS('kubectl-edit'),
    );
    assert.throws(
      () => store.patch(BACKENDS, 'default', 'a', 'apply', applied('gpt-4o'), AS('kubectl')),
      apiError(
        409,
        'Conflict',
        'Apply failed with 1 conflict: conflict with "kubectl-edit" using gw.dev/v1alpha1: .spec.ai.provider.alpha.model',
      ),
    );
  });
});

describe('API store: deletion', () => {
  test('finalizers hold an object with a deletionTimestamp until the last one is removed', () => {
    const store = newStore();
    store.create(CONFIG_MAPS, 'default', { metadata: { name: 'c', finalizers: ['example.com/hold'] } }, AS('t'));
    const pending = store.delete(CONFIG_MAPS, 'default', 'c');
    assert.equal(pending.removed, false);
    assert.ok(pending.object.metadata.deletionTimestamp);
    assert.equal(pending.object.metadata.generation, 2);
    assert.throws(
      () =>
        store.patch(
          CONFIG_MAPS,
          'default',
          'c',
          'merge',
          '{"metadata":{"finalizers":["a","example.com/hold"]}}',
          AS('t'),
        ),
      apiError(422, 'Invalid', /no new finalizers can be added if the object is being deleted/),
    );
    const events: string[] = [];
    const stop = store.watch('/ConfigMap', String(store.revision), (event) => events.push(event.type));
    store.patch(CONFIG_MAPS, 'default', 'c', 'merge', '{"metadata":{"finalizers":null}}', AS('t'));
    stop();
    assert.deepEqual(events, ['MODIFIED', 'DELETED']);
    assert.throws(() => store.get(CONFIG_MAPS, 'default', 'c'), apiError(404, 'NotFound', 'configmaps "c" not found'));
  });

  test('preconditions on uid and resourceVersion', () => {
    const store = newStore();
    store.create(CONFIG_MAPS, 'default', { metadata: { name: 'c' } }, AS('t'));
    assert.throws(
      () => store.delete(CONFIG_MAPS, 'default', 'c', { preconditions: { uid: 'other' } }),
      apiError(409, 'Conflict', /Precondition failed: UID in precondition: other/),
    );
    assert.equal(
      store.delete(CONFIG_MAPS, 'default', 'c', { preconditions: { resourceVersion: String(store.revision) } }).removed,
      true,
    );
  });

  test('deleting a namespace deletes its contents; new content is refused while it terminates', () => {
    const store = newStore();
    store.create(NAMESPACES, undefined, { metadata: { name: 'team' } }, AS('t'));
    store.create(BACKENDS, 'team', backend('a'), AS('t'));
    store.create(CONFIG_MAPS, 'team', { metadata: { name: 'held', finalizers: ['x/y'] } }, AS('t'));
    store.create(CONFIG_MAPS, 'default', { metadata: { name: 'elsewhere' } }, AS('t'));
    const result = store.delete(NAMESPACES, undefined, 'team');
    assert.equal(result.removed, false);
    assert.deepEqual(result.object.status, { phase: 'Terminating' });
    assert.deepEqual(store.list('gw.dev/GwBackend').items, []);
    assert.throws(
      () => store.create(CONFIG_MAPS, 'team', { metadata: { name: 'new' } }, AS('t')),
      apiError(403, 'Forbidden', /because it is being terminated/),
    );
    store.patch(CONFIG_MAPS, 'team', 'held', 'merge', '{"metadata":{"finalizers":[]}}', AS('t'));
    assert.throws(() => store.get(NAMESPACES, undefined, 'team'), apiError(404, 'NotFound'));
    assert.ok(store.get(CONFIG_MAPS, 'default', 'elsewhere'));
  });

  test('writes survive a restart of the database file', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const directory = mkdtempSync(join(tmpdir(), 'gw-api-store-'));
    try {
      const path = join(directory, 'state.db');
      const first = new ApiStore(path);
      const created = first.create(BACKENDS, 'default', backend('a'), AS('t')).object;
      await first.close();
      const second = new ApiStore(path);
      assert.deepEqual(second.get(BACKENDS, 'default', 'a').object, created);
      assert.equal(second.list('/Namespace').items.length, 3, 'initial namespaces are not created twice');
      await second.close();
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});
