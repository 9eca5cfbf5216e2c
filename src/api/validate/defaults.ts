// Structural defaulting as kube-apiserver applies it to custom resources: a property absent
// from an object that is present gets its schema default; defaults are applied top-down, so a
// defaulted object gets the defaults of its own properties too.

import { isPlainObject } from '../../util/values.ts';
import type { SchemaNode } from '../schema/schema.ts';

/** Applies defaults in place; `value` must be a freshly decoded object owned by the caller. */
export function applyDefaults(schema: SchemaNode, value: unknown): void {
  if (Array.isArray(value)) {
    if (schema.items) for (const item of value) applyDefaults(schema.items, item);
    return;
  }
  if (!isPlainObject(value)) return;
  const properties = schema.properties;
  if (properties) {
    for (const name of Object.keys(properties)) {
      const property = properties[name]!;
      if (value[name] === undefined && property.default !== undefined) {
        value[name] = structuredClone(property.default);
      }
      if (value[name] !== undefined) applyDefaults(property, value[name]);
    }
  }
  if (schema.additionalProperties) {
    for (const key of Object.keys(value)) {
      if (!properties || !(key in properties)) applyDefaults(schema.additionalProperties, value[key]);
    }
  }
}
