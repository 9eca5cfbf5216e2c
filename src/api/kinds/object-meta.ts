// ObjectMeta, and the checks kube-apiserver makes on it that a schema cannot express
// (qualified label keys, annotation size, which name format a kind uses).
import { array, boolean, integer, map, named, object, required, string } from '../schema/build.ts';
import type { Infer } from '../schema/schema.ts';
import { DNS_SUBDOMAIN_PATTERN } from '../types/common.ts';
import { childPath, type FieldError, indexPath } from '../validate/errors.ts';

export const ObjectMeta = named(
  {
    name: 'ObjectMeta',
    description: 'Standard object metadata: name, namespace, labels, annotations and fields the API server maintains.',
    source: 'core',
    notes: 'Standard Kubernetes object metadata.',
  },
  object({
    name: string({ description: 'Name of the object, unique among objects of its kind in its namespace.' }),
    generateName: string({
      description: 'Prefix from which the API server generates a unique name when name is unset.',
    }),
    namespace: string({ description: 'Namespace the object lives in; empty for cluster-scoped kinds.' }),
    labels: map(string(), { description: 'Key-value pairs for selecting and grouping objects.' }),
    annotations: map(string(), { description: 'Key-value pairs for tools and controllers; not used for selection.' }),
    uid: string({ description: 'Unique identifier of the object, set by the API server.' }),
    resourceVersion: string({
      description: 'Version of the object, set by the API server; used for concurrency control and watches.',
    }),
    generation: integer({
      minimum: 0,
      description: 'Number of the current spec, incremented by the API server on each change.',
    }),
    creationTimestamp: string({ description: 'When the object was created (RFC 3339), set by the API server.' }),
    deletionTimestamp: string({
      description: 'When deletion was requested (RFC 3339); the object goes once its finalizers are done.',
    }),
    deletionGracePeriodSeconds: integer({
      description: 'Seconds the object was given to terminate gracefully when deletion was requested.',
    }),
    finalizers: array(string(), {
      listType: 'set',
      patchStrategy: 'merge',
      description: 'Controllers that must finish their cleanup before the object is removed.',
    }),
    ownerReferences: array(
      object({
        apiVersion: required(string({ minLength: 1, description: 'API version of the owner.' })),
        kind: required(string({ minLength: 1, description: 'Kind of the owner.' })),
        name: required(string({ minLength: 1, description: 'Name of the owner.' })),
        uid: required(string({ minLength: 1, description: 'UID of the owner.' })),
        controller: boolean({ description: 'True when the owner is the managing controller.' }),
        blockOwnerDeletion: boolean({ description: 'True when the owner cannot be deleted before this object is.' }),
      }),
      {
        patchMergeKey: 'uid',
        description: 'Objects this object belongs to; it is garbage-collected when they are all gone.',
        rules: [
          {
            rule: 'self.filter(r, has(r.controller) && r.controller).size() <= 1',
            message: 'Only one reference can have Controller set to true',
          },
        ],
      },
    ),
    managedFields: array(
      object({
        manager: string({ description: 'Name of the client that manages these fields.' }),
        operation: string({ description: 'Operation that set the fields: Apply or Update.' }),
        apiVersion: string({ description: 'API version the field set is expressed in.' }),
        time: string({ description: 'When the fields were last changed (RFC 3339).' }),
        fieldsType: string({ description: 'Format of fieldsV1; always FieldsV1.' }),
        fieldsV1: {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
          description: 'The set of fields managed, in the FieldsV1 format.',
        },
        subresource: string({
          description: 'Subresource the fields were set through, such as status; empty for the main resource.',
        }),
      }),
      {
        description: 'Which client manages which fields (server-side apply bookkeeping); maintained by the API server.',
      },
    ),
  }),
);
export type ObjectMeta = Infer<typeof ObjectMeta>;

/** How a kind's names are checked; 'pathSegment' (RBAC kinds) allows any name usable in a URL path. */
export type NameFormat = 'dns1123Subdomain' | 'dns1123Label' | 'dns1035Label' | 'pathSegment';

const DNS_SUBDOMAIN = new RegExp(DNS_SUBDOMAIN_PATTERN);
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const ANNOTATIONS_MAX_BYTES = 256 * 1024;

const NAME_RULES: Record<NameFormat, { regex: RegExp; max: number; text: string }> = {
  dns1123Subdomain: {
    regex: DNS_SUBDOMAIN,
    max: 253,
    text: "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com')",
  },
  dns1123Label: {
    regex: DNS_LABEL,
    max: 63,
    text: "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc')",
  },
  dns1035Label: {
    regex: DNS_1035_LABEL,
    max: 63,
    text: "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name', or 'abc-123')",
  },
  pathSegment: {
    regex: /^(?!\.\.?$)[^/%]+$/,
    max: 253,
    text: "may not be '.' or '..' and may not contain '/' or '%'",
  },
};

export function checkName(value: string, format: NameFormat, path: string, errors: FieldError[]): void {
  const rule = NAME_RULES[format];
  if (value.length > rule.max) {
    errors.push({
      type: 'Invalid',
      field: path,
      value: JSON.stringify(value),
      detail: `must be no more than ${rule.max} characters`,
    });
  } else if (!rule.regex.test(value)) {
    errors.push({ type: 'Invalid', field: path, value: JSON.stringify(value), detail: rule.text });
  }
}

/** A label key or annotation key: optional DNS-subdomain prefix, "/", and a name of up to 63 characters. */
export function qualifiedNameProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) {
    return "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')";
  }
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix.length === 0) return 'prefix part must be non-empty';
    if (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)) {
      return 'prefix part must be a lowercase RFC 1123 subdomain of at most 253 characters';
    }
  }
  if (name.length === 0) return 'name part must be non-empty';
  if (name.length > 63) return 'name part must be no more than 63 characters';
  if (!LABEL_NAME.test(name)) {
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc')";
  }
  return undefined;
}

export function labelValueProblem(value: string): string | undefined {
  if (value.length > 63) return 'must be no more than 63 characters';
  if (!LABEL_VALUE.test(value)) {
    return "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue', or 'my_value', or '12345')";
  }
  return undefined;
}

/** Label-map checks, shared by metadata.labels and every matchLabels/selector in the API. */
export function checkLabels(labels: Record<string, unknown>, path: string, errors: FieldError[]): void {
  for (const [key, value] of Object.entries(labels)) {
    const keyProblem = qualifiedNameProblem(key);
    if (keyProblem) errors.push({ type: 'Invalid', field: path, value: JSON.stringify(key), detail: keyProblem });
    if (typeof value === 'string') {
      const valueProblem = labelValueProblem(value);
      if (valueProblem) {
        errors.push({
          type: 'Invalid',
          field: indexPath(path, key),
          value: JSON.stringify(value),
          detail: valueProblem,
        });
      }
    }
  }
}

export function checkAnnotations(annotations: Record<string, unknown>, path: string, errors: FieldError[]): void {
  let total = 0;
  for (const [key, value] of Object.entries(annotations)) {
    const keyProblem = qualifiedNameProblem(key.toLowerCase());
    if (keyProblem) errors.push({ type: 'Invalid', field: path, value: JSON.stringify(key), detail: keyProblem });
    total += Buffer.byteLength(key) + (typeof value === 'string' ? Buffer.byteLength(value) : 0);
  }
  if (total > ANNOTATIONS_MAX_BYTES) {
    errors.push({
      type: 'TooLong',
      field: path,
      detail: `may not be more than ${ANNOTATIONS_MAX_BYTES} bytes`,
    });
  }
}

/**
 * The metadata checks kube-apiserver makes beyond the schema. `namespaced` decides whether a
 * namespace is required (the caller defaults it first) or forbidden.
 */
export function checkObjectMeta(
  metadata: ObjectMeta,
  options: { namespaced: boolean; nameFormat: NameFormat },
  errors: FieldError[],
): void {
  if (!metadata.name) {
    errors.push({ type: 'Required', field: 'metadata.name', detail: 'name or generateName is required' });
  } else {
    checkName(metadata.name, options.nameFormat, 'metadata.name', errors);
  }
  if (options.namespaced) {
    if (metadata.namespace) checkName(metadata.namespace, 'dns1123Label', 'metadata.namespace', errors);
  } else if (metadata.namespace) {
    errors.push({ type: 'Forbidden', field: 'metadata.namespace', detail: 'not allowed on this type' });
  }
  if (metadata.labels) checkLabels(metadata.labels, childPath('metadata', 'labels'), errors);
  if (metadata.annotations) checkAnnotations(metadata.annotations, childPath('metadata', 'annotations'), errors);
}
