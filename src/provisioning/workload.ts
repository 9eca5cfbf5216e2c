// The Deployment or DaemonSet running a Gateway's data plane: one `gw` container (command.ts) with
// the image, environment, resources and shutdown of the effective GwParameters typed fields, what
// `mesh` adds to the pod when it is on (mesh.ts), under the restricted Pod Security Standard
// (security-context.ts): the image runs as a non-root user (Dockerfile), with no capabilities, on a
// read-only root filesystem. A non-root process cannot bind a port below 1024, so a Gateway
// listening on one gets the pod sysctl that lowers the first unprivileged port to its lowest
// listener port (a sysctl Kubernetes counts as safe), rather than a capability. The settings
// file's ConfigMap is mounted read-only (run-settings-file.ts).
import type { EnvVar } from '../api/types/provisioning.ts';
import { ADMIN_PORT, containerCommand } from './command.ts';
import { mergeEnv } from './env.ts';
import type { ProvisionedGateway } from './gateway.ts';
import { imageReference } from './image.ts';
import { objectLabels, ownerReference, podLabels, selectorLabels } from './labels.ts';
import { enabledMesh, type MeshPodAdditions, meshPodAdditions } from './mesh.ts';
import { RUN_SETTINGS_DIR, RUN_SETTINGS_HASH_ANNOTATION, RUN_SETTINGS_VOLUME } from './run-settings-file.ts';
import { restrictedContainerSecurityContext, restrictedPodSecurityContext } from './security-context.ts';
import type { EffectiveTypedFields } from './typed-fields.ts';

/** The container's name; overlays name it to merge into it. */
export const CONTAINER_NAME = 'gw';

/** The listeners' distinct ports, ascending. */
export function listenerPorts(gateway: ProvisionedGateway): number[] {
  return [...new Set(gateway.listeners.map((listener) => listener.port))].sort((a, b) => a - b);
}

function container(
  gateway: ProvisionedGateway,
  fields: EffectiveTypedFields,
  version: string,
  managedEnv: readonly EnvVar[],
  mesh: MeshPodAdditions | undefined,
) {
  const spec: Record<string, unknown> = {
    name: CONTAINER_NAME,
    image: imageReference(fields.image, version),
  };
  if (fields.image.pullPolicy !== undefined) spec.imagePullPolicy = fields.image.pullPolicy;
  spec.command = containerCommand(gateway);
  // gw's own variables first, then GwParameters' (overriding those of the same name in place), so
  // a `$(VAR)` in a user's value can refer to gw's variables as Kubernetes expands only earlier ones.
  const env = mergeEnv([...managedEnv, ...(mesh?.env ?? [])], fields.env);
  if (env.length > 0) spec.env = env;
  spec.ports = [
    ...listenerPorts(gateway).map((port) => ({ containerPort: port, protocol: 'TCP' })),
    { name: 'admin', containerPort: ADMIN_PORT, protocol: 'TCP' },
  ];
  spec.readinessProbe = { httpGet: { path: '/healthz/ready', port: ADMIN_PORT }, periodSeconds: 10 };
  spec.livenessProbe = { httpGet: { path: '/healthz/live', port: ADMIN_PORT }, periodSeconds: 10 };
  if (fields.resources !== undefined) spec.resources = fields.resources;
  spec.securityContext = restrictedContainerSecurityContext();
  spec.volumeMounts = [{ name: RUN_SETTINGS_VOLUME, mountPath: RUN_SETTINGS_DIR, readOnly: true }];
  // shutdown.min: the pod keeps serving this long after termination begins (the kubelet's own
  // sleep before SIGTERM, while the endpoints drop the pod); shutdown.max: the grace period.
  if (fields.shutdown !== undefined && fields.shutdown.min > 0)
    spec.lifecycle = { preStop: { sleep: { seconds: fields.shutdown.min } } };
  if (mesh !== undefined) spec.volumeMounts = [...(spec.volumeMounts as unknown[]), ...mesh.volumeMounts];
  return spec;
}

/** Ports below this one need privileges (Linux's default net.ipv4.ip_unprivileged_port_start). */
const FIRST_UNPRIVILEGED_PORT = 1024;

function podSecurityContext(gateway: ProvisionedGateway) {
  const lowest = listenerPorts(gateway)[0];
  return {
    ...restrictedPodSecurityContext(),
    ...(lowest !== undefined &&
      lowest < FIRST_UNPRIVILEGED_PORT && {
        sysctls: [{ name: 'net.ipv4.ip_unprivileged_port_start', value: String(lowest) }],
      }),
  };
}

/**
 * The Deployment (replicas left to the HPA when there is one) or DaemonSet. `settingsHash` is the
 * hash of the settings file the pods read at start: a new one changes the pod template, which rolls them.
 */
export function workload(
  gateway: ProvisionedGateway,
  fields: EffectiveTypedFields,
  version: string,
  managedEnv: readonly EnvVar[],
  settingsHash: string,
) {
  const mesh = enabledMesh(fields.mesh);
  const meshAdditions = mesh === undefined ? undefined : meshPodAdditions(mesh);
  const podSpec: Record<string, unknown> = {
    serviceAccountName: gateway.name,
    securityContext: podSecurityContext(gateway),
    containers: [container(gateway, fields, version, managedEnv, meshAdditions)],
    volumes: [{ name: RUN_SETTINGS_VOLUME, configMap: { name: gateway.name } }],
  };
  if (fields.shutdown !== undefined) podSpec.terminationGracePeriodSeconds = fields.shutdown.max;
  if (meshAdditions !== undefined) podSpec.volumes = [...(podSpec.volumes as unknown[]), ...meshAdditions.volumes];
  const spec: Record<string, unknown> = {};
  if (fields.workloadKind === 'Deployment' && fields.horizontalPodAutoscaler.length === 0) spec.replicas = 1;
  spec.selector = { matchLabels: selectorLabels(gateway) };
  spec.template = {
    metadata: {
      labels: { ...podLabels(gateway), ...meshAdditions?.labels },
      annotations: { [RUN_SETTINGS_HASH_ANNOTATION]: settingsHash },
    },
    spec: podSpec,
  };
  return {
    apiVersion: 'apps/v1',
    kind: fields.workloadKind,
    metadata: {
      name: gateway.name,
      namespace: gateway.namespace,
      labels: objectLabels(gateway, version),
      ownerReferences: [ownerReference(gateway)],
    },
    spec,
  };
}
