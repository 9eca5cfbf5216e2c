// InferencePools (Gateway API Inference Extension) that custom LLM providers send to
// (docs/decisions/0049-inference-pool.md): what goes into a Gateway's configuration — the pool's
// spec and the IPs of the ready Pods its selector picks, from the Pods the controller reads for
// the mesh — and the pool's status: one entry per gw Gateway whose configuration uses it, with
// Accepted and ResolvedRefs (its endpoint picker) as the extension defines them. (Entries other
// controllers wrote are kept by the store that writes the status: store/kube/kube-store.ts.)
import type { PodStatus } from '../api/kinds/core/pod-status.ts';
import type { ServiceSpec } from '../api/kinds/core/service.ts';
import {
  type InferencePoolParentStatus,
  type InferencePoolSpec,
  type InferencePoolStatus,
  pickerServiceName,
  pickerServiceTypeProblem,
} from '../api/kinds/inference/inference-pool.ts';
import type { KubeObject } from '../api/validate/admission.ts';
import type { DataPlaneConfig, InferencePoolConfig } from '../contract/dataplane-config.ts';
import { condition, contextOf, sortConditions } from './gateway-api/conditions.ts';
import { CONTROLLER_NAME } from './gateway-api/types.ts';
import type { Snapshot } from './snapshot.ts';

/** A Pod that serves: not being deleted, with an IP, and Ready (the kubelet's readiness probe passed). */
function readyIp(pod: KubeObject): string | undefined {
  if (pod.metadata.deletionTimestamp !== undefined) return undefined;
  const status = pod.status as PodStatus | undefined;
  if (!status?.podIP) return undefined;
  const ready = status.conditions?.find((entry) => entry.type === 'Ready');
  return ready?.status === 'True' ? status.podIP : undefined;
}

/** The pool's spec and the IPs of the ready Pods of its namespace that carry all its matchLabels. */
export function poolConfig(pool: KubeObject, snapshot: Snapshot): InferencePoolConfig {
  const spec = pool.spec as InferencePoolSpec;
  const namespace = pool.metadata.namespace ?? 'default';
  const wanted = Object.entries(spec.selector.matchLabels);
  const endpoints = new Set<string>();
  for (const pod of snapshot.pods.values()) {
    if ((pod.metadata.namespace ?? 'default') !== namespace) continue;
    const labels = pod.metadata.labels ?? {};
    if (!wanted.every(([key, value]) => labels[key] === value)) continue;
    const ip = readyIp(pod);
    if (ip !== undefined) endpoints.add(ip);
  }
  return { kind: 'InferencePool', spec, endpoints: [...endpoints].sort() };
}

/** Why the pool's endpointPickerRef cannot be used (InvalidExtensionRef), or undefined. */
export function pickerProblem(pool: KubeObject, snapshot: Snapshot): string | undefined {
  const spec = pool.spec as InferencePoolSpec;
  const ref = spec.endpointPickerRef;
  if (ref === undefined) return undefined;
  const name = pickerServiceName(spec);
  if (name === undefined)
    return `spec.endpointPickerRef: ${ref.group || 'core'}/${ref.kind ?? 'Service'} is not a kind gw calls; refer to a Service`;
  const namespace = pool.metadata.namespace ?? 'default';
  const service = snapshot.services.get(`${namespace}/${name}`);
  if (service === undefined) return `spec.endpointPickerRef: Service ${namespace}/${name} does not exist`;
  const serviceSpec = service.spec as ServiceSpec;
  const typeProblem = pickerServiceTypeProblem(serviceSpec.type);
  if (typeProblem !== undefined) return `spec.endpointPickerRef: Service ${namespace}/${name} ${typeProblem}`;
  const port = ref.port?.number;
  if (port === undefined) return 'spec.endpointPickerRef.port: is required for a Service';
  if (!(serviceSpec.ports ?? []).some((entry) => entry.port === port))
    return `spec.endpointPickerRef.port: Service ${namespace}/${name} has no port ${port}`;
  return undefined;
}

const POOL_PREFIX = 'InferencePool ';

/**
 * gw's status of every pool a gw Gateway's configuration uses, or whose status still holds an
 * entry of gw's for a Gateway that no longer uses it (the entry goes). Keys are "namespace/name".
 */
export function inferencePoolStatuses(
  snapshot: Snapshot,
  configs: ReadonlyMap<string, DataPlaneConfig>,
  now: string,
): Map<string, InferencePoolStatus> {
  const parentsOf = new Map<string, string[]>();
  for (const [gatewayKey, config] of configs)
    for (const key of Object.keys(config.backends))
      if (key.startsWith(POOL_PREFIX)) {
        const pool = key.slice(POOL_PREFIX.length);
        parentsOf.set(pool, [...(parentsOf.get(pool) ?? []), gatewayKey]);
      }
  const statuses = new Map<string, InferencePoolStatus>();
  for (const [key, pool] of snapshot.inferencePools) {
    const previous = (pool.status as InferencePoolStatus | undefined)?.parents ?? [];
    const gateways = (parentsOf.get(key) ?? []).sort();
    if (gateways.length === 0 && !previous.some((entry) => entry.controllerName === CONTROLLER_NAME)) continue;
    const context = contextOf(pool, now);
    const problem = pickerProblem(pool, snapshot);
    const conditions = sortConditions([
      condition(context, 'Accepted', true, 'Accepted', 'A custom LLM provider of this Gateway sends to the pool'),
      problem === undefined
        ? condition(context, 'ResolvedRefs', true, 'ResolvedRefs', 'All references resolved')
        : condition(context, 'ResolvedRefs', false, 'InvalidExtensionRef', problem),
    ]);
    const ours = gateways.map((gatewayKey): InferencePoolParentStatus => {
      const [namespace, name] = gatewayKey.split('/') as [string, string];
      return {
        parentRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace, name },
        controllerName: CONTROLLER_NAME,
        conditions,
      };
    });
    statuses.set(key, { parents: ours });
  }
  return statuses;
}
