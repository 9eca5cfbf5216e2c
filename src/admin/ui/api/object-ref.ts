// How the UI names an object: its store kind key, kind, namespace and name — what a link to the
// object's page carries (/ui/objects?kind=gw.dev/GwPolicy&namespace=default&name=retry).
import type { KubeObject } from '../../../api/validate/admission.ts';

export interface ObjectRef {
  kindKey: string;
  kind: string;
  namespace?: string;
  name: string;
}

/** The reference of a stored object of `kindKey`. */
export function refOf(kindKey: string, object: KubeObject): ObjectRef {
  return objectRef({
    kindKey,
    kind: object.kind,
    namespace: object.metadata.namespace,
    name: object.metadata.name ?? '',
  });
}

export function objectRef(object: { kindKey: string; kind: string; namespace?: string; name: string }): ObjectRef {
  return {
    kindKey: object.kindKey,
    kind: object.kind,
    ...(object.namespace && { namespace: object.namespace }),
    name: object.name,
  };
}
