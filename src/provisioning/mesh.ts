// What GwParameters `mesh` adds to a Gateway's pod so its proxy can join an Istio mesh (decision
// 0035): labels keeping the mesh's own data plane off the pod, the settings as environment
// variables (src/dataplane/mesh/settings.ts reads them), the CA token and the mesh root as volumes.
import type { EnvVar, GwParametersSpec } from '../api/types/provisioning.ts';
import {
  CA_TOKEN_AUDIENCE,
  CA_TOKEN_DIR,
  CA_TOKEN_FILE,
  DEFAULT_CA_ADDRESS,
  DEFAULT_CLUSTER_ID,
  DEFAULT_TRUST_DOMAIN,
  MESH_ENV,
  ROOT_CERT_CONFIGMAP,
  ROOT_CERT_DIR,
} from '../dataplane/mesh/settings.ts';

type Mesh = NonNullable<GwParametersSpec['mesh']>;

/** How long the projected CA token lives; the kubelet replaces it before it expires. */
const CA_TOKEN_SECONDS = 43_200;

/** The mesh settings in force: present and not `enabled: false` (an empty `mesh: {}` joins). */
export function enabledMesh(mesh: Mesh | undefined): Mesh | undefined {
  return mesh !== undefined && mesh.enabled !== false ? mesh : undefined;
}

export interface MeshPodAdditions {
  labels: Record<string, string>;
  env: EnvVar[];
  volumes: Record<string, unknown>[];
  volumeMounts: Record<string, unknown>[];
}

const VOLUME_TOKEN = 'mesh-ca-token';
const VOLUME_ROOT = 'mesh-root-cert';

export function meshPodAdditions(mesh: Mesh): MeshPodAdditions {
  const env: EnvVar[] = [
    { name: MESH_ENV.caAddress, value: mesh.caAddress ?? DEFAULT_CA_ADDRESS },
    { name: MESH_ENV.trustDomain, value: mesh.trustDomain ?? DEFAULT_TRUST_DOMAIN },
  ];
  if (mesh.additionalTrustDomains !== undefined && mesh.additionalTrustDomains.length > 0)
    env.push({ name: MESH_ENV.additionalTrustDomains, value: mesh.additionalTrustDomains.join(',') });
  env.push({ name: MESH_ENV.clusterId, value: mesh.clusterId ?? DEFAULT_CLUSTER_ID });
  if (mesh.network !== undefined && mesh.network !== '') env.push({ name: MESH_ENV.network, value: mesh.network });
  // The identity spiffe://<trust domain>/ns/<namespace>/sa/<service account>, from the pod itself.
  env.push(
    { name: MESH_ENV.namespace, valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    { name: MESH_ENV.serviceAccount, valueFrom: { fieldRef: { fieldPath: 'spec.serviceAccountName' } } },
  );
  return {
    // The proxy speaks mTLS itself: neither ztunnel (ambient) nor a sidecar may capture its traffic.
    labels: { 'istio.io/dataplane-mode': 'none', 'sidecar.istio.io/inject': 'false' },
    env,
    volumes: [
      {
        name: VOLUME_TOKEN,
        projected: {
          sources: [
            {
              serviceAccountToken: {
                audience: CA_TOKEN_AUDIENCE,
                expirationSeconds: CA_TOKEN_SECONDS,
                path: CA_TOKEN_FILE,
              },
            },
          ],
        },
      },
      { name: VOLUME_ROOT, configMap: { name: ROOT_CERT_CONFIGMAP } },
    ],
    volumeMounts: [
      { name: VOLUME_TOKEN, mountPath: CA_TOKEN_DIR, readOnly: true },
      { name: VOLUME_ROOT, mountPath: ROOT_CERT_DIR, readOnly: true },
    ],
  };
}
