// The order Gateway API uses to settle conflicts between objects: the oldest first, then by
// "namespace/name".
import type { KubeObject } from '../api/validate/admission.ts';
import { objectKey } from '../store/store.ts';

export function byCreationThenKey(a: KubeObject, b: KubeObject): number {
  const ta = a.metadata.creationTimestamp ?? '';
  const tb = b.metadata.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? -1 : 1;
  const ka = objectKey(a);
  const kb = objectKey(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}
