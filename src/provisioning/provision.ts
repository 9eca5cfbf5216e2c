// Provisioning of one Gateway's data plane from the typed fields of its GwParameters (spec
// document 1 "GwParameters", document 2 "Provisioning types"): the workload, a Service for its
// listeners, a ServiceAccount and its ClusterRoleBinding to gw-proxy, the session-key Secret, the
// ConfigMap of gw run's settings file (logging, rawConfig: run-settings-file.ts), and a
// PodDisruptionBudget or HorizontalPodAutoscaler when their overlays are present. Pure: the caller
// applies the objects (and the overlays, overlay.ts) and keeps an existing session-key Secret.
// A field that cannot be provisioned yields a problem naming it and no objects: a data plane that
// silently lacks what the GwParameters asked for is worse than none.
import type { GwParametersSpec } from '../api/types/provisioning.ts';
import { parseSessionKey, SESSION_KEY_ENV } from '../dataplane/mcp/session-seal.ts';
import { logLevelProblem } from './command.ts';
import { effectiveEnv } from './env.ts';
import type { ProvisionedGateway, ProvisioningProblem } from './gateway.ts';
import { objectLabels, ownerReference, selectorLabels } from './labels.ts';
import { proxyRoleBinding } from './proxy-rbac.ts';
import { rawConfigProblems, runSettingsConfigMap, runSettingsHash, runSettingsText } from './run-settings-file.ts';
import { type RandomBytes, sessionKeyEnv, sessionKeySecret } from './session-key.ts';
import { type EffectiveTypedFields, effectiveTypedFields } from './typed-fields.ts';
import { listenerPorts, workload } from './workload.ts';

export interface ProvisioningInput {
  gateway: ProvisionedGateway;
  /** The spec of the GwParameters the GatewayClass names, if any. */
  gatewayClassParameters?: GwParametersSpec;
  /** The spec of the GwParameters the Gateway names (spec.infrastructure.parametersRef), if any. */
  gatewayParameters?: GwParametersSpec;
  /** gw's version: the default image tag and the app.kubernetes.io/version label. */
  version: string;
  /** A CSPRNG (crypto.randomBytes in gw); a parameter so tests are deterministic. */
  randomBytes: RandomBytes;
}

export type ProvisionedObject = { apiVersion: string; kind: string; metadata: { name: string } } & Record<
  string,
  unknown
>;

export type ProvisioningResult =
  | { ok: true; objects: ProvisionedObject[] }
  | { ok: false; problems: ProvisioningProblem[] };

/** Fields gw accepts but cannot turn into a data plane yet, each with why. */
function problems(fields: EffectiveTypedFields): ProvisioningProblem[] {
  const found: ProvisioningProblem[] = [];
  const level = logLevelProblem(fields);
  if (level !== undefined) found.push(level);
  // A literal SESSION_KEY is checked as the proxy will see it (after the kubelet's expansion), so a
  // bad key is reported here rather than as a crash-looping pod.
  const sessionKey = effectiveEnv(fields.env).get(SESSION_KEY_ENV);
  if (sessionKey !== undefined && 'value' in sessionKey) {
    const parsed = parseSessionKey(sessionKey.value);
    if (typeof parsed === 'string' || parsed === undefined)
      found.push({
        field: `spec.env[${SESSION_KEY_ENV}]`,
        message: parsed ?? `${SESSION_KEY_ENV} is empty: remove it to use the per-Gateway key, or set a key`,
      });
  }
  found.push(...rawConfigProblems(fields.rawConfig));
  if (fields.horizontalPodAutoscaler.length > 0) {
    if (fields.workloadKind !== 'Deployment')
      found.push({
        field: 'spec.horizontalPodAutoscaler',
        message: `a HorizontalPodAutoscaler scales a Deployment; workload.kind is ${fields.workloadKind}: remove horizontalPodAutoscaler or use a Deployment`,
      });
    else if (!fields.horizontalPodAutoscaler.some((overlay) => overlay.spec?.maxReplicas !== undefined))
      found.push({
        field: 'spec.horizontalPodAutoscaler.spec.maxReplicas',
        message: 'required: a HorizontalPodAutoscaler has no default maximum; set spec.maxReplicas in the overlay',
      });
  }
  return found;
}

function metadata(gateway: ProvisionedGateway, version: string, name = gateway.name) {
  return {
    name,
    namespace: gateway.namespace,
    labels: objectLabels(gateway, version),
    ownerReferences: [ownerReference(gateway)],
  };
}

export function provisionGateway(input: ProvisioningInput): ProvisioningResult {
  const { gateway, version } = input;
  const fields = effectiveTypedFields(input.gatewayClassParameters, input.gatewayParameters);
  const found = problems(fields);
  if (found.length > 0) return { ok: false, problems: found };

  const objects: ProvisionedObject[] = [];
  // The ServiceAccount's token is mounted: `gw run --cluster` reads the cluster with it, as far as
  // the binding to the gw-proxy ClusterRole allows (proxy-rbac.ts).
  objects.push({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: metadata(gateway, version) });
  objects.push(proxyRoleBinding(gateway, version));
  const userSetsSessionKey = fields.env.some((variable) => variable.name === SESSION_KEY_ENV);
  const managedEnv = userSetsSessionKey ? [] : [sessionKeyEnv(gateway)];
  if (!userSetsSessionKey) objects.push(sessionKeySecret(gateway, version, input.randomBytes));
  objects.push({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: metadata(gateway, version),
    spec: {
      type: 'LoadBalancer',
      selector: selectorLabels(gateway),
      ports: listenerPorts(gateway).map((port) => ({
        name: `listener-${port}`,
        port,
        targetPort: port,
        protocol: 'TCP',
      })),
    },
  });
  const settings = runSettingsText(fields);
  objects.push(runSettingsConfigMap(gateway, version, settings));
  objects.push(workload(gateway, fields, version, managedEnv, runSettingsHash(settings)));
  if (fields.podDisruptionBudget.length > 0)
    objects.push({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: metadata(gateway, version),
      spec: { minAvailable: 1, selector: { matchLabels: selectorLabels(gateway) } },
    });
  if (fields.horizontalPodAutoscaler.length > 0)
    objects.push({
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: metadata(gateway, version),
      // maxReplicas and the metrics come from the overlay (checked above).
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: gateway.name } },
    });
  return { ok: true, objects };
}
