// Admission of one object, as kube-apiserver does it for a create: find the kind, check the
// envelope and metadata, drop status (a subresource), apply structural defaults, validate.

import { isPlainObject } from '../../util/values.ts';
import { type KindDefinition, servedApiVersionsOf } from '../kinds/kind.ts';
import { checkObjectMeta, type ObjectMeta } from '../kinds/object-meta.ts';
import { findKind, kindsOfGroup } from '../kinds/registry.ts';
import { applyDefaults } from './defaults.ts';
import { type FieldError, jsonTypeOf } from './errors.ts';
import { validateValue } from './schema-validator.ts';

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface AdmissionResult {
  /** The object as it would be stored (defaults applied), when it was recognised. */
  object?: KubeObject;
  definition?: KindDefinition;
  errors: FieldError[];
  warnings: FieldError[];
}

export interface AdmissionOptions {
  /** Namespace given to namespaced objects that name none (kubectl's current namespace). */
  defaultNamespace?: string;
  /** The object comes from gw's files: the status of a kind with readsStatus is kept. */
  fromFiles?: boolean;
}

function identify(value: Record<string, unknown>, errors: FieldError[]): KindDefinition | undefined {
  const { apiVersion, kind } = value;
  if (typeof apiVersion !== 'string' || apiVersion === '') {
    errors.push({ type: 'Required', field: 'apiVersion', detail: 'set apiVersion, for example gw.dev/v1alpha1' });
  }
  if (typeof kind !== 'string' || kind === '') {
    errors.push({ type: 'Required', field: 'kind', detail: 'set kind, for example GwBackend' });
  }
  if (errors.length > 0) return undefined;
  const definition = findKind(apiVersion as string, kind as string);
  if (definition) return definition;
  const slash = (apiVersion as string).lastIndexOf('/');
  const group = slash === -1 ? '' : (apiVersion as string).slice(0, slash);
  const sameGroup = kindsOfGroup(group);
  const versions = [...new Set(sameGroup.filter((d) => d.kind === kind).flatMap(servedApiVersionsOf))];
  if (versions.length > 0) {
    errors.push({
      type: 'Unsupported',
      field: 'apiVersion',
      value: JSON.stringify(apiVersion),
      detail: `supported values: ${versions.map((v) => JSON.stringify(v)).join(', ')}`,
    });
  } else if (sameGroup.length > 0) {
    const kinds = [...new Set(sameGroup.map((d) => d.kind))].sort();
    errors.push({
      type: 'Invalid',
      field: 'kind',
      value: JSON.stringify(kind),
      detail: `no matches for kind "${kind}" in version "${apiVersion}"; known kinds of ${group || 'the core group'}: ${kinds.join(', ')}`,
    });
  } else {
    errors.push({
      type: 'Invalid',
      field: 'apiVersion',
      value: JSON.stringify(apiVersion),
      detail: `no matches for kind "${kind}" in version "${apiVersion}": gw knows the groups gw.dev, gateway.networking.k8s.io, inference.networking.k8s.io and the core group (v1)`,
    });
  }
  return undefined;
}

/** Validates and defaults one decoded object. The input is not modified. */
export function admit(input: unknown, options: AdmissionOptions = {}): AdmissionResult {
  const errors: FieldError[] = [];
  if (!isPlainObject(input)) {
    errors.push({
      type: 'Invalid',
      field: '<root>',
      value: JSON.stringify(jsonTypeOf(input)),
      detail: 'a resource must be a mapping with apiVersion, kind and metadata',
    });
    return { errors, warnings: [] };
  }
  const definition = identify(input, errors);
  if (!definition) return { errors, warnings: [] };

  const object = structuredClone(input) as KubeObject;
  if (definition.statusSubresource && !(options.fromFiles && definition.readsStatus)) delete object.status;
  if (object.metadata === undefined) object.metadata = {};
  if (isPlainObject(object.metadata) && definition.namespaced && !object.metadata.namespace) {
    object.metadata.namespace = options.defaultNamespace ?? 'default';
  }
  applyDefaults(definition.schema, object);
  const output = validateValue(definition.schema, object, '', { unknownFields: definition.unknownFields });
  errors.push(...output.errors);
  if (isPlainObject(object.metadata)) checkObjectMeta(object.metadata, definition, errors);
  return { object, definition, errors, warnings: output.warnings };
}

/** "GwBackend default/openai" — how messages name an object. */
export function describeObject(value: unknown): string {
  if (!isPlainObject(value)) return '<not an object>';
  const kind = typeof value.kind === 'string' && value.kind ? value.kind : '<no kind>';
  const metadata = isPlainObject(value.metadata) ? value.metadata : {};
  const name = typeof metadata.name === 'string' && metadata.name ? metadata.name : '<no name>';
  const namespace = typeof metadata.namespace === 'string' && metadata.namespace ? `${metadata.namespace}/` : '';
  return `${kind} ${namespace}${name}`;
}
