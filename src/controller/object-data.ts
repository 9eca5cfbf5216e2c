// The data of a Secret or ConfigMap as the data plane reads it (DataPlaneConfig.data): the
// configuration carries it, and the controller judges a referenced Secret's contents with it.
import type { KubeObject } from '../api/validate/admission.ts';

/** A Secret's or ConfigMap's data as text: base64 fields decoded, stringData applied last. */
export function objectData(object: KubeObject): Record<string, string> {
  const out: Record<string, string> = {};
  const decode = (fields: unknown) => {
    for (const [key, value] of Object.entries((fields ?? {}) as Record<string, string>)) {
      out[key] = Buffer.from(value, 'base64').toString('utf8');
    }
  };
  if (object.kind === 'Secret') {
    decode(object.data);
    Object.assign(out, object.stringData ?? {});
  } else {
    Object.assign(out, object.data ?? {});
    decode(object.binaryData);
  }
  return out;
}
