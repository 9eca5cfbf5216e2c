// The strategic-merge strategies a schema declares (x-kubernetes-patch-strategy and
// x-kubernetes-patch-merge-key on its lists, as Kubernetes' built-in types tag them), by field
// path: the one table the API server's strategic merge patch, its OpenAPI documents and the
// provisioning overlays all read.
import type { SchemaNode } from './schema.ts';

/** How one list merges: object items by mergeKey, or (no mergeKey) as a set of scalars. */
export interface ListStrategy {
  mergeKey?: string;
}

/**
 * Every list of `schema` that merges, by its dotted field path ("spec.template.spec.containers";
 * a list inside a list's items continues the path: "spec.template.spec.containers.ports").
 * Lists not returned are replaced whole by a patch.
 */
export function patchStrategiesOf(schema: SchemaNode): Map<string, ListStrategy> {
  const strategies = new Map<string, ListStrategy>();
  walk(schema, '', strategies);
  return strategies;
}

function walk(node: SchemaNode, path: string, strategies: Map<string, ListStrategy>): void {
  if (node.type === 'array') {
    if (node['x-kubernetes-patch-strategy'] === 'merge') {
      const mergeKey = node['x-kubernetes-patch-merge-key'];
      strategies.set(path, mergeKey === undefined ? {} : { mergeKey });
    }
    if (node.items) walk(node.items, path, strategies);
    return;
  }
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    walk(child, path === '' ? name : `${path}.${name}`, strategies);
  }
}
