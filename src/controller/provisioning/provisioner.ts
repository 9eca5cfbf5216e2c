// Brings a store's data-plane objects in line with a provisioning plan (plan.ts): what is missing
// is created and what differs is applied (server-side apply under gw's field manager, so fields
// others manage stay theirs: the replicas an HorizontalPodAutoscaler sets are not in what gw
// applies), what gw generated earlier and generates no more is deleted, found by gw's labels
// (labels.ts generatedFor) in every kind provisioning writes (provisioned-kinds.ts), cluster-scoped kinds too.
//
// What it compares: an object is applied again when what gw would apply changed since gw last
// applied it, or when the stored object no longer holds every field gw sets with gw's value
// (someone edited or deleted it). Fields the API server or other controllers add are not compared.
// The session-key Secret is only ever created: replacing its key would end every MCP session.
// A Gateway whose parameters have problems keeps what it has (docs/provisioning.md).
import type { KubeObject } from '../../api/validate/admission.ts';
import { generatedFor } from '../../provisioning/labels.ts';
import { PROVISIONED_KIND_KEYS } from '../../provisioning/provisioned-kinds.ts';
import { sessionKeySecretName } from '../../provisioning/session-key.ts';
import { kindKey, type ObjectWrites, objectKey, type Store, type WatchEvent } from '../../store/store.ts';
import { isPlainObject } from '../../util/values.ts';
import type { ProvisioningPlan } from './plan.ts';

/** Whether `stored` holds every field of `wanted` with the same value (lists: same length, item by item). */
export function holds(stored: unknown, wanted: unknown): boolean {
  if (Array.isArray(wanted))
    return (
      Array.isArray(stored) && stored.length === wanted.length && wanted.every((item, i) => holds(stored[i], item))
    );
  if (isPlainObject(wanted))
    return isPlainObject(stored) && Object.entries(wanted).every(([field, value]) => holds(stored[field], value));
  return stored === wanted;
}

export interface SyncReport {
  applied: number;
  created: number;
  deleted: number;
}

export interface ProvisionerOptions {
  log: (line: string, level?: 'info' | 'warn' | 'error') => void;
  /** Told when the API server refuses a write it had not refused before (statuses should say so). */
  onRefused: () => void;
}

interface Wanted {
  object: KubeObject;
  /** The Gateway's "namespace/name". */
  gateway: string;
  /** The session-key Secret: created once, never replaced. */
  createOnly: boolean;
  text: string;
}

interface Refusal {
  gateway: string;
  text: string;
  /** The stored object's resourceVersion when refused: a change of it is worth another try. */
  storedVersion: string | undefined;
  message: string;
}

export class Provisioner {
  private readonly store: Store;
  private readonly writes: ObjectWrites;
  private readonly options: ProvisionerOptions;
  /** Per object ("kind key"): what the last plan wants. */
  private wanted = new Map<string, Wanted>();
  private plan: ProvisioningPlan | undefined;
  /** Per object: the text gw last applied (or is applying). */
  private readonly applied = new Map<string, string>();
  /** Per object: the write the API server refused last. */
  private readonly refusals = new Map<string, Refusal>();

  constructor(store: Store, writes: ObjectWrites, options: ProvisionerOptions) {
    this.store = store;
    this.writes = writes;
    this.options = options;
  }

  /** Per Gateway: what the API server refused of its objects. */
  refused(): Map<string, string> {
    const byGateway = new Map<string, string>();
    for (const [id, refusal] of this.refusals) {
      const before = byGateway.get(refusal.gateway);
      const line = `${id}: ${refusal.message}`;
      byGateway.set(refusal.gateway, before === undefined ? line : `${before}; ${line}`);
    }
    return byGateway;
  }

  /** Writes what `plan` (by default the last one) asks for and differs from the store. */
  sync(plan: ProvisioningPlan | undefined = this.plan): SyncReport {
    const report: SyncReport = { applied: 0, created: 0, deleted: 0 };
    if (!plan) return report;
    if (plan !== this.plan) this.takePlan(plan);
    const kept = new Set<string>();
    for (const [key, provisioning] of plan.gateways) if (!provisioning.ok) kept.add(key);
    const stored = new Map<string, KubeObject>();
    const kinds = new Set([
      ...PROVISIONED_KIND_KEYS,
      ...[...this.wanted.values()].map(({ object }) => kindKey(object)),
    ]);
    const stale: KubeObject[] = [];
    for (const kind of kinds) {
      for (const object of this.store.list(kind).items) {
        const id = `${kind} ${objectKey(object)}`;
        stored.set(id, object);
        if (this.wanted.has(id)) continue;
        const owner = generatedFor(object);
        if (!owner) continue;
        // A Gateway with problems keeps its objects.
        if (!kept.has(`${owner.namespace}/${owner.name}`)) stale.push(object);
      }
    }
    for (const object of stale) {
      report.deleted++;
      const kind = kindKey(object);
      const key = objectKey(object);
      this.options.log(`${kind} ${key}: deleting: gw no longer generates it`);
      this.write(`${kind} ${key}`, undefined, undefined, () =>
        this.writes.deleteObject(kind, key, object.metadata.uid ?? ''),
      );
    }
    for (const [id, wanted] of this.wanted) {
      const current = stored.get(id);
      const refusal = this.refusals.get(id);
      if (refusal && refusal.text === wanted.text && refusal.storedVersion === current?.metadata.resourceVersion)
        continue;
      if (wanted.createOnly) {
        if (current === undefined) {
          report.created++;
          this.options.log(`${id}: creating (Gateway ${wanted.gateway})`);
          this.write(id, wanted, current, () => this.writes.createObject(wanted.object));
        } else if (generatedFor(current) && !ownedBy(current, wanted.object)) {
          // A Secret left from an earlier Gateway of the same name: a new Gateway gets a new key.
          report.deleted++;
          this.options.log(`${id}: deleting: it belongs to an earlier Gateway ${wanted.gateway}`);
          this.write(id, wanted, current, () =>
            this.writes.deleteObject(kindKey(current), objectKey(current), current.metadata.uid ?? ''),
          );
        }
        continue;
      }
      const held = current !== undefined && holds(current, wanted.object);
      const last = this.applied.get(id);
      if (held && last === wanted.text) continue;
      if (current === undefined) report.created++;
      else report.applied++;
      // Applying again what the store holds, the first time after a start, is not news.
      if (!held || last !== undefined)
        this.options.log(`${id}: ${current === undefined ? 'creating' : 'applying'} (Gateway ${wanted.gateway})`);
      this.applied.set(id, wanted.text);
      this.write(id, wanted, current, () => this.writes.applyObject(wanted.object));
    }
    return report;
  }

  /**
   * Whether a change of a stored object calls for a sync: an object gw wants that was deleted or
   * no longer holds what gw applied, or one gw generated that it no longer wants.
   */
  concerns(event: WatchEvent): boolean {
    const id = `${kindKey(event.object)} ${objectKey(event.object)}`;
    const wanted = this.wanted.get(id);
    if (wanted) return event.type === 'DELETED' || (!wanted.createOnly && !holds(event.object, wanted.object));
    return event.type !== 'DELETED' && generatedFor(event.object) !== undefined && this.plan !== undefined;
  }

  private takePlan(plan: ProvisioningPlan): void {
    this.plan = plan;
    const wanted = new Map<string, Wanted>();
    for (const [gateway, provisioning] of plan.gateways) {
      if (!provisioning.ok) continue;
      const secret = sessionKeySecretName(provisioning.gateway);
      for (const object of provisioning.objects as KubeObject[]) {
        const createOnly = object.kind === 'Secret' && object.apiVersion === 'v1' && object.metadata.name === secret;
        const id = `${kindKey(object)} ${objectKey(object)}`;
        wanted.set(id, { object, gateway, createOnly, text: createOnly ? '' : JSON.stringify(object) });
      }
    }
    this.wanted = wanted;
    for (const id of this.applied.keys()) if (!wanted.has(id)) this.applied.delete(id);
    for (const [id, refusal] of this.refusals) {
      if (wanted.get(id)?.gateway !== refusal.gateway) this.refusals.delete(id);
    }
  }

  /** Runs one write; a refusal is remembered (not tried again until something changes) and told. */
  private write(id: string, wanted: Wanted | undefined, current: KubeObject | undefined, run: () => Promise<void>) {
    run().then(
      () => {
        this.refusals.delete(id);
      },
      (error: unknown) => {
        const message = (error as Error).message;
        this.options.log(`${id}: the API server refused gw's write: ${message}`, 'warn');
        if (this.applied.get(id) === wanted?.text) this.applied.delete(id);
        if (!wanted) return;
        const before = this.refusals.get(id);
        this.refusals.set(id, {
          gateway: wanted.gateway,
          text: wanted.text,
          storedVersion: current?.metadata.resourceVersion,
          message,
        });
        if (before?.message !== message) this.options.onRefused();
      },
    );
  }
}

/** Whether `stored` is owned by the Gateway `generated` is (the same uid). */
function ownedBy(stored: KubeObject, generated: KubeObject): boolean {
  const uid = (object: KubeObject) =>
    (object.metadata.ownerReferences as { controller?: boolean; uid?: string }[] | undefined)?.find(
      (ref) => ref.controller === true,
    )?.uid;
  return uid(stored) === uid(generated);
}
