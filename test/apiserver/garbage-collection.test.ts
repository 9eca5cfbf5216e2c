// Garbage collection by ownerReferences in the embedded API server: deleting an owner deletes its
// dependents as DeleteOptions.propagationPolicy says (Background by default, Foreground, Orphan),
// a dependent with another owner left keeps living, and kubectl's --cascade drives it.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { ApiStore } from '../../src/apiserver/api-store.ts';
import { resourceOfKind } from '../../src/apiserver/resources.ts';
import { type ApiClient, startTestApiServer, type TestApiServer } from './helpers.ts';
import { type KubectlSession, kubectlSkip, startKubectlSession } from './kubectl-session.ts';

const GATEWAYS = '/apis/gateway.networking.k8s.io/v1/namespaces/default/gateways';
const DEPLOYMENTS = '/apis/apps/v1/namespaces/default/deployments';
const SERVICE_ACCOUNTS = '/api/v1/namespaces/default/serviceaccounts';
const CONFIG_MAPS = '/api/v1/namespaces/default/configmaps';

interface Owner {
  kind: string;
  apiVersion: string;
  name: string;
  uid: string;
  blockOwnerDeletion?: boolean;
}

async function create(api: ApiClient, path: string, body: Record<string, unknown>): Promise<Owner> {
  const reply = await api.request('POST', path, { body });
  assert.equal(reply.status, 201, reply.text);
  const object = reply.json;
  return { kind: object.kind, apiVersion: object.apiVersion, name: object.metadata.name, uid: object.metadata.uid };
}

function gateway(name: string) {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: { name },
    spec: { gatewayClassName: 'gw', listeners: [{ name: 'http', protocol: 'HTTP', port: 8080 }] },
  };
}

function deployment(name: string, owners: Owner[], extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, ownerReferences: owners, ...extra },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'gw', image: 'gw' }] } },
    },
  };
}

function owned(kind: 'ServiceAccount' | 'ConfigMap', name: string, owners: Owner[], extra = {}) {
  return { apiVersion: 'v1', kind, metadata: { name, ownerReferences: owners, ...extra } };
}

async function exists(api: ApiClient, path: string): Promise<boolean> {
  const reply = await api.request('GET', path);
  assert.ok(reply.status === 200 || reply.status === 404, reply.text);
  return reply.status === 200;
}

function remove(api: ApiClient, path: string, propagationPolicy?: string) {
  const body = { kind: 'DeleteOptions', apiVersion: 'v1', ...(propagationPolicy && { propagationPolicy }) };
  return api.request('DELETE', path, { body });
}

describe('garbage collection by ownerReferences', () => {
  let api: TestApiServer;
  before(async () => {
    api = await startTestApiServer();
  });
  after(async () => {
    await api?.close();
  });
  beforeEach(async () => {
    for (const path of [GATEWAYS, DEPLOYMENTS, SERVICE_ACCOUNTS, CONFIG_MAPS]) {
      await api.request('DELETE', path);
    }
  });

  test('Background (the default): the owner goes, then its dependents and theirs', async () => {
    const owner = await create(api, GATEWAYS, gateway('ai'));
    const workload = await create(api, DEPLOYMENTS, deployment('ai', [owner]));
    await create(api, SERVICE_ACCOUNTS, owned('ServiceAccount', 'ai', [owner]));
    await create(api, CONFIG_MAPS, owned('ConfigMap', 'ai-config', [workload]));
    const unrelated = await create(api, CONFIG_MAPS, owned('ConfigMap', 'other', []));
    const reply = await remove(api, `${GATEWAYS}/ai`);
    assert.equal(reply.status, 200);
    assert.equal(reply.json.kind, 'Status');
    assert.equal(await exists(api, `${GATEWAYS}/ai`), false);
    assert.equal(await exists(api, `${DEPLOYMENTS}/ai`), false);
    assert.equal(await exists(api, `${SERVICE_ACCOUNTS}/ai`), false);
    assert.equal(await exists(api, `${CONFIG_MAPS}/ai-config`), false, 'a dependent of a dependent goes too');
    assert.equal(await exists(api, `${CONFIG_MAPS}/${unrelated.name}`), true);
  });

  test('a dependent with another owner left stays, without the reference to the owner that went', async () => {
    const first = await create(api, GATEWAYS, gateway('first'));
    const second = await create(api, GATEWAYS, gateway('second'));
    await create(api, CONFIG_MAPS, owned('ConfigMap', 'shared', [first, second]));
    await remove(api, `${GATEWAYS}/first`);
    const shared = (await api.request('GET', `${CONFIG_MAPS}/shared`)).json;
    assert.deepEqual(
      shared.metadata.ownerReferences.map((reference: Owner) => reference.name),
      ['second'],
    );
    await remove(api, `${GATEWAYS}/second`, 'Background');
    assert.equal(await exists(api, `${CONFIG_MAPS}/shared`), false, 'gone with its last owner');
  });

  test('Orphan: the owner goes, its dependents stay and lose the reference to it', async () => {
    const owner = await create(api, GATEWAYS, gateway('ai'));
    const other = await create(api, GATEWAYS, gateway('other'));
    await create(api, DEPLOYMENTS, deployment('ai', [owner, other]));
    await create(api, SERVICE_ACCOUNTS, owned('ServiceAccount', 'ai', [owner]));
    const reply = await remove(api, `${GATEWAYS}/ai`, 'Orphan');
    assert.equal(reply.status, 200);
    assert.equal(await exists(api, `${GATEWAYS}/ai`), false);
    const account = (await api.request('GET', `${SERVICE_ACCOUNTS}/ai`)).json;
    assert.equal(account.metadata.ownerReferences, undefined);
    const workload = (await api.request('GET', `${DEPLOYMENTS}/ai`)).json;
    assert.deepEqual(
      workload.metadata.ownerReferences.map((reference: Owner) => reference.name),
      ['other'],
    );
  });

  test('Foreground: the owner waits (foregroundDeletion) until no dependent with blockOwnerDeletion is left', async () => {
    const owner = await create(api, GATEWAYS, gateway('ai'));
    const blocking = { ...owner, blockOwnerDeletion: true };
    // A dependent held by a finalizer of its own, which a controller would remove.
    await create(api, DEPLOYMENTS, deployment('ai', [blocking], { finalizers: ['example.com/cleanup'] }));
    await create(api, SERVICE_ACCOUNTS, owned('ServiceAccount', 'ai', [owner]));
    const reply = await remove(api, `${GATEWAYS}/ai`, 'Foreground');
    assert.equal(reply.status, 200);
    assert.equal(reply.json.kind, 'Gateway', 'the owner is returned as it now is: marked, not gone');
    assert.deepEqual(reply.json.metadata.finalizers, ['foregroundDeletion']);
    assert.ok(reply.json.metadata.deletionTimestamp);
    assert.equal(await exists(api, `${SERVICE_ACCOUNTS}/ai`), false, 'a dependent without finalizers goes at once');
    const held = (await api.request('GET', `${DEPLOYMENTS}/ai`)).json;
    assert.ok(held.metadata.deletionTimestamp, 'the held dependent is being deleted');
    assert.equal(await exists(api, `${GATEWAYS}/ai`), true, 'the owner waits for the blocking dependent');
    // The dependent's finalizer is done: it goes, and the owner with it.
    const patched = await api.request('PATCH', `${DEPLOYMENTS}/ai`, {
      body: { metadata: { finalizers: null } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(patched.status, 200, patched.text);
    assert.equal(await exists(api, `${DEPLOYMENTS}/ai`), false);
    assert.equal(await exists(api, `${GATEWAYS}/ai`), false);
  });

  test('Foreground without blocking dependents, and a cycle of owners, complete at once', async () => {
    const owner = await create(api, GATEWAYS, gateway('ai'));
    await create(api, SERVICE_ACCOUNTS, owned('ServiceAccount', 'ai', [owner]));
    assert.equal((await remove(api, `${GATEWAYS}/ai`, 'Foreground')).json.kind, 'Status');
    assert.equal(await exists(api, `${SERVICE_ACCOUNTS}/ai`), false);
    // a owns b, b owns a, both blocking.
    const a = await create(api, CONFIG_MAPS, owned('ConfigMap', 'a', []));
    const b = await create(api, CONFIG_MAPS, owned('ConfigMap', 'b', [{ ...a, blockOwnerDeletion: true }]));
    const patched = await api.request('PATCH', `${CONFIG_MAPS}/a`, {
      body: { metadata: { ownerReferences: [{ ...b, blockOwnerDeletion: true }] } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(patched.status, 200, patched.text);
    await remove(api, `${CONFIG_MAPS}/a`, 'Foreground');
    assert.equal(await exists(api, `${CONFIG_MAPS}/a`), false);
    assert.equal(await exists(api, `${CONFIG_MAPS}/b`), false);
  });

  test('a dependent with finalizers is marked, not removed, and its own dependents go when it does', async () => {
    const owner = await create(api, GATEWAYS, gateway('ai'));
    const workload = await create(api, DEPLOYMENTS, deployment('ai', [owner], { finalizers: ['example.com/x'] }));
    await create(api, CONFIG_MAPS, owned('ConfigMap', 'ai-config', [workload]));
    await remove(api, `${GATEWAYS}/ai`);
    assert.equal(await exists(api, `${GATEWAYS}/ai`), false);
    assert.ok((await api.request('GET', `${DEPLOYMENTS}/ai`)).json.metadata.deletionTimestamp);
    assert.equal(await exists(api, `${CONFIG_MAPS}/ai-config`), true, 'its owner is not gone yet');
    await api.request('PATCH', `${DEPLOYMENTS}/ai`, {
      body: { metadata: { finalizers: null } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(await exists(api, `${DEPLOYMENTS}/ai`), false);
    assert.equal(await exists(api, `${CONFIG_MAPS}/ai-config`), false);
  });

  test('an owner of thousands of objects takes them with it in one pass (not one commit and scan each)', async () => {
    // A store of its own: thousands of synchronous writes would stall the server's connections.
    const store = new ApiStore(':memory:');
    const gateways = resourceOfKind('gateway.networking.k8s.io/Gateway')!;
    const configMaps = resourceOfKind('/ConfigMap')!;
    const owner = store.create(gateways, 'default', gateway('many'), { fieldManager: 'test' }).object;
    const reference = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      name: 'many',
      uid: owner.metadata.uid,
    };
    for (let i = 0; i < 2000; i++) {
      const body = owned('ConfigMap', `many-${i}`, [reference as Owner]);
      store.create(configMaps, 'default', body, { fieldManager: 'test' });
    }
    const started = performance.now();
    store.delete(gateways, 'default', 'many');
    const elapsed = performance.now() - started;
    assert.equal(store.list('/ConfigMap').items.filter((item) => item.metadata.name?.startsWith('many-')).length, 0);
    // One commit for the lot takes ~0.1 s; a commit and a scan of the store per dependent is quadratic.
    assert.ok(elapsed < 3000, `${elapsed} ms`);
    await store.close();
  });

  test('ownerReferences are checked as kube-apiserver checks them: the fields the collector needs, one controller', async () => {
    const owner = await create(api, GATEWAYS, gateway('ai'));
    const twoControllers = await api.request('POST', CONFIG_MAPS, {
      body: owned('ConfigMap', 'x', [
        { ...owner, controller: true } as Owner,
        { ...owner, uid: 'other', controller: true } as Owner,
      ]),
    });
    assert.equal(twoControllers.status, 422);
    assert.match(
      twoControllers.json.message,
      /metadata\.ownerReferences: Invalid value: .*Only one reference can have Controller set to true/,
    );
    const noUid = await api.request('POST', CONFIG_MAPS, {
      body: owned('ConfigMap', 'x', [{ kind: 'Gateway', apiVersion: owner.apiVersion, name: 'ai' } as Owner]),
    });
    assert.equal(noUid.status, 422);
    assert.match(noUid.json.message, /metadata\.ownerReferences\[0\]\.uid: Required value/);
  });

  test('a dry-run delete collects nothing; an unknown policy is refused', async () => {
    const owner = await create(api, GATEWAYS, gateway('ai'));
    await create(api, SERVICE_ACCOUNTS, owned('ServiceAccount', 'ai', [owner]));
    const dry = await api.request('DELETE', `${GATEWAYS}/ai?dryRun=All`);
    assert.equal(dry.status, 200);
    assert.equal(await exists(api, `${SERVICE_ACCOUNTS}/ai`), true);
    const bad = await remove(api, `${GATEWAYS}/ai`, 'Sometimes');
    assert.equal(bad.status, 400);
    assert.match(
      bad.json.message,
      /propagationPolicy: Unsupported value: "Sometimes": supported values: "Background", "Foreground", "Orphan"/,
    );
    const both = await api.request('DELETE', `${GATEWAYS}/ai`, {
      body: { propagationPolicy: 'Orphan', orphanDependents: true },
    });
    assert.equal(both.status, 400);
    assert.equal(await exists(api, `${GATEWAYS}/ai`), true);
    // The deprecated orphanDependents still works.
    await api.request('DELETE', `${GATEWAYS}/ai`, { body: { orphanDependents: true } });
    assert.equal(await exists(api, `${SERVICE_ACCOUNTS}/ai`), true);
  });
});

describe('kubectl delete --cascade', { skip: kubectlSkip }, () => {
  let kubectl: KubectlSession;
  before(async () => {
    kubectl = await startKubectlSession();
  });
  after(async () => {
    await kubectl?.close();
  });

  test('kubectl delete gateway removes what was made for it (background, foreground), --cascade=orphan keeps it', async () => {
    for (const cascade of ['background', 'foreground', 'orphan']) {
      const owner = await create(kubectl.api, GATEWAYS, gateway('ai'));
      await create(kubectl.api, DEPLOYMENTS, deployment('ai', [{ ...owner, blockOwnerDeletion: true }]));
      await create(kubectl.api, SERVICE_ACCOUNTS, owned('ServiceAccount', 'ai', [owner]));
      assert.match(await kubectl.ok('get', 'deployments'), /^ai\s+0\/1\s/m);
      assert.match(
        await kubectl.ok('delete', 'gateway', 'ai', `--cascade=${cascade}`),
        /gateway\.gateway\.networking\.k8s\.io "ai" deleted/,
      );
      const left = (await kubectl.ok('get', 'deployments,serviceaccounts', '-o', 'name')).trim().split('\n');
      if (cascade === 'orphan') {
        assert.ok(left.includes('deployment.apps/ai') && left.includes('serviceaccount/ai'), left.join(' '));
        await kubectl.ok('delete', 'deployment/ai', 'serviceaccount/ai');
      } else assert.ok(!left.includes('deployment.apps/ai') && !left.includes('serviceaccount/ai'), left.join(' '));
      assert.equal((await kubectl.run('get', 'gateway', 'ai')).code, 1);
    }
  });
});
