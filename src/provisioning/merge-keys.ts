// Which lists of the objects gw provisions merge element by element, and on which key: read from
// the strategic-merge tags of the built-in kinds' schemas (src/api/kinds: apps/v1, core/v1,
// policy/v1, autoscaling/v2, the one table the embedded API server's patches use too), for the
// six objects a GwParameters overlay can target. One difference from Kubernetes is the spec's:
// tolerations merge by key. A list not tagged (args, command, affinity terms, HPA metrics, ...)
// is replaced whole.
import { appsKinds } from '../api/kinds/apps/kinds.ts';
import { autoscalingKinds } from '../api/kinds/autoscaling/kinds.ts';
import { coreKinds } from '../api/kinds/core/kinds.ts';
import type { KindDefinition } from '../api/kinds/kind.ts';
import { policyKinds } from '../api/kinds/policy/kinds.ts';
import type { SchemaNode } from '../api/schema/schema.ts';

/** The shape of one object field, as far as strategic merge cares: its fields, or its list merge key. */
export interface MergeShape {
  /** Shapes of the fields of a JSON object; fields not listed merge as plain maps. */
  readonly fields?: Readonly<Record<string, MergeShape>>;
  /** For a list: the key its object elements merge on; absent means the list is replaced. */
  readonly mergeKey?: string;
  /** For a list: the shape of each element. */
  readonly items?: MergeShape;
}

/** The kinds a GwParameters overlay targets. */
export type OverlayTargetKind =
  | 'Deployment'
  | 'DaemonSet'
  | 'Service'
  | 'ServiceAccount'
  | 'PodDisruptionBudget'
  | 'HorizontalPodAutoscaler';

/** The merge shape of a schema node: undefined when nothing under it merges by key. */
function shapeOf(node: SchemaNode): MergeShape | undefined {
  if (node.type === 'array') {
    const mergeKey = node['x-kubernetes-patch-merge-key'];
    if (mergeKey === undefined) return undefined;
    const items = node.items && shapeOf(node.items);
    return items ? { mergeKey, items } : { mergeKey };
  }
  const fields: Record<string, MergeShape> = {};
  for (const [name, child] of Object.entries(node.properties ?? {})) {
    const shape = shapeOf(child);
    if (shape) fields[name] = shape;
  }
  return Object.keys(fields).length > 0 ? { fields } : undefined;
}

/** A shape with the list at `path` (field names from the shape's root) merged by `mergeKey`. */
function withListKey(shape: MergeShape, path: readonly string[], mergeKey: string): MergeShape {
  const [name, ...rest] = path;
  if (name === undefined) return { ...shape, mergeKey };
  const child = shape.fields?.[name] ?? {};
  return { ...shape, fields: { ...shape.fields, [name]: withListKey(child, rest, mergeKey) } };
}

const byKind = new Map<string, KindDefinition>(
  [...appsKinds, ...coreKinds, ...policyKinds, ...autoscalingKinds].map((definition) => [definition.kind, definition]),
);

function specShape(kind: OverlayTargetKind): MergeShape {
  const spec = byKind.get(kind)?.schema.properties?.spec;
  return (spec && shapeOf(spec)) ?? { fields: {} };
}

/**
 * Kubernetes replaces tolerations whole; spec document 2 merges them by key, as agentgateway does,
 * so a Gateway can add one toleration without restating the class's.
 */
const podTemplateSpec = (kind: 'Deployment' | 'DaemonSet') =>
  withListKey(specShape(kind), ['template', 'spec', 'tolerations'], 'key');

/** The shape of `.spec` of each target kind; null for ServiceAccount, which has no spec. */
export const SPEC_SHAPES: Readonly<Record<OverlayTargetKind, MergeShape | null>> = {
  Deployment: podTemplateSpec('Deployment'),
  DaemonSet: podTemplateSpec('DaemonSet'),
  Service: specShape('Service'),
  ServiceAccount: null,
  PodDisruptionBudget: specShape('PodDisruptionBudget'),
  HorizontalPodAutoscaler: specShape('HorizontalPodAutoscaler'),
};
