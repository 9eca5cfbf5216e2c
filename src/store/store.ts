// The store interface the controller reads from: objects by kind with resource versions, watch
// events, and status writes. The file store, the in-memory store, the embedded API server's store
// and the Kubernetes store all implement it; the controller cannot tell them apart.
import type { KubeObject } from '../api/validate/admission.ts';

/** A kind as the store knows it: "gw.dev/GwBackend", "gateway.networking.k8s.io/HTTPRoute", "/Secret". */
export type KindKey = string;

export function kindKey(object: { apiVersion: string; kind: string }): KindKey {
  const slash = object.apiVersion.lastIndexOf('/');
  const group = slash === -1 ? '' : object.apiVersion.slice(0, slash);
  return `${group}/${object.kind}`;
}

/** "namespace/name", or "name" for cluster-scoped objects. */
export function objectKey(object: { metadata: { name?: string; namespace?: string } }): string {
  const { name = '', namespace } = object.metadata;
  return namespace ? `${namespace}/${name}` : name;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface WatchEvent {
  type: WatchEventType;
  object: KubeObject;
}

export interface ListResult {
  items: KubeObject[];
  /** The store's resource version when the list was taken; watch from it to miss nothing. */
  resourceVersion: string;
}

/** A problem the store met reading its source (a file that does not parse or validate). */
export interface SourceProblem {
  source: string;
  message: string;
}

/**
 * Writes of whole objects, for the controller's provisioning (the data-plane objects it generates
 * for each Gateway). Each write settles when the store has made it (at once for a store in this
 * process, after the request for one over HTTP) and rejects with the store's refusal.
 */
export interface ObjectWrites {
  /**
   * Server-side apply of `object` under gw's field manager, forced: it takes over the fields it
   * sets, the fields gw applied before and not now are removed, and fields other managers set (the
   * replicas an autoscaler writes) are kept.
   */
  applyObject(object: KubeObject): Promise<void>;
  /** Creates `object`; when an object of its kind and name exists already, nothing is written. */
  createObject(object: KubeObject): Promise<void>;
  /** Deletes the object `key` of `kind` if it is still the one with `uid`; gone already is fine. */
  deleteObject(kind: KindKey, key: string, uid: string): Promise<void>;
}

export interface Store {
  /** The objects of a kind. They are read-only (frozen): copy before changing one. */
  list(kind: KindKey): ListResult;
  /**
   * Calls `handler` for every change after `resourceVersion` (all kinds when `kind` is undefined).
   * Returns a function that stops the watch.
   */
  watch(kind: KindKey | undefined, resourceVersion: string, handler: (event: WatchEvent) => void): () => void;
  /**
   * Replaces the status of one object. Nothing is written when the status is unchanged; returns
   * whether it was written. The object's spec and metadata are never changed by a status write.
   */
  writeStatus(kind: KindKey, key: string, status: unknown): boolean;
  /** Object writes, on stores the controller can provision into (absent: it cannot). */
  readonly objectWrites?: ObjectWrites;
  /** Problems reading the store's source, current as of now (empty when all is well). */
  problems(): SourceProblem[];
  close(): Promise<void>;
}
