// Every object's status as the controller wrote it, read back from a store in one structured
// shape: its own conditions, then per listener, parent (routes) and ancestor (policies). gw status
// prints it (src/cli/status.ts); the web UI's Overview and Policies pages show it
// (src/admin/ui/api/). One reading of the statuses, two renderings.
import type { Condition } from '../api/kinds/gateway-api/shared.ts';
import type { Store } from '../store/store.ts';
import { SNAPSHOT_KINDS } from './snapshot.ts';

export interface StatusRef {
  group?: string;
  kind?: string;
  namespace?: string;
  name: string;
  sectionName?: string;
}

export interface ListenerStatus {
  name: string;
  attachedRoutes: number;
  conditions: Condition[];
}

export interface RelationStatus {
  /** A route's parent (a Gateway, a listener of it) or a policy's ancestor. */
  role: 'parent' | 'ancestor';
  ref: StatusRef;
  conditions: Condition[];
}

export interface ObjectStatus {
  kind: string;
  /** The store's kind key (group/Kind). */
  kindKey: string;
  namespace?: string;
  name: string;
  /** False when the object has no status at all (not handled by gw, or nobody wrote one). */
  hasStatus: boolean;
  conditions: Condition[];
  listeners: ListenerStatus[];
  relations: RelationStatus[];
}

/** Kinds gw reads but writes no status for. */
const WITHOUT_STATUS = new Set([
  '/Secret',
  '/ConfigMap',
  '/Service',
  '/Namespace',
  'gateway.networking.k8s.io/ReferenceGrant',
]);

/** Conditions that report a problem when True (the rest report one when not True). */
const TRUE_IS_A_PROBLEM = new Set(['Conflicted']);

/** Whether a condition says something is wrong. */
export function isProblem(condition: Condition): boolean {
  return TRUE_IS_A_PROBLEM.has(condition.type) ? condition.status === 'True' : condition.status !== 'True';
}

/** "Gateway ns/name section" for a parent or ancestor reference (Gateway when it names no kind). */
export function refText(ref: StatusRef): string {
  return `${ref.kind ?? 'Gateway'} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}${ref.sectionName ? ` ${ref.sectionName}` : ''}`;
}

interface RelationEntry {
  parentRef?: StatusRef;
  ancestorRef?: StatusRef;
  conditions?: Condition[];
}

/** The statuses of every object of the kinds gw writes statuses for, sorted by kind then namespace/name. */
export function objectStatuses(store: Store): ObjectStatus[] {
  const out: ObjectStatus[] = [];
  for (const kindKey of Object.values(SNAPSHOT_KINDS)) {
    if (WITHOUT_STATUS.has(kindKey)) continue;
    const items = store
      .list(kindKey)
      .items.sort((a, b) =>
        `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`),
      );
    for (const object of items) {
      const status = object.status as Record<string, unknown> | undefined;
      const listeners =
        (status?.listeners as { name: string; attachedRoutes?: number; conditions?: Condition[] }[]) ?? [];
      const relations: RelationStatus[] = [];
      for (const entry of [
        ...((status?.parents as RelationEntry[]) ?? []),
        ...((status?.ancestors as RelationEntry[]) ?? []),
      ]) {
        relations.push({
          role: entry.parentRef ? 'parent' : 'ancestor',
          ref: (entry.parentRef ?? entry.ancestorRef)!,
          conditions: entry.conditions ?? [],
        });
      }
      out.push({
        kind: object.kind,
        kindKey,
        ...(object.metadata.namespace && { namespace: object.metadata.namespace }),
        name: object.metadata.name ?? '',
        hasStatus: status !== undefined,
        conditions: (status?.conditions as Condition[]) ?? [],
        listeners: listeners.map((l) => ({
          name: l.name,
          attachedRoutes: l.attachedRoutes ?? 0,
          conditions: l.conditions ?? [],
        })),
        relations,
      });
    }
  }
  return out;
}

/** The key of an object's status in statusesByObject. */
export function statusKey(kindKey: string, namespace: string | undefined, name: string): string {
  return `${kindKey} ${namespace ? `${namespace}/` : ''}${name}`;
}

/** objectStatuses by statusKey. */
export function statusesByObject(store: Store): Map<string, ObjectStatus> {
  return new Map(
    objectStatuses(store).map((status) => [statusKey(status.kindKey, status.namespace, status.name), status]),
  );
}
