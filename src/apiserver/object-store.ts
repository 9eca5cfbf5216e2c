// The API server's objects: the revision log on disk, and in memory the current objects (frozen,
// with their JSON text so that lists are served without re-encoding) and the live watchers. Every
// change is numbered by the log's one counter, which is the resourceVersion of the object and
// of the list; a watch replays the log from any retained revision and then follows live changes
// with no gap (everything here is synchronous). A list can be read as of a past revision by
// undoing the logged changes since, which is how paginated lists stay consistent.
import type { KubeObject } from '../api/validate/admission.ts';
import type { KindKey } from '../store/store.ts';
import { deepFreeze } from '../util/values.ts';
import { type Change, type ChangeType, RevisionLog, type RevisionLogOptions } from './revision-log.ts';

export interface StoredObject {
  readonly object: KubeObject;
  /** JSON.stringify(object). */
  readonly text: string;
}

export interface ObjectEvent {
  type: ChangeType;
  /** The object after the change (for DELETED: its last state, at the deletion's revision). */
  object: KubeObject;
  text: string;
  revision: number;
  kind: KindKey;
  key: string;
  /** The object before the change (MODIFIED, DELETED). */
  previous?: KubeObject;
}

/** One write of a commit: the new state of an object, or undefined to delete it. */
export interface ObjectWrite {
  kind: KindKey;
  key: string;
  object: KubeObject | undefined;
}

interface Watcher {
  kind: KindKey | undefined;
  handler: (event: ObjectEvent) => void;
}

function stored(object: KubeObject): StoredObject {
  return { object: deepFreeze(object), text: JSON.stringify(object) };
}

function parseStored(text: string): StoredObject {
  return { object: deepFreeze(JSON.parse(text) as KubeObject), text };
}

export class ObjectStore {
  private readonly log: RevisionLog;
  private readonly objects = new Map<KindKey, Map<string, StoredObject>>();
  /** Keys of each kind in order, rebuilt lazily after an object is added or removed. */
  private readonly sortedKeys = new Map<KindKey, string[]>();
  private readonly watchers = new Set<Watcher>();

  constructor(path: string, options: RevisionLogOptions = {}) {
    this.log = new RevisionLog(path, options);
    for (const row of this.log.objects()) this.byKind(row.kind).set(row.key, parseStored(row.body));
  }

  /** The revision of the last change: the store's resourceVersion. */
  get revision(): number {
    return this.log.revision;
  }

  get oldestRevision(): number {
    return this.log.oldestRevision;
  }

  get(kind: KindKey, key: string): StoredObject | undefined {
    return this.objects.get(kind)?.get(key);
  }

  /** The current objects of a kind, in key order (namespace, then name). */
  list(kind: KindKey): StoredObject[] {
    const byKey = this.objects.get(kind);
    if (!byKey) return [];
    let keys = this.sortedKeys.get(kind);
    if (!keys) {
      keys = [...byKey.keys()].sort();
      this.sortedKeys.set(kind, keys);
    }
    return keys.map((key) => byKey.get(key)!);
  }

  /** The objects of a kind as they were at `revision` (throws RevisionCompactedError when too old). */
  listAt(kind: KindKey, revision: number): StoredObject[] {
    if (revision >= this.revision) return this.list(kind);
    const state = new Map(this.objects.get(kind) ?? []);
    for (const change of this.log.changesToUndo(revision, kind)) {
      if (change.type === 'ADDED') state.delete(change.key);
      else if (change.previous !== undefined) state.set(change.key, parseStored(change.previous));
    }
    return [...state.keys()].sort().map((key) => state.get(key)!);
  }

  /**
   * Writes objects in one durable transaction; each gets the next revision as its
   * metadata.resourceVersion (the caller's objects are frozen and kept). Watchers hear of the
   * changes only once they are durable.
   */
  commit(writes: readonly ObjectWrite[]): ObjectEvent[] {
    const changes: Change[] = [];
    const events: ObjectEvent[] = [];
    // Within one commit a later write sees the earlier ones.
    const pending = new Map<string, StoredObject | undefined>();
    let revision = this.revision;
    for (const write of writes) {
      const id = `${write.kind} ${write.key}`;
      const existing = pending.has(id) ? pending.get(id) : this.get(write.kind, write.key);
      if (!write.object && !existing) continue;
      revision++;
      let next: StoredObject;
      let type: ChangeType;
      if (write.object) {
        write.object.metadata.resourceVersion = String(revision);
        next = stored(write.object);
        type = existing ? 'MODIFIED' : 'ADDED';
      } else {
        const last = structuredClone(existing!.object) as KubeObject;
        last.metadata.resourceVersion = String(revision);
        next = stored(last);
        type = 'DELETED';
      }
      pending.set(id, write.object ? next : undefined);
      changes.push({
        revision,
        kind: write.kind,
        key: write.key,
        type,
        body: next.text,
        previous: existing?.text,
      });
      events.push({
        type,
        object: next.object,
        text: next.text,
        revision,
        kind: write.kind,
        key: write.key,
        previous: existing?.object,
      });
    }
    this.log.append(changes);
    for (const event of events) {
      const byKey = this.byKind(event.kind);
      if (event.type === 'DELETED') {
        byKey.delete(event.key);
        this.sortedKeys.delete(event.kind);
      } else {
        if (!byKey.has(event.key)) this.sortedKeys.delete(event.kind);
        byKey.set(event.key, { object: event.object, text: event.text });
      }
    }
    for (const event of events) this.emit(event);
    return events;
  }

  /**
   * Calls `handler` for every change after `fromRevision` (of one kind, or all), then for every
   * new change until the returned function is called. Throws RevisionCompactedError when the
   * changes since `fromRevision` are no longer all retained.
   */
  watch(kind: KindKey | undefined, fromRevision: number, handler: (event: ObjectEvent) => void): () => void {
    if (fromRevision < this.revision) {
      for (const change of this.log.changesSince(fromRevision, kind)) {
        const object = JSON.parse(change.body) as KubeObject;
        handler({
          type: change.type,
          object: deepFreeze(object),
          text: change.body,
          revision: change.revision,
          kind: change.kind,
          key: change.key,
          previous: change.previous === undefined ? undefined : deepFreeze(JSON.parse(change.previous) as KubeObject),
        });
      }
    } else {
      this.log.checkRetained(fromRevision);
    }
    const watcher: Watcher = { kind, handler };
    this.watchers.add(watcher);
    return () => {
      this.watchers.delete(watcher);
    };
  }

  close(): void {
    this.watchers.clear();
    this.log.close();
  }

  private byKind(kind: KindKey): Map<string, StoredObject> {
    let byKey = this.objects.get(kind);
    if (!byKey) {
      byKey = new Map();
      this.objects.set(kind, byKey);
    }
    return byKey;
  }

  private emit(event: ObjectEvent): void {
    for (const watcher of [...this.watchers]) {
      if (watcher.kind !== undefined && watcher.kind !== event.kind) continue;
      // A watcher that has stopped meanwhile (an earlier handler stopped it) hears nothing more.
      if (this.watchers.has(watcher)) watcher.handler(event);
    }
  }
}
