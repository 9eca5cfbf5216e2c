// The controller loop: whenever the store's objects change, translate and hand the data plane
// its new configuration, then write the statuses that differ. Translation is pure
// (controller/*); this file only wires it to a store.
//
// Two passes. After a change the fast pass rebuilds only the configurations of the Gateways the
// change can reach (incremental/dependencies.ts) and publishes them at once; the full pass follows
// shortly after (coalescing bursts of changes), translating everything, writing statuses and
// publishing any configuration the fast pass did not produce identically. Status writes produce
// store events too; those are recognised and do not re-trigger.
//
// With provisioning on (`gw controller`, `gw run --provision`), the full pass also plans each gw
// Gateway's data-plane objects (provisioning/plan.ts), adds provisioning's conditions to the
// statuses it writes, and brings the store's objects in line (provisioning/provisioner.ts). Its
// own writes come back as events that match what it wants and start nothing; a change by someone
// else to an object gw generated (an edit, a deletion) starts a sync of the last plan.
import { findKind } from '../api/kinds/registry.ts';
import type { KubeObject } from '../api/validate/admission.ts';
import type { DataPlaneConfig } from '../contract/dataplane-config.ts';
import { PROVISIONED_KIND_KEYS } from '../provisioning/provisioned-kinds.ts';
import type { RandomBytes } from '../provisioning/session-key.ts';
import type { Store, WatchEvent } from '../store/store.ts';
import { kindKey, objectKey } from '../store/store.ts';
import { rfc3339Now } from '../util/values.ts';
import type { GatewayApiResult } from './gateway-api/index.ts';
import { configDependencies, DependencyIndex, GLOBAL_KINDS, touchedKeys } from './incremental/dependencies.ts';
import { markUnboundListeners, type UnboundListenerPorts } from './port-status.ts';
import { planProvisioning } from './provisioning/plan.ts';
import { Provisioner, type SyncReport } from './provisioning/provisioner.ts';
import { addProvisioningStatuses } from './provisioning/statuses.ts';
import { markNotServedGateways, servedGatewayProblem } from './served-gateway.ts';
import { SNAPSHOT_KINDS, type Snapshot, type SnapshotKind, snapshotFromStore } from './snapshot.ts';
import { keepTransitionTimes } from './status.ts';
import { translate, translateConfigs } from './translate.ts';

export interface ControllerOptions {
  /** The clock, as an RFC 3339 string (tests pass a fixed one). */
  now?: () => string;
  /** How long changes settle before the fast pass. */
  debounceMs?: number;
  /** How long after the last change the full pass (statuses) runs; it is never put off beyond 1 s. */
  statusDelayMs?: number;
  /** Told after every full pass. */
  onReconcile?: (report: ReconcileReport) => void;
  /** Told whenever configurations change (after either pass). */
  onConfigs?: (update: ConfigUpdate) => void;
  /**
   * Publish only this Gateway's configuration ("namespace/name"; gw run --gateway): the others
   * are translated (routes and policies are shared) but not published, and their listeners are
   * Programmed False in the statuses this controller writes (served-gateway.ts).
   */
  servedGateway?: string;
  /**
   * With `servedGateway`: told after each full pass whose answer differs from the last one why
   * that Gateway is not served (it does not exist, its class is not gw's...), or undefined once it is.
   */
  onServedGateway?: (problem: string | undefined) => void;
  /** Provision each gw Gateway's data plane into the store (it must have objectWrites). */
  provision?: ProvisionOptions;
}

export interface ProvisionOptions {
  /** gw's version: the default image tag. */
  version: string;
  /** A CSPRNG for new session keys (crypto.randomBytes). */
  randomBytes: RandomBytes;
  log: (line: string, level?: 'info' | 'warn' | 'error') => void;
}

export interface ReconcileReport {
  statusesWritten: number;
  gatewayApi: GatewayApiResult;
  /** The data-plane configuration of each gw Gateway, by "namespace/name". */
  configs: Map<string, DataPlaneConfig>;
  /** The writes provisioning started (undefined when the controller does not provision). */
  provisioned?: SyncReport;
  durationMs: number;
}

export interface ConfigUpdate {
  /** New or changed configurations, by Gateway "namespace/name". */
  changed: Map<string, DataPlaneConfig>;
  /** Gateways that no longer have a configuration. */
  removed: string[];
  /** Every current configuration. */
  all: ReadonlyMap<string, DataPlaneConfig>;
  /** The fast pass (only the Gateways a change reaches) or the full pass. */
  pass: 'fast' | 'full';
  durationMs: number;
}

/** Stands in for the time in computed statuses until they are written (never stored). */
const PLACEHOLDER_TIME = '0001-01-01T00:00:00Z';

/** The full pass is put off by new changes at most this long. */
const MAX_STATUS_DELAY_MS = 1000;

const KIND_NAMES = new Map(
  (Object.entries(SNAPSHOT_KINDS) as [SnapshotKind, string][]).map(([name, kind]) => [kind, name]),
);

/**
 * Everything of an object but its status, resource version and managedFields: a status write
 * leaves it unchanged (the writer's managedFields entry takes the write's time). The status of a
 * kind gw reads the status of (a Pod's readiness) is part of it.
 */
function contentKey(object: KubeObject): string {
  const { status, metadata, ...rest } = object;
  const { resourceVersion: _rv, managedFields: _fields, ...meta } = metadata;
  if (findKind(object.apiVersion, object.kind)?.readsStatus) return JSON.stringify([meta, rest, status]);
  return JSON.stringify([meta, rest]);
}

/** A configuration's text without its revision, to tell a real change from a new stamp. */
function configText(config: DataPlaneConfig): string {
  return JSON.stringify({ ...config, revision: '' });
}

export class Controller {
  private readonly store: Store;
  private readonly options: ControllerOptions;
  private readonly seen = new Map<string, string>();
  /** Per object: the status text last ensured in the store, and the stored status it matched. */
  private readonly written = new Map<string, { text: string; stored: unknown }>();
  private readonly configs = new Map<string, DataPlaneConfig>();
  private readonly configTexts = new Map<string, string>();
  private readonly dependencies = new DependencyIndex();
  /** Changed objects since the last pass: snapshot kind and "namespace/name". */
  private readonly pending = new Map<string, { kind: SnapshotKind; key: string }>();
  private snapshot: Snapshot | undefined;
  private report: ReconcileReport | undefined;
  private stopWatch: (() => void) | undefined;
  private fastTimer: NodeJS.Timeout | undefined;
  private fullTimer: NodeJS.Timeout | undefined;
  private fullDueSince: number | undefined;
  /** Listener ports the data plane could not bind, shown in the statuses (port-status.ts). */
  private unbound: UnboundListenerPorts = new Map();
  private unboundText = '[]';
  /** The last answer given to onServedGateway (null: none given yet). */
  private servedProblem: string | undefined | null = null;
  private readonly provisioner: Provisioner | undefined;
  private syncTimer: NodeJS.Timeout | undefined;
  /** The kinds whose events the controller follows: what it reads, and what it provisions. */
  private readonly watchedKinds: Set<string>;

  constructor(store: Store, options: ControllerOptions = {}) {
    this.store = store;
    this.options = options;
    this.watchedKinds = new Set(Object.values(SNAPSHOT_KINDS));
    if (options.provision) {
      if (!store.objectWrites) throw new Error('provisioning needs a store that can write objects (an API server)');
      this.provisioner = new Provisioner(store, store.objectWrites, {
        log: options.provision.log,
        onRefused: () => {
          if (this.stopWatch) this.scheduleFullPass();
        },
      });
      for (const kind of PROVISIONED_KIND_KEYS) this.watchedKinds.add(kind);
    }
  }

  /** The current configuration of every gw Gateway (of the served one alone with `servedGateway`). */
  get currentConfigs(): ReadonlyMap<string, DataPlaneConfig> {
    return this.configs;
  }

  /** The store the controller reads (its objects carry the statuses it wrote). */
  get objects(): Store {
    return this.store;
  }

  /** The last full pass's report (undefined before the first): what gw status and gw explain read. */
  get lastReport(): ReconcileReport | undefined {
    return this.report;
  }

  /** The full pass: snapshot, translate everything, write changed statuses, publish changed configs. */
  reconcile(): ReconcileReport {
    const started = performance.now();
    clearTimeout(this.fullTimer);
    this.fullTimer = undefined;
    this.fullDueSince = undefined;
    this.pending.clear();
    const now = (this.options.now ?? rfc3339Now)();
    const revision = this.store.list(SNAPSHOT_KINDS.gateways).resourceVersion;
    const snapshot = snapshotFromStore(this.store);
    this.snapshot = snapshot;
    // Statuses are computed with a placeholder time, so that an unchanged status is recognised
    // by its text alone; the real time goes in only when something is written.
    const translation = translate(snapshot, PLACEHOLDER_TIME, revision);
    const { gatewayApi, statuses, configs } = translation;
    markUnboundListeners(gatewayApi, this.unbound);
    const served = this.options.servedGateway;
    if (served !== undefined) markNotServedGateways(gatewayApi, served);
    const plan = this.options.provision && planProvisioning(snapshot, gatewayApi, this.options.provision);
    if (plan && this.provisioner)
      addProvisioningStatuses(translation, snapshot, plan, this.provisioner.refused(), PLACEHOLDER_TIME);
    this.publish(configs, new Set([...this.configs.keys(), ...configs.keys()]), 'full', started);
    if (served !== undefined) {
      const problem = servedGatewayProblem(snapshot, served, configs);
      if (problem !== this.servedProblem) {
        this.servedProblem = problem;
        this.options.onServedGateway?.(problem);
      }
    }
    this.dependencies.clear();
    for (const [key, listeners] of gatewayApi.listeners)
      this.dependencies.set(key, configDependencies(key, listeners, configs.get(key)));
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
    clearTimeout(this.syncTimer);
    const provisioned = plan && this.provisioner?.sync(plan);
    const report: ReconcileReport = { statusesWritten, gatewayApi, configs, durationMs: 0 };
    if (provisioned) report.provisioned = provisioned;
    report.durationMs = performance.now() - started;
    this.report = report;
    this.options.onReconcile?.(report);
    return report;
  }

  /**
   * What the data plane could not bind, after it applied a configuration; a change is written to
   * the statuses at the next full pass (scheduled now).
   */
  setUnboundPorts(unbound: UnboundListenerPorts): void {
    const text = JSON.stringify([...unbound].map(([gateway, ports]) => [gateway, [...ports]]));
    if (text === this.unboundText) return;
    this.unbound = unbound;
    this.unboundText = text;
    if (this.stopWatch) this.scheduleFullPass();
  }

  /** Runs the fast pass for the changes seen so far now, instead of after the debounce. */
  flush(): void {
    clearTimeout(this.fastTimer);
    if (this.pending.size > 0) this.fastPass();
  }

  /**
   * The fast pass: rebuild the configurations of the Gateways the pending changes reach and
   * publish them; statuses wait for the full pass. Falls back to the full pass when a change
   * can reach every Gateway.
   */
  private fastPass(): void {
    const previous = this.snapshot;
    if (!previous || [...this.pending.values()].some((change) => GLOBAL_KINDS.has(change.kind))) {
      this.reconcile();
      return;
    }
    const started = performance.now();
    const snapshot = snapshotFromStore(this.store);
    this.snapshot = snapshot;
    const touched: string[] = [];
    const dirty = new Set<string>();
    for (const { kind, key } of this.pending.values()) {
      for (const object of [previous[kind].get(key), snapshot[kind].get(key)]) {
        if (!object) continue;
        touched.push(...touchedKeys(object, snapshot));
        if (kind === 'gateways') dirty.add(key);
      }
    }
    this.pending.clear();
    this.dependencies.gatewaysReading(touched, dirty);
    if (dirty.size > 0) {
      const revision = this.store.list(SNAPSHOT_KINDS.gateways).resourceVersion;
      const { scope, gatewayApi, configs } = translateConfigs(snapshot, revision, dirty);
      for (const key of scope) {
        const listeners = gatewayApi.listeners.get(key);
        if (listeners) this.dependencies.set(key, configDependencies(key, listeners, configs.get(key)));
        else this.dependencies.delete(key);
      }
      this.publish(configs, scope, 'fast', started);
    }
    this.scheduleFullPass();
  }

  /** Publishes the configurations among `candidates` that changed (absent from `configs`: removed). */
  private publish(
    configs: Map<string, DataPlaneConfig>,
    candidates: Iterable<string>,
    pass: ConfigUpdate['pass'],
    started: number,
  ): void {
    const changed = new Map<string, DataPlaneConfig>();
    const removed: string[] = [];
    for (const key of candidates) {
      if (this.options.servedGateway !== undefined && key !== this.options.servedGateway) continue;
      const config = configs.get(key);
      if (!config) {
        if (this.configs.delete(key)) removed.push(key);
        this.configTexts.delete(key);
        continue;
      }
      const text = configText(config);
      if (this.configTexts.get(key) === text) continue;
      this.configTexts.set(key, text);
      this.configs.set(key, config);
      changed.set(key, config);
    }
    if (changed.size > 0 || removed.length > 0) {
      this.options.onConfigs?.({
        changed,
        removed,
        all: this.configs,
        pass,
        durationMs: performance.now() - started,
      });
    }
  }

  /**
   * Brings the provisioned objects in line with the last plan again, soon (someone changed them).
   * Not while a change of the objects the plan is made from waits for its pass: that pass plans and
   * syncs anew, and the last plan may be stale — the garbage collector deleting a deleted Gateway's
   * Deployment must not have the Deployment re-created from a plan that still has the Gateway.
   */
  private scheduleSync(): void {
    clearTimeout(this.syncTimer);
    this.syncTimer = setTimeout(() => {
      if (this.pending.size === 0 && this.fullDueSince === undefined) this.provisioner?.sync();
    }, this.options.debounceMs ?? 10);
  }

  private scheduleFullPass(): void {
    const now = performance.now();
    this.fullDueSince ??= now;
    const delay = Math.min(this.options.statusDelayMs ?? 50, MAX_STATUS_DELAY_MS - (now - this.fullDueSince));
    clearTimeout(this.fullTimer);
    this.fullTimer = setTimeout(() => this.reconcile(), Math.max(0, delay));
  }

  /** Reconciles now, then after every change of the store's objects (not of their status). */
  start(): void {
    for (const kind of this.watchedKinds) {
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
    clearTimeout(this.fastTimer);
    clearTimeout(this.fullTimer);
    clearTimeout(this.syncTimer);
    this.stopWatch?.();
    this.stopWatch = undefined;
  }

  private onEvent(event: WatchEvent): void {
    const kind = kindKey(event.object);
    const key = objectKey(event.object);
    const id = `${kind} ${key}`;
    if (event.type === 'DELETED') {
      this.seen.delete(id);
      this.written.delete(id);
    } else {
      const content = contentKey(event.object);
      if (this.seen.get(id) === content) return; // a status write, ours or another's
      this.seen.set(id, content);
    }
    if (this.provisioner?.concerns(event)) this.scheduleSync();
    const name = KIND_NAMES.get(kind);
    if (name === undefined) return; // a kind the controller does not read
    this.pending.set(id, { kind: name, key });
    clearTimeout(this.fastTimer);
    this.fastTimer = setTimeout(() => this.fastPass(), this.options.debounceMs ?? 10);
  }
}
