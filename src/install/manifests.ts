// The install manifests: every object that runs gw's control plane in a cluster — the gw.dev CRDs,
// the controller's Namespace, ServiceAccount, RBAC and Deployment, the gw-proxy ClusterRole that
// provisioning binds each data plane to, and the GatewayClass — generated from the code they must
// agree with (the kinds the controller reads, the kinds provisioning writes, the controller name,
// the admin port, the default image), so they cannot drift from it. deploy/install.yaml is their
// output with the defaults (`gw install-manifests`; a test compares the two). The Gateway API CRDs
// are apart (deploy/gateway-api-crds.yaml): a cluster may already have them. Decision 0036.
import { toCrd } from '../api/crd/generate.ts';
import { GATEWAY_API_GROUP } from '../api/kinds/gateway-api/shared.ts';
import { INFERENCE_GROUP } from '../api/kinds/inference/inference-pool.ts';
import { crdKinds } from '../api/kinds/registry.ts';
import { CONTROLLER_NAME } from '../controller/gateway-api/types.ts';
import { ADMIN_PORT } from '../provisioning/command.ts';
import { imageReference } from '../provisioning/image.ts';
import { PROVISIONED_KINDS } from '../provisioning/provisioned-kinds.ts';
import {
  type PolicyRule,
  PROXY_CLUSTER_ROLE,
  proxyClusterRoleRules,
  rulesFor,
  snapshotDefinitions,
} from '../provisioning/proxy-rbac.ts';
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from '../provisioning/security-context.ts';

export interface InstallOptions {
  /** The controller's namespace. */
  namespace: string;
  /** The controller's image; the data planes' default image is gw's release at `version`. */
  image: string;
  /** gw's version: the default image tag and the app.kubernetes.io/version label. */
  version: string;
}

export const DEFAULT_NAMESPACE = 'gw-system';
/** The name of the controller's ServiceAccount, ClusterRole, ClusterRoleBinding and Deployment. */
export const CONTROLLER = 'gw-controller';
/** The GatewayClass the manifests install; Gateways name it in gatewayClassName. */
export const GATEWAY_CLASS = 'gw';

const RBAC_GROUP = 'rbac.authorization.k8s.io';
/** The groups whose statuses the controller writes (never the core kinds'). */
const STATUS_GROUPS = new Set(['gw.dev', GATEWAY_API_GROUP, INFERENCE_GROUP]);

export function defaultImage(version: string): string {
  return imageReference({}, version);
}

function labels(options: InstallOptions, component: string): Record<string, string> {
  return {
    'app.kubernetes.io/name': 'gw',
    'app.kubernetes.io/component': component,
    'app.kubernetes.io/version': options.version,
    'app.kubernetes.io/part-of': 'gw',
  };
}

/**
 * The controller's rules: what `gw controller` reads (get, list, watch of the snapshot kinds; it
 * gets an object again when its status write conflicts), the statuses it writes (update of the
 * status subresource of the gw.dev and Gateway API kinds that have one), what provisioning writes
 * (every provisioned kind), and binding gw-proxy — only that ClusterRole — to the data planes.
 */
export function controllerRules(): PolicyRule[] {
  const read = snapshotDefinitions();
  const statuses = read.filter(({ group, statusSubresource }) => statusSubresource && STATUS_GROUPS.has(group));
  return [
    ...rulesFor(
      read.map(({ group, plural }) => ({ group, resource: plural })),
      ['get', 'list', 'watch'],
    ),
    ...rulesFor(
      statuses.map(({ group, plural }) => ({ group, resource: `${plural}/status` })),
      ['update'],
    ),
    ...rulesFor(
      PROVISIONED_KINDS.map(({ group, plural }) => ({ group, resource: plural })),
      // The controller applies them with server-side apply (patch; create when missing) and deletes them.
      ['get', 'list', 'watch', 'create', 'patch', 'delete'],
    ),
    { apiGroups: [RBAC_GROUP], resources: ['clusterroles'], resourceNames: [PROXY_CLUSTER_ROLE], verbs: ['bind'] },
  ];
}

function controllerDeployment(options: InstallOptions) {
  const selector = { 'app.kubernetes.io/name': 'gw', 'app.kubernetes.io/component': 'controller' };
  const probe = (path: string) => ({ httpGet: { path, port: 'admin' }, periodSeconds: 10 });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: CONTROLLER, namespace: options.namespace, labels: labels(options, 'controller') },
    spec: {
      // One controller: gw has no leader election yet, and two would both write every status and
      // provision every Gateway. Recreate keeps an upgrade from running the old and new together.
      replicas: 1,
      strategy: { type: 'Recreate' },
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: { ...selector } },
        spec: {
          serviceAccountName: CONTROLLER,
          securityContext: restrictedPodSecurityContext(),
          containers: [
            {
              name: 'controller',
              image: options.image,
              command: [
                'gw',
                'controller',
                '--admin-address',
                '0.0.0.0',
                '--admin-port',
                String(ADMIN_PORT),
                '--log-format',
                'json',
              ],
              ports: [{ name: 'admin', containerPort: ADMIN_PORT, protocol: 'TCP' }],
              // Ready once every kind is listed; live while the process answers.
              readinessProbe: probe('/healthz/ready'),
              livenessProbe: probe('/healthz/live'),
              resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '1Gi' } },
              securityContext: restrictedContainerSecurityContext(),
            },
          ],
        },
      },
    },
  };
}

/** Every object of the installation, in the order `kubectl apply` needs (CRDs and namespace first). */
export function installManifests(options: InstallOptions): Record<string, unknown>[] {
  const clusterRole = (name: string, component: string, rules: PolicyRule[]) => ({
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRole',
    metadata: { name, labels: labels(options, component) },
    rules,
  });
  return [
    ...crdKinds().map(toCrd),
    {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: options.namespace, labels: labels(options, 'controller') },
    },
    {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: CONTROLLER, namespace: options.namespace, labels: labels(options, 'controller') },
    },
    clusterRole(CONTROLLER, 'controller', controllerRules()),
    {
      apiVersion: `${RBAC_GROUP}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name: CONTROLLER, labels: labels(options, 'controller') },
      roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: CONTROLLER },
      subjects: [{ kind: 'ServiceAccount', name: CONTROLLER, namespace: options.namespace }],
    },
    clusterRole(PROXY_CLUSTER_ROLE, 'proxy', proxyClusterRoleRules()),
    controllerDeployment(options),
    {
      apiVersion: `${GATEWAY_API_GROUP}/v1`,
      kind: 'GatewayClass',
      metadata: { name: GATEWAY_CLASS, labels: labels(options, 'controller') },
      spec: { controllerName: CONTROLLER_NAME, description: 'Gateways served by gw' },
    },
  ];
}
