// CustomResourceDefinitions (apiextensions.k8s.io/v1) generated from the kinds' schemas, so that
// a real cluster validates exactly what `gw validate` and the embedded API server validate: the
// gw.dev kinds' (deploy/crds/), the Gateway API kinds' (deploy/gateway-api-crds.yaml) and the
// Inference Extension's InferencePool (gw crds --inference-extension).
import { stringify } from 'yaml';
import { GATEWAY_API_BUNDLE_VERSION } from '../kinds/gateway-api/kinds.ts';
import { GATEWAY_API_GROUP } from '../kinds/gateway-api/shared.ts';
import { INFERENCE_GROUP } from '../kinds/inference/inference-pool.ts';
import { INFERENCE_EXTENSION_BUNDLE_VERSION } from '../kinds/inference/kinds.ts';
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

/**
 * kube-apiserver's CEL reads a field whose name is a CEL reserved word as `__name__` (gw's engine
 * reads it by its name): `p.namespace` in a rule is `p.__namespace__` in a CRD.
 */
const RESERVED_FIELD =
  /\.(true|false|null|in|as|break|const|continue|else|for|function|if|import|let|loop|package|namespace|return|var|void|while)\b/g;

function forKubeApiserver(rules: readonly { rule: string }[]): unknown {
  return rules.map((rule) => ({ ...structuredClone(rule), rule: rule.rule.replace(RESERVED_FIELD, '.__$1__') }));
}

/** Converts a schema node to the plain JSON a CRD carries (drops the documentation metadata). */
export function toCrdSchema(node: SchemaNode): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of NODE_KEYS) {
    const value = node[key];
    if (value === undefined) continue;
    if (key === 'anyOf') out[key] = (value as SchemaNode[]).map(toCrdSchema);
    else if (key === 'x-kubernetes-validations') out[key] = forKubeApiserver(value as { rule: string }[]);
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

/**
 * Marks every object node that lists its fields as keeping the fields it does not list. A kind gw
 * models only in part (the Gateway API kinds) accepts the other fields with a warning (`gw
 * validate`, the embedded API server); a CRD would otherwise prune them from what it stores,
 * losing what users and other tools wrote there.
 */
function keepUnknownFields(node: Record<string, unknown>): void {
  if (node.properties !== undefined) {
    node['x-kubernetes-preserve-unknown-fields'] = true;
    for (const child of Object.values(node.properties as Record<string, Record<string, unknown>>))
      keepUnknownFields(child);
  }
  if (node.additionalProperties !== undefined) keepUnknownFields(node.additionalProperties as Record<string, unknown>);
  if (node.items !== undefined) keepUnknownFields(node.items as Record<string, unknown>);
}

/** Labels and annotations of a CRD: gw's kinds are gw's; the Gateway API's and the Inference Extension's name their release. */
function crdMetadata(definition: KindDefinition): Record<string, unknown> {
  const name = `${definition.plural}.${definition.group}`;
  if (definition.group === GATEWAY_API_GROUP)
    return {
      name,
      annotations: {
        'gateway.networking.k8s.io/bundle-version': GATEWAY_API_BUNDLE_VERSION,
        'gateway.networking.k8s.io/channel': 'standard',
      },
    };
  if (definition.group === INFERENCE_GROUP)
    return { name, annotations: { 'inference.networking.k8s.io/bundle-version': INFERENCE_EXTENSION_BUNDLE_VERSION } };
  return { name, labels: { 'app.kubernetes.io/name': 'gw', 'gateway.networking.k8s.io/policy': 'Direct' } };
}

export function toCrd(definition: KindDefinition): Record<string, unknown> {
  const schema = toCrdSchema(definition.schema);
  if (definition.unknownFields === 'warn')
    for (const [name, field] of Object.entries(schema.properties as Record<string, Record<string, unknown>>))
      if (!['apiVersion', 'kind', 'metadata'].includes(name)) keepUnknownFields(field);
  // A CRD may not constrain metadata beyond name/generateName: the API server owns its schema.
  (schema.properties as Record<string, unknown>).metadata = { type: 'object' };
  // Every served version has the same schema; objects are stored in the kind's own version.
  const versions = [...definition.servedVersions].sort().map((name) => {
    const version: Record<string, unknown> = { name, served: true, storage: name === definition.version };
    if (definition.printerColumns) version.additionalPrinterColumns = definition.printerColumns;
    version.schema = { openAPIV3Schema: schema };
    if (definition.statusSubresource) version.subresources = { status: {} };
    return version;
  });
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
    metadata: crdMetadata(definition),
    spec: {
      group: definition.group,
      names,
      scope: definition.namespaced ? 'Namespaced' : 'Cluster',
      versions,
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
