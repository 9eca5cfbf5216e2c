// An in-memory store: the objects, a revision counter, a bounded history of changes so that a
// watch can start from a recent resource version, and status kept apart from spec. The file
// store builds on it; tests use it directly.
import { randomUUID } from 'node:crypto';
import type { KubeObject } from '../api/validate/admission.ts';
import { deepFreeze, rfc3339Now } from '../util/values.ts';
import {
  type KindKey,
  kindKey,
  type ListResult,
  objectKey,
  type SourceProblem,
  type Store,
  type WatchEvent,
} from './store.ts';

/** How many past changes a watch can replay from. Older resource versions get a "too old" error. */
const HISTORY_LIMIT = 10_000;

export class ResourceVersionTooOldError extends Error {
  constructor(resourceVersion: string, oldest: number) {
    super(
      `resource version ${resourceVersion} is too old; the oldest that can be watched from is ${oldest}: list again`,
    );
  }
}

interface Watcher {
  kind: KindKey | undefined;
  handler: (event: WatchEvent) => void;
}

/** Everything of an object but its server-set metadata and status: what a change is judged on. */
function content(object: KubeObject): string {
  const { metadata, status: _status, ...rest } = object;
  const {
    resourceVersion: _rv,
    uid: _uid,
    creationTimestamp: _ct,
    generation: _gen,
    managedFields: _mf,
    ...meta
  } = metadata;
  return JSON.stringify({ meta, rest });
}

/** The part whose change bumps metadata.generation (spec, or data for kinds without spec). */
function generationContent(object: KubeObject): string {
  const { metadata: _metadata, status: _status, ...rest } = object;
  return JSON.stringify(rest);
}

export class MemoryStore implements Store {
  private readonly objects = new Map<KindKey, Map<string, KubeObject>>();
  private readonly watchers = new Set<Watcher>();
  private readonly history: { revision: number; kind: KindKey; event: WatchEvent }[] = [];
  private revision = 0;

  get resourceVersion(): string {
    return String(this.revision);
  }

  /** Creates or updates an object (its status is kept: spec writes ignore status). */
  apply(input: KubeObject): WatchEvent | undefined {
    const kind = kindKey(input);
    const key = objectKey(input);
    let byKey = this.objects.get(kind);
    if (!byKey) {
      byKey = new Map();
      this.objects.set(kind, byKey);
    }
    const existing = byKey.get(key);
    if (existing && content(existing) === content(input)) return undefined;
    const object = structuredClone(input);
    delete object.status;
    this.revision++;
    object.metadata.resourceVersion = String(this.revision);
    if (existing) {
      object.metadata.uid = existing.metadata.uid;
      object.metadata.creationTimestamp = existing.metadata.creationTimestamp;
      const changed = generationContent(existing) !== generationContent(object);
      object.metadata.generation = (existing.metadata.generation ?? 1) + (changed ? 1 : 0);
      if (existing.status !== undefined) object.status = existing.status;
    } else {
      object.metadata.uid = randomUUID();
      object.metadata.creationTimestamp = rfc3339Now();
      object.metadata.generation = 1;
    }
    byKey.set(key, deepFreeze(object));
    return this.emit(kind, { type: existing ? 'MODIFIED' : 'ADDED', object });
  }

  delete(kind: KindKey, key: string): WatchEvent | undefined {
    const byKey = this.objects.get(kind);
    const existing = byKey?.get(key);
    if (!byKey || !existing) return undefined;
    byKey.delete(key);
    this.revision++;
    const object = deepFreeze({
      ...existing,
      metadata: { ...existing.metadata, resourceVersion: String(this.revision) },
    });
    return this.emit(kind, { type: 'DELETED', object });
  }

  get(kind: KindKey, key: string): KubeObject | undefined {
    return this.objects.get(kind)?.get(key);
  }

  /** Every kind the store holds an object of. */
  kinds(): KindKey[] {
    return [...this.objects.keys()].filter((kind) => (this.objects.get(kind)?.size ?? 0) > 0);
  }

  list(kind: KindKey): ListResult {
    return { items: [...(this.objects.get(kind)?.values() ?? [])], resourceVersion: this.resourceVersion };
  }

  watch(kind: KindKey | undefined, resourceVersion: string, handler: (event: WatchEvent) => void): () => void {
    const from = Number(resourceVersion);
    if (!Number.isInteger(from) || from < 0) throw new Error(`resource version "${resourceVersion}" is not a number`);
    const oldest = this.history.length > 0 ? this.history[0]!.revision - 1 : this.revision;
    if (from < oldest) throw new ResourceVersionTooOldError(resourceVersion, oldest);
    for (const entry of this.history) {
      if (entry.revision > from && (kind === undefined || entry.kind === kind)) handler(entry.event);
    }
    const watcher: Watcher = { kind, handler };
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  writeStatus(kind: KindKey, key: string, status: unknown): boolean {
    const existing = this.objects.get(kind)?.get(key);
    if (!existing) return false;
    if (JSON.stringify(existing.status) === JSON.stringify(status)) return false;
    this.revision++;
    const object: KubeObject = {
      ...existing,
      metadata: { ...existing.metadata, resourceVersion: String(this.revision) },
    };
    if (status === undefined) delete object.status;
    else object.status = structuredClone(status);
    this.objects.get(kind)!.set(key, deepFreeze(object));
    this.emit(kind, { type: 'MODIFIED', object });
    return true;
  }

  problems(): SourceProblem[] {
    return [];
  }

  async close(): Promise<void> {
    this.watchers.clear();
  }

  private emit(kind: KindKey, event: WatchEvent): WatchEvent {
    this.history.push({ revision: this.revision, kind, event });
    // Trimmed in batches: one splice per HISTORY_LIMIT events instead of one per event.
    if (this.history.length > 2 * HISTORY_LIMIT) this.history.splice(0, this.history.length - HISTORY_LIMIT);
    for (const watcher of [...this.watchers]) {
      if (watcher.kind === undefined || watcher.kind === kind) watcher.handler(event);
    }
    return event;
  }
}
