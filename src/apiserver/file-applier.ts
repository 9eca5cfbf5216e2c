// `gw run -f DIR` with the API server: the files are applied into the API server's store, as
// `kubectl apply --server-side --force-conflicts --field-manager=gw-files` would apply them, and
// kept applied. The file store (src/store/file-store.ts) reads them with its usual rules — each
// file all or nothing, the last good objects kept while a file is broken, problems reported with
// file and field path — and every change it sees is applied here: a changed object is applied
// again (the files win over edits made through the API), an object no longer in any file is
// deleted. Objects created through the API are left alone. Namespaces the files use are created
// when missing, as a cluster admin would have to. A Pod's status in a file goes to its status
// subresource (there is no kubelet to write it).
import type { KubeObject } from '../api/validate/admission.ts';
import type { FileStore } from '../store/file-store.ts';
import { kindKey, objectKey, type WatchEvent } from '../store/store.ts';
import type { ApiStore } from './api-store.ts';
import { ApiError } from './errors.ts';
import { decodeManagedFields } from './managed-fields/managers.ts';
import { RESOURCES, resourceOfKind, resourceOfVersion } from './resources.ts';

/** The field manager of objects applied from files. */
export const FILES_MANAGER = 'gw-files';

/** What the file store sets on its copies that the API server sets itself. */
function appliedConfiguration(object: KubeObject): KubeObject {
  const {
    uid: _uid,
    resourceVersion: _rv,
    creationTimestamp: _ct,
    generation: _gen,
    managedFields: _mf,
    ...metadata
  } = object.metadata;
  return { ...object, metadata };
}

function managedByFiles(object: KubeObject): boolean {
  return decodeManagedFields(object.metadata.managedFields).some(
    (owner) => owner.manager === FILES_MANAGER && owner.operation === 'Apply',
  );
}

export class FileApplier {
  private readonly store: ApiStore;
  private readonly files: FileStore;
  private readonly report: (line: string) => void;
  private stopWatch: (() => void) | undefined;

  constructor(store: ApiStore, files: FileStore, report: (line: string) => void) {
    this.store = store;
    this.files = files;
    this.report = report;
  }

  /**
   * Applies every object the file store holds (load it first), deletes objects applied from
   * files that no file defines any more (files removed while gw was stopped), then follows the
   * file store's changes.
   */
  start(): void {
    const defined = new Set<string>();
    for (const resource of RESOURCES) {
      for (const object of this.files.list(resource.kindKey).items) {
        defined.add(`${resource.kindKey} ${objectKey(object)}`);
        this.apply(object);
      }
    }
    for (const resource of RESOURCES) {
      for (const { object } of this.store.objects.list(resource.kindKey)) {
        if (!defined.has(`${resource.kindKey} ${objectKey(object)}`) && managedByFiles(object)) this.remove(object);
      }
    }
    this.stopWatch = this.files.watch(undefined, this.files.resourceVersion, (event) => this.onEvent(event));
  }

  stop(): void {
    this.stopWatch?.();
    this.stopWatch = undefined;
  }

  private onEvent(event: WatchEvent): void {
    if (event.type === 'DELETED') {
      const resource = resourceOfKind(kindKey(event.object));
      if (!resource) return;
      const namespace = resource.namespaced ? event.object.metadata.namespace : undefined;
      const current = this.store.objects.get(
        resource.kindKey,
        objectKey({ metadata: { name: event.object.metadata.name, namespace } }),
      );
      if (current && managedByFiles(current.object)) this.remove(current.object);
      return;
    }
    this.apply(event.object);
  }

  private apply(object: KubeObject): void {
    // Applied in the version the file uses (a kind served in two versions accepts either).
    const resource = resourceOfVersion(object.apiVersion, object.kind);
    if (!resource) return;
    const namespace = resource.namespaced ? object.metadata.namespace : undefined;
    try {
      if (namespace) this.ensureNamespace(namespace);
      this.store.patch(
        resource,
        namespace,
        object.metadata.name!,
        'apply',
        JSON.stringify(appliedConfiguration(object)),
        { fieldManager: FILES_MANAGER, force: true, fieldValidation: 'Ignore' },
      );
      // A Pod's status stands for its kubelet's report: it goes to the status subresource.
      if (resource.definition.readsStatus && object.status !== undefined) {
        const { apiVersion, kind, metadata, status } = object;
        const statusOnly = {
          apiVersion,
          kind,
          metadata: { name: metadata.name, namespace: metadata.namespace },
          status,
        };
        this.store.patch(resource, namespace, object.metadata.name!, 'apply', JSON.stringify(statusOnly), {
          fieldManager: FILES_MANAGER,
          force: true,
          fieldValidation: 'Ignore',
          subresource: 'status',
        });
      }
    } catch (error) {
      this.report(`applying ${object.kind} ${objectKey(object)} from the files: ${(error as Error).message}`);
    }
  }

  private remove(object: KubeObject): void {
    const resource = resourceOfKind(kindKey(object));
    if (!resource) return;
    try {
      this.store.delete(resource, resource.namespaced ? object.metadata.namespace : undefined, object.metadata.name!);
    } catch (error) {
      if (error instanceof ApiError && error.code === 404) return;
      this.report(`deleting ${object.kind} ${objectKey(object)} (no longer in the files): ${(error as Error).message}`);
    }
  }

  private ensureNamespace(name: string): void {
    const namespaces = resourceOfKind('/Namespace')!;
    if (this.store.objects.get(namespaces.kindKey, name)) return;
    this.store.create(namespaces, undefined, { metadata: { name } }, { fieldManager: FILES_MANAGER });
  }
}
