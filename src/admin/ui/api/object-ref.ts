// How the UI names an object: its store kind key, kind, namespace and name — what a link to the
// object's page carries (/ui/objects?kind=gw.dev/GwPolicy&namespace=default&name=retry).
export interface ObjectRef {
  kindKey: string;
  kind: string;
  namespace?: string;
  name: string;
}

export function objectRef(object: { kindKey: string; kind: string; namespace?: string; name: string }): ObjectRef {
  return {
    kindKey: object.kindKey,
    kind: object.kind,
    ...(object.namespace && { namespace: object.namespace }),
    name: object.name,
  };
}
