// The apps/v1 kinds gw's provisioning writes: Deployment and DaemonSet. The embedded API server
// stores and serves them; nothing in gw reads them or runs their pods.
import { defineKind, type KindDefinition } from '../kind.ts';
import { DaemonSetSpec, DaemonSetStatus } from './daemon-set.ts';
import { DeploymentSpec, DeploymentStatus } from './deployment.ts';

const common = {
  group: 'apps',
  version: 'v1',
  unknownFields: 'warn' as const,
  builtIn: true,
  namespaced: true,
  // apps/v1 made the selector immutable: a workload cannot change which pods are its own.
  immutableFields: ['spec.selector'],
};

export const appsKinds: KindDefinition[] = [
  defineKind({
    ...common,
    kind: 'Deployment',
    plural: 'deployments',
    shortNames: ['deploy'],
    scaleSubresource: true,
    categories: ['all'],
    notRead: 'a workload: gw runs no pods; its provisioning writes one per Gateway into a cluster',
    description: 'Replicated pods (the data plane of a Gateway by default); stored, gw runs no pods.',
    fields: { spec: DeploymentSpec, status: DeploymentStatus },
  }),
  defineKind({
    ...common,
    kind: 'DaemonSet',
    plural: 'daemonsets',
    shortNames: ['ds'],
    categories: ['all'],
    notRead: 'a workload: gw runs no pods; its provisioning writes one per Gateway into a cluster',
    description:
      'A pod on every eligible node (the data plane when workload.kind is DaemonSet); stored, gw runs no pods.',
    fields: { spec: DaemonSetSpec, status: DaemonSetStatus },
  }),
];
