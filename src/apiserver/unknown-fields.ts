// Unknown fields, as kube-apiserver handles them for custom resources: fields the schema does
// not declare are pruned, and the request's fieldValidation decides whether that is an error
// (Strict), a warning (Warn, the default) or silent (Ignore).
import type { SchemaNode } from '../api/schema/schema.ts';
import { childPath, indexPath } from '../api/validate/errors.ts';
import { closestName } from '../util/did-you-mean.ts';
import { isPlainObject } from '../util/values.ts';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** A field pruned: its path, and the closest declared name there when it looks misspelt. */
export interface PrunedField {
  path: string;
  suggestion?: string;
}

/** Removes from `value` (owned by the caller) every field `schema` does not declare; returns them. */
export function pruneUnknownFields(schema: SchemaNode | undefined, value: unknown, path = ''): PrunedField[] {
  const pruned: PrunedField[] = [];
  prune(schema, value, path, pruned);
  return pruned;
}

function prune(schema: SchemaNode | undefined, value: unknown, path: string, pruned: PrunedField[]): void {
  if (!schema || schema['x-kubernetes-preserve-unknown-fields']) return;
  if (Array.isArray(value)) {
    value.forEach((item, index) => {
      prune(schema.items, item, indexPath(path, index), pruned);
    });
    return;
  }
  if (!isPlainObject(value) || schema.type !== 'object') return;
  for (const key of Object.keys(value)) {
    const property = schema.properties?.[key];
    if (property) prune(property, value[key], childPath(path, key), pruned);
    else if (schema.additionalProperties) prune(schema.additionalProperties, value[key], indexPath(path, key), pruned);
    else if (schema.properties) {
      const suggestion = closestName(key, Object.keys(schema.properties));
      pruned.push({ path: childPath(path, key), ...(suggestion && { suggestion }) });
      delete value[key];
    }
  }
}

/**
 * The warning (and strict-decoding error) text for an unknown field, as Kubernetes words it, with
 * the declared field it looks like a misspelling of.
 */
export function unknownFieldText(field: PrunedField): string {
  return `unknown field "${field.path}"${field.suggestion ? ` (did you mean "${field.suggestion}"?)` : ''}`;
}
