// metadata.managedFields: who owns which fields of an object. Each entry is one manager's
// ownership for one operation (Apply, or Update per API version) and one subresource. Updates
// take the fields they change from every other manager; applies own exactly what they applied
// (server-side-apply.ts). Entries are kept bounded as Kubernetes does: beyond ten Update entries
// the oldest are merged into one "ancient-changes" entry.
import { isPlainObject } from '../../util/values.ts';
import { type FieldPath, fromFieldsV1, toFieldsV1 } from './field-set.ts';

export type ManagedOperation = 'Apply' | 'Update';

export interface Ownership {
  manager: string;
  operation: ManagedOperation;
  apiVersion: string;
  time: string;
  subresource?: string;
  fields: Set<FieldPath>;
}

export interface ManagedFieldsEntry {
  manager: string;
  operation: ManagedOperation;
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
  subresource?: string;
}

const MAX_UPDATE_ENTRIES = 10;
const ANCIENT_CHANGES = 'ancient-changes';

/** The owners recorded in an object's metadata.managedFields (entries that do not parse are dropped). */
export function decodeManagedFields(entries: unknown): Ownership[] {
  if (!Array.isArray(entries)) return [];
  const owners: Ownership[] = [];
  for (const entry of entries) {
    if (!isPlainObject(entry) || typeof entry.manager !== 'string') continue;
    if (entry.operation !== 'Apply' && entry.operation !== 'Update') continue;
    owners.push({
      manager: entry.manager,
      operation: entry.operation,
      apiVersion: typeof entry.apiVersion === 'string' ? entry.apiVersion : '',
      time: typeof entry.time === 'string' ? entry.time : '',
      subresource: typeof entry.subresource === 'string' && entry.subresource ? entry.subresource : undefined,
      fields: fromFieldsV1(entry.fieldsV1),
    });
  }
  return owners;
}

/**
 * Whether an entry stays: an Update that owns nothing is gone, but an Apply stays even when it
 * sets no field (an object applied with only its name), so that its manager is still recorded.
 */
function keep(owner: Ownership): boolean {
  return owner.fields.size > 0 || owner.operation === 'Apply';
}

export function encodeManagedFields(owners: readonly Ownership[]): ManagedFieldsEntry[] {
  const entries: ManagedFieldsEntry[] = [];
  for (const owner of owners) {
    if (!keep(owner)) continue;
    const entry: ManagedFieldsEntry = {
      manager: owner.manager,
      operation: owner.operation,
      apiVersion: owner.apiVersion,
      time: owner.time,
      fieldsType: 'FieldsV1',
      fieldsV1: toFieldsV1(owner.fields),
    };
    if (owner.subresource) entry.subresource = owner.subresource;
    entries.push(entry);
  }
  return entries;
}

function sameOwner(
  owner: Ownership,
  identity: { manager: string; operation: ManagedOperation; apiVersion: string; subresource?: string },
) {
  return (
    owner.manager === identity.manager &&
    owner.operation === identity.operation &&
    (owner.subresource ?? '') === (identity.subresource ?? '') &&
    (identity.operation === 'Apply' || owner.apiVersion === identity.apiVersion)
  );
}

export interface OwnerIdentity {
  manager: string;
  operation: ManagedOperation;
  apiVersion: string;
  subresource?: string;
}

/** The entry of one manager, operation and subresource (Update entries are per API version too). */
export function findOwner(owners: readonly Ownership[], identity: OwnerIdentity): Ownership | undefined {
  return owners.find((owner) => sameOwner(owner, identity));
}

/** Returns whether `owner` is anyone other than `identity`. */
export function isOtherOwner(owner: Ownership, identity: OwnerIdentity): boolean {
  return !sameOwner(owner, identity);
}

/**
 * Records a create, update or patch by `identity` (operation Update): it takes ownership of the
 * fields it changed, from whoever held them; removed fields leave every set.
 */
export function recordUpdate(
  owners: readonly Ownership[],
  identity: OwnerIdentity,
  changes: { changed: Set<FieldPath>; removed: Set<FieldPath> },
  now: string,
): Ownership[] {
  const next = owners.map((owner) => ({ ...owner, fields: new Set(owner.fields) }));
  for (const owner of next) {
    for (const path of changes.changed) if (!sameOwner(owner, identity)) owner.fields.delete(path);
    for (const path of changes.removed) owner.fields.delete(path);
  }
  if (changes.changed.size > 0) {
    let own = next.find((owner) => sameOwner(owner, identity));
    if (!own) {
      own = { ...identity, time: now, fields: new Set() };
      next.push(own);
    }
    for (const path of changes.changed) own.fields.add(path);
    own.time = now;
  }
  return capUpdateEntries(next.filter(keep));
}

/** Drops from every set the paths `exists` says are no longer in the object. */
export function dropMissingFields(owners: readonly Ownership[], exists: (path: FieldPath) => boolean): Ownership[] {
  return owners.map((owner) => ({ ...owner, fields: new Set([...owner.fields].filter(exists)) })).filter(keep);
}

function capUpdateEntries(owners: Ownership[]): Ownership[] {
  const updates = owners.filter((owner) => owner.operation === 'Update' && owner.manager !== ANCIENT_CHANGES);
  if (updates.length <= MAX_UPDATE_ENTRIES) return owners;
  const oldest = [...updates]
    .sort((a, b) => a.time.localeCompare(b.time))
    .slice(0, updates.length - MAX_UPDATE_ENTRIES);
  const merged = new Set(oldest);
  let ancient = owners.find((owner) => owner.manager === ANCIENT_CHANGES && owner.operation === 'Update');
  const kept = owners.filter((owner) => !merged.has(owner));
  if (!ancient) {
    ancient = { manager: ANCIENT_CHANGES, operation: 'Update', apiVersion: '', time: '', fields: new Set() };
    kept.push(ancient);
  }
  for (const owner of oldest) {
    for (const path of owner.fields) ancient.fields.add(path);
    if (owner.time > ancient.time) ancient.time = owner.time;
    ancient.apiVersion ||= owner.apiVersion;
  }
  return kept;
}
