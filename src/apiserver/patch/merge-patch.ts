// JSON merge patch (RFC 7386): objects merge key by key, null removes a key, anything else
// (arrays included) replaces.
import { isPlainObject } from '../../util/values.ts';

/** Returns the patched value; `target` is not modified. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isPlainObject(target) ? structuredClone(target) : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = applyMergePatch(out[key], value);
  }
  return out;
}
