// The core kinds gw reads (v1): Namespace, Service, Secret, ConfigMap. Fields gw does not model
// are warnings, not errors: a real API server accepts them.
import type { SchemaNode } from '../../schema/schema.ts';
import { defineKind, type KindDefinition } from '../kind.ts';
import { ConfigMapSpec } from './config-map.ts';
import { NamespaceSpec, NamespaceStatus } from './namespace.ts';
import { SecretSpec } from './secret.ts';
import { ServiceSpec, ServiceStatus } from './service.ts';

const common = { group: '', version: 'v1', unknownFields: 'warn' as const };

/** Secret and ConfigMap keep their fields at the top level: their "spec" schema is spread there. */
function topLevel(schema: SchemaNode) {
  return { fields: schema.properties ?? {}, rules: schema['x-kubernetes-validations'] };
}

export const coreKinds: KindDefinition[] = [
  defineKind({
    ...common,
    kind: 'Namespace',
    plural: 'namespaces',
    namespaced: false,
    nameFormat: 'dns1123Label',
    description: 'A scope for names; its labels select namespaces in route and policy selectors.',
    fields: { spec: NamespaceSpec, status: NamespaceStatus },
  }),
  defineKind({
    ...common,
    kind: 'Service',
    plural: 'services',
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
    ...topLevel(SecretSpec),
  }),
  defineKind({
    ...common,
    kind: 'ConfigMap',
    plural: 'configmaps',
    namespaced: true,
    description: 'CA bundles, API key hashes and model catalogs gw reads.',
    ...topLevel(ConfigMapSpec),
  }),
];
