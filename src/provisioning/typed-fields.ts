// The effective typed fields of a Gateway's GwParameters: the GatewayClass's, then the Gateway's
// over them (spec document 2, overlay rules: "GatewayClass typed fields, Gateway typed fields",
// later wins). Scalars overwrite; nested objects merge field by field; env merges by name;
// resources merge per resource name. modelCatalog counts only from the Gateway (spec document 1).
// The overlays (deployment, service, ...) are not typed fields: they are applied afterwards
// (overlay.ts); here only whether a PodDisruptionBudget or HorizontalPodAutoscaler overlay exists
// matters, since its presence creates the object.
import type { GwParametersSpec, KubernetesResourceOverlay } from '../api/types/provisioning.ts';
import { mergeEnv } from './env.ts';

export interface EffectiveTypedFields {
  workloadKind: 'Deployment' | 'DaemonSet';
  /** What the typed fields set (no defaults: rawConfig's logging stands where they set nothing). */
  logging: { level?: string; format?: 'json' | 'text' };
  image: NonNullable<GwParametersSpec['image']>;
  env: NonNullable<GwParametersSpec['env']>;
  resources?: GwParametersSpec['resources'];
  shutdown?: GwParametersSpec['shutdown'];
  rawConfig?: GwParametersSpec['rawConfig'];
  mesh?: GwParametersSpec['mesh'];
  modelCatalog?: GwParametersSpec['modelCatalog'];
  /** The PDB overlays, GatewayClass's then Gateway's; a PDB exists when either is present. */
  podDisruptionBudget: KubernetesResourceOverlay[];
  /** The HPA overlays, likewise. */
  horizontalPodAutoscaler: KubernetesResourceOverlay[];
}

/** Fields of `over` replace those of `base`, one level deep (absent fields keep the base's). */
function mergeShallow<T extends object>(base: T | undefined, over: T | undefined): T | undefined {
  if (base === undefined) return over;
  if (over === undefined) return base;
  return { ...base, ...over };
}

/** JSON objects merge recursively; anything else in `over` replaces. */
function mergeJson(base: unknown, over: unknown): unknown {
  if (over === undefined) return base;
  const isObject = (value: unknown): value is Record<string, unknown> =>
    typeof value === 'object' && value !== null && !Array.isArray(value);
  if (!isObject(base) || !isObject(over)) return over;
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) merged[key] = mergeJson(base[key], value);
  return merged;
}

function mergeResources(
  base: GwParametersSpec['resources'],
  over: GwParametersSpec['resources'],
): GwParametersSpec['resources'] {
  if (base === undefined || over === undefined) return over ?? base;
  const merged: NonNullable<GwParametersSpec['resources']> = {};
  const limits = mergeShallow(base.limits, over.limits);
  const requests = mergeShallow(base.requests, over.requests);
  const claims = over.claims ?? base.claims;
  if (limits !== undefined) merged.limits = limits;
  if (requests !== undefined) merged.requests = requests;
  if (claims !== undefined) merged.claims = claims;
  return merged;
}

const present = <T>(...values: (T | undefined)[]): T[] => values.filter((value): value is T => value !== undefined);

/** The typed fields in force for a Gateway whose class and itself may each name GwParameters. */
export function effectiveTypedFields(
  gatewayClass: GwParametersSpec | undefined,
  gateway: GwParametersSpec | undefined,
): EffectiveTypedFields {
  const classSpec = gatewayClass ?? {};
  const gatewaySpec = gateway ?? {};
  const logging = mergeShallow(classSpec.logging, gatewaySpec.logging) ?? {};
  const effective: EffectiveTypedFields = {
    workloadKind: gatewaySpec.workload?.kind ?? classSpec.workload?.kind ?? 'Deployment',
    logging,
    image: mergeShallow(classSpec.image, gatewaySpec.image) ?? {},
    env: mergeEnv(classSpec.env ?? [], gatewaySpec.env ?? []),
    podDisruptionBudget: present(classSpec.podDisruptionBudget, gatewaySpec.podDisruptionBudget),
    horizontalPodAutoscaler: present(classSpec.horizontalPodAutoscaler, gatewaySpec.horizontalPodAutoscaler),
  };
  const resources = mergeResources(classSpec.resources, gatewaySpec.resources);
  if (resources !== undefined) effective.resources = resources;
  const shutdown = mergeShallow(classSpec.shutdown, gatewaySpec.shutdown);
  if (shutdown !== undefined) effective.shutdown = shutdown;
  const rawConfig = mergeJson(classSpec.rawConfig, gatewaySpec.rawConfig);
  if (rawConfig !== undefined) effective.rawConfig = rawConfig as GwParametersSpec['rawConfig'];
  const mesh = mergeShallow(classSpec.mesh, gatewaySpec.mesh);
  if (mesh !== undefined) effective.mesh = mesh;
  // Spec document 1: modelCatalog is effective only on Gateway-level parameters.
  if (gatewaySpec.modelCatalog !== undefined) effective.modelCatalog = gatewaySpec.modelCatalog;
  return effective;
}
