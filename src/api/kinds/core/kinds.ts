// The core kinds (v1): Namespace, Service, Secret, ConfigMap and Pod, which gw reads (Pods for the
// mesh: their IPs, readiness and ServiceAccounts), and ServiceAccount, which its provisioning writes. Fields gw does not model are warnings, not
// errors: a real API server accepts them.
import { defineKind, type KindDefinition, topLevelFields } from '../kind.ts';
import { ConfigMapSpec } from './config-map.ts';
import { NamespaceSpec, NamespaceStatus } from './namespace.ts';
import { PodSpec } from './pod.ts';
import { PodStatus } from './pod-status.ts';
import { SecretSpec } from './secret.ts';
import { ServiceSpec, ServiceStatus } from './service.ts';
import { ServiceAccountFields } from './service-account.ts';

const common = { group: '', version: 'v1', unknownFields: 'warn' as const, builtIn: true };

export const coreKinds: KindDefinition[] = [
  defineKind({
    ...common,
    kind: 'Namespace',
    plural: 'namespaces',
    shortNames: ['ns'],
    namespaced: false,
    nameFormat: 'dns1123Label',
    description: 'A scope for names; its labels select namespaces in route and policy selectors.',
    fields: { spec: NamespaceSpec, status: NamespaceStatus },
  }),
  defineKind({
    ...common,
    kind: 'Service',
    plural: 'services',
    shortNames: ['svc'],
    categories: ['all'],
    namespaced: true,
    nameFormat: 'dns1035Label',
    description: 'A set of endpoints behind ports; a backendRef and policy target.',
    fields: { spec: ServiceSpec, status: ServiceStatus },
  }),
  defineKind({
    ...common,
    kind: 'Secret',
    plural: 'secrets',
    namespaced: true,
    description: 'Credentials, keys and certificates gw reads.',
    ...topLevelFields(SecretSpec),
  }),
  defineKind({
    ...common,
    kind: 'ConfigMap',
    plural: 'configmaps',
    shortNames: ['cm'],
    namespaced: true,
    description: 'CA bundles, API key hashes and model catalogs gw reads.',
    ...topLevelFields(ConfigMapSpec),
  }),
  defineKind({
    ...common,
    kind: 'Pod',
    plural: 'pods',
    shortNames: ['po'],
    categories: ['all'],
    namespaced: true,
    description:
      "A running workload; gw reads a mesh destination's IPs, readiness and ServiceAccount, and an InferencePool member's.",
    fields: { spec: PodSpec, status: PodStatus },
    // Without a kubelet, a Pod in a file says what its status would.
    readsStatus: true,
  }),
  defineKind({
    ...common,
    kind: 'ServiceAccount',
    plural: 'serviceaccounts',
    namespaced: true,
    shortNames: ['sa'],
    notRead: 'the identity of pods: gw runs no pods',
    description: 'The identity the data-plane pods run as; stored, gw does not read it.',
    ...topLevelFields(ServiceAccountFields),
  }),
];
