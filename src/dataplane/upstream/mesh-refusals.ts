// Why a Service in Istio's ambient mesh is not reached (decision 0035 part 3): what gw says instead
// of sending plaintext where the mesh expects mTLS. A leaf module: the backend kinds and the
// policies' endpoint references both use it.

/**
 * Why a Service in the mesh cannot be reached by this process: the Gateway is in the mesh
 * (GwParameters mesh), but the process was not started with the mesh environment its provisioned
 * pod carries, so it has no workload identity to reach the mesh with.
 */
export const NO_MESH_ENVIRONMENT =
  'the Service is in the ambient mesh and the Gateway joins the mesh (GwParameters mesh), but this gw process has no mesh workload identity (CA_ADDRESS, POD_NAMESPACE and SERVICE_ACCOUNT unset: it is not the pod gw provisions); nothing is sent in plaintext';

/**
 * Why a Service in the mesh cannot be this kind of destination: only the backends of HTTP route
 * rules are reached over HBONE so far (decision 0035 part 3).
 */
export const MESH_ROUTE_BACKENDS_ONLY =
  'is in the ambient mesh, and gw reaches mesh Services over HBONE only as HTTPRoute backends so far (decision 0035); nothing is sent in plaintext: send to it from an HTTPRoute rule, or take its namespace or pods out of the ambient mesh';
