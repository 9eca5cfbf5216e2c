// kube-apiserver's table columns for the built-in kinds gw serves (its printers' columns, in its
// order, the wide ones at priority 1). There is no kubelet or controller here: the workload and
// autoscaler counts are whatever clients wrote into the status.
import type { KubeObject } from '../api/validate/admission.ts';
import { isPlainObject } from '../util/values.ts';
import { formatLabelSelector } from './selectors.ts';
import { ageColumn, type Column, column, integerColumn, keyCount, labelsText } from './table-cells.ts';

function recordOf(value: unknown): Record<string, unknown> {
  return isPlainObject(value) ? value : {};
}

const specOf = (object: KubeObject) => recordOf(object.spec);
const statusOf = (object: KubeObject) => recordOf(object.status);
const podSpecOf = (object: KubeObject) => recordOf(recordOf(specOf(object).template).spec);

function count(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

function intOrPercentText(value: unknown): string {
  return typeof value === 'number' || typeof value === 'string' ? String(value) : 'N/A';
}

function containersOf(object: KubeObject): Record<string, unknown>[] {
  const containers = podSpecOf(object).containers;
  return Array.isArray(containers) ? containers.map(recordOf) : [];
}

/** The wide columns of a workload: its containers, their images and its selector. */
const podTemplateColumns: Column[] = [
  column(
    'Containers',
    (object) =>
      containersOf(object)
        .map((container) => container.name ?? '')
        .join(','),
    1,
  ),
  column(
    'Images',
    (object) =>
      containersOf(object)
        .map((container) => container.image ?? '')
        .join(','),
    1,
  ),
  column('Selector', (object) => formatLabelSelector(specOf(object).selector) || '<none>', 1),
];

/** One metric of an HPA as kubectl prints it: `name: current/target`, current <unknown> until reported. */
function metricText(spec: Record<string, unknown>, status: Record<string, unknown>): string {
  const type = String(spec.type ?? '');
  const field = type.charAt(0).toLowerCase() + type.slice(1);
  const source = recordOf(spec[field]);
  const target = recordOf(source.target);
  const current = recordOf(recordOf(status[field]).current);
  const quantity = (value: unknown) => (value === undefined ? '<unknown>' : String(value));
  if (type === 'Resource' || type === 'ContainerResource') {
    const name = type === 'Resource' ? String(source.name) : `${source.name} (${source.container})`;
    if (target.averageValue !== undefined) return `${name}: ${quantity(current.averageValue)}/${target.averageValue}`;
    const utilization = current.averageUtilization === undefined ? '<unknown>' : `${current.averageUtilization}%`;
    const goal = target.averageUtilization === undefined ? '<auto>' : `${target.averageUtilization}%`;
    return `${name}: ${utilization}/${goal}`;
  }
  if (type === 'Pods') return `${quantity(current.averageValue)}/${target.averageValue}`;
  if (target.averageValue !== undefined) return `${quantity(current.averageValue)}/${target.averageValue} (avg)`;
  return `${quantity(current.value)}/${target.value}`;
}

/** The Targets column: the first two metrics and how many more; <none> when it has none. */
function hpaTargets(object: KubeObject): string {
  const metrics = Array.isArray(specOf(object).metrics) ? (specOf(object).metrics as unknown[]).map(recordOf) : [];
  if (metrics.length === 0) return '<none>';
  const current = Array.isArray(statusOf(object).currentMetrics)
    ? (statusOf(object).currentMetrics as unknown[]).map(recordOf)
    : [];
  const texts = metrics.map((metric, index) => metricText(metric, current[index] ?? {}));
  return texts.length > 2 ? `${texts.slice(0, 2).join(', ')} + ${texts.length - 2} more...` : texts.join(', ');
}

/** A binding's subjects of one kind, as kubectl's wide output lists them. */
function subjectsText(object: KubeObject, kind: string): string {
  const subjects = Array.isArray(object.subjects) ? object.subjects.map(recordOf) : [];
  return subjects
    .filter((subject) => subject.kind === kind)
    .map((subject) => (kind === 'ServiceAccount' ? `${subject.namespace ?? ''}:${subject.name}` : String(subject.name)))
    .join(', ');
}

const bindingColumns: Column[] = [
  column('Role', (object) => {
    const role = recordOf(object.roleRef);
    return `${role.kind ?? ''}/${role.name ?? ''}`;
  }),
  ageColumn,
  column('Users', (object) => subjectsText(object, 'User'), 1),
  column('Groups', (object) => subjectsText(object, 'Group'), 1),
  column('ServiceAccounts', (object) => subjectsText(object, 'ServiceAccount'), 1),
];

/** Roles print their creation time itself, not an age. */
const createdAtColumn: Column = column('Created At', (object) => String(object.metadata.creationTimestamp ?? ''));

function servicePorts(spec: Record<string, unknown>): string {
  const ports = Array.isArray(spec.ports) ? spec.ports : [];
  if (ports.length === 0) return '<none>';
  return ports
    .map((port: Record<string, unknown>) => {
      const nodePort = port.nodePort ? `:${port.nodePort}` : '';
      return `${port.port}${nodePort}/${port.protocol ?? 'TCP'}`;
    })
    .join(',');
}

function serviceExternalIp(object: KubeObject): string {
  const spec = (object.spec ?? {}) as Record<string, unknown>;
  if (spec.type === 'ExternalName') return String(spec.externalName ?? '<none>');
  const ingress = ((object.status as { loadBalancer?: { ingress?: Record<string, unknown>[] } })?.loadBalancer
    ?.ingress ?? []) as Record<string, unknown>[];
  const addresses = [
    ...ingress.map((entry) => entry.ip ?? entry.hostname).filter(Boolean),
    ...(Array.isArray(spec.externalIPs) ? spec.externalIPs : []),
  ];
  if (addresses.length > 0) return addresses.join(',');
  return spec.type === 'LoadBalancer' ? '<pending>' : '<none>';
}

/** kube-apiserver's columns for the built-in kinds (its printers), by kind. */
export const BUILT_IN_COLUMNS: Record<string, Column[]> = {
  Namespace: [column('Status', (object) => (object.status as { phase?: string })?.phase ?? ''), ageColumn],
  Service: [
    column('Type', (object) => String((object.spec as Record<string, unknown>)?.type ?? 'ClusterIP')),
    column('Cluster-IP', (object) => String((object.spec as Record<string, unknown>)?.clusterIP ?? '<none>')),
    column('External-IP', serviceExternalIp),
    column('Port(s)', (object) => servicePorts((object.spec ?? {}) as Record<string, unknown>)),
    ageColumn,
    column('Selector', (object) => labelsText(specOf(object).selector), 1),
  ],
  Secret: [
    column('Type', (object) => String(object.type ?? 'Opaque')),
    integerColumn('Data', (object) => keyCount(object.data)),
    ageColumn,
  ],
  ConfigMap: [integerColumn('Data', (object) => keyCount(object.data, object.binaryData)), ageColumn],
  ServiceAccount: [
    integerColumn('Secrets', (object) => (Array.isArray(object.secrets) ? object.secrets.length : 0)),
    ageColumn,
  ],
  Deployment: [
    column('Ready', (object) => `${count(statusOf(object).readyReplicas)}/${count(specOf(object).replicas)}`),
    integerColumn('Up-to-date', (object) => count(statusOf(object).updatedReplicas)),
    integerColumn('Available', (object) => count(statusOf(object).availableReplicas)),
    ageColumn,
    ...podTemplateColumns,
  ],
  DaemonSet: [
    integerColumn('Desired', (object) => count(statusOf(object).desiredNumberScheduled)),
    integerColumn('Current', (object) => count(statusOf(object).currentNumberScheduled)),
    integerColumn('Ready', (object) => count(statusOf(object).numberReady)),
    integerColumn('Up-to-date', (object) => count(statusOf(object).updatedNumberScheduled)),
    integerColumn('Available', (object) => count(statusOf(object).numberAvailable)),
    column('Node Selector', (object) => labelsText(podSpecOf(object).nodeSelector)),
    ageColumn,
    ...podTemplateColumns,
  ],
  PodDisruptionBudget: [
    column('Min Available', (object) => intOrPercentText(specOf(object).minAvailable)),
    column('Max Unavailable', (object) => intOrPercentText(specOf(object).maxUnavailable)),
    integerColumn('Allowed Disruptions', (object) => count(statusOf(object).disruptionsAllowed)),
    ageColumn,
  ],
  HorizontalPodAutoscaler: [
    column('Reference', (object) => {
      const target = recordOf(specOf(object).scaleTargetRef);
      return `${target.kind ?? ''}/${target.name ?? ''}`;
    }),
    column('Targets', (object) => hpaTargets(object)),
    column('MinPods', (object) => {
      const min = specOf(object).minReplicas;
      return typeof min === 'number' ? String(min) : '<unset>';
    }),
    integerColumn('MaxPods', (object) => count(specOf(object).maxReplicas)),
    integerColumn('Replicas', (object) => count(statusOf(object).currentReplicas)),
    ageColumn,
  ],
  Role: [createdAtColumn],
  ClusterRole: [createdAtColumn],
  RoleBinding: bindingColumns,
  ClusterRoleBinding: bindingColumns,
};
