import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ObjectStore } from '../../src/apiserver/object-store.ts';
import { RevisionCompactedError } from '../../src/apiserver/revision-log.ts';

const directory = mkdtempSync(join(tmpdir(), 'gw-object-store-'));
after(() => rmSync(directory, { recursive: true, force: true }));
let databases = 0;
const freshPath = () => join(directory, `db-${++databases}.sqlite`);

function configMap(name: string, data: Record<string, string> = {}) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, data };
}

function put(store: ObjectStore, name: string, data: Record<string, string> = {}) {
  return store.commit([{ kind: '/ConfigMap', key: `default/${name}`, object: configMap(name, data) }])[0]!;
}

describe('object store', () => {
  test('numbers every change with one counter, sets resourceVersion, and keeps it across restarts', () => {
    const path = freshPath();
    const store = new ObjectStore(path);
    assert.equal(store.revision, 0);
    const added = put(store, 'a');
    assert.equal(added.type, 'ADDED');
    assert.equal(added.object.metadata.resourceVersion, '1');
    const modified = put(store, 'a', { k: 'v' });
    assert.equal(modified.type, 'MODIFIED');
    assert.equal(modified.previous?.metadata.resourceVersion, '1');
    store.commit([{ kind: '/Secret', key: 'default/s', object: { ...configMap('s'), kind: 'Secret' } }]);
    const deleted = store.commit([{ kind: '/ConfigMap', key: 'default/a', object: undefined }])[0]!;
    assert.equal(deleted.type, 'DELETED');
    assert.equal(deleted.object.metadata.resourceVersion, '4');
    assert.deepEqual(deleted.object.data, { k: 'v' });
    assert.equal(store.get('/ConfigMap', 'default/a'), undefined);
    store.close();

    const reopened = new ObjectStore(path);
    assert.equal(reopened.revision, 4);
    assert.deepEqual(
      reopened.list('/Secret').map((entry) => entry.object.metadata.resourceVersion),
      ['3'],
    );
    assert.deepEqual(reopened.list('/ConfigMap'), []);
    assert.equal(put(reopened, 'b').revision, 5, 'the counter continues after a restart');
    reopened.close();
  });

  test('stored objects are frozen and lists are in namespace/name order', () => {
    const store = new ObjectStore(':memory:');
    for (const name of ['c', 'a', 'b']) put(store, name);
    const list = store.list('/ConfigMap');
    assert.deepEqual(
      list.map((entry) => entry.object.metadata.name),
      ['a', 'b', 'c'],
    );
    assert.throws(() => {
      (list[0]!.object.metadata as { name: string }).name = 'x';
    }, TypeError);
    assert.equal(list[0]!.text, JSON.stringify(list[0]!.object));
    store.close();
  });

  test('a commit of several writes is one transaction with consecutive revisions', () => {
    const store = new ObjectStore(':memory:');
    const events = store.commit([
      { kind: '/ConfigMap', key: 'default/a', object: configMap('a') },
      { kind: '/ConfigMap', key: 'default/a', object: configMap('a', { second: 'write' }) },
      { kind: '/ConfigMap', key: 'default/b', object: configMap('b') },
    ]);
    assert.deepEqual(
      events.map((event) => [event.type, event.revision]),
      [
        ['ADDED', 1],
        ['MODIFIED', 2],
        ['ADDED', 3],
      ],
    );
    store.close();
  });

  test('a watch replays the changes after a revision, then follows live ones without a gap', () => {
    const store = new ObjectStore(':memory:');
    put(store, 'a');
    put(store, 'b');
    put(store, 'a', { v: '2' });
    const seen: string[] = [];
    const stop = store.watch('/ConfigMap', 1, (event) => seen.push(`${event.type} ${event.key} ${event.revision}`));
    put(store, 'c');
    store.commit([{ kind: '/Secret', key: 'default/s', object: { ...configMap('s'), kind: 'Secret' } }]);
    stop();
    put(store, 'd');
    assert.deepEqual(seen, ['ADDED default/b 2', 'MODIFIED default/a 3', 'ADDED default/c 4']);
    store.close();
  });

  test('history is bounded: older revisions are compacted and refused with kube-apiserver wording', () => {
    const path = freshPath();
    const store = new ObjectStore(path, { historyLimit: 20 });
    for (let i = 0; i < 60; i++) put(store, `cm-${i % 5}`, { i: String(i) });
    assert.ok(store.oldestRevision > 0, 'something was compacted');
    assert.ok(store.revision - store.oldestRevision <= 22, 'at most the limit and one batch are kept');
    assert.throws(
      () => store.watch(undefined, 1, () => {}),
      (error: Error) =>
        error instanceof RevisionCompactedError &&
        error.message === `too old resource version: 1 (${store.oldestRevision})`,
    );
    const fromOldest: number[] = [];
    store.watch(undefined, store.oldestRevision, (event) => fromOldest.push(event.revision))();
    assert.equal(fromOldest[0], store.oldestRevision + 1);
    assert.equal(fromOldest.at(-1), 60);
    const oldest = store.oldestRevision;
    store.close();
    const reopened = new ObjectStore(path, { historyLimit: 20 });
    assert.equal(reopened.oldestRevision, oldest, 'compaction survives a restart');
    reopened.close();
  });

  test('lists as of a past revision undo the changes since', () => {
    const store = new ObjectStore(':memory:');
    put(store, 'a', { v: '1' }); // 1
    put(store, 'b', { v: '1' }); // 2
    const at2 = store.revision;
    put(store, 'a', { v: '2' }); // 3
    store.commit([{ kind: '/ConfigMap', key: 'default/b', object: undefined }]); // 4
    put(store, 'c', { v: '1' }); // 5
    const past = store.listAt('/ConfigMap', at2);
    assert.deepEqual(
      past.map((entry) => [entry.object.metadata.name, entry.object.data, entry.object.metadata.resourceVersion]),
      [
        ['a', { v: '1' }, '1'],
        ['b', { v: '1' }, '2'],
      ],
    );
    assert.deepEqual(
      store.listAt('/ConfigMap', store.revision).map((entry) => entry.object.metadata.name),
      ['a', 'c'],
    );
    store.close();
  });

  test('killed with SIGKILL while writing, it loses nothing it acknowledged, and watches resume', async () => {
    const path = freshPath();
    const writer = new URL('./fixtures/crash-writer.ts', import.meta.url).pathname;
    const acknowledged: { name: string; revision: number }[] = [];
    for (let round = 0; round < 4; round++) {
      const child = spawn(process.execPath, [writer, path], { stdio: ['ignore', 'pipe', 'inherit'] });
      let buffer = '';
      let roundAcks = 0;
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        child.once('exit', (_code, signal) => resolve(signal)),
      );
      await new Promise<void>((resolve) => {
        child.stdout!.on('data', (chunk: Buffer) => {
          buffer += chunk.toString();
          const lines = buffer.split('\n');
          buffer = lines.pop()!;
          for (const line of lines) {
            const [name, revision] = line.split(' ');
            if (name === 'ready') continue;
            acknowledged.push({ name: name!, revision: Number(revision) });
            // Killed after a different number of writes each round, mid-stream.
            if (++roundAcks === 150 + round * 97) {
              child.kill('SIGKILL');
              resolve();
            }
          }
        });
      });
      assert.equal(await exited, 'SIGKILL');
      // Lines printed after the kill signal was sent were acknowledged too.
      for (const line of buffer.split('\n')) {
        const [name, revision] = line.split(' ');
        if (name && revision && name !== 'ready') acknowledged.push({ name, revision: Number(revision) });
      }

      const store = new ObjectStore(path, { historyLimit: 50 });
      const last = acknowledged.at(-1)!;
      assert.ok(store.revision >= last.revision, `revision ${store.revision} < acknowledged ${last.revision}`);
      for (const { name } of acknowledged) {
        const entry = store.get('/ConfigMap', `default/${name}`);
        assert.ok(entry, `acknowledged ${name} is lost after round ${round}`);
        const [, start, index] = name.split('-').map(Number) as [number, number, number];
        if (index > 0 && index % 3 === 0) {
          const earlier = store.get('/ConfigMap', `default/cm-${start}-${index - 1}`)!;
          assert.equal((earlier.object.data as Record<string, string>).touched, String(index));
        }
      }
      // A watch from a recent acknowledged revision resumes with every later change, in order.
      const from = acknowledged.at(-10)!.revision;
      const replayed: number[] = [];
      store.watch('/ConfigMap', from, (event) => replayed.push(event.revision))();
      assert.equal(replayed[0], from + 1);
      assert.equal(replayed.at(-1), store.revision);
      assert.deepEqual(
        replayed,
        replayed.map((_, i) => from + 1 + i),
      );
      store.close();
    }
  });
});
