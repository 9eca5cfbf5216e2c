// GwParameters overlays (spec document 2, "Overlay rules"): labels and annotations merged into
// a generated object's metadata, and a partial spec merged into its .spec by strategic merge
// patch. Overlays apply in order, GatewayClass parameters first and Gateway parameters second,
// so the Gateway's value wins. An overlay that cannot apply is returned as problems naming the
// overlay's field path, for GwParameters' status; the object is then not to be provisioned.
import type { JsonValue } from '../api/schema/schema.ts';
import type { GwParametersSpec, KubernetesResourceOverlay } from '../api/types/provisioning.ts';
import { type OverlayTargetKind, SPEC_SHAPES } from './merge-keys.ts';
import { strategicMerge } from './strategic-merge.ts';

/** A Kubernetes object as gw generates it: plain JSON. */
export interface GeneratedObject {
  apiVersion: string;
  kind: OverlayTargetKind;
  metadata: {
    name: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  spec?: { [key: string]: JsonValue };
  [key: string]: unknown;
}

/** One overlay and where it was written, e.g. field `spec.deployment` of `GwParameters infra/class-params`. */
export interface SourcedOverlay {
  overlay: KubernetesResourceOverlay;
  /** The GwParameters the overlay is in, as `namespace/name`. */
  parameters: string;
  /** The overlay's field in that GwParameters, e.g. `spec.deployment`. */
  field: string;
}

/** Why an overlay cannot apply: the GwParameters, the full field path in it, and the reason. */
export interface OverlayProblem {
  parameters: string;
  field: string;
  message: string;
}

export type OverlayResult<T extends GeneratedObject> =
  | { ok: true; object: T }
  | { ok: false; problems: OverlayProblem[] };

/** The GwParametersSpec field holding the overlay for each kind of generated object. */
export const OVERLAY_FIELDS = {
  Deployment: 'deployment',
  DaemonSet: 'daemonSet',
  Service: 'service',
  ServiceAccount: 'serviceAccount',
  PodDisruptionBudget: 'podDisruptionBudget',
  HorizontalPodAutoscaler: 'horizontalPodAutoscaler',
} as const satisfies Record<OverlayTargetKind, keyof GwParametersSpec>;

/** The parameters of one level (GatewayClass or Gateway): which GwParameters and its spec. */
export interface ParametersLevel {
  parameters: string;
  spec: GwParametersSpec;
}

/**
 * The overlays for a kind of generated object, in the order the spec applies them:
 * the GatewayClass parameters' overlay, then the Gateway parameters' overlay.
 */
export function overlaysFor(
  kind: OverlayTargetKind,
  levels: { gatewayClass?: ParametersLevel; gateway?: ParametersLevel },
): SourcedOverlay[] {
  const field = OVERLAY_FIELDS[kind];
  const overlays: SourcedOverlay[] = [];
  for (const level of [levels.gatewayClass, levels.gateway]) {
    const overlay = level?.spec[field];
    if (overlay) overlays.push({ overlay, parameters: level.parameters, field: `spec.${field}` });
  }
  return overlays;
}

/**
 * Applies overlays in the order given (later wins). Every overlay is checked, so all problems are
 * reported at once; with any problem there is no object to provision.
 */
export function applyOverlays<T extends GeneratedObject>(object: T, overlays: SourcedOverlay[]): OverlayResult<T> {
  let current = object;
  const problems: OverlayProblem[] = [];
  for (const overlay of overlays) {
    const result = applyOverlay(current, overlay);
    if (result.ok) current = result.object;
    else problems.push(...result.problems);
  }
  return problems.length === 0 ? { ok: true, object: current } : { ok: false, problems };
}

/** Applies one overlay to a generated object; the object given is not modified. */
export function applyOverlay<T extends GeneratedObject>(object: T, source: SourcedOverlay): OverlayResult<T> {
  const { overlay, parameters, field } = source;
  // A copy, so the caller's object and the result share nothing.
  const patched = structuredClone(object);
  const { labels, annotations } = overlay.metadata ?? {};
  if (labels) patched.metadata.labels = { ...patched.metadata.labels, ...labels };
  if (annotations) patched.metadata.annotations = { ...patched.metadata.annotations, ...annotations };

  const spec = overlay.spec;
  if (spec === undefined || Object.keys(spec).length === 0) return { ok: true, object: patched };
  const shape = SPEC_SHAPES[object.kind];
  if (shape === null) {
    const message = `a ${object.kind} has no spec; only metadata (labels, annotations) can be overlaid`;
    return { ok: false, problems: [{ parameters, field: `${field}.spec`, message }] };
  }
  const merged = strategicMerge(patched.spec, spec, shape, 'spec');
  if (merged.problems.length > 0) {
    return {
      ok: false,
      problems: merged.problems.map((p) => ({ parameters, field: `${field}.${p.path}`, message: p.message })),
    };
  }
  if (merged.value === undefined) delete patched.spec;
  else patched.spec = merged.value;
  return { ok: true, object: patched };
}
