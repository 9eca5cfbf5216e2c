import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../src/api/validate/admission.ts';
import { MemoryStore, ResourceVersionTooOldError } from '../../src/store/memory-store.ts';
import type { WatchEvent } from '../../src/store/store.ts';

const BACKEND = 'gw.dev/GwBackend';

function backend(name: string, model = 'gpt-4o', labels?: Record<string, string>): KubeObject {
  return {
    apiVersion: 'gw.dev/v1alpha1',
    kind: 'GwBackend',
    metadata: { name, namespace: 'default', ...(labels ? { labels } : {}) },
    spec: { ai: { provider: { alpha: { model } } } },
  };
}

describe('MemoryStore', () => {
  it('sets uid, creationTimestamp, generation and resourceVersion on create', () => {
    const store = new MemoryStore();
    const event = store.apply(backend('a'))!;
    assert.equal(event.type, 'ADDED');
    assert.equal(event.object.metadata.generation, 1);
    assert.equal(event.object.metadata.resourceVersion, '1');
    assert.match(event.object.metadata.uid!, /^[0-9a-f-]{36}$/);
    assert.match(event.object.metadata.creationTimestamp!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('bumps generation on spec changes only, and ignores unchanged applies', () => {
    const store = new MemoryStore();
    store.apply(backend('a'));
    assert.equal(store.apply(backend('a')), undefined, 'an identical apply is not a change');
    const relabelled = store.apply(backend('a', 'gpt-4o', { team: 'x' }))!;
    assert.equal(relabelled.type, 'MODIFIED');
    assert.equal(relabelled.object.metadata.generation, 1);
    const respecced = store.apply(backend('a', 'gpt-4o-mini', { team: 'x' }))!;
    assert.equal(respecced.object.metadata.generation, 2);
    assert.equal(respecced.object.metadata.uid, relabelled.object.metadata.uid);
  });

  it('writes status apart from spec, and not when unchanged', () => {
    const store = new MemoryStore();
    store.apply(backend('a'));
    const status = { conditions: [{ type: 'Accepted', status: 'True' }] };
    assert.equal(store.writeStatus(BACKEND, 'default/a', status), true);
    assert.equal(store.writeStatus(BACKEND, 'default/a', structuredClone(status)), false);
    assert.deepEqual(store.get(BACKEND, 'default/a')!.status, status);
    store.apply({ ...backend('a', 'gpt-4o-mini'), status: { conditions: [] } });
    assert.deepEqual(store.get(BACKEND, 'default/a')!.status, status, 'a spec write keeps the status');
    assert.equal(store.writeStatus(BACKEND, 'default/missing', status), false);
  });

  it('watches from a resource version, replaying what came after it', () => {
    const store = new MemoryStore();
    store.apply(backend('a'));
    const listed = store.list(BACKEND);
    store.apply(backend('b'));
    const seen: WatchEvent[] = [];
    const stop = store.watch(BACKEND, listed.resourceVersion, (event) => seen.push(event));
    store.delete(BACKEND, 'default/a');
    store.apply({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'default' } });
    stop();
    store.apply(backend('c'));
    assert.deepEqual(
      seen.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.metadata.resourceVersion}`),
      ['ADDED b 2', 'DELETED a 3'],
    );
  });

  it('refuses a watch from a resource version older than its history', () => {
    const store = new MemoryStore();
    for (let i = 0; i < 20_050; i++) store.apply(backend('a', `m${i}`));
    assert.throws(() => store.watch(undefined, '1', () => {}), ResourceVersionTooOldError);
    assert.doesNotThrow(() => store.watch(undefined, store.resourceVersion, () => {})());
  });

  it('hands out read-only objects, so callers cannot change what is stored', () => {
    const store = new MemoryStore();
    store.apply(backend('a'));
    const [item] = store.list(BACKEND).items;
    assert.throws(() => {
      item!.metadata.name = 'changed';
    }, TypeError);
    assert.equal(store.list(BACKEND).items[0]!.metadata.name, 'a');
  });
});
