// Which lists of the objects gw provisions merge element by element, and on which key: the
// strategic-merge patch tags of Kubernetes' apps/v1, core/v1, policy/v1 and autoscaling/v2
// types, restricted to the fields of the six objects a GwParameters overlay can target.
// A list not named here (args, command, affinity terms, HPA metrics, ...) is replaced whole.

/** The shape of one object field, as far as strategic merge cares: its fields, or its list merge key. */
export interface MergeShape {
  /** Shapes of the fields of a JSON object; fields not listed merge as plain maps. */
  readonly fields?: Readonly<Record<string, MergeShape>>;
  /** For a list: the key its object elements merge on; absent means the list is replaced. */
  readonly mergeKey?: string;
  /** For a list: the shape of each element. */
  readonly items?: MergeShape;
}

const fields = (shapes: Record<string, MergeShape>): MergeShape => ({ fields: shapes });
const mergedBy = (mergeKey: string, items?: MergeShape): MergeShape => (items ? { mergeKey, items } : { mergeKey });

const container = fields({
  ports: mergedBy('containerPort'),
  env: mergedBy('name'),
  volumeMounts: mergedBy('mountPath'),
  volumeDevices: mergedBy('devicePath'),
});

const podSpec = fields({
  containers: mergedBy('name', container),
  initContainers: mergedBy('name', container),
  ephemeralContainers: mergedBy('name', container),
  volumes: mergedBy('name'),
  imagePullSecrets: mergedBy('name'),
  hostAliases: mergedBy('ip'),
  // Kubernetes itself replaces tolerations whole; spec document 2 merges them by key, as
  // agentgateway does, so a Gateway can add one toleration without restating the class's.
  tolerations: mergedBy('key'),
  topologySpreadConstraints: mergedBy('topologyKey'),
  resourceClaims: mergedBy('name'),
  schedulingGates: mergedBy('name'),
});

const podTemplate = fields({ spec: podSpec });

/** The kinds a GwParameters overlay targets. */
export type OverlayTargetKind =
  | 'Deployment'
  | 'DaemonSet'
  | 'Service'
  | 'ServiceAccount'
  | 'PodDisruptionBudget'
  | 'HorizontalPodAutoscaler';

/**
 * The shape of `.spec` of each target kind; null for ServiceAccount, which has no spec.
 * PodDisruptionBudget and HorizontalPodAutoscaler specs have no merging lists (HPA metrics and
 * behavior policies are atomic in Kubernetes), so every list there is replaced.
 */
export const SPEC_SHAPES: Readonly<Record<OverlayTargetKind, MergeShape | null>> = {
  Deployment: fields({ template: podTemplate }),
  DaemonSet: fields({ template: podTemplate }),
  Service: fields({ ports: mergedBy('port') }),
  ServiceAccount: null,
  PodDisruptionBudget: fields({}),
  HorizontalPodAutoscaler: fields({}),
};
