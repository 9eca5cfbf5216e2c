// CustomResourceDefinitions (apiextensions.k8s.io/v1) generated from the kinds' schemas, so that
// a real cluster validates exactly what `gw validate` and the embedded API server validate.
import { stringify } from 'yaml';
import type { KindDefinition } from '../kinds/kind.ts';
import type { SchemaNode } from '../schema/schema.ts';

/** The OpenAPI keys a CRD schema node may carry, in the order they are written. */
const NODE_KEYS = [
  'description',
  'type',
  'format',
  'enum',
  'default',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'required',
  'anyOf',
  'x-kubernetes-int-or-string',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
] as const;

/** Converts a schema node to the plain JSON a CRD carries (drops the documentation metadata). */
export function toCrdSchema(node: SchemaNode): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of NODE_KEYS) {
    const value = node[key];
    if (value === undefined) continue;
    if (key === 'anyOf') out[key] = (value as SchemaNode[]).map(toCrdSchema);
    else out[key] = structuredClone(value);
  }
  if (node.properties) {
    const properties: Record<string, unknown> = {};
    for (const [name, child] of Object.entries(node.properties)) properties[name] = toCrdSchema(child);
    out.properties = properties;
  }
  if (node.additionalProperties) out.additionalProperties = toCrdSchema(node.additionalProperties);
  if (node.items) out.items = toCrdSchema(node.items);
  return out;
}

export function toCrd(definition: KindDefinition): Record<string, unknown> {
  const schema = toCrdSchema(definition.schema);
  // A CRD may not constrain metadata beyond name/generateName: the API server owns its schema.
  (schema.properties as Record<string, unknown>).metadata = { type: 'object' };
  const version: Record<string, unknown> = {
    name: definition.version,
    served: true,
    storage: true,
  };
  if (definition.printerColumns) version.additionalPrinterColumns = definition.printerColumns;
  version.schema = { openAPIV3Schema: schema };
  if (definition.statusSubresource) version.subresources = { status: {} };
  const names: Record<string, unknown> = {
    kind: definition.kind,
    listKind: definition.listKind,
    plural: definition.plural,
    singular: definition.singular,
  };
  if (definition.shortNames) names.shortNames = definition.shortNames;
  if (definition.categories) names.categories = definition.categories;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${definition.plural}.${definition.group}`,
      labels: { 'app.kubernetes.io/name': 'gw', 'gateway.networking.k8s.io/policy': 'Direct' },
    },
    spec: {
      group: definition.group,
      names,
      scope: definition.namespaced ? 'Namespaced' : 'Cluster',
      versions: [version],
    },
  };
}

/** The file name a CRD is committed under in deploy/crds/. */
export function crdFileName(definition: KindDefinition): string {
  return `${definition.group}_${definition.plural}.yaml`;
}

export function crdYaml(definition: KindDefinition): string {
  return stringify(toCrd(definition), { lineWidth: 0, aliasDuplicateObjects: false });
}
