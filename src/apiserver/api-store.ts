// The API server's store: Kubernetes object semantics over the object store. It creates,
// updates, patches, applies and deletes objects as kube-apiserver does — admission through the
// api module, uid and creationTimestamp, metadata.generation bumped on spec changes only, the
// status subresource (spec writes keep status, status writes keep everything else), optimistic
// concurrency on resourceVersion, managedFields, finalizers and deletionTimestamp, namespaces
// that must exist and that take their contents with them, dependents garbage-collected with their
// owners (garbage-collector.ts) — and it is the store the controller
// reads (the Store interface), so that kubectl and the controller see the same objects.
import { randomBytes, randomUUID } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import type { KubeObject } from '../api/validate/admission.ts';
import {
  type KindKey,
  kindKey,
  type ListResult,
  type ObjectWrites,
  objectKey,
  type SourceProblem,
  type Store,
  type WatchEvent,
} from '../store/store.ts';
import { isPlainObject, rfc3339Now } from '../util/values.ts';
import { toServedVersion, toStoredVersion } from './conversion.ts';
import {
  ApiError,
  alreadyExists,
  badRequest,
  conflict,
  invalid,
  MODIFIED_CONFLICT,
  notFound,
  unsupportedMediaType,
} from './errors.ts';
import { GarbageCollector, type PropagationPolicy } from './garbage-collector.ts';
import { changedFields, describePath, type FieldScope, fieldsOf, sameValue } from './managed-fields/field-set.ts';
import {
  decodeManagedFields,
  dropMissingFields,
  encodeManagedFields,
  type OwnerIdentity,
  recordUpdate,
} from './managed-fields/managers.ts';
import {
  ApplyConflictError,
  type ApplyInput,
  type ApplyOutput,
  describeOwner,
  serverSideApply,
} from './managed-fields/server-side-apply.ts';
import { type ObjectEvent, ObjectStore, type ObjectWrite, type StoredObject } from './object-store.ts';
import { applyJsonPatch, PatchError } from './patch/json-patch.ts';
import { applyMergePatch } from './patch/merge-patch.ts';
import { applyStrategicMergePatch } from './patch/strategic-merge-patch.ts';
import { type ApiResource, RESOURCES, resourceOfKind } from './resources.ts';
import type { RevisionLogOptions } from './revision-log.ts';
import { scaleOf, withScale } from './scale.ts';
import type { FieldValidation } from './unknown-fields.ts';
import { admitObject, admitStatus, judgeUnknownFields } from './write-admission.ts';

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

/** The media types of the patch types, as requests send them in Content-Type. */
export const PATCH_MEDIA_TYPES: Record<PatchType, string> = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};
const STRATEGIC_MERGE_PATCH = PATCH_MEDIA_TYPES.strategic;

/** The patch media types a resource accepts (strategic merge only for the built-in kinds). */
export function patchTypesOf(resource: ApiResource): string[] {
  return (Object.keys(PATCH_MEDIA_TYPES) as PatchType[])
    .filter((type) => type !== 'strategic' || resource.listStrategies !== undefined)
    .map((type) => PATCH_MEDIA_TYPES[type]);
}

export interface WriteOptions {
  /** Who makes the change (metadata.managedFields). */
  fieldManager: string;
  dryRun?: boolean;
  fieldValidation?: FieldValidation;
  /** The status subresource instead of the main resource. */
  subresource?: 'status';
}

export interface PatchOptions extends WriteOptions {
  /** Server-side apply: take fields other managers own. */
  force?: boolean;
}

export interface WriteResult {
  object: KubeObject;
  warnings: string[];
  /** The write created the object (201 Created). */
  created: boolean;
}

export interface DeleteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
  /** What happens to the object's dependents (garbage-collector.ts); Background when omitted. */
  propagationPolicy?: PropagationPolicy;
}

export interface DeleteResult {
  /** The object: its last state when removed, or as it now is while finalizers hold it. */
  object: KubeObject;
  /** Removed now (false: deletion is pending on finalizers). */
  removed: boolean;
}

export interface ApiStoreOptions extends RevisionLogOptions {
  /** The clock, as RFC 3339 (tests pass a fixed one). */
  now?: () => string;
}

/** The namespaces a cluster starts with. */
const INITIAL_NAMESPACES = ['default', 'kube-system', 'kube-public'];

/** The field manager of writes the API server makes itself (initial namespaces). */
const SERVER_MANAGER = 'gw-apiserver';
/** The field manager of the controller's status writes through the Store interface. */
export const CONTROLLER_MANAGER = 'gw-controller';

const NAMESPACE_KIND = '/Namespace';
const GENERATE_NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

function keyOf(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

function generatedName(prefix: string): string {
  const bytes = randomBytes(5);
  let suffix = '';
  for (const byte of bytes) suffix += GENERATE_NAME_ALPHABET[byte % GENERATE_NAME_ALPHABET.length];
  return `${prefix}${suffix}`;
}

/** What a write compares to tell a change: everything but the revision and managedFields' times. */
function comparable(object: KubeObject): string {
  const { resourceVersion: _rv, managedFields, ...meta } = object.metadata;
  const owners = Array.isArray(managedFields)
    ? managedFields.map((entry) => ({ ...(entry as Record<string, unknown>), time: undefined }))
    : undefined;
  return JSON.stringify({ ...object, metadata: { ...meta, managedFields: owners } });
}

/** The part whose change bumps metadata.generation: all but metadata (and status, when a subresource). */
function generationContent(resource: ApiResource, object: KubeObject): string {
  const { metadata: _metadata, ...rest } = object;
  if (resource.statusSubresource) delete rest.status;
  return JSON.stringify(rest);
}

/** The value at a dotted path of an object ("spec.selector"), undefined when absent. */
function valueAt(object: KubeObject, path: string): unknown {
  let value: unknown = object;
  for (const name of path.split('.')) value = isPlainObject(value) ? value[name] : undefined;
  return value;
}

function asObject(body: unknown, what: string): Record<string, unknown> {
  if (!isPlainObject(body)) throw badRequest(`${what} must be a JSON object`);
  return body;
}

export class ApiStore implements Store {
  readonly objects: ObjectStore;
  private readonly now: () => string;
  private readonly collector: GarbageCollector;

  constructor(path: string, options: ApiStoreOptions = {}) {
    this.objects = new ObjectStore(path, options);
    this.now = options.now ?? rfc3339Now;
    this.collector = new GarbageCollector({
      objects: this.objects,
      deletion: (resource, object) => this.deletion(resource, object),
      now: () => this.now(),
      afterCommit: (events) => this.finishTerminatingNamespaces(events),
    });
    this.createInitialNamespaces();
  }

  get revision(): number {
    return this.objects.revision;
  }

  // ---- reads (objects as stored: conversion.ts turns them into the client's version) ----

  get(resource: ApiResource, namespace: string | undefined, name: string): StoredObject {
    const entry = this.objects.get(resource.kindKey, keyOf(resource.namespaced ? namespace : undefined, name));
    if (!entry) throw notFound(resource, name);
    return entry;
  }

  // ---- writes ----

  create(resource: ApiResource, namespace: string | undefined, body: unknown, options: WriteOptions): WriteResult {
    const input = this.decode(resource, body, namespace);
    const metadata = input.metadata;
    if (!metadata.name && typeof metadata.generateName === 'string' && metadata.generateName) {
      metadata.name = generatedName(metadata.generateName);
    }
    const { object, warnings } = admitObject(resource, input, options.fieldValidation ?? 'Warn');
    const key = objectKey(object);
    if (this.objects.get(resource.kindKey, key)) throw alreadyExists(resource, object.metadata.name!);
    this.checkNamespaceAccepts(resource, object.metadata.namespace);
    this.setCreationMetadata(resource, object);
    const identity = this.identity(resource, options, 'Update');
    const owners = recordUpdate(
      [],
      identity,
      changedFields(resource.definition.schema, undefined, object, 'main'),
      this.now(),
    );
    object.metadata.managedFields = encodeManagedFields(owners);
    if (object.metadata.managedFields.length === 0) delete object.metadata.managedFields;
    return { object: this.commitOne(resource, key, object, options), warnings, created: true };
  }

  /** PUT: replace the object (or its status). */
  update(
    resource: ApiResource,
    namespace: string | undefined,
    name: string,
    body: unknown,
    options: WriteOptions,
  ): WriteResult {
    const existing = this.get(resource, namespace, name);
    const input = this.decode(resource, body, namespace, name);
    const requested = input.metadata.resourceVersion;
    if (!requested && resource.customResource && options.subresource !== 'status') {
      throw invalid(resource, name, [
        {
          type: 'Invalid',
          field: 'metadata.resourceVersion',
          value: '0x0',
          detail: 'must be specified for an update',
        },
      ]);
    }
    return this.replace(resource, existing, input, options);
  }

  patch(
    resource: ApiResource,
    namespace: string | undefined,
    name: string,
    type: PatchType,
    body: string,
    options: PatchOptions,
  ): WriteResult {
    const key = keyOf(resource.namespaced ? namespace : undefined, name);
    const existing = this.objects.get(resource.kindKey, key);
    if (type === 'apply') return this.apply(resource, namespace, name, existing, body, options);
    if (type === 'strategic' && !resource.listStrategies)
      throw unsupportedMediaType(STRATEGIC_MERGE_PATCH, patchTypesOf(resource));
    if (!existing) throw notFound(resource, name);
    let patch: unknown;
    try {
      patch = JSON.parse(body);
    } catch (error) {
      throw badRequest(`the patch is not valid JSON: ${(error as Error).message}`);
    }
    // A patch applies to the object as the client's version shows it.
    const served = toServedVersion(resource, existing.object);
    let patched: unknown;
    try {
      if (type === 'json') patched = applyJsonPatch(served, patch);
      else if (type === 'merge') patched = applyMergePatch(served, patch);
      else patched = applyStrategicMergePatch(served, patch, resource.listStrategies ?? new Map());
    } catch (error) {
      if (!(error instanceof PatchError)) throw error;
      if (error.malformed) throw badRequest(error.message);
      throw new ApiError(422, 'Invalid', error.message);
    }
    const input = this.decode(resource, patched, namespace, name);
    return this.replace(resource, existing, input, options);
  }

  /** The scale subresource: the object as an autoscaling/v1 Scale (scale.ts). */
  getScale(resource: ApiResource, namespace: string | undefined, name: string): KubeObject {
    return scaleOf(this.get(resource, namespace, name).object);
  }

  /** Writes spec.replicas from a Scale (PUT of the scale subresource); returns the new Scale. */
  updateScale(
    resource: ApiResource,
    namespace: string | undefined,
    name: string,
    body: unknown,
    options: WriteOptions,
  ): { scale: KubeObject; warnings: string[] } {
    const existing = this.get(resource, namespace, name);
    const result = this.replace(resource, existing, withScale(resource, existing.object, body), options);
    return { scale: scaleOf(result.object), warnings: result.warnings };
  }

  /** A JSON, merge or strategic merge patch of the Scale (server-side apply is not served here). */
  patchScale(
    resource: ApiResource,
    namespace: string | undefined,
    name: string,
    type: PatchType,
    body: string,
    options: WriteOptions,
  ): { scale: KubeObject; warnings: string[] } {
    if (type === 'apply') {
      throw unsupportedMediaType(PATCH_MEDIA_TYPES.apply, [
        PATCH_MEDIA_TYPES.json,
        PATCH_MEDIA_TYPES.merge,
        PATCH_MEDIA_TYPES.strategic,
      ]);
    }
    let patch: unknown;
    try {
      patch = JSON.parse(body);
    } catch (error) {
      throw badRequest(`the patch is not valid JSON: ${(error as Error).message}`);
    }
    const scale = this.getScale(resource, namespace, name);
    let patched: unknown;
    try {
      if (type === 'json') patched = applyJsonPatch(scale, patch);
      else if (type === 'merge') patched = applyMergePatch(scale, patch);
      else patched = applyStrategicMergePatch(scale, patch, new Map());
    } catch (error) {
      if (!(error instanceof PatchError)) throw error;
      throw new ApiError(422, 'Invalid', error.message);
    }
    return this.updateScale(resource, namespace, name, patched, options);
  }

  delete(
    resource: ApiResource,
    namespace: string | undefined,
    name: string,
    options: DeleteOptions = {},
  ): DeleteResult {
    const existing = this.get(resource, namespace, name);
    const current = existing.object;
    const { uid, resourceVersion } = options.preconditions ?? {};
    if (uid && uid !== current.metadata.uid) {
      throw conflict(
        resource,
        name,
        `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${current.metadata.uid}`,
      );
    }
    if (resourceVersion && resourceVersion !== current.metadata.resourceVersion) {
      throw conflict(
        resource,
        name,
        `Precondition failed: ResourceVersion in precondition: ${resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`,
      );
    }
    if (options.dryRun) {
      const writes = this.deletion(resource, current);
      const own = writes.filter((write) => write.kind === resource.kindKey && write.key === objectKey(current)).at(-1);
      return { object: own?.object ?? current, removed: own !== undefined && own.object === undefined };
    }
    const events = this.collector.delete(resource, current, options.propagationPolicy ?? 'Background');
    const own = events.filter((event) => event.kind === resource.kindKey && event.key === objectKey(current)).at(-1);
    if (!own) return { object: current, removed: false };
    return { object: own.object, removed: own.type === 'DELETED' };
  }

  // ---- the Store interface (the controller) ----

  list(kind: KindKey): ListResult {
    return { items: this.objects.list(kind).map((entry) => entry.object), resourceVersion: String(this.revision) };
  }

  watch(kind: KindKey | undefined, resourceVersion: string, handler: (event: WatchEvent) => void): () => void {
    const from = Number(resourceVersion);
    if (!Number.isInteger(from) || from < 0) throw new Error(`resource version "${resourceVersion}" is not a number`);
    return this.objects.watch(kind, from, handler);
  }

  /** The controller's status write: only the status changes; an equal status writes nothing. */
  writeStatus(kind: KindKey, key: string, status: unknown): boolean {
    const resource = resourceOfKind(kind);
    const existing = this.objects.get(kind, key);
    if (!resource || !existing) return false;
    if (sameValue(existing.object.status, status)) return false;
    const next = structuredClone(existing.object) as KubeObject;
    if (status === undefined) delete next.status;
    else next.status = structuredClone(status);
    const identity: OwnerIdentity = {
      manager: CONTROLLER_MANAGER,
      operation: 'Update',
      apiVersion: resource.apiVersion,
      subresource: resource.statusSubresource ? 'status' : undefined,
    };
    this.trackUpdate(resource, existing.object, next, identity, resource.statusSubresource ? 'status' : 'main');
    this.objects.commit([{ kind, key, object: next }]);
    return true;
  }

  /**
   * The controller's provisioning writes, made at once (their watch events go out before the
   * promise settles) under the controller's field manager.
   */
  readonly objectWrites: ObjectWrites = {
    applyObject: async (object) => {
      const resource = this.resourceFor(kindKey(object));
      const options = { fieldManager: CONTROLLER_MANAGER, force: true };
      this.patch(resource, object.metadata.namespace, object.metadata.name!, 'apply', JSON.stringify(object), options);
    },
    createObject: async (object) => {
      const resource = this.resourceFor(kindKey(object));
      const key = objectKey(object);
      if (this.objects.get(resource.kindKey, resource.namespaced ? key : object.metadata.name!)) return;
      this.create(resource, object.metadata.namespace, object, { fieldManager: CONTROLLER_MANAGER });
    },
    deleteObject: async (kind, key, uid) => {
      const resource = this.resourceFor(kind);
      const current = this.objects.get(kind, key)?.object;
      if (current === undefined || current.metadata.uid !== uid) return;
      this.delete(resource, current.metadata.namespace, current.metadata.name!, { preconditions: { uid } });
    },
  };

  private resourceFor(kind: KindKey): ApiResource {
    const resource = resourceOfKind(kind);
    if (!resource) throw new ApiError(404, 'NotFound', `the API server does not serve ${kind}`);
    return resource;
  }

  problems(): SourceProblem[] {
    return [];
  }

  async close(): Promise<void> {
    this.objects.close();
  }

  // ---- the write pipeline ----

  /**
   * Checks the envelope of a request body and fills in what the endpoint implies; the result is
   * in the kind's stored version.
   */
  private decode(resource: ApiResource, body: unknown, namespace: string | undefined, name?: string): KubeObject {
    const object = structuredClone(asObject(body, 'the request body')) as KubeObject;
    if (object.apiVersion === undefined || object.apiVersion === '') object.apiVersion = resource.apiVersion;
    if (object.kind === undefined || object.kind === '') object.kind = resource.kind;
    if (object.apiVersion !== resource.apiVersion) {
      throw badRequest(
        `the API version in the data (${String(object.apiVersion)}) does not match the expected API version (${resource.apiVersion})`,
      );
    }
    if (object.kind !== resource.kind) {
      throw badRequest(
        `the kind in the data (${String(object.kind)}) does not match the expected kind (${resource.kind})`,
      );
    }
    if (object.metadata === undefined || object.metadata === null) object.metadata = {};
    const metadata = asObject(object.metadata, 'metadata') as KubeObject['metadata'];
    if (resource.namespaced) {
      if (metadata.namespace && namespace && metadata.namespace !== namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      if (namespace) metadata.namespace = namespace;
    } else {
      delete metadata.namespace;
    }
    if (name !== undefined) {
      if (metadata.name && metadata.name !== name) {
        throw badRequest(`the name of the object (${metadata.name}) does not match the name on the URL (${name})`);
      }
      metadata.name = name;
    }
    toStoredVersion(resource, object);
    return object;
  }

  private identity(resource: ApiResource, options: WriteOptions, operation: 'Apply' | 'Update'): OwnerIdentity {
    return {
      manager: options.fieldManager,
      operation,
      apiVersion: resource.apiVersion,
      subresource: options.subresource,
    };
  }

  private setCreationMetadata(resource: ApiResource, object: KubeObject): void {
    const metadata = object.metadata;
    metadata.uid = randomUUID();
    metadata.creationTimestamp = this.now();
    metadata.generation = 1;
    delete metadata.resourceVersion;
    delete metadata.deletionTimestamp;
    delete metadata.deletionGracePeriodSeconds;
    if (resource.kindKey === NAMESPACE_KIND) {
      object.spec = { ...(isPlainObject(object.spec) ? object.spec : {}), finalizers: ['kubernetes'] };
      object.status = { phase: 'Active' };
    }
  }

  /** The server-owned metadata of the stored object carried into its next version. */
  private carryMetadata(resource: ApiResource, existing: KubeObject, next: KubeObject): void {
    const from = existing.metadata;
    const to = next.metadata;
    to.name = from.name;
    if (from.namespace) to.namespace = from.namespace;
    to.uid = from.uid;
    to.creationTimestamp = from.creationTimestamp;
    to.resourceVersion = from.resourceVersion;
    if (from.deletionTimestamp) to.deletionTimestamp = from.deletionTimestamp;
    else delete to.deletionTimestamp;
    if (from.deletionGracePeriodSeconds !== undefined) to.deletionGracePeriodSeconds = from.deletionGracePeriodSeconds;
    else delete to.deletionGracePeriodSeconds;
    if (from.generateName) to.generateName = from.generateName;
    const changed = generationContent(resource, existing) !== generationContent(resource, next);
    to.generation = (from.generation ?? 1) + (changed ? 1 : 0);
    if (resource.kindKey === NAMESPACE_KIND) {
      // A namespace's finalizers and phase are the server's.
      next.spec = { ...(isPlainObject(next.spec) ? next.spec : {}), finalizers: ['kubernetes'] };
      if (!resource.statusSubresource || next.status === undefined) next.status = existing.status;
    }
  }

  /** Update (PUT, or a patch other than apply) of an existing object, or of its status. */
  private replace(
    resource: ApiResource,
    existing: StoredObject,
    input: KubeObject,
    options: WriteOptions,
  ): WriteResult {
    const current = existing.object;
    const name = current.metadata.name!;
    const requested = input.metadata.resourceVersion;
    if (requested && requested !== current.metadata.resourceVersion) throw conflict(resource, name, MODIFIED_CONFLICT);
    const fieldValidation = options.fieldValidation ?? 'Warn';
    let next: KubeObject;
    let warnings: string[];
    if (options.subresource === 'status') {
      const admitted = admitStatus(resource, name, input.status, fieldValidation);
      next = structuredClone(current) as KubeObject;
      if (admitted.status === undefined) delete next.status;
      else next.status = admitted.status;
      warnings = admitted.warnings;
      next.metadata.managedFields = input.metadata.managedFields as never;
    } else {
      ({ object: next, warnings } = admitObject(resource, input, fieldValidation));
      if (resource.statusSubresource) {
        if (current.status !== undefined) next.status = structuredClone(current.status);
        else delete next.status;
      }
      this.carryMetadata(resource, current, next);
      this.checkImmutable(resource, current, next);
      this.checkFinalizers(resource, current, next);
    }
    const scope: FieldScope = options.subresource === 'status' ? 'status' : 'main';
    const identity = this.identity(resource, options, 'Update');
    if (!this.takeRequestedManagedFields(current, next)) this.trackUpdate(resource, current, next, identity, scope);
    return this.finishWrite(resource, existing, next, warnings, options);
  }

  /** Server-side apply: create or merge the applied configuration as its field manager. */
  private apply(
    resource: ApiResource,
    namespace: string | undefined,
    name: string,
    existing: StoredObject | undefined,
    body: string,
    options: PatchOptions,
  ): WriteResult {
    let document: unknown;
    try {
      document = parseYaml(body, { maxAliasCount: 100, uniqueKeys: true });
    } catch (error) {
      throw badRequest(`the applied configuration is not valid YAML or JSON: ${(error as Error).message}`);
    }
    if (!isPlainObject(document) || typeof document.apiVersion !== 'string' || typeof document.kind !== 'string') {
      throw badRequest('an applied configuration must be an object with apiVersion and kind');
    }
    const input = this.decode(resource, document, namespace, name);
    const requested = input.metadata.resourceVersion;
    if (existing && requested && requested !== existing.object.metadata.resourceVersion) {
      throw conflict(resource, name, MODIFIED_CONFLICT);
    }
    const scope: FieldScope = options.subresource === 'status' ? 'status' : 'main';
    if (!existing && scope === 'status') throw notFound(resource, name);
    const identity = this.identity(resource, options, 'Apply');
    const live = existing ? (structuredClone(existing.object) as KubeObject) : undefined;
    const fieldValidation = options.fieldValidation ?? 'Warn';
    // Unknown fields are judged on the configuration as sent, before it merges with the live object.
    const config = structuredClone(input);
    const unknownWarnings = judgeUnknownFields(resource, config, fieldValidation);
    const { object: merged, owners } = applyOrConflict({
      schema: resource.definition.schema,
      live: live ?? { apiVersion: resource.storageApiVersion, kind: resource.kind, metadata: { ...input.metadata } },
      config,
      owners: decodeManagedFields(live?.metadata.managedFields),
      identity,
      scope,
      force: options.force ?? false,
      now: this.now(),
    });
    let next: KubeObject;
    let warnings = unknownWarnings;
    const mergedObject = merged as KubeObject;
    if (scope === 'status') {
      const admitted = admitStatus(resource, name, mergedObject.status, 'Ignore');
      next = structuredClone(existing!.object) as KubeObject;
      if (admitted.status === undefined) delete next.status;
      else next.status = admitted.status;
    } else {
      mergedObject.apiVersion = resource.storageApiVersion;
      mergedObject.kind = resource.kind;
      const admitted = admitObject(resource, mergedObject, 'Ignore');
      next = admitted.object;
      warnings = [...warnings, ...admitted.warnings.filter((warning) => !warning.startsWith('unknown field'))];
      if (existing) {
        if (resource.statusSubresource) {
          if (existing.object.status !== undefined) next.status = structuredClone(existing.object.status);
          else delete next.status;
        }
        this.carryMetadata(resource, existing.object, next);
        this.checkImmutable(resource, existing.object, next);
        this.checkFinalizers(resource, existing.object, next);
      } else {
        this.checkNamespaceAccepts(resource, next.metadata.namespace);
        this.setCreationMetadata(resource, next);
      }
    }
    const kept = dropMissingFields(owners, fieldExists(resource, next));
    next.metadata.managedFields = encodeManagedFields(kept);
    if (next.metadata.managedFields.length === 0) delete next.metadata.managedFields;
    if (!existing) {
      return { object: this.commitOne(resource, objectKey(next), next, options), warnings, created: true };
    }
    return this.finishWrite(resource, existing, next, warnings, options);
  }

  /** Records an Update by `identity`: the fields it changed become its own. */
  private trackUpdate(
    resource: ApiResource,
    current: KubeObject,
    next: KubeObject,
    identity: OwnerIdentity,
    scope: FieldScope,
  ): void {
    const schema = resource.definition.schema;
    const changes = changedFields(schema, current, next, scope);
    const owners = recordUpdate(decodeManagedFields(current.metadata.managedFields), identity, changes, this.now());
    const entries = encodeManagedFields(dropMissingFields(owners, fieldExists(resource, next)));
    if (entries.length > 0) next.metadata.managedFields = entries;
    else delete next.metadata.managedFields;
  }

  /**
   * A request that sets managedFields to something other than what is stored replaces them
   * (`[{}]` clears them), as in Kubernetes; an absent or empty list leaves them to be tracked.
   */
  private takeRequestedManagedFields(current: KubeObject, next: KubeObject): boolean {
    const requested = next.metadata.managedFields;
    if (!Array.isArray(requested) || requested.length === 0) return false;
    if (sameValue(requested, current.metadata.managedFields)) return false;
    const owners = decodeManagedFields(requested);
    const entries = encodeManagedFields(owners);
    if (entries.length > 0) next.metadata.managedFields = entries;
    else delete next.metadata.managedFields;
    return true;
  }

  /** Commits an update unless it changes nothing; removes the object when its last finalizer goes. */
  private finishWrite(
    resource: ApiResource,
    existing: StoredObject,
    next: KubeObject,
    warnings: string[],
    options: WriteOptions,
  ): WriteResult {
    if (comparable(next) === comparable(existing.object)) {
      return { object: existing.object, warnings, created: false };
    }
    const key = objectKey(existing.object);
    if (options.dryRun) return { object: next, warnings, created: false };
    const writes: ObjectWrite[] = [{ kind: resource.kindKey, key, object: next }];
    if (next.metadata.deletionTimestamp && (next.metadata.finalizers ?? []).length === 0) {
      writes.push(...this.removal(resource, next));
    }
    const events = this.collector.commit(writes);
    return { object: events[0]!.object, warnings, created: false };
  }

  private commitOne(resource: ApiResource, key: string, object: KubeObject, options: WriteOptions): KubeObject {
    if (options.dryRun) return object;
    return this.objects.commit([{ kind: resource.kindKey, key, object }])[0]!.object;
  }

  // ---- rules ----

  private checkImmutable(resource: ApiResource, current: KubeObject, next: KubeObject): void {
    const changed = resource.definition.immutableFields.filter(
      (path) => !sameValue(valueAt(current, path), valueAt(next, path)),
    );
    if (changed.length > 0) {
      throw invalid(
        resource,
        current.metadata.name!,
        changed.map((field) => ({
          type: 'Invalid' as const,
          field,
          value: JSON.stringify(valueAt(next, field) ?? null),
          detail: 'field is immutable',
        })),
      );
    }
    if ((resource.kindKey === '/Secret' || resource.kindKey === '/ConfigMap') && current.immutable === true) {
      const errors = [];
      for (const field of ['data', 'stringData', 'binaryData']) {
        if (!sameValue(current[field], next[field])) {
          errors.push({
            type: 'Forbidden' as const,
            field,
            detail: 'field is immutable when `immutable` is set',
          });
        }
      }
      if (next.immutable !== true) {
        errors.push({
          type: 'Forbidden' as const,
          field: 'immutable',
          detail: 'field is immutable when `immutable` is set',
        });
      }
      if (errors.length > 0) throw invalid(resource, current.metadata.name!, errors);
    }
  }

  private checkFinalizers(resource: ApiResource, current: KubeObject, next: KubeObject): void {
    if (!current.metadata.deletionTimestamp) return;
    const before = new Set(current.metadata.finalizers ?? []);
    const added = (next.metadata.finalizers ?? []).filter((finalizer) => !before.has(finalizer));
    if (added.length > 0) {
      throw invalid(resource, current.metadata.name!, [
        {
          type: 'Forbidden',
          field: 'metadata.finalizers',
          detail: `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
        },
      ]);
    }
  }

  /** NamespaceLifecycle: objects go only into namespaces that exist and are not being deleted. */
  private checkNamespaceAccepts(resource: ApiResource, namespace: string | undefined): void {
    if (!resource.namespaced || !namespace) return;
    const entry = this.objects.get(NAMESPACE_KIND, namespace);
    const namespaces = resourceOfKind(NAMESPACE_KIND)!;
    if (!entry) throw notFound(namespaces, namespace);
    if (entry.object.metadata.deletionTimestamp) {
      throw new ApiError(
        403,
        'Forbidden',
        `${resource.plural}${resource.group ? `.${resource.group}` : ''} is forbidden: unable to create new content in namespace ${namespace} because it is being terminated`,
        {
          causes: [
            {
              reason: 'NamespaceTerminating',
              message: `namespace ${namespace} is being terminated`,
              field: 'metadata.namespace',
            },
          ],
        },
      );
    }
  }

  /** The writes that delete an object: removal now, or a deletionTimestamp while finalizers hold it. */
  private deletion(resource: ApiResource, current: KubeObject): ObjectWrite[] {
    const key = objectKey(current);
    const held = (current.metadata.finalizers ?? []).length > 0;
    if (resource.kindKey === NAMESPACE_KIND) return this.namespaceDeletion(current);
    if (!held) return this.removal(resource, current);
    if (current.metadata.deletionTimestamp) return [];
    const next = structuredClone(current) as KubeObject;
    next.metadata.deletionTimestamp = this.now();
    next.metadata.deletionGracePeriodSeconds = 0;
    next.metadata.generation = (current.metadata.generation ?? 1) + 1;
    return [{ kind: resource.kindKey, key, object: next }];
  }

  private removal(resource: ApiResource, object: KubeObject): ObjectWrite[] {
    return [{ kind: resource.kindKey, key: objectKey(object), object: undefined }];
  }

  /**
   * A namespace is marked Terminating, its contents are deleted (objects with finalizers are
   * marked), and it goes once nothing is left in it.
   */
  private namespaceDeletion(namespace: KubeObject): ObjectWrite[] {
    const name = namespace.metadata.name!;
    const writes: ObjectWrite[] = [];
    let remaining = 0;
    for (const resource of RESOURCES) {
      if (!resource.namespaced) continue;
      for (const entry of this.objects.list(resource.kindKey)) {
        if (entry.object.metadata.namespace !== name) continue;
        const contentWrites = this.deletion(resource, entry.object);
        writes.push(...contentWrites);
        if ((entry.object.metadata.finalizers ?? []).length > 0) remaining++;
      }
    }
    if (remaining === 0) {
      writes.push({ kind: NAMESPACE_KIND, key: name, object: undefined });
      return writes;
    }
    if (namespace.metadata.deletionTimestamp) return writes;
    const terminating = structuredClone(namespace) as KubeObject;
    terminating.metadata.deletionTimestamp = this.now();
    terminating.metadata.deletionGracePeriodSeconds = 0;
    terminating.status = { ...(isPlainObject(namespace.status) ? namespace.status : {}), phase: 'Terminating' };
    writes.unshift({ kind: NAMESPACE_KIND, key: name, object: terminating });
    return writes;
  }

  /** After objects are removed: a terminating namespace left empty goes too. */
  private finishTerminatingNamespaces(events: readonly ObjectEvent[]): void {
    const namespaces = new Set<string>();
    for (const event of events) {
      if (event.type === 'DELETED' && event.object.metadata.namespace) namespaces.add(event.object.metadata.namespace);
    }
    for (const name of namespaces) {
      const namespace = this.objects.get(NAMESPACE_KIND, name);
      if (!namespace?.object.metadata.deletionTimestamp) continue;
      const empty = RESOURCES.every(
        (resource) =>
          !resource.namespaced ||
          this.objects.list(resource.kindKey).every((entry) => entry.object.metadata.namespace !== name),
      );
      if (empty) this.collector.commit([{ kind: NAMESPACE_KIND, key: name, object: undefined }]);
    }
  }

  private createInitialNamespaces(): void {
    const namespaces = resourceOfKind(NAMESPACE_KIND)!;
    for (const name of INITIAL_NAMESPACES) {
      if (this.objects.get(NAMESPACE_KIND, name)) continue;
      this.create(namespaces, undefined, { metadata: { name } }, { fieldManager: SERVER_MANAGER });
    }
  }
}

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * The fields an object's client-side apply annotation sets. `kubectl apply --server-side` (field
 * manager "kubectl") may take these from "kubectl-client-side-apply" without a conflict: that is
 * how kube-apiserver lets an object move from client-side to server-side apply.
 */
function lastAppliedFields(input: ApplyInput): Set<string> {
  const annotation = input.live?.metadata;
  const text =
    isPlainObject(annotation) && isPlainObject(annotation.annotations)
      ? annotation.annotations[LAST_APPLIED]
      : undefined;
  if (typeof text !== 'string') return new Set();
  try {
    const lastApplied = JSON.parse(text) as unknown;
    return isPlainObject(lastApplied) ? fieldsOf(input.schema, lastApplied, input.scope) : new Set();
  } catch {
    return new Set();
  }
}

/** Server-side apply, its conflicts reported as kube-apiserver reports them (409, one cause per field). */
function applyOrConflict(input: ApplyInput): ApplyOutput {
  try {
    return serverSideApply(input);
  } catch (error) {
    if (!(error instanceof ApplyConflictError)) throw error;
    if (input.identity.manager === 'kubectl' && !input.force) {
      const allowed = lastAppliedFields(input);
      if (error.conflicts.every((conflict) => allowed.has(conflict.path)))
        return serverSideApply({ ...input, force: true });
    }
    throw new ApiError(409, 'Conflict', error.message, {
      causes: error.conflicts.map((conflict) => ({
        reason: 'FieldManagerConflict',
        message: `conflict with ${describeOwner(conflict.owner)}`,
        field: describePath(conflict.path),
      })),
    });
  }
}

/** Whether a field path exists in an object (ownership of fields that are gone is dropped). */
function fieldExists(resource: ApiResource, object: KubeObject): (path: string) => boolean {
  const present = new Set([
    ...fieldsOf(resource.definition.schema, object, 'main'),
    ...fieldsOf(resource.definition.schema, object, 'status'),
  ]);
  return (path) => {
    if (present.has(path)) return true;
    // A node owned as a whole (an item, a map) exists when something under it does.
    for (const field of present) if (field.startsWith(`${path}\u0000`)) return true;
    return false;
  };
}
