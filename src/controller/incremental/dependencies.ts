// Which Gateways' data-plane configurations a change can affect. Each configuration records the
// objects it was built from ("Kind namespace/name", or "Kind namespace/*" for label-selected
// Secrets, ConfigMaps and Services and for the ReferenceGrants of a namespace it may refer into,
// "Service */*" for Services an MCP selector may choose in any namespace); a changed object names
// itself and the objects it points at (a route its parents, a policy its targets, a model its
// parents, a ReferenceGrant its namespace). A Gateway must be rebuilt when the two sets meet.
// Kinds whose change can reach every Gateway force a full translation instead.
import { SERVICE_NAME_LABEL } from '../../api/kinds/discovery/endpoint-slice.ts';
import type { GwModelSpec } from '../../api/kinds/gw-model.ts';
import type { KubeObject } from '../../api/validate/admission.ts';
import type { DataPlaneConfig } from '../../contract/dataplane-config.ts';
import { type EffectiveListener, GATEWAY_GROUP } from '../gateway-api/types.ts';
import { virtualTargets } from '../models/status.ts';
import { resolvePolicyTargets } from '../policies/targets.ts';
import type { Snapshot, SnapshotKind } from '../snapshot.ts';

/** Kinds whose change is translated in full: any Gateway may depend on them. */
export const GLOBAL_KINDS: ReadonlySet<SnapshotKind> = new Set(['gatewayClasses', 'namespaces', 'parameters']);

/** The dependency of an MCP selector that looks in other namespaces: every Service. */
const ANY_SERVICE = 'Service */*';

interface ParentRefLike {
  group?: string;
  kind?: string;
  namespace?: string;
  name: string;
}

function parentKey(ref: ParentRefLike, namespace: string): string | undefined {
  if ((ref.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP) return undefined;
  return `${ref.kind ?? 'Gateway'} ${ref.namespace ?? namespace}/${ref.name}`;
}

/** The objects a configuration was built from, given the Gateway's effective listeners and config. */
export function configDependencies(
  gatewayKey: string,
  listeners: readonly EffectiveListener[],
  config: DataPlaneConfig | undefined,
): Set<string> {
  const gatewayNamespace = gatewayKey.split('/')[0]!;
  const deps = new Set<string>([`Gateway ${gatewayKey}`]);
  const namespaces = new Set<string>([gatewayNamespace]);
  // Namespaces whose ReferenceGrants can allow or revoke something here: those of certificates
  // and backends (referred to from listeners and routes) and of routes (GwModels of other
  // namespaces attach to them).
  const grantNamespaces = new Set<string>();
  for (const listener of listeners) {
    const source = listener.source;
    deps.add(`${source.kind} ${source.namespace}/${source.name}`);
    for (const ref of listener.tls?.certificateRefs ?? []) {
      deps.add(`Secret ${ref.namespace}/${ref.name}`);
      grantNamespaces.add(ref.namespace);
    }
    for (const route of listener.routes) {
      deps.add(`HTTPRoute ${route.namespace}/${route.name}`);
      namespaces.add(route.namespace);
      grantNamespaces.add(route.namespace);
      for (const rule of route.rules) {
        for (const ref of rule.backendRefs) {
          deps.add(`${ref.kind} ${ref.namespace}/${ref.name}`);
          namespaces.add(ref.namespace);
          grantNamespaces.add(ref.namespace);
        }
      }
    }
  }
  for (const namespace of grantNamespaces) deps.add(`ReferenceGrant ${namespace}/*`);
  for (const [key, spec] of Object.entries(config?.models ?? {})) {
    deps.add(`GwModel ${key}`);
    const namespace = key.split('/')[0]!;
    // Programmed only while every parent accepts it, so each parent is read too.
    for (const parent of spec.parentRefs) {
      const parentKeyOf = parentKey(parent as ParentRefLike, namespace);
      if (parentKeyOf) deps.add(parentKeyOf);
    }
    for (const target of virtualTargets(spec)) deps.add(`GwModel ${namespace}/${target.modelRef.name}`);
  }
  for (const key of Object.keys(config?.data ?? {})) deps.add(key);
  // Services and GwBackends that policies name as endpoints (ExtAuth, rate limit services...).
  for (const key of Object.keys(config?.backends ?? {})) deps.add(key);
  // Services chosen by an MCP selector target: any Service of the namespaces the selector reads
  // may start or stop matching.
  for (const [key, backend] of Object.entries(config?.backends ?? {})) {
    if (backend.kind !== 'GwBackend') continue;
    const targets = (backend.spec as { mcp?: { targets: { selector?: { namespaces?: unknown } }[] } }).mcp?.targets;
    for (const target of targets ?? []) {
      if (!target.selector) continue;
      deps.add(target.selector.namespaces ? ANY_SERVICE : `Service ${key.slice(key.indexOf(' ') + 1).split('/')[0]}/*`);
    }
  }
  // Secrets and ConfigMaps chosen by label can appear in any namespace the configuration reads.
  // (The model catalog's ConfigMaps are in the Gateway's namespace, which is always among them: a
  // catalog created, fixed or broken rebuilds the configuration. Its GwParameters is a global kind.)
  for (const namespace of namespaces) {
    deps.add(`Secret ${namespace}/*`);
    deps.add(`ConfigMap ${namespace}/*`);
  }
  return deps;
}

/** The keys a changed object touches: itself and what it points at. */
export function touchedKeys(object: KubeObject, snapshot: Snapshot): string[] {
  const namespace = object.metadata.namespace ?? '';
  const keys = [`${object.kind} ${namespace}/${object.metadata.name}`];
  const spec = (object.spec ?? {}) as Record<string, unknown>;
  const addParent = (ref: ParentRefLike) => {
    const key = parentKey(ref, namespace);
    if (key) keys.push(key);
  };
  switch (object.kind) {
    case 'HTTPRoute':
      for (const ref of (spec.parentRefs ?? []) as ParentRefLike[]) addParent(ref);
      break;
    case 'ListenerSet':
      if (spec.parentRef) addParent(spec.parentRef as ParentRefLike);
      break;
    case 'GwModel':
      for (const ref of (spec as unknown as GwModelSpec).parentRefs ?? []) addParent(ref as ParentRefLike);
      break;
    case 'GwPolicy':
      for (const target of resolvePolicyTargets(object, snapshot).targets)
        keys.push(`${target.kind} ${target.namespace}/${target.name}`);
      break;
    case 'Secret':
    case 'ConfigMap':
      keys.push(`${object.kind} ${namespace}/*`);
      break;
    case 'Service':
      keys.push(`Service ${namespace}/*`, ANY_SERVICE);
      break;
    case 'ReferenceGrant':
      keys.push(`ReferenceGrant ${namespace}/*`);
      break;
    // Mesh endpoints (controller/mesh-endpoints.ts): a slice is its Service's; a pod may be any
    // Service's of its namespace (which slices name it is read at the next full pass).
    case 'EndpointSlice': {
      const service = object.metadata.labels?.[SERVICE_NAME_LABEL];
      if (service !== undefined) keys.push(`Service ${namespace}/${service}`);
      break;
    }
    // A pod may also be a member of any InferencePool of its namespace (selected by label).
    case 'Pod':
      for (const key of snapshot.services.keys()) if (key.startsWith(`${namespace}/`)) keys.push(`Service ${key}`);
      for (const key of snapshot.inferencePools.keys())
        if (key.startsWith(`${namespace}/`)) keys.push(`InferencePool ${key}`);
      break;
  }
  return keys;
}

/**
 * The Gateways a model's parents belong to. A model is programmed only when every parent accepts
 * it, so a scoped translation must include all of them.
 */
export function modelGateways(model: KubeObject, snapshot: Snapshot): string[] {
  const namespace = model.metadata.namespace ?? '';
  const gateways: string[] = [];
  const ofListenerSet = (key: string) => {
    const set = snapshot.listenerSets.get(key);
    if (!set) return;
    const ref = (set.spec as { parentRef?: ParentRefLike } | undefined)?.parentRef;
    if (ref) gateways.push(`${ref.namespace ?? set.metadata.namespace}/${ref.name}`);
  };
  for (const parent of (model.spec as GwModelSpec).parentRefs ?? []) {
    const key = `${parent.namespace ?? namespace}/${parent.name}`;
    if (parent.kind === 'HTTPRoute') {
      const route = snapshot.httpRoutes.get(key);
      const routeNamespace = route?.metadata.namespace ?? '';
      for (const ref of ((route?.spec as Record<string, unknown> | undefined)?.parentRefs ?? []) as ParentRefLike[]) {
        if ((ref.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP) continue;
        const refKey = `${ref.namespace ?? routeNamespace}/${ref.name}`;
        if ((ref.kind ?? 'Gateway') === 'ListenerSet') ofListenerSet(refKey);
        else gateways.push(refKey);
      }
    } else if (parent.kind === 'ListenerSet') {
      ofListenerSet(key);
    } else {
      gateways.push(key);
    }
  }
  return gateways;
}

/** A reverse index from dependency keys to the Gateways whose configurations read them. */
export class DependencyIndex {
  private readonly byGateway = new Map<string, Set<string>>();
  private readonly byKey = new Map<string, Set<string>>();

  set(gatewayKey: string, deps: Set<string>): void {
    this.delete(gatewayKey);
    this.byGateway.set(gatewayKey, deps);
    for (const key of deps) {
      let gateways = this.byKey.get(key);
      if (!gateways) {
        gateways = new Set();
        this.byKey.set(key, gateways);
      }
      gateways.add(gatewayKey);
    }
  }

  delete(gatewayKey: string): void {
    const deps = this.byGateway.get(gatewayKey);
    if (!deps) return;
    this.byGateway.delete(gatewayKey);
    for (const key of deps) {
      const gateways = this.byKey.get(key)!;
      gateways.delete(gatewayKey);
      if (gateways.size === 0) this.byKey.delete(key);
    }
  }

  clear(): void {
    this.byGateway.clear();
    this.byKey.clear();
  }

  /** The Gateways that read any of `keys`. */
  gatewaysReading(keys: Iterable<string>, into: Set<string> = new Set()): Set<string> {
    for (const key of keys) for (const gateway of this.byKey.get(key) ?? []) into.add(gateway);
    return into;
  }
}
