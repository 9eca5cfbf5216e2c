// A snapshot: every object the controller reads, indexed by kind and by "namespace/name".
// The controller is a pure function of a snapshot; stores produce them.
import type { KubeObject } from '../api/validate/admission.ts';
import type { Store } from '../store/store.ts';
import { kindKey, objectKey } from '../store/store.ts';

/** The kinds the controller reads, by the store's kind key. */
export const SNAPSHOT_KINDS = {
  gatewayClasses: 'gateway.networking.k8s.io/GatewayClass',
  gateways: 'gateway.networking.k8s.io/Gateway',
  listenerSets: 'gateway.networking.k8s.io/ListenerSet',
  httpRoutes: 'gateway.networking.k8s.io/HTTPRoute',
  referenceGrants: 'gateway.networking.k8s.io/ReferenceGrant',
  namespaces: '/Namespace',
  services: '/Service',
  secrets: '/Secret',
  configMaps: '/ConfigMap',
  /** Mesh destinations: a Service's pods (IPs, readiness, ServiceAccount, ambient label). */
  pods: '/Pod',
  /** Mesh destinations: which pods are a Service's endpoints, ready, at which ports. */
  endpointSlices: 'discovery.k8s.io/EndpointSlice',
  /** Custom providers' backendRefs: the pool's Pods (selected among `pods`) and its endpoint picker. */
  inferencePools: 'inference.networking.k8s.io/InferencePool',
  backends: 'gw.dev/GwBackend',
  models: 'gw.dev/GwModel',
  parameters: 'gw.dev/GwParameters',
  policies: 'gw.dev/GwPolicy',
} as const;

export type SnapshotKind = keyof typeof SNAPSHOT_KINDS;

/** Objects of one kind keyed by "namespace/name" ("name" for cluster-scoped kinds). */
export type ObjectIndex = ReadonlyMap<string, KubeObject>;

export type Snapshot = { readonly [K in SnapshotKind]: ObjectIndex };

function index(objects: Iterable<KubeObject>): Map<string, KubeObject> {
  const byKey = new Map<string, KubeObject>();
  for (const object of objects) byKey.set(objectKey(object), object);
  return byKey;
}

/** Builds a snapshot from admitted objects (any order, any kinds; unknown kinds are ignored). */
export function snapshotOf(objects: Iterable<KubeObject>): Snapshot {
  const byKind = new Map<string, KubeObject[]>();
  for (const object of objects) {
    const key = kindKey(object);
    let list = byKind.get(key);
    if (!list) {
      list = [];
      byKind.set(key, list);
    }
    list.push(object);
  }
  const snapshot = {} as Record<SnapshotKind, ObjectIndex>;
  for (const [name, kind] of Object.entries(SNAPSHOT_KINDS) as [SnapshotKind, string][]) {
    snapshot[name] = index(byKind.get(kind) ?? []);
  }
  return snapshot;
}

export function snapshotFromStore(store: Store): Snapshot {
  const objects: KubeObject[] = [];
  for (const kind of Object.values(SNAPSHOT_KINDS)) objects.push(...store.list(kind).items);
  return snapshotOf(objects);
}
