// Status writes to a Kubernetes API server, off the controller's thread of work.
//
// The controller decides synchronously what each status should be; the writes happen here, a few
// at a time, through the status subresource with the object's resourceVersion (a PUT, so that
// fields the controller no longer sets go away). A conflict re-reads the object and tries again;
// an unreachable server is retried with backoff, keeping only the latest status per object; a
// refused status (422) is logged and dropped, since repeating it cannot succeed.
import type { KindDefinition } from '../../api/kinds/kind.ts';
import type { KubeObject } from '../../api/validate/admission.ts';
import { type KubeClient, KubeRequestError, objectPath } from './kube-client.ts';

export interface StatusWriterOptions {
  /** The object as last seen (the informer's cache), or undefined once deleted. */
  current: (kind: string, key: string) => KubeObject | undefined;
  log: (line: string) => void;
  /** The field manager the writes are recorded under (managedFields). */
  fieldManager: string;
  /** Writes in flight at once (default 4). */
  concurrency?: number;
  retry?: { initialMs: number; maxMs: number };
}

interface Job {
  kind: string;
  definition: KindDefinition;
  key: string;
  status: unknown;
  attempts: number;
}

/** Conflicts in a row before a write waits for the backoff instead of trying again at once. */
const IMMEDIATE_CONFLICT_RETRIES = 3;

export class StatusWriter {
  private readonly client: KubeClient;
  private readonly options: StatusWriterOptions;
  /** Waiting writes by "kind key"; a newer status for the same object replaces the older. */
  private readonly queue = new Map<string, Job>();
  private readonly inFlight = new Set<string>();
  private readonly idleWaiters: (() => void)[] = [];
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDelayMs: number;
  private failing = false;
  private closed = false;

  constructor(client: KubeClient, options: StatusWriterOptions) {
    this.client = client;
    this.options = options;
    this.retryDelayMs = options.retry?.initialMs ?? 1000;
  }

  /** The status waiting (or being written) for an object, if any. */
  queued(kind: string, key: string): unknown {
    return this.queue.get(`${kind} ${key}`)?.status;
  }

  enqueue(kind: string, definition: KindDefinition, key: string, status: unknown): void {
    if (this.closed) return;
    this.queue.set(`${kind} ${key}`, { kind, definition, key, status, attempts: 0 });
    this.pump();
  }

  /** Resolves once nothing is waiting or being written, or after `timeoutMs`. */
  idle(timeoutMs: number): Promise<void> {
    if (this.queue.size === 0 && this.inFlight.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Stops writing; what is still queued is dropped (the next controller writes it again). */
  close(): void {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.queue.clear();
    this.notifyIdle();
  }

  private pump(): void {
    if (this.retryTimer || this.closed) return;
    const limit = this.options.concurrency ?? 4;
    for (const [id, job] of this.queue) {
      if (this.inFlight.size >= limit) break;
      if (this.inFlight.has(id)) continue;
      this.queue.delete(id);
      this.inFlight.add(id);
      void this.write(job).then(
        () => this.finished(id, undefined),
        (error: unknown) => this.finished(id, { job, error }),
      );
    }
    if (this.queue.size === 0 && this.inFlight.size === 0) this.notifyIdle();
  }

  private finished(id: string, failure: { job: Job; error: unknown } | undefined): void {
    this.inFlight.delete(id);
    if (failure && !this.closed) {
      const { job, error } = failure;
      // A newer status queued meanwhile wins; otherwise this one waits for the retry.
      if (!this.queue.has(id)) this.queue.set(id, { ...job, attempts: job.attempts + 1 });
      if (!this.failing) this.options.log(`writing statuses: ${(error as Error).message} (retrying)`);
      this.failing = true;
      if (this.retryTimer) return; // another write failed just before: one wait for both
      const maxMs = this.options.retry?.maxMs ?? 30_000;
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        this.pump();
      }, this.retryDelayMs);
      this.retryDelayMs = Math.min(this.retryDelayMs * 2, maxMs);
      return;
    }
    if (!failure && this.failing) {
      this.failing = false;
      this.retryDelayMs = this.options.retry?.initialMs ?? 1000;
      this.options.log('writing statuses: the API server answers again');
    }
    this.pump();
  }

  private notifyIdle(): void {
    for (const waiter of this.idleWaiters.splice(0)) waiter();
  }

  /** One write, with immediate retries on conflicts. Rejects only for what backoff can cure. */
  private async write(job: Job): Promise<void> {
    const path = `${objectPath(job.definition, job.key)}/status?fieldManager=${encodeURIComponent(this.options.fieldManager)}`;
    let object = this.options.current(job.kind, job.key);
    for (let conflicts = 0; object !== undefined; conflicts++) {
      try {
        await this.client.request('PUT', path, { body: { ...object, status: job.status } });
        return;
      } catch (error) {
        if (!(error instanceof KubeRequestError)) throw error;
        if (error.statusCode === 404) return; // deleted meanwhile: nothing to write
        if (error.statusCode === 400 || error.statusCode === 422) {
          this.options.log(`status of ${job.kind} ${job.key} refused by the API server: ${error.message}`);
          return;
        }
        if (error.statusCode !== 409 || conflicts >= IMMEDIATE_CONFLICT_RETRIES) throw error;
      }
      // Someone else wrote the object since it was read: read it again and write onto that.
      object = await this.readFresh(job);
    }
  }

  private async readFresh(job: Job): Promise<KubeObject | undefined> {
    try {
      return await this.client.request<KubeObject>('GET', objectPath(job.definition, job.key));
    } catch (error) {
      if (error instanceof KubeRequestError && error.statusCode === 404) return undefined;
      throw error;
    }
  }
}
