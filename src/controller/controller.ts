// The controller loop: whenever the store's objects change, take a snapshot, translate it, and
// write the statuses that differ. Translation is pure (controller/*); this file only wires it to
// a store. Status writes produce store events too; those are recognised and do not re-trigger.
import type { KubeObject } from '../api/validate/admission.ts';
import type { Store, WatchEvent } from '../store/store.ts';
import { kindKey, objectKey } from '../store/store.ts';
import { rfc3339Now } from '../util/values.ts';
import type { DataPlaneConfig } from './dataplane-config.ts';
import type { GatewayApiResult } from './gateway-api/index.ts';
import { SNAPSHOT_KINDS, snapshotFromStore } from './snapshot.ts';
import { keepTransitionTimes } from './status.ts';
import { translate } from './translate.ts';

export interface ControllerOptions {
  /** The clock, as an RFC 3339 string (tests pass a fixed one). */
  now?: () => string;
  /** How long changes settle before a reconcile. */
  debounceMs?: number;
  /** Told after every reconcile. */
  onReconcile?: (report: ReconcileReport) => void;
}

export interface ReconcileReport {
  statusesWritten: number;
  gatewayApi: GatewayApiResult;
  /** The data-plane configuration of each gw Gateway, by "namespace/name". */
  configs: Map<string, DataPlaneConfig>;
  durationMs: number;
}

/** Stands in for the time in computed statuses until they are written (never stored). */
const PLACEHOLDER_TIME = '0001-01-01T00:00:00Z';

/** Everything of an object but its status and resource version: a status write leaves it unchanged. */
function contentKey(object: KubeObject): string {
  const { status: _status, metadata, ...rest } = object;
  const { resourceVersion: _rv, ...meta } = metadata;
  return JSON.stringify([meta, rest]);
}

export class Controller {
  private readonly store: Store;
  private readonly options: ControllerOptions;
  private readonly seen = new Map<string, string>();
  /** Per object: the status text last ensured in the store, and the stored status it matched. */
  private readonly written = new Map<string, { text: string; stored: unknown }>();
  private stopWatch: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(store: Store, options: ControllerOptions = {}) {
    this.store = store;
    this.options = options;
  }

  /** One pass: snapshot, translate, write changed statuses. */
  reconcile(): ReconcileReport {
    const started = performance.now();
    const now = (this.options.now ?? rfc3339Now)();
    const revision = this.store.list(SNAPSHOT_KINDS.gateways).resourceVersion;
    const snapshot = snapshotFromStore(this.store);
    // Statuses are computed with a placeholder time, so that an unchanged status is recognised
    // by its text alone; the real time goes in only when something is written.
    const { gatewayApi, statuses, configs } = translate(snapshot, PLACEHOLDER_TIME, revision);
    let statusesWritten = 0;
    for (const [name, byKey] of statuses) {
      const kind = SNAPSHOT_KINDS[name];
      const current = snapshot[name];
      for (const [key, status] of byKey) {
        const id = `${kind} ${key}`;
        const text = JSON.stringify(status);
        const stored = current.get(key)?.status;
        const last = this.written.get(id);
        if (last && last.text === text && last.stored === stored && stored !== undefined) continue;
        const stable = keepTransitionTimes(stored, JSON.parse(text.replaceAll(PLACEHOLDER_TIME, now)));
        const wrote = this.store.writeStatus(kind, key, stable);
        if (wrote) statusesWritten++;
        // After a write the stored copy is known only at the next reconcile, which checks once more.
        this.written.set(id, { text, stored: wrote ? undefined : stored });
      }
    }
    const report = { statusesWritten, gatewayApi, configs, durationMs: performance.now() - started };
    this.options.onReconcile?.(report);
    return report;
  }

  /** Reconciles now, then after every change of the store's objects (not of their status). */
  start(): void {
    for (const kind of Object.values(SNAPSHOT_KINDS)) {
      for (const object of this.store.list(kind).items)
        this.seen.set(`${kind} ${objectKey(object)}`, contentKey(object));
    }
    this.reconcile();
    // Watch from after our own status writes: nothing else runs between the reconcile and here
    // (one thread), and replaying thousands of our own writes could outrun the store's history.
    const current = this.store.list(SNAPSHOT_KINDS.gateways).resourceVersion;
    this.stopWatch = this.store.watch(undefined, current, (event) => this.onEvent(event));
  }

  stop(): void {
    clearTimeout(this.timer);
    this.stopWatch?.();
    this.stopWatch = undefined;
  }

  private onEvent(event: WatchEvent): void {
    const id = `${kindKey(event.object)} ${objectKey(event.object)}`;
    if (event.type === 'DELETED') {
      this.seen.delete(id);
      this.written.delete(id);
    } else {
      const key = contentKey(event.object);
      if (this.seen.get(id) === key) return; // a status write, ours or another's
      this.seen.set(id, key);
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.reconcile(), this.options.debounceMs ?? 10);
  }
}
