// Server-side apply: merge a manager's applied configuration into the live object through the
// schema (objects and list-type maps merge by field and key, list-type sets by value, the rest
// is replaced), remove what the manager applied before and applies no longer (unless another
// manager also owns it), and refuse to change a value another manager owns unless forced.
import type { SchemaNode } from '../../api/schema/schema.ts';
import { isPlainObject } from '../../util/values.ts';
import {
  canonicalJson,
  childSchema,
  describePath,
  type FieldPath,
  type FieldScope,
  fieldsOf,
  itemKeyElement,
  listType,
  removePath,
  sameValue,
  splitPath,
  valueAt,
} from './field-set.ts';
import { findOwner, isOtherOwner, type OwnerIdentity, type Ownership } from './managers.ts';

export interface ApplyConflict {
  /** The other manager's entry. */
  owner: Ownership;
  path: FieldPath;
}

/** The applied configuration changes values other managers own; the message is kube-apiserver's. */
export class ApplyConflictError extends Error {
  readonly conflicts: ApplyConflict[];
  constructor(conflicts: ApplyConflict[]) {
    super(conflictMessage(conflicts));
    this.conflicts = conflicts;
  }
}

/** How a conflicting manager is named: an Update entry says which API version it used. */
export function describeOwner(owner: Ownership): string {
  const name = JSON.stringify(owner.manager);
  return owner.operation === 'Update' ? `${name} using ${owner.apiVersion}` : name;
}

function conflictMessage(conflicts: ApplyConflict[]): string {
  if (conflicts.length === 1) {
    const [conflict] = conflicts;
    return `Apply failed with 1 conflict: conflict with ${describeOwner(conflict!.owner)}: ${describePath(conflict!.path)}`;
  }
  const byOwner = new Map<string, string[]>();
  for (const conflict of conflicts) {
    const name = describeOwner(conflict.owner);
    byOwner.set(name, [...(byOwner.get(name) ?? []), describePath(conflict.path)]);
  }
  const lines: string[] = [];
  for (const name of [...byOwner.keys()].sort()) {
    lines.push(`conflicts with ${name}:`);
    for (const path of byOwner.get(name)!) lines.push(`- ${path}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

/** Merges `config` into `live` through the schema; neither is modified. */
export function mergeApplied(schema: SchemaNode | undefined, live: unknown, config: unknown): unknown {
  if (config === undefined) return structuredClone(live);
  if (isPlainObject(config) && isPlainObject(live) && schema?.['x-kubernetes-map-type'] !== 'atomic') {
    const out: Record<string, unknown> = structuredClone(live);
    for (const [name, value] of Object.entries(config)) {
      if (value === null) delete out[name];
      else if (value !== undefined) out[name] = mergeApplied(childSchema(schema, name), live[name], value);
    }
    return out;
  }
  if (Array.isArray(config) && Array.isArray(live)) {
    const type = listType(schema);
    if (type === 'map') {
      const keys = schema?.['x-kubernetes-list-map-keys'] ?? [];
      const out = structuredClone(live);
      const positions = new Map(out.map((item, index) => [itemKeyElement(item, keys), index]));
      for (const item of config) {
        const key = itemKeyElement(item, keys);
        const index = positions.get(key);
        if (index === undefined) {
          positions.set(key, out.length);
          out.push(structuredClone(item));
        } else {
          out[index] = mergeApplied(schema?.items, out[index], item);
        }
      }
      return out;
    }
    if (type === 'set') {
      const out = structuredClone(live);
      const seen = new Set(out.map(canonicalJson));
      for (const item of config) if (!seen.has(canonicalJson(item))) out.push(structuredClone(item));
      return out;
    }
  }
  return structuredClone(config);
}

export interface ApplyInput {
  schema: SchemaNode;
  /** The live object; undefined when the apply creates it. */
  live: Record<string, unknown> | undefined;
  config: Record<string, unknown>;
  owners: readonly Ownership[];
  identity: OwnerIdentity;
  scope: FieldScope;
  force: boolean;
  now: string;
}

export interface ApplyOutput {
  object: Record<string, unknown>;
  owners: Ownership[];
}

/** The part of `config` an apply in `scope` may change. */
function scoped(config: Record<string, unknown>, scope: FieldScope): Record<string, unknown> {
  if (scope === 'status') return config.status === undefined ? {} : { status: config.status };
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(config)) {
    if (name === 'status' || name === 'apiVersion' || name === 'kind') continue;
    if (name === 'metadata' && isPlainObject(value)) {
      const { labels, annotations, finalizers, ownerReferences } = value;
      out.metadata = Object.fromEntries(
        Object.entries({ labels, annotations, finalizers, ownerReferences }).filter(([, v]) => v !== undefined),
      );
    } else {
      out[name] = value;
    }
  }
  return out;
}

/** Applies `config` as `identity`; throws ApplyConflictError on conflicts unless `force`. */
export function serverSideApply(input: ApplyInput): ApplyOutput {
  const { schema, identity, scope } = input;
  const live = input.live ?? {};
  const config = scoped(input.config, scope);
  const applied = fieldsOf(schema, config, scope);
  const merged = mergeApplied(schema, live, config) as Record<string, unknown>;

  const conflicts: ApplyConflict[] = [];
  for (const owner of input.owners) {
    if (!isOtherOwner(owner, identity)) continue;
    for (const path of applied) {
      if (!owner.fields.has(path) || splitPath(path).at(-1)!.startsWith('k:')) continue;
      const before = valueAt(schema, live, path);
      if (before !== undefined && !sameValue(before, valueAt(schema, merged, path))) conflicts.push({ owner, path });
    }
  }
  if (conflicts.length > 0 && !input.force) throw new ApplyConflictError(conflicts);

  const forced = new Map<Ownership, Set<FieldPath>>();
  for (const conflict of conflicts) {
    if (!forced.has(conflict.owner)) forced.set(conflict.owner, new Set());
    forced.get(conflict.owner)!.add(conflict.path);
  }
  const owners: Ownership[] = [];
  for (const owner of input.owners) {
    if (!isOtherOwner(owner, identity)) continue;
    const taken = forced.get(owner);
    owners.push({ ...owner, fields: new Set([...owner.fields].filter((path) => !taken?.has(path))) });
  }

  // What this manager applied before and no longer applies goes, unless someone else owns it.
  const previous = findOwner(input.owners, identity)?.fields ?? new Set<FieldPath>();
  const dropped = [...previous].filter((path) => !applied.has(path) && !owners.some((owner) => owner.fields.has(path)));
  // Deepest paths first, so that removing an item does not hide the removal of its fields.
  dropped.sort((a, b) => splitPath(b).length - splitPath(a).length);
  for (const path of dropped) removePath(schema, merged, path);

  owners.unshift({ ...identity, time: input.now, fields: applied });
  return { object: merged, owners: owners.filter((owner) => owner.fields.size > 0 || owner.operation === 'Apply') };
}
