// The Deployment or DaemonSet running a Gateway's data plane: one `gw` container (command.ts) with
// the image, environment, resources and shutdown of the effective GwParameters typed fields, and
// the settings file's ConfigMap mounted (run-settings-file.ts).
import type { EnvVar } from '../api/types/provisioning.ts';
import { ADMIN_PORT, containerCommand } from './command.ts';
import { mergeEnv } from './env.ts';
import type { ProvisionedGateway } from './gateway.ts';
import { imageReference } from './image.ts';
import { objectLabels, ownerReference, podLabels, selectorLabels } from './labels.ts';
import { RUN_SETTINGS_DIR, RUN_SETTINGS_HASH_ANNOTATION, RUN_SETTINGS_VOLUME } from './run-settings-file.ts';
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
) {
  const spec: Record<string, unknown> = {
    name: CONTAINER_NAME,
    image: imageReference(fields.image, version),
  };
  if (fields.image.pullPolicy !== undefined) spec.imagePullPolicy = fields.image.pullPolicy;
  spec.command = containerCommand(gateway);
  // gw's own variables first, then GwParameters' (overriding those of the same name in place), so
  // a `$(VAR)` in a user's value can refer to gw's variables as Kubernetes expands only earlier ones.
  const env = mergeEnv(managedEnv, fields.env);
  if (env.length > 0) spec.env = env;
  spec.ports = [
    ...listenerPorts(gateway).map((port) => ({ containerPort: port, protocol: 'TCP' })),
    { name: 'admin', containerPort: ADMIN_PORT, protocol: 'TCP' },
  ];
  spec.readinessProbe = { httpGet: { path: '/healthz/ready', port: ADMIN_PORT }, periodSeconds: 10 };
  spec.livenessProbe = { httpGet: { path: '/healthz/live', port: ADMIN_PORT }, periodSeconds: 10 };
  if (fields.resources !== undefined) spec.resources = fields.resources;
  spec.volumeMounts = [{ name: RUN_SETTINGS_VOLUME, mountPath: RUN_SETTINGS_DIR, readOnly: true }];
  // shutdown.min: the pod keeps serving this long after termination begins (the kubelet's own
  // sleep before SIGTERM, while the endpoints drop the pod); shutdown.max: the grace period.
  if (fields.shutdown !== undefined && fields.shutdown.min > 0)
    spec.lifecycle = { preStop: { sleep: { seconds: fields.shutdown.min } } };
  return spec;
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
  const podSpec: Record<string, unknown> = {
    serviceAccountName: gateway.name,
    containers: [container(gateway, fields, version, managedEnv)],
    volumes: [{ name: RUN_SETTINGS_VOLUME, configMap: { name: gateway.name } }],
  };
  if (fields.shutdown !== undefined) podSpec.terminationGracePeriodSeconds = fields.shutdown.max;
  const spec: Record<string, unknown> = {};
  if (fields.workloadKind === 'Deployment' && fields.horizontalPodAutoscaler.length === 0) spec.replicas = 1;
  spec.selector = { matchLabels: selectorLabels(gateway) };
  spec.template = {
    metadata: { labels: podLabels(gateway), annotations: { [RUN_SETTINGS_HASH_ANNOTATION]: settingsHash } },
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
