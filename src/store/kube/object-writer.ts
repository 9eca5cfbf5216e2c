// The provisioning writes of the Kubernetes store (the Store's objectWrites): server-side apply,
// create and delete of whole objects over the API server's REST interface, under gw's field
// manager. What cannot succeed by repeating it (the server refuses the object: 4xx) rejects at
// once with the server's message; an unreachable or failing server (no answer, 429, 5xx) is tried
// again with backoff until it answers or the store closes. A write asked for again while the same
// one is in flight shares it.
import type { KindDefinition } from '../../api/kinds/kind.ts';
import { KINDS } from '../../api/kinds/registry.ts';
import type { KubeObject } from '../../api/validate/admission.ts';
import { type KindKey, kindKey, type ObjectWrites, objectKey } from '../store.ts';
import { collectionPath, type KubeClient, KubeRequestError, objectPath } from './kube-client.ts';

export interface ObjectWriterOptions {
  fieldManager: string;
  log: (line: string) => void;
  retry?: { initialMs: number; maxMs: number };
}

const APPLY_PATCH = 'application/apply-patch+yaml';

function transient(error: unknown): boolean {
  if (!(error instanceof KubeRequestError)) return false;
  return error.statusCode === 0 || error.statusCode === 429 || error.statusCode >= 500;
}

export class ObjectWriter implements ObjectWrites {
  private readonly client: KubeClient;
  private readonly options: ObjectWriterOptions;
  private readonly definitions = new Map(
    KINDS.map((definition) => [`${definition.group}/${definition.kind}`, definition]),
  );
  /** Writes in flight, by what they write. */
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Waits before a retry, each with what ends it early (close()). */
  private readonly waits = new Map<NodeJS.Timeout, () => void>();
  private closed = false;

  constructor(client: KubeClient, options: ObjectWriterOptions) {
    this.client = client;
    this.options = options;
  }

  applyObject(object: KubeObject): Promise<void> {
    const query = `fieldManager=${encodeURIComponent(this.options.fieldManager)}&force=true`;
    return this.once(`apply ${JSON.stringify(object)}`, kindKey(object), (definition) =>
      this.client.request('PATCH', `${objectPath(definition, objectKey(object))}?${query}`, {
        body: object,
        contentType: APPLY_PATCH,
      }),
    );
  }

  createObject(object: KubeObject): Promise<void> {
    const query = `fieldManager=${encodeURIComponent(this.options.fieldManager)}`;
    return this.once(`create ${kindKey(object)} ${objectKey(object)}`, kindKey(object), async (definition) => {
      try {
        await this.client.request('POST', `${collectionPath(definition, object.metadata.namespace)}?${query}`, {
          body: object,
        });
      } catch (error) {
        if (!(error instanceof KubeRequestError) || error.statusCode !== 409) throw error;
      }
    });
  }

  deleteObject(kind: KindKey, key: string, uid: string): Promise<void> {
    const body = {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      preconditions: { uid },
      propagationPolicy: 'Background',
    };
    return this.once(`delete ${kind} ${key} ${uid}`, kind, async (definition) => {
      try {
        await this.client.request('DELETE', objectPath(definition, key), { body });
      } catch (error) {
        // Gone already, or another object of that name now (the uid precondition failed).
        if (!(error instanceof KubeRequestError) || (error.statusCode !== 404 && error.statusCode !== 409)) throw error;
      }
    });
  }

  /** Stops retrying; writes still waiting reject. */
  close(): void {
    this.closed = true;
    for (const [timer, resolve] of this.waits) {
      clearTimeout(timer);
      resolve();
    }
    this.waits.clear();
  }

  private once(id: string, kind: KindKey, write: (definition: KindDefinition) => Promise<unknown>): Promise<void> {
    const existing = this.inFlight.get(id);
    if (existing) return existing;
    const definition = this.definitions.get(kind);
    if (!definition) return Promise.reject(new Error(`gw's API does not define ${kind}`));
    const promise = this.attempt(definition, write).finally(() => this.inFlight.delete(id));
    this.inFlight.set(id, promise);
    return promise;
  }

  private async attempt(definition: KindDefinition, write: (definition: KindDefinition) => Promise<unknown>) {
    let delay = this.options.retry?.initialMs ?? 1000;
    let told = false;
    for (;;) {
      if (this.closed) throw new Error('the store is closed');
      try {
        await write(definition);
        if (told) this.options.log('provisioning writes: the API server answers again');
        return;
      } catch (error) {
        if (!transient(error)) throw error;
        if (!told) this.options.log(`provisioning writes: ${(error as Error).message} (retrying)`);
        told = true;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.waits.delete(timer);
          resolve();
        }, delay);
        this.waits.set(timer, resolve);
      });
      delay = Math.min(delay * 2, this.options.retry?.maxMs ?? 30_000);
    }
  }
}
