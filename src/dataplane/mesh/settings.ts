// What the data plane needs to join an Istio mesh (decision 0035), and where it finds it: the
// environment variables and files the provisioned pod carries (src/provisioning/mesh.ts writes
// them). The names are those of Istio's own proxies, so an operator can read and override them.

/** Environment variables of the mesh settings. */
export const MESH_ENV = {
  caAddress: 'CA_ADDRESS',
  trustDomain: 'TRUST_DOMAIN',
  additionalTrustDomains: 'ADDITIONAL_TRUST_DOMAINS',
  clusterId: 'CLUSTER_ID',
  network: 'NETWORK',
  namespace: 'POD_NAMESPACE',
  serviceAccount: 'SERVICE_ACCOUNT',
  tokenPath: 'CA_TOKEN_PATH',
  rootCertPath: 'CA_ROOT_CERT_PATH',
} as const;

/** istiod's in-cluster certificate authority (its TLS port, which serves XDS and the CA). */
export const DEFAULT_CA_ADDRESS = 'https://istiod.istio-system.svc:15012';
export const DEFAULT_TRUST_DOMAIN = 'cluster.local';
/** Istio's name for a cluster nobody named. */
export const DEFAULT_CLUSTER_ID = 'Kubernetes';

/** The audience of the token istiod's CA accepts by default. */
export const CA_TOKEN_AUDIENCE = 'istio-ca';
/** The projected ServiceAccount token (audience istio-ca): its directory and file. */
export const CA_TOKEN_DIR = '/var/run/secrets/tokens';
export const CA_TOKEN_FILE = 'istio-token';
/** The mesh root certificate, from the ConfigMap Istio publishes in every namespace. */
export const ROOT_CERT_DIR = '/var/run/secrets/istio';
export const ROOT_CERT_FILE = 'root-cert.pem';
export const ROOT_CERT_CONFIGMAP = 'istio-ca-root-cert';

/** A trust domain (SPIFFE: lowercase letters, digits, dots, dashes, underscores). */
const TRUST_DOMAIN_PATTERN = /^[a-z0-9._-]{1,255}$/;
/** A Kubernetes namespace or ServiceAccount name. */
const NAME_PATTERN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

export interface MeshSettings {
  /** https URL of the CA (gRPC over TLS). */
  caAddress: URL;
  trustDomain: string;
  /** Trust domains whose identities are accepted besides trustDomain. */
  additionalTrustDomains: string[];
  clusterId: string;
  network: string;
  namespace: string;
  serviceAccount: string;
  tokenPath: string;
  rootCertPath: string;
}

/** The SPIFFE ID of a workload: spiffe://<trust domain>/ns/<namespace>/sa/<service account>. */
export function spiffeId(trustDomain: string, namespace: string, serviceAccount: string): string {
  return `spiffe://${trustDomain}/ns/${namespace}/sa/${serviceAccount}`;
}

/** This proxy's own identity. */
export function ownIdentity(settings: MeshSettings): string {
  return spiffeId(settings.trustDomain, settings.namespace, settings.serviceAccount);
}

/**
 * The mesh settings of the environment, undefined when CA_ADDRESS is unset or empty (no mesh), or
 * a message naming the variable that is wrong.
 */
export function meshSettingsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): MeshSettings | undefined | string {
  const read = (name: string) => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const address = read(MESH_ENV.caAddress);
  if (address === undefined) return undefined;
  let caAddress: URL;
  try {
    caAddress = new URL(address);
  } catch {
    return `${MESH_ENV.caAddress} ${JSON.stringify(address)} is not a URL (for example ${DEFAULT_CA_ADDRESS})`;
  }
  if (caAddress.protocol !== 'https:')
    return `${MESH_ENV.caAddress} must be an https:// URL: the CA request carries a bearer token (got ${caAddress.protocol}//)`;
  if (caAddress.port === '') return `${MESH_ENV.caAddress} must name the port (for example ${DEFAULT_CA_ADDRESS})`;
  const namespace = read(MESH_ENV.namespace);
  const serviceAccount = read(MESH_ENV.serviceAccount);
  if (namespace === undefined)
    return `${MESH_ENV.namespace} is required with ${MESH_ENV.caAddress}: the identity names the namespace`;
  if (serviceAccount === undefined)
    return `${MESH_ENV.serviceAccount} is required with ${MESH_ENV.caAddress}: the identity names the ServiceAccount`;
  // The SPIFFE ID is made of these: each must be a path segment of a URI (Kubernetes names and
  // trust domains are, so a value that is not comes from a mistaken override in env).
  const trustDomain = read(MESH_ENV.trustDomain) ?? DEFAULT_TRUST_DOMAIN;
  for (const [name, value, pattern] of [
    [MESH_ENV.trustDomain, trustDomain, TRUST_DOMAIN_PATTERN],
    [MESH_ENV.namespace, namespace, NAME_PATTERN],
    [MESH_ENV.serviceAccount, serviceAccount, NAME_PATTERN],
  ] as const)
    if (!pattern.test(value))
      return `${name} ${JSON.stringify(value)} cannot be part of a SPIFFE ID (${pattern.source})`;
  return {
    caAddress,
    trustDomain,
    additionalTrustDomains: (read(MESH_ENV.additionalTrustDomains) ?? '')
      .split(',')
      .map((domain) => domain.trim())
      .filter((domain) => domain !== ''),
    clusterId: read(MESH_ENV.clusterId) ?? DEFAULT_CLUSTER_ID,
    network: read(MESH_ENV.network) ?? '',
    namespace,
    serviceAccount,
    tokenPath: read(MESH_ENV.tokenPath) ?? `${CA_TOKEN_DIR}/${CA_TOKEN_FILE}`,
    rootCertPath: read(MESH_ENV.rootCertPath) ?? `${ROOT_CERT_DIR}/${ROOT_CERT_FILE}`,
  };
}
