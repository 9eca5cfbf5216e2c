// Which Services are in Istio's ambient mesh, and the pods to reach them at (decision 0035 part 3),
// for a Gateway that is in the mesh itself (its effective GwParameters `mesh` is on: its pods
// carry a workload identity). A Gateway outside the mesh reaches every Service as before.
// A pod is in the ambient mesh — its node's ztunnel takes HBONE for it — when its label
// istio.io/dataplane-mode is `ambient`, or when its namespace's is and the pod's is not `none`;
// a pod with an injected sidecar (annotation sidecar.istio.io/status) or on the host network is
// not (Istio's own rules for what ztunnel captures). A Service's pods are its EndpointSlices'
// endpoints (label kubernetes.io/service-name) whose targetRef is a Pod; the ready ones, in the
// mesh, with their IP, the pod port of each Service port, and the ServiceAccount their SPIFFE ID
// names, go into the data-plane configuration. The data plane forms the SPIFFE IDs with its own
// trust domain: it is the mesh's, the one its workload certificate names.
import type { PodSpec } from '../api/kinds/core/pod.ts';
import type { ServiceSpec } from '../api/kinds/core/service.ts';
import { type EndpointSliceFields, SERVICE_NAME_LABEL } from '../api/kinds/discovery/endpoint-slice.ts';
import type { KubeObject } from '../api/validate/admission.ts';
import type { MeshEndpointConfig, ServiceMeshConfig } from '../contract/dataplane-config.ts';
import { enabledMesh } from '../provisioning/mesh.ts';
import { effectiveTypedFields } from '../provisioning/typed-fields.ts';
import { classParameters, gatewayParameters } from './provisioning/parameters.ts';
import type { Snapshot } from './snapshot.ts';

/** Istio's enrollment label, on a Namespace or a Pod. */
export const DATAPLANE_MODE_LABEL = 'istio.io/dataplane-mode';
/** Set by Istio's sidecar injector on the pods it injected. */
const SIDECAR_STATUS_ANNOTATION = 'sidecar.istio.io/status';

/** Istio's label of the network a pod (or every pod of a namespace) is on. */
export const NETWORK_LABEL = 'topology.istio.io/network';
/** Istio's label sending a Service's (or a namespace's) traffic through a waypoint proxy. */
export const USE_WAYPOINT_LABEL = 'istio.io/use-waypoint';

/** What the controller needs of a Gateway's effective `mesh`: the network its pods are on ('' unset). */
export interface GatewayMesh {
  network: string;
}

/**
 * The mesh of the Gateway "namespace/name", when it is in one: the `mesh` of its GwParameters (its
 * class's, its own over them, field by field) is present and not `enabled: false`. A parametersRef
 * that does not resolve counts as none (the Gateway's status says why).
 */
export function gatewayMesh(snapshot: Snapshot, gatewayKey: string): GatewayMesh | undefined {
  const gateway = snapshot.gateways.get(gatewayKey);
  if (gateway === undefined) return undefined;
  const gatewayClass = snapshot.gatewayClasses.get((gateway.spec as { gatewayClassName: string }).gatewayClassName);
  const byClass = gatewayClass && classParameters(snapshot, gatewayClass);
  const own = gatewayParameters(snapshot, gateway);
  const fields = effectiveTypedFields(
    byClass?.ok ? byClass.level?.spec : undefined,
    own.ok ? own.level?.spec : undefined,
  );
  const mesh = enabledMesh(fields.mesh);
  return mesh && { network: mesh.network ?? '' };
}

/** Whether ztunnel takes HBONE for `pod`, given its namespace's labels. */
export function inAmbientMesh(pod: KubeObject, namespaceLabels: Readonly<Record<string, string>>): boolean {
  if (pod.metadata.annotations?.[SIDECAR_STATUS_ANNOTATION] !== undefined) return false;
  if ((pod.spec as PodSpec | undefined)?.hostNetwork === true) return false;
  const own = pod.metadata.labels?.[DATAPLANE_MODE_LABEL];
  if (own !== undefined) return own === 'ambient';
  return namespaceLabels[DATAPLANE_MODE_LABEL] === 'ambient';
}

/**
 * The mesh side of a Service for a Gateway in `gateway`'s mesh: undefined when neither its
 * namespace nor any of its pods is in the ambient mesh (it is reached as before, at its own
 * address), else its ready pods in the mesh on the Gateway's network (possibly none: then nothing
 * is sent, rather than plaintext where the mesh expects mTLS). A pod of another network is reached
 * through that network's east-west gateway in Istio, which gw does not do; a Service behind a
 * waypoint (istio.io/use-waypoint) is reached through the waypoint, which gw does not do either:
 * its requests fail rather than skip the waypoint's policies.
 */
export function serviceMesh(
  service: KubeObject,
  snapshot: Snapshot,
  gateway: GatewayMesh,
): ServiceMeshConfig | undefined {
  const spec = service.spec as ServiceSpec;
  if (spec.type === 'ExternalName') return undefined;
  const namespace = service.metadata.namespace ?? '';
  const namespaceLabels = snapshot.namespaces.get(namespace)?.metadata.labels ?? {};
  let inMesh = namespaceLabels[DATAPLANE_MODE_LABEL] === 'ambient';
  const endpoints: MeshEndpointConfig[] = [];
  for (const [key, slice] of snapshot.endpointSlices) {
    if (!key.startsWith(`${namespace}/`) || slice.metadata.labels?.[SERVICE_NAME_LABEL] !== service.metadata.name)
      continue;
    const fields = slice as unknown as EndpointSliceFields;
    if (fields.addressType === 'FQDN') continue;
    const ports = podPorts(spec, fields);
    for (const endpoint of fields.endpoints ?? []) {
      const ref = endpoint.targetRef;
      if (ref?.kind !== 'Pod' || ref.name === undefined) continue;
      const pod = snapshot.pods.get(`${ref.namespace ?? namespace}/${ref.name}`);
      if (pod === undefined || !inAmbientMesh(pod, namespaceLabels)) continue;
      inMesh = true;
      const network = pod.metadata.labels?.[NETWORK_LABEL] ?? namespaceLabels[NETWORK_LABEL] ?? gateway.network;
      if (network !== gateway.network) continue;
      // Ready unless it says otherwise (EndpointSlice's rule for an unset ready).
      if (endpoint.conditions?.ready === false || endpoint.addresses[0] === undefined) continue;
      endpoints.push({
        address: endpoint.addresses[0],
        namespace: pod.metadata.namespace ?? namespace,
        serviceAccount: (pod.spec as PodSpec | undefined)?.serviceAccountName || 'default',
        ports,
      });
    }
  }
  if (!inMesh) return undefined;
  const waypoint = service.metadata.labels?.[USE_WAYPOINT_LABEL] ?? namespaceLabels[USE_WAYPOINT_LABEL];
  if (waypoint !== undefined && waypoint !== 'none') return { endpoints: [], waypoint };
  endpoints.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  return { endpoints };
}

/** Each Service port's pod port, by the slice's port of the same name (TCP only). */
function podPorts(spec: ServiceSpec, slice: EndpointSliceFields): Record<string, number> {
  const ports: Record<string, number> = {};
  for (const servicePort of spec.ports ?? []) {
    if ((servicePort.protocol ?? 'TCP') !== 'TCP') continue;
    const match = (slice.ports ?? []).find(
      (port) => (port.name ?? '') === (servicePort.name ?? '') && (port.protocol ?? 'TCP') === 'TCP',
    );
    if (match?.port !== undefined) ports[String(servicePort.port)] = match.port;
  }
  return ports;
}
