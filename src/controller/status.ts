// Writing status as Kubernetes controllers do: a condition keeps its lastTransitionTime while its
// status value stays the same, so re-translating an unchanged world writes nothing.

import { isPlainObject } from '../util/values.ts';

/** The identity of an entry in a status list: a condition's type, a parent's ref, a listener's name. */
function entryKey(entry: unknown): string | undefined {
  if (!isPlainObject(entry)) return undefined;
  if (typeof entry.type === 'string' && 'status' in entry) return `type:${entry.type}`;
  if (entry.parentRef !== undefined) return `parent:${JSON.stringify(entry.parentRef)}`;
  if (entry.ancestorRef !== undefined) return `ancestor:${JSON.stringify(entry.ancestorRef)}`;
  if (typeof entry.name === 'string') return `name:${entry.name}`;
  return undefined;
}

/**
 * Returns `next` with the lastTransitionTime of every condition whose status did not change
 * taken from `previous`. Conditions are matched by type within their list; list entries (parents,
 * ancestors, listeners) by their reference or name.
 */
export function keepTransitionTimes<T>(previous: unknown, next: T): T {
  if (Array.isArray(next)) {
    const before = new Map<string, unknown>();
    if (Array.isArray(previous)) {
      for (const entry of previous) {
        const key = entryKey(entry);
        if (key) before.set(key, entry);
      }
    }
    return next.map((entry) => {
      const key = entryKey(entry);
      return keepTransitionTimes(key ? before.get(key) : undefined, entry);
    }) as T;
  }
  if (!isPlainObject(next)) return next;
  const out: Record<string, unknown> = {};
  const old = isPlainObject(previous) ? previous : undefined;
  for (const [field, value] of Object.entries(next)) out[field] = keepTransitionTimes(old?.[field], value);
  if (
    typeof next.type === 'string' &&
    typeof next.lastTransitionTime === 'string' &&
    old !== undefined &&
    old.status === next.status &&
    typeof old.lastTransitionTime === 'string'
  ) {
    out.lastTransitionTime = old.lastTransitionTime;
  }
  return out as T;
}
