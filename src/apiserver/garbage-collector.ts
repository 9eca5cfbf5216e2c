// Garbage collection by ownerReferences, as Kubernetes' garbage collector does it, but at once
// (inside the delete request and after every removal) instead of from a background controller:
// an object whose metadata.ownerReferences name a uid is a dependent of the object with that uid,
// and goes when its owners go. DeleteOptions.propagationPolicy picks how:
// - Background (the default): the owner is removed, then its dependents are deleted;
// - Foreground: the owner is marked deleted and holds the `foregroundDeletion` finalizer while its
//   dependents are deleted, and goes once no dependent with blockOwnerDeletion is left;
// - Orphan: the dependents lose their reference to the owner and stay.
// A dependent that has another owner left is not deleted: only the references to owners that are
// gone (or waiting in foreground deletion) are removed, as Kubernetes' collector does. An object
// already being deleted is left to its finalizers.
import type { KubeObject } from '../api/validate/admission.ts';
import { objectKey } from '../store/store.ts';
import type { ObjectEvent, ObjectStore, ObjectWrite } from './object-store.ts';
import { type ApiResource, RESOURCES } from './resources.ts';

export type PropagationPolicy = 'Background' | 'Foreground' | 'Orphan';

export const PROPAGATION_POLICIES: readonly PropagationPolicy[] = ['Background', 'Foreground', 'Orphan'];

/** The finalizer an owner holds while its dependents are deleted first. */
export const FOREGROUND_FINALIZER = 'foregroundDeletion';

interface OwnerReference {
  uid: string;
  blockOwnerDeletion?: boolean;
}

interface Located {
  resource: ApiResource;
  object: KubeObject;
}

/** What the collector needs from the store that holds it. */
export interface CollectorHost {
  readonly objects: ObjectStore;
  /** The writes that delete one object: its removal, or a deletionTimestamp while finalizers hold it. */
  deletion(resource: ApiResource, object: KubeObject): ObjectWrite[];
  /** The current time as RFC 3339. */
  now(): string;
  /** Told about the removals of each commit the collector makes (terminating namespaces). */
  afterCommit(events: readonly ObjectEvent[]): void;
}

function ownerReferencesOf(object: KubeObject): OwnerReference[] {
  const references = object.metadata.ownerReferences;
  return Array.isArray(references) ? (references as OwnerReference[]) : [];
}

function waitsForDependents(object: KubeObject): boolean {
  return object.metadata.deletionTimestamp !== undefined && hasFinalizer(object, FOREGROUND_FINALIZER);
}

function hasFinalizer(object: KubeObject, finalizer: string): boolean {
  return (object.metadata.finalizers ?? []).includes(finalizer);
}

function withoutReferences(object: KubeObject, uids: ReadonlySet<string>): KubeObject {
  const next = structuredClone(object) as KubeObject;
  const kept = ownerReferencesOf(object).filter((reference) => !uids.has(reference.uid));
  if (kept.length > 0) next.metadata.ownerReferences = kept as typeof next.metadata.ownerReferences;
  else delete next.metadata.ownerReferences;
  return next;
}

export class GarbageCollector {
  private readonly host: CollectorHost;

  constructor(host: CollectorHost) {
    this.host = host;
  }

  /**
   * Deletes an object with a propagation policy; returns the events of every commit (the
   * object's own removal or marking among them).
   */
  delete(resource: ApiResource, object: KubeObject, policy: PropagationPolicy): ObjectEvent[] {
    const uid = object.metadata.uid;
    if (policy === 'Orphan' && uid) {
      const orphaned = this.dependentsOf(uid).map(({ resource: kind, object: dependent }) => ({
        kind: kind.kindKey,
        key: objectKey(dependent),
        object: withoutReferences(dependent, new Set([uid])),
      }));
      return this.commit([...orphaned, ...this.host.deletion(resource, object)]);
    }
    const dependents = uid ? this.dependentsOf(uid) : [];
    if (policy === 'Background' || dependents.length === 0 || object.metadata.deletionTimestamp) {
      return this.commit(this.host.deletion(resource, object));
    }
    // Foreground: mark the owner, delete its dependents, then let it go if none blocks it.
    const marked = structuredClone(object) as KubeObject;
    marked.metadata.deletionTimestamp = this.host.now();
    marked.metadata.deletionGracePeriodSeconds = 0;
    marked.metadata.finalizers = [...(object.metadata.finalizers ?? []), FOREGROUND_FINALIZER];
    marked.metadata.generation = (object.metadata.generation ?? 1) + 1;
    const events = this.commit([{ kind: resource.kindKey, key: objectKey(object), object: marked }]);
    events.push(...this.collect(dependents));
    events.push(...this.releaseIfUnblocked(resource.kindKey, objectKey(object)));
    return events;
  }

  /**
   * Commits writes, then collects what their removals leave behind: the dependents of each
   * removed object, and owners in foreground deletion that a removed dependent was blocking.
   */
  commit(writes: readonly ObjectWrite[]): ObjectEvent[] {
    const events = this.host.objects.commit(writes);
    this.host.afterCommit(events);
    const all = [...events];
    // One pass over the objects per commit, however many it removed (a namespace's contents).
    const removed = new Set<string>();
    const ownersOfRemoved = new Set<string>();
    for (const event of events) {
      if (event.type !== 'DELETED') continue;
      if (event.object.metadata.uid) removed.add(event.object.metadata.uid);
      for (const reference of ownerReferencesOf(event.object)) ownersOfRemoved.add(reference.uid);
    }
    if (removed.size === 0) return all;
    const dependents = this.objectsWhere((object) =>
      ownerReferencesOf(object).some((reference) => removed.has(reference.uid)),
    );
    all.push(...this.collect(dependents));
    const waiting = this.objectsWhere(
      (object) => ownersOfRemoved.has(object.metadata.uid ?? '') && waitsForDependents(object),
    );
    for (const owner of waiting) all.push(...this.releaseIfUnblocked(owner.resource.kindKey, objectKey(owner.object)));
    return all;
  }

  /**
   * Dependents whose owner is going: each deleted when no other owner holds it, otherwise freed of
   * the references to owners that are gone or waiting — all of them in one commit (a Gateway's
   * objects, a thousand ConfigMaps), except a dependent an owner waits for that has dependents of
   * its own, which is deleted in foreground.
   */
  private collect(dependents: readonly Located[]): ObjectEvent[] {
    if (dependents.length === 0) return [];
    const { byUid, owned } = this.index();
    const batch: ObjectWrite[] = [];
    const inForeground: Located[] = [];
    for (const dependent of dependents) {
      const current = this.host.objects.get(dependent.resource.kindKey, objectKey(dependent.object))?.object;
      if (!current || current.metadata.deletionTimestamp) continue;
      const released = new Set<string>();
      let solid = false;
      let ownerWaiting = false;
      for (const reference of ownerReferencesOf(current)) {
        const owner = byUid.get(reference.uid);
        if (!owner) released.add(reference.uid);
        else if (waitsForDependents(owner)) {
          released.add(reference.uid);
          ownerWaiting = true;
        } else solid = true;
      }
      if (released.size === 0) continue;
      const key = objectKey(current);
      const kind = dependent.resource.kindKey;
      if (solid) batch.push({ kind, key, object: withoutReferences(current, released) });
      else if (ownerWaiting && owned.has(current.metadata.uid ?? '')) {
        // Kubernetes unblocks the waiting owners first, so that a cycle of owners cannot deadlock.
        const unblocked = structuredClone(current) as KubeObject;
        unblocked.metadata.ownerReferences = ownerReferencesOf(current).map((reference) =>
          released.has(reference.uid) ? { ...reference, blockOwnerDeletion: false } : reference,
        ) as typeof unblocked.metadata.ownerReferences;
        batch.push({ kind, key, object: unblocked });
        inForeground.push({ resource: dependent.resource, object: unblocked });
      } else batch.push(...this.host.deletion(dependent.resource, current));
    }
    const events = batch.length > 0 ? this.commit(batch) : [];
    for (const { resource, object } of inForeground) {
      const current = this.host.objects.get(resource.kindKey, objectKey(object))?.object;
      if (current) events.push(...this.delete(resource, current, 'Foreground'));
    }
    return events;
  }

  /** Every object by uid, and the uids some object names as its owner: one pass over the store. */
  private index(): { byUid: Map<string, KubeObject>; owned: Set<string> } {
    const byUid = new Map<string, KubeObject>();
    const owned = new Set<string>();
    for (const resource of RESOURCES) {
      for (const { object } of this.host.objects.list(resource.kindKey)) {
        if (object.metadata.uid) byUid.set(object.metadata.uid, object);
        for (const reference of ownerReferencesOf(object)) owned.add(reference.uid);
      }
    }
    return { byUid, owned };
  }

  /** An owner in foreground deletion goes once no dependent with blockOwnerDeletion is left. */
  private releaseIfUnblocked(kind: string, key: string): ObjectEvent[] {
    const owner = this.host.objects.get(kind, key)?.object;
    if (!owner || !waitsForDependents(owner) || !owner.metadata.uid) return [];
    const uid = owner.metadata.uid;
    const blocked = this.dependentsOf(uid).some(({ object }) =>
      ownerReferencesOf(object).some((reference) => reference.uid === uid && reference.blockOwnerDeletion === true),
    );
    if (blocked) return [];
    const next = structuredClone(owner) as KubeObject;
    const finalizers = (owner.metadata.finalizers ?? []).filter((finalizer) => finalizer !== FOREGROUND_FINALIZER);
    if (finalizers.length > 0) {
      next.metadata.finalizers = finalizers;
      return this.commit([{ kind, key, object: next }]);
    }
    return this.commit([{ kind, key, object: undefined }]);
  }

  /** Every object whose ownerReferences name `uid`. */
  private dependentsOf(uid: string): Located[] {
    return this.objectsWhere((object) => ownerReferencesOf(object).some((reference) => reference.uid === uid));
  }

  /** The stored objects that match, every kind scanned. */
  private objectsWhere(matches: (object: KubeObject) => boolean): Located[] {
    const found: Located[] = [];
    for (const resource of RESOURCES) {
      for (const { object } of this.host.objects.list(resource.kindKey))
        if (matches(object)) found.push({ resource, object });
    }
    return found;
  }
}
