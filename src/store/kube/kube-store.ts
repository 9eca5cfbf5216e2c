// The store over a Kubernetes API server — a real cluster's, or gw's own embedded one — built on
// @kubernetes/client-node informers: one list-then-watch per kind keeps a cache the controller
// reads synchronously, as it reads the file store or the embedded store.
//
// client-node's informer re-lists by itself when a watch ends with 410 Gone (its resourceVersion
// was compacted away) and reports the changes the re-list reveals as adds, updates and deletes.
// It stops on any other error, so this store starts it again with backoff. A kind the server does
// not serve (its CRD is not installed) reads as empty and is looked for again now and then.
// Statuses go out through the status subresource (status-writer.ts).
import type { KubeConfig, KubernetesObject, ListWatch } from '@kubernetes/client-node';
import { apiVersionOf, type KindDefinition } from '../../api/kinds/kind.ts';
import { KINDS } from '../../api/kinds/registry.ts';
import type { KubeObject } from '../../api/validate/admission.ts';
import { deepFreeze, isPlainObject } from '../../util/values.ts';
import type { KindKey, ListResult, ObjectWrites, SourceProblem, Store, WatchEvent } from '../store.ts';
import { kindKey, objectKey } from '../store.ts';
import { clientNode } from './client-node.ts';
import { collectionPath, KubeClient, KubeRequestError } from './kube-client.ts';
import { ObjectWriter } from './object-writer.ts';
import { StatusWriter } from './status-writer.ts';

export interface KubeStoreOptions {
  kubeConfig: KubeConfig;
  /** The kinds to list and watch ("gw.dev/GwBackend", "/Secret"). */
  kinds: readonly KindKey[];
  /**
   * Write statuses (default true). Proxy replicas that only read leave it to the one controller.
   * When false, writeStatus writes nothing and returns false.
   */
  writeStatus?: boolean;
  /**
   * The controller name written into status entries shared between controllers (a route's
   * status.parents, a policy's status.ancestors): entries of other controllers are kept.
   */
  controllerName?: string;
  /** The field manager status writes are recorded under (default gw-controller). */
  fieldManager?: string;
  /** Provide objectWrites (the controller's provisioning), under the same field manager. */
  writeObjects?: boolean;
  /** Per kind, a label selector: only objects it selects are listed and watched. */
  labelSelectors?: Readonly<Record<KindKey, string>>;
  log?: (line: string) => void;
  /** Backoff after errors: first wait and longest wait (default 1 s and 30 s). */
  retry?: { initialMs: number; maxMs: number };
  /** How often a kind the server does not serve is looked for again (default 30 s). */
  notServedRetryMs?: number;
  /** Objects per page when listing (default 500). */
  pageSize?: number;
}

interface KindWatch {
  kind: KindKey;
  definition: KindDefinition;
  /** client-node types objects with Date timestamps; they hold the JSON as served. */
  informer: ListWatch<KubernetesObject>;
  /** Listed at least once (or known not to be served). */
  synced: boolean;
  /** A list has succeeded (its items are in the informer's cache once start() resolves). */
  listed: boolean;
  served: boolean;
  problem: string | undefined;
  retryDelayMs: number;
  retryTimer: NodeJS.Timeout | undefined;
  /** The informer's start() in progress: it may open a watch even after stop() (see close()). */
  starting: Promise<void> | undefined;
}

interface Watcher {
  kind: KindKey | undefined;
  handler: (event: WatchEvent) => void;
}

interface ListPage {
  items?: KubeObject[];
  metadata?: { resourceVersion?: string; continue?: string };
}

/** Status lists shared by several controllers, each entry naming its controller. */
const SHARED_STATUS_LISTS = ['parents', 'ancestors'];

export class KubeStore implements Store {
  private readonly options: KubeStoreOptions;
  private readonly client: KubeClient;
  private readonly watches = new Map<KindKey, KindWatch>();
  private readonly watchers = new Set<Watcher>();
  private readonly statusWriter: StatusWriter | undefined;
  private readonly objectWriter: ObjectWriter | undefined;
  /** Per object: the status last queued and the resourceVersion the cache had then. */
  private readonly written = new Map<string, { text: string; resourceVersion: string | undefined }>();
  private readonly syncWaiters: (() => void)[] = [];
  private closed = false;

  constructor(options: KubeStoreOptions) {
    this.options = options;
    this.client = new KubeClient(options.kubeConfig);
    const byKey = new Map(KINDS.map((definition) => [`${definition.group}/${definition.kind}`, definition]));
    for (const kind of options.kinds) {
      const definition = byKey.get(kind);
      if (!definition) throw new Error(`the store cannot watch ${kind}: gw's API does not define it`);
      this.watches.set(kind, this.createWatch(kind, definition));
    }
    if (options.writeStatus ?? true) {
      this.statusWriter = new StatusWriter(this.client, {
        current: (kind, key) => this.cached(kind, key),
        log: (line) => this.log(line),
        fieldManager: options.fieldManager ?? 'gw-controller',
        retry: options.retry,
      });
    }
    if (options.writeObjects) {
      this.objectWriter = new ObjectWriter(this.client, {
        fieldManager: options.fieldManager ?? 'gw-controller',
        log: (line) => this.log(line),
        retry: options.retry,
      });
    }
  }

  get objectWrites(): ObjectWrites | undefined {
    return this.objectWriter;
  }

  /** The API server's address. */
  get server(): string {
    return this.client.serverUrl;
  }

  /** Lists and watches every kind; resolves once each has been listed (or found not served). */
  async start(): Promise<void> {
    await Promise.all([...this.watches.values()].map((watch) => this.startWatch(watch)));
    if (this.synced()) return;
    await new Promise<void>((resolve) => this.syncWaiters.push(resolve));
  }

  /** Every kind has been listed once. */
  synced(): boolean {
    for (const watch of this.watches.values()) if (!watch.synced) return false;
    return true;
  }

  list(kind: KindKey): ListResult {
    const watch = this.watches.get(kind);
    if (!watch) return { items: [], resourceVersion: '' };
    return {
      items: watch.informer.list() as unknown as KubeObject[],
      resourceVersion: watch.informer.latestResourceVersion(),
    };
  }

  watch(kind: KindKey | undefined, _resourceVersion: string, handler: (event: WatchEvent) => void): () => void {
    // The informers deliver every change after the cache's current state, which is what a list
    // just taken shows: resourceVersions of different kinds cannot be compared in a cluster.
    const watcher = { kind, handler };
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  writeStatus(kind: KindKey, key: string, status: unknown): boolean {
    const watch = this.watches.get(kind);
    const object = this.cached(kind, key);
    if (!this.statusWriter || !watch || !object) return false;
    const merged = this.keepOtherControllers(object.status, status);
    const text = JSON.stringify(merged);
    const id = `${kind} ${key}`;
    const resourceVersion = object.metadata.resourceVersion;
    const last = this.written.get(id);
    // Written already, and the cache has not caught up with that write yet.
    if (last && last.text === text && last.resourceVersion === resourceVersion) return false;
    if (JSON.stringify(object.status) === text) return false;
    if (JSON.stringify(this.statusWriter.queued(kind, key)) === text) return false;
    this.written.set(id, { text, resourceVersion });
    this.statusWriter.enqueue(kind, watch.definition, key, merged);
    return true;
  }

  problems(): SourceProblem[] {
    const problems: SourceProblem[] = [];
    for (const watch of this.watches.values()) {
      if (watch.problem) problems.push({ source: `${this.server} ${watch.kind}`, message: watch.problem });
    }
    return problems;
  }

  /** Resolves once the statuses queued so far are written (or after `timeoutMs`). */
  statusesWritten(timeoutMs = 5000): Promise<void> {
    return this.statusWriter?.idle(timeoutMs) ?? Promise.resolve();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.statusesWritten();
    this.statusWriter?.close();
    this.objectWriter?.close();
    for (const watch of this.watches.values()) {
      clearTimeout(watch.retryTimer);
      await watch.informer.stop();
      // A start() that was listing goes on to open its watch regardless of stop() (client-node
      // does not check again): let it, then stop what it opened.
      if (watch.starting) {
        await watch.starting.catch(() => undefined);
        await watch.informer.stop();
      }
    }
    this.watchers.clear();
    this.client.close();
    for (const waiter of this.syncWaiters.splice(0)) waiter();
  }

  private log(line: string): void {
    this.options.log?.(line);
  }

  private cached(kind: string, key: string): KubeObject | undefined {
    const watch = this.watches.get(kind);
    if (!watch) return undefined;
    const slash = key.indexOf('/');
    const object =
      slash === -1 ? watch.informer.get(key) : watch.informer.get(key.slice(slash + 1), key.slice(0, slash));
    return object as KubeObject | undefined;
  }

  private createWatch(kind: KindKey, definition: KindDefinition): KindWatch {
    const path = collectionPath(definition);
    const watch: KindWatch = {
      kind,
      definition,
      informer: undefined as unknown as ListWatch<KubernetesObject>,
      synced: false,
      listed: false,
      served: true,
      problem: undefined,
      retryDelayMs: this.options.retry?.initialMs ?? 1000,
      retryTimer: undefined,
      starting: undefined,
    };
    // What makeInformer builds, with the ListWatch type kept for latestResourceVersion().
    const list = () => this.listAll(watch, path) as unknown as Promise<{ items: KubernetesObject[] }>;
    const { ListWatch, Watch } = clientNode();
    const selector = this.options.labelSelectors?.[kind];
    const informer = new ListWatch<KubernetesObject>(path, new Watch(this.options.kubeConfig), list, false, selector);
    informer.on('add', (object) => this.emit('ADDED', definition, object as KubeObject));
    informer.on('update', (object) => this.emit('MODIFIED', definition, object as KubeObject));
    informer.on('delete', (object) => this.emit('DELETED', definition, object as KubeObject));
    informer.on('error', (error) => this.onError(watch, error));
    watch.informer = informer;
    return watch;
  }

  private async startWatch(watch: KindWatch): Promise<void> {
    if (this.closed) return;
    watch.starting = watch.informer.start();
    await watch.starting;
    watch.starting = undefined;
    // start() resolves after the informer has taken in the list (or failed to get one).
    if (watch.listed) this.markSynced(watch);
  }

  /**
   * The list the informer starts from, page by page. A kind the server does not serve lists as
   * empty, so that objects cached before its CRD went away are reported deleted.
   */
  private async listAll(
    watch: KindWatch,
    path: string,
  ): Promise<{ items: KubeObject[]; metadata: { resourceVersion: string } }> {
    if (this.closed) throw new Error('the store is closed');
    const items: KubeObject[] = [];
    let resourceVersion = '';
    let next: string | undefined;
    try {
      do {
        const query = new URLSearchParams({ limit: String(this.options.pageSize ?? 500) });
        const selector = this.options.labelSelectors?.[watch.kind];
        if (selector !== undefined) query.set('labelSelector', selector);
        if (next) query.set('continue', next);
        const page = await this.client.request<ListPage>('GET', `${path}?${query}`);
        for (const item of page.items ?? []) items.push(item);
        if (!next) resourceVersion = page.metadata?.resourceVersion ?? '';
        next = page.metadata?.continue || undefined;
      } while (next);
    } catch (error) {
      if (!(error instanceof KubeRequestError) || error.statusCode !== 404) throw error;
      if (watch.served) {
        this.log(
          `${watch.kind} is not served by ${this.server} (${apiVersionOf(watch.definition)} ${watch.definition.plural}); ` +
            `reading it as empty${watch.definition.crd ? ' — install the CRDs: gw crds | kubectl apply -f -' : ''}`,
        );
      }
      watch.served = false;
      watch.listed = true;
      watch.problem = `${apiVersionOf(watch.definition)} ${watch.definition.plural} is not served`;
      return { items: [], metadata: { resourceVersion: '' } };
    }
    if (this.closed) throw new Error('the store is closed');
    if (!watch.served) this.log(`${watch.kind} is served by ${this.server} now`);
    watch.served = true;
    // Items of a list of built-in kinds come without apiVersion and kind.
    for (const item of items) this.complete(watch.definition, item);
    watch.listed = true;
    watch.problem = undefined;
    watch.retryDelayMs = this.options.retry?.initialMs ?? 1000;
    return { items, metadata: { resourceVersion } };
  }

  private markSynced(watch: KindWatch): void {
    if (watch.synced) return;
    watch.synced = true;
    if (this.synced()) for (const waiter of this.syncWaiters.splice(0)) waiter();
  }

  private onError(watch: KindWatch, error: unknown): void {
    if (this.closed) return;
    let delay: number;
    if (!watch.served) {
      delay = this.options.notServedRetryMs ?? 30_000;
    } else {
      const message = error instanceof Error ? error.message : String(error);
      const problem = `listing or watching ${watch.definition.plural}: ${message}`;
      if (problem !== watch.problem) this.log(`${problem} (retrying)`);
      watch.problem = problem;
      delay = watch.retryDelayMs;
      watch.retryDelayMs = Math.min(watch.retryDelayMs * 2, this.options.retry?.maxMs ?? 30_000);
    }
    clearTimeout(watch.retryTimer);
    watch.retryTimer = setTimeout(() => {
      watch.retryTimer = undefined;
      void this.startWatch(watch);
    }, delay);
  }

  private complete(definition: KindDefinition, object: KubeObject): KubeObject {
    if (Object.isFrozen(object)) return object;
    object.apiVersion ??= apiVersionOf(definition);
    object.kind ??= definition.kind;
    // Nothing gw does reads them, and they can be most of an object's size (as client-go's
    // informers, gw drops them from its cache). A status PUT without them keeps the stored ones.
    delete object.metadata.managedFields;
    return deepFreeze(object);
  }

  private emit(type: WatchEvent['type'], definition: KindDefinition, object: KubeObject): void {
    const event = { type, object: this.complete(definition, object) };
    if (type === 'DELETED') this.written.delete(`${kindKey(event.object)} ${objectKey(event.object)}`);
    for (const watcher of this.watchers) {
      if (watcher.kind === undefined || watcher.kind === kindKey(event.object)) watcher.handler(event);
    }
  }

  /** `next` with the entries of other controllers in the shared status lists of `stored` kept. */
  private keepOtherControllers(stored: unknown, next: unknown): unknown {
    const ours = this.options.controllerName;
    if (!ours || !isPlainObject(stored) || !isPlainObject(next)) return next;
    let merged: Record<string, unknown> | undefined;
    for (const field of SHARED_STATUS_LISTS) {
      const before = stored[field];
      if (!Array.isArray(before)) continue;
      const others = before.filter(
        (entry) => isPlainObject(entry) && typeof entry.controllerName === 'string' && entry.controllerName !== ours,
      );
      if (others.length === 0) continue;
      merged ??= { ...next };
      merged[field] = [...(Array.isArray(next[field]) ? next[field] : []), ...others];
    }
    return merged ?? next;
  }
}
