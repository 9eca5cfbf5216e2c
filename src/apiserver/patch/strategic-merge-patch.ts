// Strategic merge patch, which kubectl sends for the built-in kinds (kubectl apply, patch, edit):
// a merge patch whose lists merge by a key where the type says so (Service ports by port,
// finalizers as a set) and which carries directives — `$patch: replace|delete|merge`,
// `$retainKeys`, `$deleteFromPrimitiveList/<list>`, `$setElementOrder/<list>`. Custom resources
// (gw.dev and Gateway API kinds) do not accept it, as in Kubernetes.
import type { ListStrategy } from '../../api/schema/patch-strategies.ts';
import { isPlainObject } from '../../util/values.ts';
import { canonicalJson } from '../managed-fields/field-set.ts';
import { PatchError } from './json-patch.ts';

/** How a list merges, by its field path ("spec.ports"): by a key field, or as a set of scalars. */
export type ListStrategies = ReadonlyMap<string, ListStrategy>;

const SET_ORDER = '$setElementOrder/';
const DELETE_FROM = '$deleteFromPrimitiveList/';

function joinPath(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

function withoutDirectives(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDirectives);
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    if (key.startsWith('$')) continue;
    out[key] = withoutDirectives(child);
  }
  return out;
}

function mergeList(original: unknown, patch: unknown[], path: string, strategies: ListStrategies): unknown[] {
  const strategy = strategies.get(path);
  const base = Array.isArray(original) ? original : [];
  if (!strategy) return withoutDirectives(patch) as unknown[];
  if (patch.some((item) => isPlainObject(item) && item.$patch === 'replace')) {
    return withoutDirectives(patch.filter((item) => !(isPlainObject(item) && item.$patch === 'replace'))) as unknown[];
  }
  if (strategy.mergeKey === undefined) {
    const out = [...base];
    const seen = new Set(out.map(canonicalJson));
    for (const item of patch) if (!seen.has(canonicalJson(item))) out.push(item);
    return out;
  }
  const key = strategy.mergeKey;
  const out = base.map((item) => structuredClone(item));
  for (const item of patch) {
    if (!isPlainObject(item) || !(key in item)) {
      throw new PatchError(`every item of ${path} must be an object with the merge key "${key}"`);
    }
    const index = out.findIndex((existing) => isPlainObject(existing) && sameKey(existing[key], item[key]));
    if (item.$patch === 'delete') {
      if (index !== -1) out.splice(index, 1);
    } else if (index === -1) {
      out.push(withoutDirectives(item));
    } else {
      out[index] = mergeObject(out[index], item, path, strategies);
    }
  }
  return out;
}

function sameKey(a: unknown, b: unknown): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** Orders a merged list as `$setElementOrder` says; items it does not name keep their place after. */
function orderList(list: unknown[], order: unknown[], mergeKey: string | undefined): unknown[] {
  const keyOf = (item: unknown) => canonicalJson(mergeKey !== undefined && isPlainObject(item) ? item[mergeKey] : item);
  const rank = new Map(order.map((item, index) => [keyOf(item), index]));
  return list
    .map((item, index) => ({ item, index }))
    .sort((a, b) => {
      const ra = rank.get(keyOf(a.item)) ?? order.length + a.index;
      const rb = rank.get(keyOf(b.item)) ?? order.length + b.index;
      return ra - rb;
    })
    .map(({ item }) => item);
}

function mergeObject(
  original: unknown,
  patch: Record<string, unknown>,
  path: string,
  strategies: ListStrategies,
): unknown {
  const directive = patch.$patch;
  if (directive === 'replace') return withoutDirectives(patch);
  if (directive === 'delete') return undefined;
  if (directive !== undefined && directive !== 'merge') throw new PatchError(`unknown $patch directive "${directive}"`);
  const out: Record<string, unknown> = isPlainObject(original) ? structuredClone(original) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$')) continue;
    const childPath = joinPath(path, key);
    if (value === null) delete out[key];
    else if (isPlainObject(value)) {
      const merged = mergeObject(out[key], value, childPath, strategies);
      if (merged === undefined) delete out[key];
      else out[key] = merged;
    } else if (Array.isArray(value)) out[key] = mergeList(out[key], value, childPath, strategies);
    else out[key] = value;
  }
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith(DELETE_FROM)) {
      const field = key.slice(DELETE_FROM.length);
      if (!Array.isArray(value)) throw new PatchError(`${key} must be a list`);
      const drop = new Set(value.map(canonicalJson));
      if (Array.isArray(out[field]))
        out[field] = (out[field] as unknown[]).filter((item) => !drop.has(canonicalJson(item)));
    } else if (key.startsWith(SET_ORDER)) {
      const field = key.slice(SET_ORDER.length);
      if (!Array.isArray(value)) throw new PatchError(`${key} must be a list`);
      if (Array.isArray(out[field])) {
        out[field] = orderList(out[field] as unknown[], value, strategies.get(joinPath(path, field))?.mergeKey);
      }
    }
  }
  if (patch.$retainKeys !== undefined) {
    if (!Array.isArray(patch.$retainKeys)) throw new PatchError('$retainKeys must be a list');
    const keep = new Set(patch.$retainKeys);
    for (const key of Object.keys(out)) if (!keep.has(key)) delete out[key];
  }
  return out;
}

/** Returns the patched object; `original` is not modified. */
export function applyStrategicMergePatch(original: unknown, patch: unknown, strategies: ListStrategies): unknown {
  if (!isPlainObject(patch)) throw new PatchError('a strategic merge patch must be a JSON object', true);
  const merged = mergeObject(original, patch, '', strategies);
  if (merged === undefined) throw new PatchError('a strategic merge patch cannot delete the whole object');
  return merged;
}
